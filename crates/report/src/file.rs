//! Writing result files so that a reader never sees a partial one.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `contents` to `path` atomically: into a temporary file in the same directory,
/// flushed to disk, then renamed over `path` (`rename(2)` is atomic within a file system).
/// An interrupted write leaves either the old file or the complete new one.
///
/// # Errors
/// Any I/O error creating, writing, syncing or renaming; the temporary file is removed.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(contents)?;
    file.commit()
}

/// A file written in pieces (streamed) that appears at its path only when complete.
///
/// Writes go through a [`BufWriter`] into a hidden temporary file next to the destination
/// (`.NAME.PID.tmp`); [`AtomicFile::commit`] flushes, syncs and renames it over the
/// destination. Dropped without a commit (an error, a panic), the temporary file is removed
/// and the destination is left as it was.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file for `path`.
    ///
    /// # Errors
    /// `path` has no file name, or the temporary file cannot be created (for example the
    /// directory does not exist or is not writable).
    pub fn create(path: &Path) -> io::Result<Self> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&tmp)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            writer: Some(BufWriter::new(file)),
        })
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, syncs and renames the temporary file over the destination.
    ///
    /// # Errors
    /// Any I/O error flushing, syncing or renaming; the temporary file is then removed.
    pub fn commit(mut self) -> io::Result<()> {
        let writer = self.writer.take().expect("the writer lives until commit");
        let result = (|| {
            let file = writer.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            fs::rename(&self.tmp, &self.path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&self.tmp);
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer
            .as_mut()
            .expect("the writer lives until commit")
            .write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer
            .as_mut()
            .expect("the writer lives until commit")
            .flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_leaving_no_temporary() {
        let dir = std::env::temp_dir().join(format!("tickscope-write-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn uncommitted_stream_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("tickscope-stream-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.csv");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"a,b\n").unwrap();
        drop(f);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"a,b\n").unwrap();
        f.commit().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"a,b\n");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_directory_is_an_error() {
        assert!(write_atomic(Path::new("/nonexistent-dir/x.json"), b"x").is_err());
    }
}
