//! Wake-up methods: the ways Linux can wake a periodic task.
//!
//! A method is asked to block until an absolute expiry on the run's clock and to return the
//! time it woke, read once from that clock. Everything else — latency, period, overruns — is
//! the worker's business, so a new method is one file behind [`WakeMethod`] that defines
//! its [`MethodDescriptor`], plus one registration line in the `methods!` table below
//! (see [`registry`]). What a method cannot do (a clock, several threads) is
//! said before a run starts by [`check`], from the descriptor; methods that spin share
//! [`spin`], periodic kernel timers share [`kernel_timer`].

pub mod kernel_timer;
mod limits;
pub mod margin;
pub mod registry;
mod signals;
pub mod spin;
mod throttle;

pub use busy::Busy;
pub use epoll::{Epoll, EpollForm};
pub use hybrid::Hybrid;
pub use itimer::{AlarmBlock, Itimer};
pub use limits::{check, explain_setup_error, setup_error};
pub use margin::{Margin, MarginReport, MarginTuner};
pub use nanosleep::Nanosleep;
pub use nanosleep_abs::NanosleepAbs;
pub use nanosleep_rel::NanosleepRel;
pub use poll::Poll;
pub use posix_timer::{timer_signal, PosixTimer};
pub use registry::{CreateFn, MethodDescriptor, PeriodStep, ProcessGuard, Spin, ThreadLimit};
pub use select::Select;
pub use spin::{KernelClock, SpinClock};
pub use throttle::throttle_warning;
pub use timerfd::Timerfd;

use crate::time::{read_clock, to_timespec, ClockId, Nanos};
use serde::{Deserialize, Serialize};
use std::io;

/// One way of waiting for an expiry. Implementations live on the measuring thread.
///
/// Contract for [`WakeMethod::wait`]: no allocation, no lock, no I/O; the wait system call(s)
/// and one clock read. Busy-waiting methods read the clock repeatedly by their nature.
pub trait WakeMethod: Send {
    /// Which method this is.
    fn kind(&self) -> MethodKind;

    /// The current time on the run's clock (ns). Called outside the measuring loop.
    fn now(&self) -> Nanos;

    /// Prepares kernel objects (file descriptors, timers) on the measuring thread before the
    /// first wait. `first_expiry` is the absolute time of the first wake-up; `period` > 0.
    ///
    /// # Errors
    /// The OS error that stopped the method being set up (for example `ENOSYS` where the
    /// kernel lacks the call).
    fn arm(&mut self, first_expiry: Nanos, period: Nanos) -> io::Result<()> {
        let _ = (first_expiry, period);
        Ok(())
    }

    /// Blocks until `expiry` (absolute ns on the run's clock) and returns the wake time.
    /// `last_woke` is the previous wake time (or the start time before the first wait);
    /// relative methods sleep for `expiry - last_woke`.
    ///
    /// # Errors
    /// [`io::ErrorKind::Interrupted`] when a signal cut the wait short (the worker checks its
    /// stop flag and calls again); any other OS error ends the run.
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos>;

    /// Free-form description of the kernel interface actually used, for the result file
    /// (for example `clock_nanosleep(TIMER_ABSTIME)`).
    fn interface(&self) -> &'static str;

    /// The coarsest step in which this method can express a timeout, in ns (1 when it takes
    /// a `timespec`; 1 000 000 for millisecond timeouts).
    fn granularity_ns(&self) -> Nanos {
        1
    }

    /// What the method itself observed over the run (the hybrid's margin, the busy-wait's
    /// naps, a kernel timer's own overrun count). Called after the measuring loop.
    fn report(&self) -> MethodReport {
        MethodReport::default()
    }
}

/// What a method observed about itself over a run; each field only for the methods it
/// concerns (absent from the JSON otherwise).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MethodReport {
    /// `hybrid`: the margin used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<MarginReport>,
    /// `busy`: naps taken (`--busy-sleep-every`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naps: Option<u64>,
    /// `timerfd`, `posix-timer`: missed periods as the kernel counted them (expirations
    /// beyond one per notification), beside the engine's own count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_overruns: Option<u64>,
}

impl MethodReport {
    /// Combines the reports of several threads: counts add up; the margin is the report of
    /// the thread whose final margin was largest.
    pub fn merge<'a>(reports: impl IntoIterator<Item = &'a MethodReport>) -> MethodReport {
        let mut out = MethodReport::default();
        for r in reports {
            out.naps = add_counts(out.naps, r.naps);
            out.timer_overruns = add_counts(out.timer_overruns, r.timer_overruns);
            if let Some(m) = &r.margin {
                if out.margin.as_ref().is_none_or(|o| m.final_ns > o.final_ns) {
                    out.margin = Some(m.clone());
                }
            }
        }
        out
    }
}

// The registry: one line per wake-up method (see `registry.rs`). The order is the order of
// `--method all`. The module named after `in` defines `DESCRIPTOR` and the method's type.
registry::methods! {
    /// `clock_nanosleep(clock, TIMER_ABSTIME, expiry)`: sleeps to an absolute expiry. The default,
    /// as in cyclictest and the hrtimers seed.
    NanosleepAbs = "nanosleep-abs" in nanosleep_abs,
    /// `clock_nanosleep(clock, 0, expiry - last_woke)`: a relative sleep aimed at the same grid.
    NanosleepRel = "nanosleep-rel" in nanosleep_rel,
    /// `nanosleep(expiry - last_woke)`: the plain call, relative, CLOCK_MONOTONIC only.
    Nanosleep = "nanosleep" in nanosleep,
    /// A periodic `timerfd` read for its expiration count.
    Timerfd = "timerfd" in timerfd,
    /// A periodic POSIX timer signalling the measuring thread, taken with `sigwaitinfo`.
    PosixTimer = "posix-timer" in posix_timer,
    /// `setitimer(ITIMER_REAL)` and a SIGALRM handler (one measuring thread only).
    Itimer = "itimer" in itimer,
    /// Sleep through `ppoll`'s timeout (no descriptors).
    Poll = "poll" in poll,
    /// Sleep through `pselect`'s timeout (no descriptors).
    Select = "select" in select,
    /// Sleep through an epoll wait's timeout (`epoll_pwait2`, else `epoll_wait`).
    Epoll = "epoll" in epoll,
    /// Spin reading the clock until the expiry, optionally napping every N readings.
    Busy = "busy" in busy,
    /// Sleep until `expiry − margin`, then spin.
    Hybrid = "hybrid" in hybrid,
}

impl MethodKind {
    /// Parses a name as returned by [`MethodKind::name`]; `None` for anything else.
    pub fn from_name(name: &str) -> Option<MethodKind> {
        MethodKind::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// The kernel call that makes the method, with its manual section (for messages).
    pub fn kernel_call(self) -> &'static str {
        self.descriptor().kernel_call
    }

    /// The one clock the method's kernel timer runs on, for methods whose call takes no
    /// clock (`nanosleep`, `itimer`, `poll`, `select`, `epoll`); `None` for methods that
    /// take the run's clock.
    pub fn fixed_clock(self) -> Option<ClockId> {
        self.descriptor().fixed_clock
    }

    /// The method names for help texts: `nanosleep-abs, nanosleep-rel, …` in
    /// [`MethodKind::ALL`] order.
    pub fn names_list() -> String {
        MethodKind::NAMES.join(", ")
    }
}

/// Tunables some methods take. Methods ignore the fields that do not concern them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodOptions {
    /// `busy`: nap after every N clock readings before the expiry (the Cpp-Periodic-Task
    /// seed's `step_sleep`, see [`Busy`]); `None`: never.
    #[serde(default)]
    pub busy_sleep_every: Option<u32>,
    /// `hybrid`: the margin before the expiry at which the sleep ends (see [`Hybrid`]).
    #[serde(default)]
    pub margin: Margin,
}

/// Builds a method that waits on `clock`. Call it on the measuring thread: the signal-driven
/// methods aim their signal at the calling thread.
///
/// # Errors
/// [`io::ErrorKind::Unsupported`] when the method cannot run on `clock` (see [`check`]); an
/// OS error if the method's kernel objects cannot be created (for example `ENOSYS`, or
/// `EBUSY` for a second `itimer` in the process); [`explain_setup_error`] words it.
pub fn create(
    kind: MethodKind,
    clock: ClockId,
    options: &MethodOptions,
) -> io::Result<Box<dyn WakeMethod>> {
    limits::check_clock(kind, clock).map_err(|e| io::Error::new(io::ErrorKind::Unsupported, e))?;
    (kind.descriptor().create)(clock, options)
}

/// Sum of two optional counts; `None` only when both are.
fn add_counts(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x + y),
        (x, y) => x.or(y),
    }
}

/// The error of a wait before [`WakeMethod::arm`] set the method up.
pub(crate) fn not_armed() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "wait before arm")
}

/// A relative wait aimed at an absolute grid: sleeps (with `sleep`) for `expiry − last_woke`
/// — the time from the previous wake-up's clock read, so that everything between that read
/// and the call counts as latency — unless that is not positive, then reads `clock` once.
///
/// # Errors
/// The error of `sleep`.
#[inline]
pub(crate) fn relative_wait(
    expiry: Nanos,
    last_woke: Nanos,
    clock: libc::clockid_t,
    sleep: impl FnOnce(&libc::timespec) -> io::Result<()>,
) -> io::Result<Nanos> {
    let remaining = expiry - last_woke;
    if remaining > 0 {
        sleep(&to_timespec(remaining))?;
    }
    Ok(read_clock(clock))
}

/// Turns a system call's return value (negative on failure, with `errno`) into a result.
#[inline]
pub(crate) fn syscall_result(ret: impl Into<i64>) -> io::Result<()> {
    if ret.into() < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Turns the return value of `clock_nanosleep(2)` (0 or an error number) into a result.
pub(crate) fn nanosleep_result(ret: libc::c_int) -> io::Result<()> {
    match ret {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for &m in MethodKind::ALL {
            assert_eq!(MethodKind::from_name(m.name()), Some(m));
        }
        assert_eq!(MethodKind::from_name("bogus"), None);
    }

    #[test]
    fn every_method_file_is_registered_and_reachable_by_name() {
        // Each method file under wait/ declares a DESCRIPTOR; each must be in the registry.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wait");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
            if text
                .lines()
                .any(|l| l.starts_with("pub(super) const DESCRIPTOR: "))
            {
                files += 1;
            }
        }
        assert_eq!(MethodKind::ALL.len(), files);
        assert_eq!(MethodKind::NAMES.len(), files);
        for (k, &m) in MethodKind::ALL.iter().enumerate() {
            assert_eq!(MethodKind::from_name(m.name()), Some(m));
            assert_eq!(MethodKind::NAMES[k], m.name());
            let json = serde_json_name(m);
            assert_eq!(json, m.name());
        }
        let mut names = MethodKind::NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MethodKind::ALL.len(), "duplicate method names");
    }

    /// The serde name of `m` (from the registry's rename), through serde's own path.
    fn serde_json_name(m: MethodKind) -> String {
        use serde::de::value::{Error, StrDeserializer};
        use serde::de::IntoDeserializer;
        let d: StrDeserializer<'_, Error> = m.name().into_deserializer();
        assert_eq!(MethodKind::deserialize(d).unwrap(), m);
        m.name().to_string()
    }

    #[test]
    fn every_method_wakes_after_its_expiry_on_the_real_kernel() {
        for &kind in MethodKind::ALL {
            let mut m = create(kind, ClockId::Monotonic, &MethodOptions::default()).unwrap();
            let start = m.now();
            let period = 200_000;
            m.arm(start + period, period).unwrap();
            let mut last = start;
            for k in 1..=20 {
                let expiry = start + k * period;
                let woke = m.wait(expiry, last).unwrap();
                assert!(woke >= last, "{}: time went backwards", kind.name());
                last = woke;
            }
        }
    }
}
