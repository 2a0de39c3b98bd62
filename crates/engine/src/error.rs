//! The engine's errors: what the user asked for that cannot be done, said plainly.

/// Why a run could not start or had to end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is inconsistent (a bug in the caller or a value out of range).
    #[error("{0}")]
    Config(String),
    /// A setting that was explicitly asked for could not be applied; the message says what
    /// is missing and how to allow it.
    #[error("{0}")]
    Setup(String),
    /// An OS call failed in a way the user cannot fix by changing options.
    #[error("{context}: {source}")]
    Os {
        /// What tickscope was doing.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
}
