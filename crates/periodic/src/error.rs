//! What can go wrong with a periodic loop, and the errno each failure maps to in the C ABI.

use std::io;

/// Why a loop could not be built, set up, or wait.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is out of range; the message names it and the range (errno `EINVAL`).
    #[error("{0}")]
    InvalidArgument(String),
    /// The strategy cannot run with the options asked for, for example on that clock
    /// (errno `ENOTSUP`).
    #[error("{0}")]
    Unsupported(String),
    /// An OS call failed; the message says what was tried and, for settings that need a
    /// privilege, how to grant it.
    #[error("{message}")]
    Os {
        /// One sentence for the user, including the OS error.
        message: String,
        /// The OS error itself.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The positive `errno` value this error stands for: `EINVAL`, `ENOTSUP`, or the OS error
    /// number (`EIO` when the OS error carries none).
    pub fn errno(&self) -> i32 {
        match self {
            Error::InvalidArgument(_) => libc::EINVAL,
            Error::Unsupported(_) => libc::ENOTSUP,
            Error::Os { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
        }
    }

    pub(crate) fn os(message: String, source: io::Error) -> Self {
        Error::Os { message, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_of_each_kind() {
        assert_eq!(Error::InvalidArgument("x".into()).errno(), libc::EINVAL);
        assert_eq!(Error::Unsupported("x".into()).errno(), libc::ENOTSUP);
        let e = Error::os("m".into(), io::Error::from_raw_os_error(libc::EPERM));
        assert_eq!((e.errno(), e.to_string()), (libc::EPERM, "m".to_string()));
        let e = Error::os("m".into(), io::Error::other("no number"));
        assert_eq!(e.errno(), libc::EIO);
    }
}
