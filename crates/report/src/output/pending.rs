//! Temporary files the process owns, so that an immediate exit can remove them.
//!
//! A destination that is a regular file is written into a temporary file beside it and
//! renamed over it when complete ([`super::Output`]). Normally the temporary file is removed
//! when it is dropped; an immediate exit (a second Ctrl-C) runs no destructors, so every
//! temporary file is also listed here and [`remove_all`] removes what is left.

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
        let file = tempfile::Builder::new()
            .prefix(&format!(".{short}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(without_path)?;
        lock().push(file.path().to_path_buf());
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
    for path in lock().drain(..) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_while_alive_and_removed_by_remove_all() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pending::create(dir.path(), "r.json").unwrap();
        let path = p.file.as_ref().unwrap().path().to_path_buf();
        assert!(lock().contains(&path));
        remove_all();
        assert!(!path.exists());
        drop(p);
        assert!(!lock().contains(&path));
    }
}
