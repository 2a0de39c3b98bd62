//! What each method can do on this run, said before it starts, and why a method could not
//! be set up, said in the user's terms.

use super::MethodKind;
use crate::time::{ClockId, Nanos};
use std::io;

/// Whether `kind` can wait on `clock`.
///
/// # Errors
/// One sentence saying why not and what to use instead.
pub(crate) fn check_clock(kind: MethodKind, clock: ClockId) -> Result<(), String> {
    let name = kind.name();
    if let Some(only) = kind.fixed_clock() {
        if clock != only {
            return Err(format!(
                "method {name}: {} takes no clock and always runs on CLOCK_{}, so it cannot \
                 measure CLOCK_{}; measure CLOCK_{} (the nanosleep-abs and nanosleep-rel \
                 methods sleep on any clock)",
                kind.kernel_call(),
                only.name().to_uppercase(),
                clock.name().to_uppercase(),
                only.name().to_uppercase()
            ));
        }
    }
    Ok(())
}

/// Whether `kind` can run with `threads` measuring threads on `clock` every `period` ns.
///
/// # Errors
/// One sentence saying what cannot be done and what to do instead.
pub fn check(
    kind: MethodKind,
    clock: ClockId,
    threads: usize,
    period: Nanos,
) -> Result<(), String> {
    check_clock(kind, clock)?;
    (kind.descriptor().limits)(clock, threads, period)
}

/// One sentence for a method that could not be created or armed.
pub fn explain_setup_error(kind: MethodKind, err: &io::Error) -> String {
    let (name, call) = (kind.name(), kind.kernel_call());
    match err.raw_os_error() {
        Some(libc::ENOSYS) => format!(
            "method {name} is not supported by this kernel: {call} is not implemented (ENOSYS); \
             choose another method (nanosleep-abs works on every kernel)"
        ),
        Some(libc::EBUSY) if kind == MethodKind::Itimer => format!(
            "method {name}: the process's interval timer is already in use by another measuring \
             thread (setitimer(ITIMER_REAL) is one per process)"
        ),
        _ if err.kind() == io::ErrorKind::Unsupported => err.to_string(),
        _ => format!("cannot set up method {name} ({call}): {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn clockless_methods_refuse_other_clocks() {
        for kind in [
            MethodKind::Nanosleep,
            MethodKind::Itimer,
            MethodKind::Poll,
            MethodKind::Select,
            MethodKind::Epoll,
        ] {
            assert_eq!(check(kind, ClockId::Monotonic, 1, MS), Ok(()));
            let e = check(kind, ClockId::Realtime, 1, MS).unwrap_err();
            assert!(
                e.contains("CLOCK_MONOTONIC") && e.contains("measure CLOCK_MONOTONIC"),
                "{e}"
            );
        }
        assert!(check(MethodKind::NanosleepRel, ClockId::Tai, 4, 1).is_ok());
        let e = check(MethodKind::Timerfd, ClockId::Tai, 1, MS).unwrap_err();
        assert!(e.contains("CLOCK_TAI"), "{e}");
    }

    #[test]
    fn itimer_refuses_several_threads_and_sub_microsecond_periods() {
        let e = check(MethodKind::Itimer, ClockId::Monotonic, 2, MS).unwrap_err();
        assert!(
            e.contains("only one measuring thread") && e.contains("use one thread"),
            "{e}"
        );
        let e = check(MethodKind::Itimer, ClockId::Monotonic, 1, 11_764_706).unwrap_err();
        assert!(e.contains("whole µs"), "{e}");
        assert!(check(MethodKind::PosixTimer, ClockId::Monotonic, 8, 11_764_706).is_ok());
    }

    #[test]
    fn a_call_the_kernel_lacks_is_named() {
        let e = io::Error::from_raw_os_error(libc::ENOSYS);
        let m = explain_setup_error(MethodKind::Timerfd, &e);
        assert!(
            m.starts_with("method timerfd is not supported by this kernel: timerfd_create(2)"),
            "{m}"
        );
        let e = io::Error::from_raw_os_error(libc::EBUSY);
        assert!(explain_setup_error(MethodKind::Itimer, &e).contains("already in use"));
        let e = io::Error::from_raw_os_error(libc::EINVAL);
        let m = explain_setup_error(MethodKind::PosixTimer, &e);
        assert!(
            m.starts_with("cannot set up method posix-timer (timer_create(2)): "),
            "{m}"
        );
    }
}
