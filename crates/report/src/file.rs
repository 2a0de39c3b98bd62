//! Writing result files so that a reader never sees a partial one.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `contents` to `path` atomically: into a temporary file in the same directory,
/// flushed to disk, then renamed over `path` (`rename(2)` is atomic within a file system).
/// An interrupted write leaves either the old file or the complete new one.
///
/// # Errors
/// Any I/O error creating, writing, syncing or renaming; the temporary file is removed.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
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
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
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
    fn missing_directory_is_an_error() {
        assert!(write_atomic(Path::new("/nonexistent-dir/x.json"), b"x").is_err());
    }
}
