//! The names trace events carry — task command names, timer callbacks, IRQ handlers, softirq
//! and vector names, switch states — as [`Name`]s handed out by a bounded [`Interner`], so
//! that decoding a window of events allocates nothing per event once its names are known.
//!
//! A task's command name is at most `TASK_COMM_LEN - 1` = 15 bytes
//! (`include/linux/sched.h`); a busy host has a few hundred distinct ones, callbacks and
//! handlers a few dozen: the same few names recur in every window. A [`Name`] is a shared,
//! immutable string (a reference count, or a `'static` text for the names the decoders know
//! in advance): cloning one — into the window, into a range handed to the attribution —
//! copies a pointer.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// An immutable, cheaply cloned string: compares, orders, hashes, prints and serialises
/// exactly as the text it holds (a `String` with the same text is indistinguishable in any
/// output).
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Name {
    /// A name for a `'static` text (no allocation, ever).
    pub const fn from_static(text: &'static str) -> Self {
        Name(Repr::Static(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Shared(s) => s,
        }
    }
}

impl Default for Name {
    /// The empty name.
    fn default() -> Self {
        Name::from_static("")
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == other.as_str()
    }
}

impl From<&str> for Name {
    /// A name of its own (allocates; decoders use an [`Interner`]).
    fn from(text: &str) -> Self {
        Name(Repr::Shared(Arc::from(text)))
    }
}

impl From<String> for Name {
    fn from(text: String) -> Self {
        Name(Repr::Shared(Arc::from(text)))
    }
}

impl From<Name> for String {
    fn from(name: Name) -> Self {
        name.as_str().to_string()
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Name::from)
    }
}

/// Hands out one shared [`Name`] per distinct text, from a table of at most `cap` texts:
/// a text seen before costs a hash lookup, no allocation. When a new text would exceed the
/// cap the table is emptied and relearned (names already handed out stay valid: they own
/// their text), so a stream of ever-new names (a fork bomb's numbered commands) holds at
/// most `cap` texts here, whatever it runs for.
#[derive(Debug)]
pub struct Interner {
    table: HashSet<Name, foldhash::fast::RandomState>,
    cap: usize,
    /// Times the table was full and emptied (a sign of name churn).
    pub resets: u64,
}

/// The table size decoders use: 4096 names (a few hundred on a busy host; 4096 × ~40 bytes
/// with the table ≈ 0.2 MiB at most).
pub const NAMES_KEPT: usize = 4096;

impl Default for Interner {
    fn default() -> Self {
        Interner::new(NAMES_KEPT)
    }
}

impl Interner {
    /// An empty interner keeping at most `cap` (≥ 1) texts.
    pub fn new(cap: usize) -> Self {
        Interner {
            table: HashSet::default(),
            cap: cap.max(1),
            resets: 0,
        }
    }

    /// The shared name for `text` (allocates only the first time `text` is seen since the
    /// table was last emptied).
    pub fn intern(&mut self, text: &str) -> Name {
        if let Some(n) = self.table.get(text) {
            return n.clone();
        }
        if self.table.len() >= self.cap {
            self.table.clear();
            self.resets += 1;
        }
        let n = Name::from(text);
        self.table.insert(n.clone());
        n
    }

    /// The shared name for `bytes` up to the first NUL (a kernel `char[]` such as a task's
    /// `comm`), invalid UTF-8 replaced by U+FFFD.
    pub fn intern_bytes(&mut self, bytes: &[u8]) -> Name {
        let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
        // Valid UTF-8 (every name a task gives itself in practice) is checked without
        // building the lossy form's chunks.
        match std::str::from_utf8(&bytes[..end]) {
            Ok(s) => self.intern(s),
            Err(_) => self.intern(&String::from_utf8_lossy(&bytes[..end])),
        }
    }

    /// Texts in the table now (≤ the cap).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The most texts the table keeps.
    pub fn cap(&self) -> usize {
        self.cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_behaves_as_its_text() {
        let n = Name::from("rust lld");
        assert_eq!(n, "rust lld");
        assert_eq!("rust lld", n);
        assert_eq!(n, String::from("rust lld"));
        assert_eq!(
            format!("{n} {n:?}"),
            format!("{} {:?}", "rust lld", "rust lld")
        );
        assert_eq!(Name::from_static("x"), Name::from("x"));
        let (a, b) = (Name::from("a"), Name::from_static("b"));
        assert!(a < b);
        assert_eq!(serde_json::to_string(&n).unwrap(), "\"rust lld\"");
        let back: Name = serde_json::from_str("\"rust lld\"").unwrap();
        assert_eq!(back, n);
        assert_eq!(Name::default().len(), 0);
    }

    #[test]
    fn the_interner_shares_text_and_stays_within_its_cap() {
        let mut i = Interner::new(3);
        let a = i.intern("hog");
        let b = i.intern_bytes(b"hog\0\0\0\0\0");
        match (&a.0, &b.0) {
            (Repr::Shared(x), Repr::Shared(y)) => assert!(Arc::ptr_eq(x, y)),
            _ => panic!("interned names are shared"),
        }
        for k in 0..100 {
            i.intern(&format!("task-{k}"));
            assert!(i.len() <= i.cap());
        }
        assert!(i.resets > 0);
        assert_eq!(a, "hog", "a name handed out outlives a reset");
        // Bytes that are not UTF-8 read as the lossy text, as `String::from_utf8_lossy`.
        assert_eq!(i.intern_bytes(b"a\xffb\0c"), "a\u{FFFD}b");
        assert_eq!(i.intern_bytes(b"kworker/1:2"), "kworker/1:2");
    }
}
