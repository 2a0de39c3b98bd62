//! Paths in messages: quoted, and never more than one line.
//!
//! Every error message of tickscope is one line (README "Errors"). A path may contain a
//! newline, a quote or other control characters; [`quoted`] escapes them the way Rust's
//! `str::escape_debug` does (`\n`, `\t`, `\'`, `\u{1b}`), so the message stays one line and
//! the path can still be read back.

use std::path::Path;

/// `path` in single quotes, with control characters, quotes and backslashes escaped.
///
/// Non-UTF-8 bytes are shown as U+FFFD (the path's lossy form).
///
/// # Panics
/// Never.
pub fn quoted(path: &Path) -> String {
    format!("'{}'", path.to_string_lossy().escape_debug())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newline_stays_on_one_line() {
        let q = quoted(Path::new("a\nb.json"));
        assert_eq!(q, "'a\\nb.json'");
        assert!(!q.contains('\n'));
    }

    #[test]
    fn plain_paths_are_only_quoted() {
        assert_eq!(quoted(Path::new("/tmp/r.json")), "'/tmp/r.json'");
    }
}
