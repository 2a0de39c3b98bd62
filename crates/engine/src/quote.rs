//! Paths in messages: quoted, and never more than one line.
//!
//! Every error message of tickscope is one line (docs/run.md, "Errors"). A path may contain a
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

/// `text` (a name, a label, a title) with its control characters (C0, DEL, C1), the Unicode
/// line and paragraph separators and the bidirectional and zero-width formatting characters
/// escaped as [`quoted`] escapes them (`\n`, `\u{1b}`, `\u{202e}`); everything else, quotes
/// and backslashes included, stays as it is. A name from a file or the command line then
/// cannot retitle, clear or otherwise drive the terminal (an escape sequence such as
/// `ESC ]0;…BEL` shows as `\u{1b}]0;…\u{7}`), nor reorder the line, and it stays on one line.
///
/// # Panics
/// Never.
pub fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}' | '\u{feff}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match unsafe_char(c) {
            true => out.extend(c.escape_debug()),
            false => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
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
    fn control_characters_in_names_are_escaped() {
        let e = escaped("x\u{1b}]0;owned\u{7}\u{1b}[2J\ny");
        assert_eq!(e, "x\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\ny");
        assert!(!e.chars().any(char::is_control));
        assert_eq!(escaped("it's \"µs\" a\\b"), "it's \"µs\" a\\b");
        assert_eq!(escaped("ab\u{202e}c"), "ab\\u{202e}c");
        assert!(matches!(escaped("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn plain_paths_are_only_quoted() {
        assert_eq!(quoted(Path::new("/tmp/r.json")), "'/tmp/r.json'");
    }
}
