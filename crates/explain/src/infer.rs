//! Which threads of a program are periodic, and with what period, wait and clock — inferred
//! from their timer wake-ups ([`crate::wakeups`]) alone.
//!
//! A thread is periodic when it has at least [`MIN_WAKE_UPS`] wake-ups and at least
//! [`MIN_REGULAR`] of the intervals between its successive expiries are a whole number of
//! periods (1 for a loop that keeps up, more after an overrun) within a tolerance of a tenth
//! of the period (at least 20 µs). The period is the median interval. For a loop that sleeps
//! a relative time after its work, the interval is the sleep plus the work: that is the
//! loop's period as it runs, and what its expiries are spaced by.
//!
//! The wait method is read from the timer's callback (`timerfd_tmrproc`, `posix_timer_fn`,
//! `it_real_fn`) or, for a sleeper (`hrtimer_wakeup`), from the system call it returned from
//! and, for `clock_nanosleep`, its flags (`TIMER_ABSTIME`, clock_nanosleep(2)); the most
//! frequent one wins.

use crate::events::Nanos;
use crate::wakeups::{WakeUp, CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_TAI};
use serde::{Deserialize, Serialize};

/// Fewest wake-ups a thread needs to be called periodic.
pub const MIN_WAKE_UPS: usize = 5;
/// Smallest share (0–1) of intervals that must fit the period.
pub const MIN_REGULAR: f64 = 0.8;
/// Smallest tolerance of an interval around a whole number of periods, ns.
const MIN_TOLERANCE_NS: Nanos = 20_000;

/// The system calls whose timeout attach has a method for (see [`Wait`]): the waits a
/// thread that appears while attached may use (`include/uapi/asm-generic/unistd.h`, x86-64
/// numbers through `libc`).
pub const WAIT_SYSCALLS: [i64; 11] = [
    libc::SYS_clock_nanosleep,
    libc::SYS_nanosleep,
    libc::SYS_read,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_select,
    libc::SYS_pselect6,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_futex,
];

/// How a thread waits for its timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Wait {
    /// `clock_nanosleep(…, TIMER_ABSTIME, …)`.
    NanosleepAbs,
    /// `clock_nanosleep(…, 0, …)` (glibc's `nanosleep()` and `usleep()` too).
    NanosleepRel,
    /// The `nanosleep` system call.
    Nanosleep,
    /// A `timerfd` read (`timerfd_tmrproc`).
    Timerfd,
    /// A POSIX timer's signal (`posix_timer_fn`), taken in any call.
    PosixTimer,
    /// `setitimer(ITIMER_REAL)`'s SIGALRM (`it_real_fn`).
    Itimer,
    /// `poll`/`ppoll`'s timeout.
    Poll,
    /// `select`/`pselect6`'s timeout.
    Select,
    /// An epoll wait's timeout.
    Epoll,
    /// A futex wait's timeout: `pthread_cond_timedwait`, `sem_timedwait`, … (futex(2)).
    Futex,
    /// Another system call's timeout (its number).
    Other(i64),
}

impl Wait {
    /// The wait of one wake-up.
    pub fn of(w: &WakeUp) -> Wait {
        match w.function {
            "timerfd_tmrproc" => return Wait::Timerfd,
            "posix_timer_fn" => return Wait::PosixTimer,
            "it_real_fn" => return Wait::Itimer,
            _ => {}
        }
        match w.nr {
            libc::SYS_clock_nanosleep => match w.enter_args {
                Some(a) if a[1] & libc::TIMER_ABSTIME as u64 != 0 => Wait::NanosleepAbs,
                _ => Wait::NanosleepRel,
            },
            libc::SYS_nanosleep => Wait::Nanosleep,
            libc::SYS_poll | libc::SYS_ppoll => Wait::Poll,
            libc::SYS_select | libc::SYS_pselect6 => Wait::Select,
            libc::SYS_epoll_wait | libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2 => Wait::Epoll,
            libc::SYS_futex => Wait::Futex,
            nr => Wait::Other(nr),
        }
    }

    /// tickscope's name of the same method (`tickscope run --method`), or `None` for
    /// [`Wait::Other`].
    pub fn method_name(&self) -> Option<&'static str> {
        Some(match self {
            Wait::NanosleepAbs => "nanosleep-abs",
            Wait::NanosleepRel => "nanosleep-rel",
            Wait::Nanosleep => "nanosleep",
            Wait::Timerfd => "timerfd",
            Wait::PosixTimer => "posix-timer",
            Wait::Itimer => "itimer",
            Wait::Poll => "poll",
            Wait::Select => "select",
            Wait::Epoll => "epoll",
            Wait::Futex => "futex",
            Wait::Other(_) => return None,
        })
    }

    /// What the thread calls, in words (`clock_nanosleep(TIMER_ABSTIME)`, `futex timeout`,
    /// `system call 7`).
    pub fn describe(&self) -> String {
        match self {
            Wait::NanosleepAbs => "clock_nanosleep(TIMER_ABSTIME)".into(),
            Wait::NanosleepRel => "clock_nanosleep (relative)".into(),
            Wait::Nanosleep => "nanosleep".into(),
            Wait::Timerfd => "timerfd read".into(),
            Wait::PosixTimer => "POSIX timer signal".into(),
            Wait::Itimer => "setitimer SIGALRM".into(),
            Wait::Poll => "poll timeout".into(),
            Wait::Select => "select timeout".into(),
            Wait::Epoll => "epoll_wait timeout".into(),
            Wait::Futex => "futex timeout".into(),
            Wait::Other(nr) => format!("system call {nr}"),
        }
    }
}

/// The name of a clock id (`monotonic`, `realtime`, `boottime`, `tai`).
pub fn clock_name(clock: u64) -> &'static str {
    match clock {
        CLOCK_REALTIME => "realtime",
        CLOCK_MONOTONIC => "monotonic",
        CLOCK_BOOTTIME => "boottime",
        CLOCK_TAI => "tai",
        _ => "other",
    }
}

/// One thread's pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    /// The thread.
    pub tid: i32,
    /// Timer wake-ups seen.
    pub wake_ups: usize,
    /// The median interval between successive expiries, ns (0 with fewer than two).
    pub period_ns: Nanos,
    /// Share (0–1) of intervals that are a whole number of periods.
    pub regular: f64,
    /// Whether the thread is periodic (see the module text).
    pub periodic: bool,
    /// The most frequent wait.
    pub wait: Wait,
    /// The most frequent clock id of its timers.
    pub clock: u64,
    /// The system calls its wake-ups returned from (each at least a tenth of them).
    pub syscalls: Vec<i64>,
}

/// The most frequent value of `items` (the first of equals); `None` when empty.
fn most_frequent<T: PartialEq + Copy>(items: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for it in items {
        match counts.iter_mut().find(|(v, _)| *v == it) {
            Some((_, n)) => *n += 1,
            None => counts.push((it, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(v, _)| v)
}

/// Infers the pattern of one thread from its wake-ups, in order; `None` without any.
pub fn infer(tid: i32, wake_ups: &[WakeUp]) -> Option<Pattern> {
    let wait = most_frequent(wake_ups.iter().map(Wait::of))?;
    let clock = most_frequent(wake_ups.iter().map(|w| w.clock)).unwrap_or(CLOCK_MONOTONIC);
    let mut nrs: Vec<i64> = Vec::new();
    for w in wake_ups {
        let n = wake_ups.iter().filter(|x| x.nr == w.nr).count();
        if n * 10 >= wake_ups.len() && !nrs.contains(&w.nr) {
            nrs.push(w.nr);
        }
    }
    let mut gaps: Vec<Nanos> = wake_ups
        .windows(2)
        .map(|p| p[1].expiry - p[0].expiry)
        .filter(|g| *g > 0)
        .collect();
    gaps.sort_unstable();
    let period = gaps.get(gaps.len() / 2).copied().unwrap_or(0);
    let regular = match (period > 0, gaps.len()) {
        (true, n) if n > 0 => {
            let tol = (period / 10).max(MIN_TOLERANCE_NS);
            let fits = gaps
                .iter()
                .filter(|&&g| {
                    let k = ((g + period / 2) / period).max(1);
                    (g - k * period).abs() <= tol
                })
                .count();
            fits as f64 / n as f64
        }
        _ => 0.0,
    };
    Some(Pattern {
        tid,
        wake_ups: wake_ups.len(),
        period_ns: period,
        regular,
        periodic: wake_ups.len() >= MIN_WAKE_UPS && regular >= MIN_REGULAR,
        wait,
        clock,
        syscalls: nrs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::parse_line;
    use crate::wakeups::{ClockOffsets, Seen, Tracker};

    /// A recording of a three-thread program on this project's 6.18 VM: an absolute 1 ms
    /// `clock_nanosleep` loop (11977), a 2 ms `timerfd` (11979), a relative 3 ms
    /// `clock_nanosleep` (11980).
    const FIXTURE: &str = include_str!("../tests/fixtures/attach-three-threads.txt");

    fn patterns() -> Vec<Pattern> {
        let mut t = Tracker::new(ClockOffsets::default(), None);
        let mut by_tid: std::collections::BTreeMap<i32, Vec<WakeUp>> = Default::default();
        for e in FIXTURE.lines().filter_map(parse_line) {
            if let Seen::WakeUp(w) = t.push(&e) {
                by_tid.entry(w.tid).or_default().push(w);
            }
        }
        by_tid.iter().filter_map(|(t, w)| infer(*t, w)).collect()
    }

    #[test]
    fn the_recorded_threads_are_found_with_their_period_wait_and_clock() {
        let p = patterns();
        let got: Vec<(i32, Wait, bool)> = p.iter().map(|p| (p.tid, p.wait, p.periodic)).collect();
        assert_eq!(
            got,
            vec![
                (11977, Wait::NanosleepAbs, true),
                (11979, Wait::Timerfd, true),
                (11980, Wait::NanosleepRel, true),
            ]
        );
        assert_eq!(p[0].period_ns, 1_000_000);
        assert_eq!(p[1].period_ns, 2_000_000);
        // Relative: the 3 ms sleep plus the loop's own time.
        assert!(
            (3_000_000..3_200_000).contains(&p[2].period_ns),
            "{:?}",
            p[2]
        );
        assert_eq!(p[0].syscalls, vec![libc::SYS_clock_nanosleep]);
        assert_eq!(p[1].syscalls, vec![libc::SYS_read]);
        assert!(p.iter().all(|p| clock_name(p.clock) == "monotonic"));
    }

    /// A recording (this project's 6.18 VM, under a load average of about 28) of a C program
    /// whose thread 22800 waits 200 times with `pthread_cond_timedwait` on a condition
    /// variable on CLOCK_MONOTONIC to an absolute 1 ms grid — `futex(FUTEX_WAIT_BITSET)`,
    /// ETIMEDOUT (−110) — while its main thread 22795 signals the condition every 20 ms
    /// from `usleep` (a relative `clock_nanosleep` on CLOCK_REALTIME). A signalled wait
    /// cancels its timer (`hrtimer_cancel`) and waits again for the same expiry.
    const FUTEX: &str = include_str!("../tests/fixtures/attach-futex-condvar.txt");

    #[test]
    fn a_condition_variable_timeout_is_a_measured_futex_wait() {
        let mut t = Tracker::new(ClockOffsets::default(), None);
        let mut by_tid: std::collections::BTreeMap<i32, Vec<WakeUp>> = Default::default();
        for e in FUTEX.lines().filter_map(parse_line) {
            if let Seen::WakeUp(w) = t.push(&e) {
                by_tid.entry(w.tid).or_default().push(w);
            }
        }
        let loop_ = infer(22800, &by_tid[&22800]).unwrap();
        assert_eq!(loop_.wait, Wait::Futex);
        assert_eq!(loop_.wait.method_name(), Some("futex"));
        assert_eq!(loop_.wait.describe(), "futex timeout");
        // Every timed-out wait, and only those: 200 waits end in ETIMEDOUT.
        assert_eq!(loop_.wake_ups, 200);
        assert!(loop_.periodic && loop_.period_ns == 1_000_000, "{loop_:?}");
        assert_eq!(
            (loop_.syscalls.clone(), clock_name(loop_.clock)),
            (vec![libc::SYS_futex], "monotonic")
        );
        // Each wake-up is answered by its own expiry, never earlier than it.
        assert!(by_tid[&22800]
            .iter()
            .all(|w| w.woke + crate::wakeups::TS_RESOLUTION_NS > w.expiry));
        let main = infer(22795, &by_tid[&22795]).unwrap();
        assert_eq!(
            (main.wait, clock_name(main.clock)),
            (Wait::NanosleepRel, "monotonic")
        );
        assert!(WAIT_SYSCALLS.contains(&libc::SYS_futex));
    }

    #[test]
    fn irregular_or_few_wake_ups_are_not_periodic() {
        let w = |expiry: Nanos| WakeUp {
            tid: 1,
            expiry,
            woke: expiry + 10_000,
            nr: libc::SYS_epoll_wait,
            enter_args: None,
            function: "hrtimer_wakeup",
            clock: CLOCK_MONOTONIC,
            armed_at: 0,
            passed: 0,
        };
        let few: Vec<WakeUp> = [0, 1_000_000, 2_000_000].map(w).to_vec();
        let p = infer(1, &few).unwrap();
        assert!(!p.periodic && p.period_ns == 1_000_000 && p.wait == Wait::Epoll);
        let irregular: Vec<WakeUp> = [0, 1_000_000, 1_300_000, 4_000_000, 4_100_000, 9_000_000]
            .map(w)
            .to_vec();
        assert!(!infer(1, &irregular).unwrap().periodic);
        // An overrun (a gap of two periods) still fits the pattern.
        let overrun: Vec<WakeUp> = [0, 1, 2, 4, 5, 6, 7].map(|k| w(k * 1_000_000)).to_vec();
        let p = infer(1, &overrun).unwrap();
        assert!(p.periodic && p.regular == 1.0 && p.period_ns == 1_000_000);
        assert!(infer(1, &[]).is_none());
    }
}
