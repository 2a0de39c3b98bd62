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

/// What a run asked of the system when it was refused, named in [`ErrorKind::Permission`],
/// [`ErrorKind::Unsupported`] and [`ErrorKind::Setup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Facility {
    /// Pinning a thread to a CPU (`sched_setaffinity(2)`).
    Affinity,
    /// A scheduling policy and priority (`sched_setscheduler(2)`, `sched_setattr(2)`):
    /// permission is `CAP_SYS_NICE` or `RLIMIT_RTPRIO`.
    Policy,
    /// The thread's timer slack (`prctl(PR_SET_TIMERSLACK)`).
    TimerSlack,
    /// Locking memory (`mlockall(2)`): permission is `CAP_IPC_LOCK` or `RLIMIT_MEMLOCK`.
    MemoryLock,
    /// Holding a CPU latency request on `/dev/cpu_dma_latency` (kernel doc
    /// `Documentation/power/pm_qos_interface.rst`): root-only by default.
    PmQos,
    /// The wake-up method's timer or clock (a kernel without it, or a clock it refuses).
    WakeMethod,
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
    /// A setting could not be applied because the process lacks a privilege (`EPERM`,
    /// `EACCES`); the sentence says which and how to grant it.
    Permission {
        /// What was refused.
        facility: Facility,
    },
    /// This kernel or machine does not offer what was asked (`ENOENT`, `ENODEV`, `ENOSYS`,
    /// `EOPNOTSUPP`, or a method that cannot use the clock).
    Unsupported {
        /// What is missing.
        facility: Facility,
    },
    /// The kernel refused a setting for another reason (e.g. `EBUSY` from
    /// `SCHED_DEADLINE` admission control, `EINVAL` for parameters it rejects).
    Setup {
        /// What was refused.
        facility: Facility,
    },
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
    pub fn config(setting: Setting, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::InvalidConfig { setting },
            message: message.into(),
            source: None,
        }
    }

    /// `facility` was refused with `source`; `message` says why and how to allow it. The
    /// kind follows the OS error: see [`ErrorKind::Permission`], [`ErrorKind::Unsupported`],
    /// [`ErrorKind::Setup`].
    pub fn refused(facility: Facility, message: impl Into<String>, source: io::Error) -> Self {
        let kind = match (source.raw_os_error(), source.kind()) {
            (Some(libc::EPERM | libc::EACCES), _) | (_, io::ErrorKind::PermissionDenied) => {
                ErrorKind::Permission { facility }
            }
            (Some(libc::ENOENT | libc::ENODEV | libc::ENOSYS | libc::EOPNOTSUPP), _)
            | (_, io::ErrorKind::Unsupported) => ErrorKind::Unsupported { facility },
            _ => ErrorKind::Setup { facility },
        };
        Error {
            kind,
            message: message.into(),
            source: Some(source),
        }
    }

    /// A failure with no OS error underneath and no option that fixes it (a measuring
    /// thread that died during setup).
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Os,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(errno: i32) -> ErrorKind {
        let e = io::Error::from_raw_os_error(errno);
        Error::refused(Facility::Policy, "refused", e)
            .kind()
            .clone()
    }

    #[test]
    fn a_refusal_is_classified_by_its_os_error() {
        let facility = Facility::Policy;
        assert_eq!(kind(libc::EPERM), ErrorKind::Permission { facility });
        assert_eq!(kind(libc::EACCES), ErrorKind::Permission { facility });
        assert_eq!(kind(libc::ENOENT), ErrorKind::Unsupported { facility });
        assert_eq!(kind(libc::ENOSYS), ErrorKind::Unsupported { facility });
        assert_eq!(kind(libc::EBUSY), ErrorKind::Setup { facility });
        assert_eq!(kind(libc::EINVAL), ErrorKind::Setup { facility });
        let unsupported = io::Error::new(io::ErrorKind::Unsupported, "no such clock");
        let e = Error::refused(Facility::WakeMethod, "no", unsupported);
        assert_eq!(
            e.kind(),
            &ErrorKind::Unsupported {
                facility: Facility::WakeMethod
            }
        );
        assert!(std::error::Error::source(&e).is_some());
    }
}
