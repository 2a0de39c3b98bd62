//! Temporary files the process owns, so that an immediate exit can remove them.
//!
//! A destination that is a regular file is written into a temporary file beside it and
//! renamed over it when complete ([`super::Output`]). Normally the temporary file is removed
//! when it is dropped; an immediate exit (a second Ctrl-C) runs no destructors, so every
//! temporary file is also listed here and [`remove_all`] removes what is left. The
//! temporary directories of capture bundles ([`crate::capture`]) are listed the same way
//! ([`Listed`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tempfile::NamedTempFile;

static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary file in the destination's directory, listed while it exists.
///
/// Created by `tempfile` (`O_CREAT | O_EXCL`, `O_NOFOLLOW`-safe, a random name, mode 0600),
/// so a name planted in advance (a symbolic link, a FIFO) can neither redirect nor block it.
#[derive(Debug)]
pub(crate) struct Pending {
    file: Option<NamedTempFile>,
}

impl Pending {
    /// Creates `.NAME.XXXXXX.tmp` in `dir` (NAME cut to 32 characters, so that a name near
    /// the file system's limit still has room for the temporary one).
    pub(crate) fn create(dir: &Path, name: &str) -> std::io::Result<Self> {
        let short: String = name.chars().take(32).collect();
        // Created and listed under the lock: an immediate exit ([`remove_all`], on the
        // signal thread) between the two would otherwise leave the file behind.
        let mut list = lock();
        let file = tempfile::Builder::new()
            .prefix(&format!(".{short}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(without_path)?;
        list.push(file.path().to_path_buf());
        Ok(Pending { file: Some(file) })
    }

    /// The open file.
    pub(crate) fn file(&mut self) -> &mut std::fs::File {
        self.file
            .as_mut()
            .expect("present until persisted")
            .as_file_mut()
    }

    /// Renames the file over `dest` and forgets it.
    pub(crate) fn persist(mut self, dest: &Path) -> std::io::Result<()> {
        let file = self.file.take().expect("present until persisted");
        let path = file.path().to_path_buf();
        let result = file.persist(dest).map(drop).map_err(|e| e.error);
        unlist(&path);
        result
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let path = file.path().to_path_buf();
            drop(file); // removes it
            unlist(&path);
        }
    }
}

/// `tempfile` appends " at path …" with the random name to its errors; the user never
/// chose that name, so only the OS error's text is kept.
fn without_path(e: std::io::Error) -> std::io::Error {
    let text = e.to_string();
    match text.split_once(" at path ") {
        Some((os, _)) => std::io::Error::new(e.kind(), os.to_string()),
        None => e,
    }
}

/// A temporary path (a capture bundle's directory) listed while it is being written, so
/// that an immediate exit removes it; unlisted when dropped (after it was renamed into
/// place or removed).
#[derive(Debug)]
pub struct Listed(PathBuf);

impl Listed {
    /// Lists `path`.
    pub fn new(path: &Path) -> Self {
        lock().push(path.to_path_buf());
        Listed(path.to_path_buf())
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        unlist(&self.0);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn unlist(path: &Path) {
    let mut list = lock();
    if let Some(i) = list.iter().position(|p| p == path) {
        list.swap_remove(i);
    }
}

/// Removes every temporary file this process still owns. For the immediate-exit path
/// (second Ctrl-C, SIGTERM or SIGHUP), which runs no destructors; call it on a normal thread,
/// never in a signal handler (it takes a lock).
///
/// # Panics
/// Never.
pub fn remove_all() {
    remove_listed(&mut lock());
}

/// [`remove_all`], then keeps the list locked for good, so that no temporary file is
/// created (or unlisted) any more: one created by another thread between the removal and
/// the exit would be left behind. Creating one then blocks until the process has exited.
/// Call it only right before `std::process::exit`.
///
/// # Panics
/// Never.
pub fn remove_all_before_exit() {
    let mut list = lock();
    remove_listed(&mut list);
    std::mem::forget(list); // never unlocked: the process is about to exit
}

fn remove_listed(list: &mut Vec<PathBuf>) {
    for path in list.drain(..) {
        match path.is_dir() {
            true => std::fs::remove_dir_all(path),
            false => std::fs::remove_file(path),
        }
        .ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`remove_all`] does, for the listed paths under `dir` only. `remove_all` empties
    /// the one process-wide list, and the crate's other tests write files through it in
    /// parallel: these tests' removals would take those files away mid-write (seen in CI
    /// between these two: `listed_while_alive_and_removed_by_remove_all` found its file
    /// unlisted by the other's `remove_all`).
    fn remove_all_under(dir: &Path) {
        let mut list = lock();
        let (mut mine, rest): (Vec<PathBuf>, Vec<PathBuf>) =
            list.drain(..).partition(|p| p.starts_with(dir));
        *list = rest;
        drop(list);
        remove_listed(&mut mine);
    }

    #[test]
    fn a_listed_directory_is_removed_with_what_is_listed_and_unlisted_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join(".capture-1.tmp");
        std::fs::create_dir(&bundle).unwrap();
        std::fs::write(bundle.join("capture.json"), "{}").unwrap();
        let listed = Listed::new(&bundle);
        remove_all_under(dir.path());
        assert!(!bundle.exists(), "the half-written bundle is gone");
        drop(listed);
        assert!(!lock().contains(&bundle));
    }

    #[test]
    fn listed_while_alive_and_removed_with_what_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pending::create(dir.path(), "r.json").unwrap();
        let path = p.file.as_ref().unwrap().path().to_path_buf();
        assert!(lock().contains(&path));
        remove_all_under(dir.path());
        assert!(!path.exists());
        drop(p);
        assert!(!lock().contains(&path));
    }
}
