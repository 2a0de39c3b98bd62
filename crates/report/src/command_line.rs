//! The command line as recorded in a result document (`command_line`), losslessly.
//!
//! Linux passes arguments as byte strings (`execve(2)`); JSON strings are Unicode. An
//! argument that is valid UTF-8 is recorded exactly as given. An argument that is not is
//! recorded escaped, and its index is listed in `command_line_escaped`
//! (docs/result-schema.md): each byte that is not part of a valid UTF-8 sequence becomes
//! `\xHH` (two upper-case hexadecimal digits) and each backslash becomes `\\`; the valid
//! UTF-8 runs between them are kept as they are. Because the index says which arguments are
//! escaped, and escaping doubles every backslash, [`unescape`] gives back the original bytes
//! exactly — an argument that really is the four characters `\xFF` is not confused with the
//! byte 0xFF.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// The command line as a document records it: every argument as text, and the indices
/// (from 0, the program name) of those written escaped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Every argument, program name first; escaped ones as described in the module.
    pub args: Vec<String>,
    /// The indices into `args` of the escaped arguments, ascending; empty when every
    /// argument was valid UTF-8.
    pub escaped: Vec<usize>,
}

/// Records `args` (for example `std::env::args_os()`): valid UTF-8 as it is, anything else
/// [`escape`]d with its index listed.
///
/// # Panics
/// Never.
pub fn record(args: impl IntoIterator<Item = OsString>) -> Recorded {
    let mut out = Recorded::default();
    for (i, arg) in args.into_iter().enumerate() {
        match arg.into_string() {
            Ok(text) => out.args.push(text),
            Err(raw) => {
                out.args.push(escape(raw.as_bytes()));
                out.escaped.push(i);
            }
        }
    }
    out
}

/// `bytes` as text: valid UTF-8 runs as they are, a backslash as `\\`, every byte that is
/// not part of a valid UTF-8 sequence as `\xHH`.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// The bytes [`escape`] was given; `None` for text it cannot have produced (a lone
/// backslash, `\x` without two hexadecimal digits, any other escape).
pub fn unescape(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.extend_from_slice(&rest.as_bytes()[..at]);
        let tail = &rest[at + 1..];
        if let Some(after) = tail.strip_prefix('\\') {
            out.push(b'\\');
            rest = after;
        } else {
            let hex = tail.strip_prefix('x')?.get(..2)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[3..];
        }
    }
    out.extend_from_slice(rest.as_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn os(bytes: &[u8]) -> OsString {
        OsStr::from_bytes(bytes).to_os_string()
    }

    #[test]
    fn utf8_arguments_are_kept_as_they_are_even_with_backslashes() {
        let r = record([
            os(b"tickscope"),
            os(b"--json"),
            os("\\xFF é.json".as_bytes()),
        ]);
        assert_eq!(r.args, ["tickscope", "--json", "\\xFF é.json"]);
        assert!(r.escaped.is_empty());
    }

    #[test]
    fn other_bytes_are_escaped_and_their_index_listed() {
        let r = record([os(b"tickscope"), os(b"\xff.json"), os(b"a\\b\xc3")]);
        assert_eq!(r.args, ["tickscope", "\\xFF.json", "a\\\\b\\xC3"]);
        assert_eq!(r.escaped, [1, 2]);
    }

    #[test]
    fn escaping_round_trips_every_byte_string() {
        let cases: [&[u8]; 7] = [
            b"",
            b"\xff",
            b"\\xFF",
            b"\\",
            "é\u{1F600}\\x".as_bytes(),
            b"\xe2\x82",
            b"\x00\x80\xbf\xc0\xfe\xff\\\\x41",
        ];
        for bytes in cases {
            assert_eq!(
                unescape(&escape(bytes)).as_deref(),
                Some(bytes),
                "{bytes:?}"
            );
        }
        for b in 0..=255u8 {
            for c in [0x41u8, 0x80, 0xc3, 0xff] {
                let bytes = [b, c, b'\\', b];
                assert_eq!(unescape(&escape(&bytes)).as_deref(), Some(&bytes[..]));
            }
        }
    }

    #[test]
    fn text_escape_cannot_produce_is_refused() {
        for bad in ["\\", "a\\", "\\x", "\\xF", "\\xG0", "\\n", "\\xé0"] {
            assert_eq!(unescape(bad), None, "{bad}");
        }
    }
}
