//! What a wake-up method is: [`WakeMethod`], the one trait every method file implements, the
//! tunables some methods take ([`MethodOptions`]) and what a method observed about itself over
//! a run ([`MethodObservations`]).

use super::{Margin, MarginStats};
use crate::time::Nanos;
use serde::{Deserialize, Serialize};
use std::io;

/// One way of waiting for an expiry. Implementations live on the measuring thread.
///
/// Contract for [`WakeMethod::wait`]: no allocation, no lock, no I/O; the wait system call(s)
/// and one clock read. Busy-waiting methods read the clock repeatedly by their nature.
pub trait WakeMethod: Send {
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
    fn observations(&self) -> MethodObservations {
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
    /// thread blocks SIGALRM, as in the `tickscope` binary: see [`reserve_alarm`](super::reserve_alarm)).
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
    /// Cpp-Periodic-Task's `step_sleep`, see [`Busy`](super::Busy)); `None`: never.
    #[serde(default)]
    pub busy_sleep_every: Option<u32>,
    /// `hybrid`: the margin before the expiry at which the sleep ends (see [`Hybrid`](super::Hybrid)).
    #[serde(default)]
    pub margin: Margin,
}

/// Sum of two optional counts; `None` only when both are.
fn add_counts(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x + y),
        (x, y) => x.or(y),
    }
}
