//! What each method can do on this run (the limits its descriptor declares), said before it
//! starts, and why a method could not be set up, said in the user's terms.

use super::MethodKind;
use crate::error::{Error, ErrorKind, Message, Setting};
use crate::time::{ClockId, Nanos};
use std::io;

/// Whether `kind` can wait on `clock`.
///
/// # Errors
/// [`ErrorKind::Unsupported`] (the clock): one sentence saying why not and what to use
/// instead.
pub(crate) fn check_clock(kind: MethodKind, clock: ClockId) -> Result<(), Error> {
    let name = kind.name();
    let d = kind.descriptor();
    let unsupported = |m: Message| {
        Err(Error::new(
            ErrorKind::Unsupported {
                setting: Setting::Clock,
            },
            m,
        ))
    };
    if let Some(only) = d.fixed_clock {
        if clock != only {
            return unsupported(
                Message::default()
                    .set(Setting::Method, name)
                    .t(format!(
                        ": {} takes no clock and always runs on CLOCK_{}, so it cannot measure \
                         CLOCK_{}; use ",
                        d.kernel_call,
                        only.name().to_uppercase(),
                        clock.name().to_uppercase(),
                    ))
                    .set(Setting::Clock, only.name())
                    .t(" (nanosleep-abs and nanosleep-rel sleep on any clock)"),
            );
        }
    }
    if d.refused_clocks.contains(&clock) {
        let others: Vec<&str> = ClockId::ALL
            .into_iter()
            .filter(|c| !d.refused_clocks.contains(c))
            .map(ClockId::name)
            .collect();
        return unsupported(
            Message::default()
                .set(Setting::Method, name)
                .t(format!(
                    ": {} does not accept CLOCK_{}; use ",
                    d.kernel_call,
                    clock.name().to_uppercase(),
                ))
                .set(Setting::Clock, words_or(&others)),
        );
    }
    Ok(())
}

/// `a`, `a or b`, `a, b or c`.
fn words_or(words: &[&str]) -> String {
    match words.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Whether `kind` can run with `threads` measuring threads on `clock` every `period` ns,
/// from the limits its [`super::MethodDescriptor`] declares.
///
/// # Errors
/// One sentence saying what cannot be done and what to do instead:
/// [`ErrorKind::Unsupported`] for the clock, [`ErrorKind::InvalidConfig`] for the number
/// of threads or the interval.
pub fn check(kind: MethodKind, clock: ClockId, threads: usize, period: Nanos) -> Result<(), Error> {
    check_clock(kind, clock)?;
    let name = kind.name();
    let d = kind.descriptor();
    if let Some(limit) = d.thread_limit {
        if threads > limit.max {
            let only = match limit.max {
                1 => "only one measuring thread".to_string(),
                n => format!("at most {n} measuring threads"),
            };
            return Err(Error::invalid(
                Setting::Threads,
                Message::default()
                    .set(Setting::Method, name)
                    .t(format!(
                        ": {}, so it can drive {only} (asked for {threads}); use ",
                        limit.why
                    ))
                    .set(Setting::Threads, limit.max.to_string())
                    .t(", or ")
                    .set(Setting::Method, limit.instead),
            ));
        }
    }
    if let Some(step) = d.period_step {
        if period % step.step != 0 {
            return Err(Error::invalid(
                Setting::Interval,
                Message::default().set(Setting::Method, name).t(format!(
                    ": {} and {period} ns is not; choose an interval of {}",
                    step.why, step.unit
                )),
            ));
        }
    }
    Ok(())
}

/// The error of a method that could not be created or armed: [`ErrorKind::Unsupported`]
/// for a call the kernel lacks or a clock the method cannot use, [`ErrorKind::Refused`]
/// otherwise; the message is [`explain_setup_error`]'s.
pub fn setup_error(kind: MethodKind, err: io::Error) -> Error {
    let setting = Setting::Method;
    let k = if err.raw_os_error() == Some(libc::ENOSYS) || err.kind() == io::ErrorKind::Unsupported
    {
        ErrorKind::Unsupported { setting }
    } else {
        ErrorKind::Refused { setting }
    };
    Error::new(k, explain_setup_error(kind, &err)).with_source(err)
}

/// One sentence for a method that could not be created or armed.
pub fn explain_setup_error(kind: MethodKind, err: &io::Error) -> Message {
    let (name, call) = (kind.name(), kind.kernel_call());
    match err.raw_os_error() {
        Some(libc::ENOSYS) => Message::text(format!(
            "method {name} is not supported by this kernel: {call} is not implemented (ENOSYS); \
             choose another "
        ))
        .setting(Setting::Method)
        .t(" (nanosleep-abs works on every kernel)"),
        Some(libc::EBUSY) if kind.descriptor().busy_means.is_some() => Message::text(format!(
            "method {name}: {}",
            kind.descriptor().busy_means.unwrap_or_default()
        )),
        _ if err.kind() == io::ErrorKind::Unsupported => {
            match err.get_ref().and_then(|e| e.downcast_ref::<Error>()) {
                Some(e) => e.message().clone(),
                None => Message::text(err.to_string()),
            }
        }
        _ => Message::text(format!("cannot set up method {name} ({call}): {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{EngineWords, Piece};

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
            assert!(check(kind, ClockId::Monotonic, 1, MS).is_ok());
            let e = check(kind, ClockId::Realtime, 1, MS).unwrap_err();
            let clock = Piece::Set(Setting::Clock, Some("monotonic".into()));
            assert!(e.message().pieces().contains(&clock), "{e}");
            let e = e.describe(&EngineWords);
            assert!(
                e.contains("CLOCK_MONOTONIC") && e.contains("clock monotonic"),
                "{e}"
            );
        }
        assert!(check(MethodKind::NanosleepRel, ClockId::Tai, 4, 1).is_ok());
        let e = check(MethodKind::Timerfd, ClockId::Tai, 1, MS).unwrap_err();
        assert!(e.to_string().contains("CLOCK_TAI"), "{e}");
    }

    #[test]
    fn itimer_refuses_several_threads_and_sub_microsecond_periods() {
        let e = check(MethodKind::Itimer, ClockId::Monotonic, 2, MS).unwrap_err();
        let one = Piece::Set(Setting::Threads, Some("1".into()));
        assert!(e.message().pieces().contains(&one), "{e}");
        assert_eq!(
            e.kind(),
            &ErrorKind::InvalidConfig {
                setting: Setting::Threads
            }
        );
        let e = e.describe(&EngineWords);
        assert!(
            e.contains("only one measuring thread") && e.contains("threads 1"),
            "{e}"
        );
        let e = check(MethodKind::Itimer, ClockId::Monotonic, 1, 11_764_706).unwrap_err();
        assert!(e.to_string().contains("whole µs"), "{e}");
        assert!(check(MethodKind::PosixTimer, ClockId::Monotonic, 8, 11_764_706).is_ok());
    }

    #[test]
    fn a_call_the_kernel_lacks_is_named() {
        let e = io::Error::from_raw_os_error(libc::ENOSYS);
        let m = explain_setup_error(MethodKind::Timerfd, &e).to_string();
        assert!(
            m.starts_with("method timerfd is not supported by this kernel: timerfd_create(2)"),
            "{m}"
        );
        let e = io::Error::from_raw_os_error(libc::EBUSY);
        assert!(explain_setup_error(MethodKind::Itimer, &e)
            .to_string()
            .contains("already in use"));
        let e = io::Error::from_raw_os_error(libc::EINVAL);
        let m = explain_setup_error(MethodKind::PosixTimer, &e).to_string();
        assert!(
            m.starts_with("cannot set up method posix-timer (timer_create(2)): "),
            "{m}"
        );
    }

    #[test]
    fn create_refuses_a_clock_the_method_cannot_use() {
        let o = super::super::MethodOptions::default();
        let Err(e) = super::super::create(MethodKind::Nanosleep, ClockId::Boottime, &o) else {
            panic!("nanosleep was created on CLOCK_BOOTTIME");
        };
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(explain_setup_error(MethodKind::Nanosleep, &e)
            .to_string()
            .contains("CLOCK_BOOTTIME"));
    }
}
