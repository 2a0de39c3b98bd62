//! The engine's errors: a kind that programs match on, a sentence in the engine's own words
//! (settings, never command-line flags — the CLI and the periodic library word them for
//! their users) and the OS error underneath, if any.

use std::fmt;
use std::io;

/// A setting of a run, named in [`ErrorKind::InvalidConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Setting {
    /// The period.
    Interval,
    /// The number of wake-ups.
    Loops,
    /// The length of the run.
    Duration,
    /// The wake-up method (its limits: clock, threads, period).
    Method,
    /// The measuring threads and their CPUs.
    Threads,
    /// A time budget (`tickscope clocks`).
    Budget,
}

/// What went wrong, for programs; the sentence is in [`Error`]'s `Display`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A setting is out of range or inconsistent with another.
    InvalidConfig {
        /// Which setting.
        setting: Setting,
    },
    /// A setting asked for explicitly could not be applied: a privilege, a limit or the
    /// kernel refused it (the sentence says what is missing and how to allow it).
    Setup,
    /// An OS call failed in a way no option fixes.
    Os,
}

/// Why a run could not start or had to end.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<io::Error>,
}

impl Error {
    /// What kind of error this is.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The sentence, in the engine's words (also the `Display` form).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// A setting out of range or inconsistent.
    pub(crate) fn config(setting: Setting, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::InvalidConfig { setting },
            message: message.into(),
            source: None,
        }
    }

    /// A setting asked for that cannot be applied; `message` says why and how to allow it.
    pub(crate) fn setup(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Setup,
            message: message.into(),
            source: None,
        }
    }

    /// An OS call that failed while doing `context`.
    pub(crate) fn os(context: impl Into<String>, source: io::Error) -> Self {
        Error {
            kind: ErrorKind::Os,
            message: format!("{}: {source}", context.into()),
            source: Some(source),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}
