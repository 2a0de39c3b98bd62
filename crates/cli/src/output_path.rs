//! Checking, before anything is measured, that a result file can be written where asked.

use crate::exit::Failure;
use std::path::Path;
use tickscope_report::quoted;

/// Fails with one line naming `flag` if the directory that would hold `path` does not exist,
/// so that a long run is not wasted on a file that cannot be written.
///
/// # Errors
/// [`Failure::Usage`] naming the flag and the missing directory.
pub fn check_output_dir(flag: &str, path: &Path) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Failure::Usage(format!(
            "{flag}: directory {} does not exist; create it or choose another path",
            quoted(dir)
        )))
    }
}
