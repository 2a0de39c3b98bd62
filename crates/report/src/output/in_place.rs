//! An output written at its own path while the run goes on, for a file that must be
//! readable before the run ends: the interval log of a days-long `tickscope monitor --hlog`.
//!
//! Every other regular output is replaced atomically at the end (see the [`super`] rules),
//! so a reader never sees a partial file. A log that grows line by line cannot be both:
//! here the destination is opened (created, or truncated) when the caller asks — the hlog
//! sink does with its first window, so that a run failing before it leaves an existing file
//! alone — and each piece is appended as one `write(2)` when the caller flushes. A reader — or the file left
//! by a killed process — then holds every complete piece, the last one included unless the
//! machine lost power during it. Safety is kept: the path was checked by
//! [`Output::prepare`]; it is opened with `O_NOFOLLOW` (a symbolic link planted since then
//! is refused) and `O_NONBLOCK` (a FIFO planted since then does not block), and must still
//! be a regular file once open. It keeps its mode and, as root, its owner, like a
//! replaced file.

use super::{Kind, Output, OutputStream};
use std::fs::OpenOptions;
use std::io::{self, BufWriter};
use std::os::unix::fs::OpenOptionsExt;

impl Output {
    /// Opens the output for writing in pieces at its own path (see the module docs); for
    /// standard output, a device or a FIFO, the same as [`Output::stream`].
    ///
    /// # Errors
    /// Any I/O error opening the destination, or one saying it is no longer a regular
    /// file.
    pub fn stream_in_place(self) -> io::Result<OutputStream> {
        let Kind::Regular {
            dest,
            pending,
            mode,
            owner,
            ..
        } = self.kind
        else {
            return self.stream();
        };
        drop(pending); // its temporary file is not needed: remove it
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&dest)?;
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("it is no longer a regular file"));
        }
        if let Some((uid, gid)) = owner {
            // SAFETY: fchown on a descriptor we own; no memory is passed.
            let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
            let _ = unsafe { libc::fchown(fd, uid, gid) };
        }
        Ok(OutputStream {
            writer: BufWriter::with_capacity(1 << 20, file),
            commit: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn pieces_are_visible_before_the_end_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.hlog");
        std::fs::write(&path, "old content that is replaced\n").unwrap();
        let mut s = Output::prepare(&path).unwrap().stream_in_place().unwrap();
        s.write_all(b"first line\n").unwrap();
        s.flush().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first line\n");
        s.write_all(b"second line\n").unwrap();
        s.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "first line\nsecond line\n"
        );
        s.commit().unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the log itself");
    }

    #[test]
    fn a_link_planted_after_the_check_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.hlog");
        let out = Output::prepare(&path).unwrap();
        let target = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(out.stream_in_place().is_err());
        assert!(!target.exists(), "nothing written through the planted link");
    }
}
