//! Wake-up methods: the ways Linux can wake a periodic task.
//!
//! A method is asked to block until an absolute expiry on the run's clock and to return the
//! time it woke, read once from that clock. Everything else — latency, period, overruns — is
//! the worker's business, so a new method is one file behind [`WakeMethod`] with its
//! `DESCRIPTOR` ([`MethodDescriptor`]: kernel call, clock, constructor, limits, process-wide
//! set-up, spin share) plus one line in the [`registry`]. What a method cannot do (a clock,
//! several threads) is said before a run starts by [`check`]; methods that spin share
//! [`spin`], periodic kernel timers share [`kernel_timer`].

mod busy;
mod epoll;
mod futex;
mod hybrid;
mod itimer;
pub mod kernel_timer;
mod limits;
pub mod margin;
mod nanosleep;
mod nanosleep_abs;
mod nanosleep_rel;
mod poll;
mod posix_timer;
pub mod registry;
mod select;
mod signals;
mod sleep_until;
pub mod spin;
mod throttle;
mod timerfd;

pub use busy::Busy;
pub use epoll::{Epoll, EpollForm};
pub use futex::Futex;
pub use hybrid::Hybrid;
pub use itimer::{reserve_alarm, AlarmBlock, Itimer};
pub use limits::{check, explain_setup_error};
pub use margin::{Margin, MarginStats, MarginTuner};
pub use nanosleep::Nanosleep;
pub use nanosleep_abs::NanosleepAbs;
pub use nanosleep_rel::NanosleepRel;
pub use poll::Poll;
pub use posix_timer::{timer_signal, PosixTimer};
pub use registry::{MethodDescriptor, MethodKind};
pub use select::Select;
pub use spin::{KernelClock, SpinClock};
pub use throttle::{spin_share, starvation, throttle_warning, Starvation};
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

    /// [`WakeMethod::wait`] with the expiry also as the normalised `timespec` the measuring
    /// loop keeps (`expiry_ts == to_timespec(expiry)`), so that a method sleeping to an
    /// absolute `timespec` needs no conversion per wake-up. The default ignores it.
    ///
    /// # Errors
    /// As [`WakeMethod::wait`].
    #[inline]
    fn wait_at(
        &mut self,
        expiry: Nanos,
        expiry_ts: &libc::timespec,
        last_woke: Nanos,
    ) -> io::Result<Nanos> {
        let _ = expiry_ts;
        self.wait(expiry, last_woke)
    }

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
    fn report(&self) -> MethodObservations {
        MethodObservations::default()
    }
}

/// What a method observed about itself over a run; each field only for the methods it
/// concerns (absent from the JSON otherwise).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MethodObservations {
    /// `hybrid`: the margin used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<MarginStats>,
    /// `busy`: naps taken (`--busy-sleep-every`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naps: Option<u64>,
    /// `timerfd`, `posix-timer`: overruns as the kernel counted them (expirations
    /// beyond one per notification), beside the engine's own count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_overruns: Option<u64>,
    /// `itimer`: SIGALRMs that the kernel delivered to another thread of the process and
    /// that were passed on to the measuring thread with `tgkill(2)` (0 when every other
    /// thread blocks SIGALRM, as in the `tickscope` binary: see [`reserve_alarm`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals_forwarded: Option<u64>,
}

impl MethodObservations {
    /// Combines the reports of several threads: counts add up; the margin is the report of
    /// the thread whose final margin was largest.
    pub fn merge<'a>(
        reports: impl IntoIterator<Item = &'a MethodObservations>,
    ) -> MethodObservations {
        let mut out = MethodObservations::default();
        for r in reports {
            out.naps = add_counts(out.naps, r.naps);
            out.timer_overruns = add_counts(out.timer_overruns, r.timer_overruns);
            out.signals_forwarded = add_counts(out.signals_forwarded, r.signals_forwarded);
            if let Some(m) = &r.margin {
                if out.margin.as_ref().is_none_or(|o| m.final_ns > o.final_ns) {
                    out.margin = Some(m.clone());
                }
            }
        }
        out
    }
}

/// Tunables some methods take. Methods ignore the fields that do not concern them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodOptions {
    /// `busy`: nap after every N clock readings before the expiry (the Cpp-Periodic-Task
    /// Cpp-Periodic-Task's `step_sleep`, see [`Busy`]); `None`: never.
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
    limits::check_clock(kind, clock)
        .map_err(|msg| io::Error::new(io::ErrorKind::Unsupported, msg))?;
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
