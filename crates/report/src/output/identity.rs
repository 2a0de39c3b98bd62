//! Whether two outputs, or an output and an input, are the same file.
//!
//! `--json X --csv X` would lose one of them, `--samples X --histogram-file X` corrupts
//! both, and `report r.json -o r.json` would overwrite its own input. Files that exist are
//! compared by device and inode (`stat(2)`), which sees through links, `..` and bind
//! mounts; a name that does not exist yet by its canonical directory and file name;
//! descriptors by number.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What identifies a file for this comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// A descriptor of this process (0 standard input, 1 standard output).
    Descriptor(i32),
    /// An existing file: device and inode numbers, and whether it is a character device.
    Inode {
        /// `st_dev`.
        dev: u64,
        /// `st_ino`.
        ino: u64,
        /// A character device such as `/dev/null`.
        char_device: bool,
    },
    /// A name that does not exist yet: canonical directory joined with the file name.
    Name(PathBuf),
}

impl Identity {
    /// The identity of descriptor `fd`.
    pub fn of_descriptor(fd: i32) -> Identity {
        Identity::Descriptor(fd)
    }

    /// The identity of the file at `path` (following links), or of the name if nothing is
    /// there yet; `-` is standard input (for an input path).
    pub fn of_path(path: &Path) -> Identity {
        use std::os::unix::fs::FileTypeExt;
        if path.as_os_str() == "-" {
            return Identity::Descriptor(0);
        }
        if let Ok(m) = std::fs::metadata(path) {
            return Identity::Inode {
                dev: m.dev(),
                ino: m.ino(),
                char_device: m.file_type().is_char_device(),
            };
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        Identity::Name(dir.join(path.file_name().unwrap_or_default()))
    }

    /// True when writing both would destroy one: the same file, unless it is a character
    /// device (writing to `/dev/null` twice destroys nothing).
    pub fn clashes_with(&self, other: &Identity) -> bool {
        self == other
            && !matches!(
                self,
                Identity::Inode {
                    char_device: true,
                    ..
                }
            )
    }
}

/// The first pair of identities that clash, as indices `(i, j)` with `i < j`; `None` when
/// all are distinct.
///
/// # Panics
/// Never.
pub fn first_clash(ids: &[Identity]) -> Option<(usize, usize)> {
    ids.iter().enumerate().find_map(|(i, a)| {
        ids.iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, b)| a.clashes_with(b))
            .map(|(j, _)| (i, j))
    })
}
