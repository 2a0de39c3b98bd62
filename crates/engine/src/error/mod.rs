//! The engine's errors: a kind a program can act on, and a message that names settings,
//! not flags ([`Message`]); a front end words it ([`Error::describe`]).

mod message;

pub use message::{installed_words, set_words, EngineWords, Message, Piece, Setting, Words};

use std::fmt;
use std::io;

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The process may not apply `setting`; `missing` is what it lacks (a capability, a
    /// resource limit, root), in a few words.
    Permission {
        /// The setting refused.
        setting: Setting,
        /// What the process lacks.
        missing: String,
    },
    /// `setting` cannot be had here: the kernel, the method or the clock does not support it.
    Unsupported {
        /// The setting that cannot be had.
        setting: Setting,
    },
    /// The configuration is inconsistent: `setting` is out of range or contradicts another.
    InvalidConfig {
        /// The setting at fault.
        setting: Setting,
    },
    /// The system refused `setting` for another reason than a permission (the message says
    /// which, for example SCHED_DEADLINE admission control).
    Refused {
        /// The setting refused.
        setting: Setting,
    },
    /// An OS call failed in a way the user cannot fix by changing settings.
    Os {
        /// What the engine was doing.
        context: String,
    },
}

/// Why a run could not start or had to end: a kind, a message naming settings, and the OS
/// error behind it if any ([`std::error::Error::source`]).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: Message,
    source: Option<io::Error>,
}

impl Error {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: Message) -> Self {
        Error {
            kind,
            message,
            source: None,
        }
    }

    /// An OS error while doing `context` (the message is "context: OS error").
    pub fn os(context: impl Into<String>, source: io::Error) -> Self {
        let context = context.into();
        Error {
            message: Message::text(context.clone()),
            kind: ErrorKind::Os { context },
            source: Some(source),
        }
    }

    /// An invalid `setting`, saying `message`.
    pub fn invalid(setting: Setting, message: Message) -> Self {
        Error::new(ErrorKind::InvalidConfig { setting }, message)
    }

    /// The same error with `source` as its cause.
    pub fn with_source(mut self, source: io::Error) -> Self {
        self.source = Some(source);
        self
    }

    /// The kind.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The message, without the OS error of an [`ErrorKind::Os`].
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The error in `words`: the message, followed by ": OS error" for [`ErrorKind::Os`].
    pub fn describe(&self, words: &dyn Words) -> String {
        let text = self.message.render(words);
        match (&self.kind, &self.source) {
            (ErrorKind::Os { .. }, Some(e)) => format!("{text}: {e}"),
            _ => text,
        }
    }

    /// Whether the failure is the user's to fix by changing a setting (every kind but
    /// [`ErrorKind::Os`]).
    pub fn is_setting(&self) -> bool {
        !matches!(self.kind, ErrorKind::Os { .. })
    }
}

impl fmt::Display for Error {
    /// [`Error::describe`] in the installed words ([`installed_words`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(installed_words()))
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn os_errors_carry_their_cause() {
        let e = Error::os(
            "cannot start measuring thread 0",
            io::Error::from_raw_os_error(libc::EAGAIN),
        );
        assert!(e
            .describe(&EngineWords)
            .starts_with("cannot start measuring thread 0: "));
        assert!(e.source().is_some() && !e.is_setting());
        let e = Error::invalid(
            Setting::Loops,
            Message::text("")
                .setting(Setting::Loops)
                .t(" must be at least 1"),
        );
        assert_eq!(e.describe(&EngineWords), "loops must be at least 1");
        assert_eq!(
            e.kind(),
            &ErrorKind::InvalidConfig {
                setting: Setting::Loops
            }
        );
        assert!(e.source().is_none() && e.is_setting());
    }
}
