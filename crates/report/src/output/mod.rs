//! Where a result file goes, checked before anything is measured, and written so that it
//! can hurt nothing.
//!
//! The rules (docs/run.md, "Errors" and "Stopping"):
//!
//! * `-` is standard output.
//! * A destination that exists and is not a regular file — a character or block device such
//!   as `/dev/null`, a FIFO, or a name for an open descriptor such as `/dev/stdout`,
//!   `/dev/fd/N` or `/proc/self/fd/N` — is written to directly, never replaced. A socket is
//!   refused.
//! * A regular file (or a new name) is written into a temporary file beside it, with an
//!   unpredictable name created exclusively (the `tempfile` crate: `O_CREAT | O_EXCL`, so a
//!   planted symbolic link or FIFO can neither redirect nor block it), flushed, synced and
//!   renamed over the destination (`rename(2)` is atomic within a file system). A reader
//!   sees the old file or the complete new one. The new file keeps the old one's permission
//!   bits (and, as root, its owner); a new file gets `0666` less the umask, as `creat(2)`.
//!   A symbolic link to a regular file is written through: the link stays, its target is
//!   replaced — except a link that the kernel's `fs.protected_symlinks` rule forbids
//!   following (another user's link in a sticky world-writable directory such as `/tmp`),
//!   which is refused whatever the sysctl says ([`links`]).
//! * [`Output::prepare`] does every check up front — a directory, a missing or read-only
//!   directory, a name too long for the file system, `/proc` — by creating the temporary
//!   file there and then, so a long run is never lost to an output that cannot be written.
//! * [`identity`] tells whether two outputs, or an output and an input, are the same file.
//! * One exception, chosen by the caller: [`Output::stream_in_place`] (an interval log that
//!   must be readable while a long run goes on) writes at the path itself, piece by piece.

pub mod identity;
mod in_place;
pub mod links;
pub mod pending;

use pending::Pending;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub use identity::Identity;
pub use pending::remove_all_before_exit as remove_pending_files;

/// Why an output cannot be written where asked. Its text names the problem and the path
/// (quoted), never the flag: the caller adds that.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The destination is a directory, or names one (`.`, `dir/`).
    #[error("{0} is a directory; name a file")]
    Directory(String),
    /// The directory that would hold the file does not exist.
    #[error("directory {0} does not exist; create it or choose another path")]
    NoDirectory(String),
    /// The file name is longer than the file system allows (`NAME_MAX`, usually 255 bytes).
    #[error("file name of {path} is {len} bytes; this file system allows at most {max}")]
    NameTooLong {
        /// The path, quoted.
        path: String,
        /// Its file name's length, bytes.
        len: usize,
        /// The file system's limit, bytes.
        max: usize,
    },
    /// A socket, or a symbolic link that leads nowhere.
    #[error("{0} is {1}; name a regular file, a device, a FIFO or '-'")]
    Unsupported(String, &'static str),
    /// The file (or its temporary file) cannot be created or opened for writing.
    #[error("cannot write {0}: {1}")]
    Io(String, io::Error),
    /// The path leads through a symbolic link that the kernel's `fs.protected_symlinks`
    /// rule forbids following ([`links`]).
    #[error(
        "{path} leads through the symbolic link {link}, owned by uid {link_owner} in the \
         sticky world-writable directory {dir} (owner uid {dir_owner}); following it is \
         refused, as the kernel's fs.protected_symlinks rule does (another user may have \
         planted it): name the link's target yourself, or remove the link"
    )]
    ProtectedSymlink {
        /// The path as named, quoted.
        path: String,
        /// The link, quoted.
        link: String,
        /// The link's owner.
        link_owner: u32,
        /// The directory holding the link, quoted.
        dir: String,
        /// The directory's owner.
        dir_owner: u32,
    },
}

/// What kind of destination an [`Output`] is.
#[derive(Debug)]
enum Kind {
    /// An open descriptor of this process: 1 for `-`, `/dev/stdout`, `/dev/fd/1`, …
    Fd(i32),
    /// A device or FIFO, written directly (the resolved path).
    Special(PathBuf),
    /// A regular file or a new name, replaced atomically.
    Regular {
        dest: PathBuf,
        dir: PathBuf,
        name: String,
        pending: Option<Pending>,
        mode: u32,
        owner: Option<(u32, u32)>,
    },
}

/// One output file, prepared (checked, and for a regular file its temporary file created)
/// before the measurement starts.
#[derive(Debug)]
pub struct Output {
    named: PathBuf,
    kind: Kind,
}

impl Output {
    /// Checks that `path` can be written and prepares it; `-` is standard output.
    ///
    /// # Errors
    /// [`OutputError`] for a directory, a missing directory, a name too long, a socket or a
    /// dangling link, and any error creating the temporary file (read-only directory,
    /// `/proc`, no permission) or opening a special file for writing (checked with
    /// `access(2)`, without opening, so a FIFO with no reader does not block here).
    pub fn prepare(path: &Path) -> Result<Output, OutputError> {
        let q = crate::quoted(path);
        let resolved = match path.as_os_str() == "-" {
            true => None,
            false => Some(checked_links(path, &q)?),
        };
        let kind = if path.as_os_str() == "-" {
            Kind::Fd(1)
        } else if let Some(fd) = descriptor_alias(path) {
            Kind::Fd(fd)
        } else {
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => return Err(OutputError::Directory(q)),
                Ok(m) if m.file_type().is_socket() => {
                    return Err(OutputError::Unsupported(q, "a socket"))
                }
                Ok(m) if !m.is_file() => {
                    writable(path).map_err(|e| OutputError::Io(q.clone(), e))?;
                    Kind::Special(path.to_path_buf())
                }
                Ok(m) => {
                    let dest =
                        std::fs::canonicalize(path).map_err(|e| OutputError::Io(q.clone(), e))?;
                    unchanged(&q, &dest, resolved.as_deref())?;
                    let owner = Some((m.uid(), m.gid()));
                    regular(&q, dest, m.permissions().mode() & 0o7777, owner)?
                }
                Err(e)
                    if e.kind() == io::ErrorKind::NotFound
                        || e.raw_os_error() == Some(libc::ENAMETOOLONG) =>
                {
                    if std::fs::symlink_metadata(path).is_ok() {
                        return Err(OutputError::Unsupported(q, "a symbolic link to nothing"));
                    }
                    new_file(path, &q, resolved.as_deref())?
                }
                Err(e) => return Err(OutputError::Io(q, e)),
            }
        };
        Ok(Output {
            named: path.to_path_buf(),
            kind,
        })
    }

    /// The path as the user named it.
    pub fn path(&self) -> &Path {
        &self.named
    }

    /// Where the output goes, for "written to" lines: its path, or "standard output".
    pub fn shown(&self) -> String {
        if self.is_stdout() {
            "standard output".into()
        } else {
            self.named.display().to_string()
        }
    }

    /// The directory of a regular destination (where its temporary files go), `None` for
    /// standard output, a device or a FIFO. A writer that needs scratch space while the run
    /// goes on puts it here, on the same file system as the result.
    pub fn directory(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Regular { dir, .. } => Some(dir),
            _ => None,
        }
    }

    /// True when this output is the process's standard output (`-`, `/dev/stdout`, …), so
    /// that text meant for a person goes to standard error instead.
    pub fn is_stdout(&self) -> bool {
        matches!(self.kind, Kind::Fd(1))
    }

    /// What identifies the file, to refuse two outputs (or an output and an input) on one
    /// file; see [`identity`].
    pub fn identity(&self) -> Identity {
        match &self.kind {
            Kind::Fd(fd) => Identity::of_descriptor(*fd),
            Kind::Special(p) => Identity::of_path(p),
            Kind::Regular { dest, .. } => Identity::of_path(dest),
        }
    }

    /// Replaces a regular file's content with `bytes` now (atomically) and prepares the
    /// next replacement; writes nothing to a stream destination (standard output, a device,
    /// a FIFO), which cannot be rewritten — [`Output::finish`] writes it once.
    ///
    /// For a result file rewritten after every run of a comparison, so that a crash keeps
    /// what was measured.
    ///
    /// # Errors
    /// Any I/O error writing, syncing or renaming; the destination is then as it was, and
    /// the next call (or [`Output::finish`]) tries again with a new temporary file.
    pub fn checkpoint(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.checkpoint_with(&mut |w| w.write_all(bytes))
    }

    /// [`Output::checkpoint`] with the content written by `write` (in pieces, so that a
    /// large content need not be in memory).
    ///
    /// # Errors
    /// As [`Output::checkpoint`], and any error `write` returns.
    pub fn checkpoint_with(
        &mut self,
        write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        if let Kind::Regular { .. } = self.kind {
            self.replace(write)?;
            if let Kind::Regular {
                dir, name, pending, ..
            } = &mut self.kind
            {
                *pending = Some(Pending::create(dir, name)?);
            }
        }
        Ok(())
    }

    /// Writes `bytes` as the whole content, and ends this output.
    ///
    /// # Errors
    /// Any I/O error opening, writing, syncing or renaming.
    pub fn finish(self, bytes: &[u8]) -> io::Result<()> {
        self.finish_with(&mut |w| w.write_all(bytes))
    }

    /// [`Output::finish`] with the content written by `write` (in pieces).
    ///
    /// # Errors
    /// As [`Output::finish`], and any error `write` returns.
    pub fn finish_with(
        mut self,
        write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        match &self.kind {
            Kind::Regular { .. } => self.replace(write),
            _ => {
                let mut s = self.stream()?;
                write(&mut s)?;
                s.commit()
            }
        }
    }

    /// Opens the output for writing in pieces (a stream of samples). The content appears at
    /// a regular file's path only on [`OutputStream::commit`]; dropped without a commit, the
    /// temporary file is removed and the destination left as it was.
    ///
    /// # Errors
    /// Any I/O error opening the destination (a FIFO blocks here until it has a reader).
    pub fn stream(self) -> io::Result<OutputStream> {
        let (writer, commit) = match self.kind {
            Kind::Fd(fd) => (descriptor(fd)?, None),
            Kind::Special(p) => (OpenOptions::new().write(true).open(p)?, None),
            Kind::Regular {
                dest,
                mut pending,
                mode,
                owner,
                ..
            } => {
                let mut p = pending.take().expect("prepared until finished");
                let file = p.file().try_clone()?;
                let commit = Commit {
                    pending: p,
                    dest,
                    mode,
                    owner,
                };
                (file, Some(commit))
            }
        };
        Ok(OutputStream {
            writer: BufWriter::new(writer),
            commit,
        })
    }

    fn replace(
        &mut self,
        write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let Kind::Regular {
            dest,
            dir,
            name,
            pending,
            mode,
            owner,
        } = &mut self.kind
        else {
            unreachable!("only regular files are replaced")
        };
        // After a failed replacement (a full disk) the next one starts a new temporary file.
        let mut p = match pending.take() {
            Some(p) => p,
            None => Pending::create(dir, name)?,
        };
        let mut w = BufWriter::new(p.file().try_clone()?);
        write(&mut w)?;
        w.flush()?;
        drop(w);
        settle(p.file(), *mode, *owner)?;
        p.persist(dest)
    }
}

/// An output being written in pieces; see [`Output::stream`].
#[derive(Debug)]
pub struct OutputStream {
    writer: BufWriter<File>,
    commit: Option<Commit>,
}

/// What committing a stream to a regular file takes: its temporary file, the destination,
/// and the mode and owner the new file gets.
#[derive(Debug)]
struct Commit {
    pending: Pending,
    dest: PathBuf,
    mode: u32,
    owner: Option<(u32, u32)>,
}

impl OutputStream {
    /// Flushes and, for a regular file, syncs and renames it into place.
    ///
    /// # Errors
    /// Any I/O error flushing, syncing or renaming; the temporary file is then removed.
    pub fn commit(self) -> io::Result<()> {
        let file = self.writer.into_inner().map_err(|e| e.into_error())?;
        match self.commit {
            Some(c) => {
                settle(&file, c.mode, c.owner)?;
                c.pending.persist(&c.dest)
            }
            None => Ok(()),
        }
    }
}

impl Write for OutputStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// Writes `contents` to `path` by the rules above, in one step (checks and writes).
///
/// # Errors
/// The [`OutputError`] of [`Output::prepare`], or the I/O error of writing, as text.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), OutputError> {
    let q = crate::quoted(path);
    Output::prepare(path)?
        .finish(contents)
        .map_err(|e| OutputError::Io(q, e))
}

/// Flushes a finished temporary file to disk with the destination's mode and owner.
fn settle(file: &File, mode: u32, owner: Option<(u32, u32)>) -> io::Result<()> {
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    if let Some((uid, gid)) = owner {
        // Only root can give a file away; for anyone else the file is theirs already, or
        // keeping the old owner is not possible and the caller's ownership is right.
        // SAFETY: fchown on a descriptor we own; no memory is passed.
        let fd = std::os::fd::AsRawFd::as_raw_fd(file);
        let _ = unsafe { libc::fchown(fd, uid, gid) };
    }
    file.sync_all()
}

/// A regular destination: its temporary file, created now, beside the resolved path.
fn regular(
    q: &str,
    dest: PathBuf,
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<Kind, OutputError> {
    let dir = dest.parent().unwrap_or(Path::new("/")).to_path_buf();
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pending = Pending::create(&dir, &name).map_err(|e| OutputError::Io(q.into(), e))?;
    Ok(Kind::Regular {
        dest,
        dir,
        name,
        pending: Some(pending),
        mode,
        owner,
    })
}

/// `path` resolved by [`links::resolve`]: every link on the way checked against the kernel's
/// `fs.protected_symlinks` rule.
fn checked_links(path: &Path, q: &str) -> Result<PathBuf, OutputError> {
    links::resolve(path).map_err(|e| match e {
        links::Unresolved::Forbidden(f) => OutputError::ProtectedSymlink {
            path: q.into(),
            link: crate::quoted(&f.link),
            link_owner: f.link_owner,
            dir: crate::quoted(&f.dir),
            dir_owner: f.dir_owner,
        },
        links::Unresolved::Io(e) => OutputError::Io(q.into(), e),
    })
}

/// Refuses a destination whose resolution changed since its links were checked (a link
/// swapped in meanwhile): the file written is the one checked.
fn unchanged(q: &str, dest: &Path, checked: Option<&Path>) -> Result<(), OutputError> {
    match checked {
        Some(c) if c != dest => Err(OutputError::Io(
            q.into(),
            io::Error::other("the path changed while it was checked; try again"),
        )),
        _ => Ok(()),
    }
}

/// A name that does not exist yet: its directory must, and the name must fit.
fn new_file(path: &Path, q: &str, checked: Option<&Path>) -> Result<Kind, OutputError> {
    let text = path.as_os_str().as_encoded_bytes();
    let Some(name) = path.file_name().filter(|_| !text.ends_with(b"/")) else {
        return Err(OutputError::Directory(q.into()));
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(OutputError::NoDirectory(crate::quoted(dir)));
    }
    let len = name.as_encoded_bytes().len();
    let max = name_max(dir);
    if len > max {
        return Err(OutputError::NameTooLong {
            path: q.into(),
            len,
            max,
        });
    }
    let dir = std::fs::canonicalize(dir).map_err(|e| OutputError::Io(q.into(), e))?;
    unchanged(q, &dir.join(name), checked)?;
    let mode = 0o666 & !umask();
    regular(q, dir.join(name), mode, None)
}

/// `NAME_MAX` of the file system holding `dir` (`statvfs(3)`), 255 when it cannot be read.
fn name_max(dir: &Path) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return 255;
    };
    // SAFETY: statvfs writes into the zeroed struct we own; `c` is a valid C string.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) == 0 && s.f_namemax > 0 {
            s.f_namemax as usize
        } else {
            255
        }
    }
}

/// The process's umask, from `/proc/self/status` (Linux 4.7+, proc(5)); 022 if absent.
/// Reading it this way avoids `umask(2)`, which can only be read by changing it.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// Whether `path` may be opened for writing (`access(2)` with `W_OK`), without opening it.
fn writable(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a valid C string; access reads it only.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The descriptor a path names, if it is one of this process's: `/dev/stdout` (1),
/// `/dev/stderr` (2), `/dev/fd/N`, `/proc/self/fd/N` and `/proc/PID/fd/N` with our PID —
/// followed link by link, since `/dev/stdout` is itself a link to `/proc/self/fd/1`.
/// Writing through the descriptor (not by opening the path again) keeps the shell's file
/// offset, so `--json /dev/stdout > out` appends to what the run printed instead of
/// overwriting it.
fn descriptor_alias(path: &Path) -> Option<i32> {
    use std::os::unix::ffi::OsStrExt;
    let own = format!("/proc/{}/fd/", std::process::id());
    let mut p = path.to_path_buf();
    for _ in 0..8 {
        // Bytes, not text: a link whose name is not UTF-8 may still lead to /dev/stdout.
        let s = p.as_os_str().as_bytes();
        let fd_text = s
            .strip_prefix(b"/dev/fd/")
            .or_else(|| s.strip_prefix(b"/proc/self/fd/"))
            .or_else(|| s.strip_prefix(b"/proc/thread-self/fd/"))
            .or_else(|| s.strip_prefix(own.as_bytes()));
        if let Some(n) = fd_text {
            return std::str::from_utf8(n).ok()?.parse().ok();
        }
        match s {
            b"/dev/stdout" if std::fs::read_link(&p).is_err() => return Some(1),
            b"/dev/stderr" if std::fs::read_link(&p).is_err() => return Some(2),
            _ => {}
        }
        let target = std::fs::read_link(&p).ok()?;
        p = if target.is_absolute() {
            target
        } else {
            p.parent().unwrap_or(Path::new("/")).join(target)
        };
    }
    None
}

/// A new handle on descriptor `fd` (`dup(2)`), after flushing Rust's buffered stdout so the
/// order of what was printed and what is written is kept.
fn descriptor(fd: i32) -> io::Result<File> {
    if fd == 1 {
        io::stdout().flush()?;
    }
    // SAFETY: dup returns a new descriptor we then own, or -1.
    let new = unsafe { libc::dup(fd) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a fresh descriptor owned by nobody else.
    Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(new) })
}

#[cfg(test)]
mod tests;
