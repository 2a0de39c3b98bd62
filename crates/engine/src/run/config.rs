//! What a run is asked to do: [`RunConfig`] and the policy request.

use super::defaults;
use crate::error::{Error, Setting};
use crate::grid::OverrunPolicy;
use crate::histogram::HIGHEST_TRACKABLE;
use crate::setup::Policy;
use crate::time::{ClockId, Nanos, NS_PER_SEC};
use crate::wait::{self, MethodKind, MethodOptions};
use serde::{Deserialize, Serialize};

/// The longest period a run (and a `tickscope` library loop) accepts, ns: one hour, the
/// range the statistics' histograms record exactly ([`HIGHEST_TRACKABLE`]), so that no
/// latency or period of a valid run is clamped. The one home of this limit: the CLI's `-i`
/// and the C API's period check use it from here.
pub const MAX_PERIOD_NS: Nanos = HIGHEST_TRACKABLE as Nanos;

/// The longest run, ns: 100 years (365-day years), as a duration (`-D`) or as loops × period
/// (`-l`). Far beyond any real measurement; it exists so that every expiry
/// (`start + k·period`, on any clock — `CLOCK_REALTIME` counts from 1970) stays within the
/// signed 64-bit ns range: about 56 years of `CLOCK_REALTIME` today, plus this, plus one
/// period, is below `i64::MAX` (about 292 years) until the 22nd century.
pub const MAX_RUN_NS: Nanos = 100 * 365 * 24 * 3600 * NS_PER_SEC;

/// Which policy to run the measuring threads under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyRequest {
    /// SCHED_FIFO priority [`super::AUTO_PRIORITY`] where the process may set it, else
    /// SCHED_OTHER (nice 0); the outcome and the reason are reported in
    /// [`Applied::policy_note`](super::Applied::policy_note).
    Auto,
    /// Exactly this policy, or an error that says what is missing.
    Exact(Policy),
}

/// Everything a run needs, already validated by the caller's option parsing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// How the threads wait.
    pub method: MethodKind,
    /// Tunables of the method.
    pub method_options: MethodOptions,
    /// The clock slept on and read.
    pub clock: ClockId,
    /// The period (interval between expiries), ns, > 0.
    pub period_ns: Nanos,
    /// Stop after this many wake-ups per thread (cyclictest `-l`).
    pub loops: Option<u64>,
    /// Stop before the first expiry at or after this long after the first expiry, ns.
    pub duration_ns: Option<Nanos>,
    /// Scheduling policy.
    pub policy: PolicyRequest,
    /// One entry per measuring thread: the CPU it is pinned to, or `None` for unpinned.
    pub cpus: Vec<Option<usize>>,
    /// Lock memory with `mlockall` (failure is reported, not fatal).
    pub mlock: bool,
    /// Timer slack for the measuring threads, ns; `None` leaves the default.
    pub timer_slack_ns: Option<u64>,
    /// CPU wake-up latency limit to hold through PM QoS, µs; `None` leaves it alone.
    pub pm_qos_us: Option<i32>,
    /// Treat a PM QoS failure as an error (the user asked for it explicitly).
    pub pm_qos_required: bool,
    /// What to do after an overrun.
    pub overrun: OverrunPolicy,
    /// Length of a statistics window, ns (normally one second).
    pub window_ns: Nanos,
    /// Stream raw wake-ups to the observer ([`RunEvent::Samples`](super::RunEvent::Samples)):
    /// every one, or only the late ones ([`RunConfig::stream_later_than`]).
    pub stream_samples: bool,
    /// With [`RunConfig::stream_samples`], stream only the wake-ups later than this (what
    /// `--explain` and `--on-late` need): the measuring loop compares each wake-up's latency
    /// with the threshold and pushes only those beyond it, instead of every one. `None`
    /// streams every wake-up.
    #[serde(skip)]
    pub stream_later_than: Option<crate::sample::LateThreshold>,
    /// Keep every window's statistics for [`ThreadStats::windows`] (the default). `false`
    /// keeps none, so that memory does not grow with the length of the run (`tickscope
    /// monitor`); the windows are still reported as they finish.
    ///
    /// [`ThreadStats::windows`]: crate::result::ThreadStats::windows
    #[serde(skip, default = "keep_windows_default")]
    pub keep_windows: bool,
    /// Attach each window's histograms to the windows reported
    /// ([`WindowStats::latency_buckets`]), for outputs that need a distribution per window
    /// (`--hlog`, `monitor`): built by the collector from the loop's window records, once a
    /// window, so the measuring loop does the same work with or without them. Off by default.
    ///
    /// [`WindowStats::latency_buckets`]: crate::result::WindowStats::latency_buckets
    #[serde(skip)]
    pub window_histograms: bool,
    /// Attach each window's latency histogram only ([`WindowStats::latency_buckets`]; not
    /// the period deviations'), for outputs that need no more (`--hlog`); implied by
    /// [`RunConfig::window_histograms`]. Off by default.
    ///
    /// [`WindowStats::latency_buckets`]: crate::result::WindowStats::latency_buckets
    #[serde(skip)]
    pub window_latency_histograms: bool,
    /// What the run measures with (the real system unless a test asks for virtual time);
    /// not written to result files.
    #[serde(skip)]
    pub backend: super::Backend,
}

/// [`RunConfig::keep_windows`]'s default: keep them.
fn keep_windows_default() -> bool {
    true
}

impl RunConfig {
    /// A default run: absolute sleeps on CLOCK_MONOTONIC every `period_ns`, one unpinned
    /// thread, for 10 s, policy auto, mlock, 1 ns slack, PM QoS 0 µs if allowed.
    pub fn new(period_ns: Nanos) -> Self {
        RunConfig {
            method: MethodKind::NanosleepAbs,
            method_options: MethodOptions::default(),
            clock: ClockId::Monotonic,
            period_ns,
            loops: None,
            duration_ns: Some(defaults::DURATION_NS),
            policy: PolicyRequest::Auto,
            cpus: vec![None],
            mlock: true,
            timer_slack_ns: Some(defaults::TIMER_SLACK_NS),
            pm_qos_us: Some(defaults::PM_QOS_US),
            pm_qos_required: false,
            overrun: OverrunPolicy::Skip,
            window_ns: NS_PER_SEC,
            stream_samples: false,
            stream_later_than: None,
            keep_windows: true,
            window_histograms: false,
            window_latency_histograms: false,
            backend: super::Backend::System,
        }
    }

    /// Checks what the engine relies on: a period in 1 ..= [`MAX_PERIOD_NS`], a window of at
    /// most [`MAX_WINDOW_PERIODS`](crate::worker::MAX_WINDOW_PERIODS) periods, a duration and
    /// loops × period of at most [`MAX_RUN_NS`], at least one thread, a method that can run
    /// with these settings.
    pub(super) fn validate(&self) -> Result<(), Error> {
        let bad = |setting, s: &str| Err(Error::config(setting, s));
        if self.period_ns <= 0 {
            return bad(Setting::Interval, "the interval must be positive");
        }
        if self.period_ns > MAX_PERIOD_NS {
            return bad(Setting::Interval, "the interval must be at most 1 h");
        }
        if self.window_ns <= 0 {
            return bad(Setting::Interval, "the statistics window must be positive");
        }
        if self.window_ns / self.period_ns > crate::worker::MAX_WINDOW_PERIODS {
            return bad(
                Setting::Interval,
                "the statistics window must hold at most 2^31 intervals",
            );
        }
        if self.cpus.is_empty() {
            return bad(Setting::Threads, "at least one measuring thread is needed");
        }
        if self.loops == Some(0) {
            return bad(Setting::Loops, "the number of wake-ups must be at least 1");
        }
        if self.duration_ns.is_some_and(|d| d <= 0) {
            return bad(Setting::Duration, "the duration must be positive");
        }
        if self.duration_ns.is_some_and(|d| d > MAX_RUN_NS) {
            return bad(Setting::Duration, "the duration must be at most 100 years");
        }
        if let Some(loops) = self.loops {
            if loops_span_ns(loops, self.period_ns).is_none_or(|ns| ns > MAX_RUN_NS) {
                return bad(
                    Setting::Loops,
                    "the number of wake-ups times the interval must be at most 100 years",
                );
            }
        }
        wait::check(self.method, self.clock, self.cpus.len(), self.period_ns)
            .map_err(|m| Error::config(Setting::Method, m))
    }
}

/// How long `loops` periods of `period` ns last, ns; `None` when that exceeds `i64::MAX`.
pub fn loops_span_ns(loops: u64, period: Nanos) -> Option<Nanos> {
    i64::try_from(loops).ok()?.checked_mul(period)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_of_period_duration_and_loops() {
        let ok = RunConfig::new(MAX_PERIOD_NS);
        assert!(ok.validate().is_ok());
        assert!(RunConfig::new(MAX_PERIOD_NS + 1).validate().is_err());
        let long = RunConfig {
            duration_ns: Some(MAX_RUN_NS + 1),
            ..RunConfig::new(1_000_000)
        };
        assert!(long.validate().is_err());
        for loops in [u64::MAX, (MAX_RUN_NS / MAX_PERIOD_NS) as u64 + 1] {
            let c = RunConfig {
                loops: Some(loops),
                duration_ns: None,
                ..RunConfig::new(MAX_PERIOD_NS)
            };
            assert!(c.validate().is_err(), "{loops}");
        }
        assert_eq!(loops_span_ns(u64::MAX, 1), None);
        assert_eq!(loops_span_ns(3, 7), Some(21));
    }

    #[test]
    fn a_window_holds_at_most_2_31_periods() {
        let at_limit = RunConfig {
            window_ns: crate::worker::MAX_WINDOW_PERIODS,
            ..RunConfig::new(1)
        };
        assert!(at_limit.validate().is_ok());
        let beyond = RunConfig {
            window_ns: crate::worker::MAX_WINDOW_PERIODS + 1,
            ..RunConfig::new(1)
        };
        assert!(beyond.validate().is_err());
    }

    #[test]
    fn a_full_record_still_takes_a_window_without_its_counters_wrapping() {
        use crate::worker::{full_record, MAX_WINDOW_PERIODS};
        for (window, period) in [
            (1_000_000_000, 1),
            (1_000_000_000, 1_000),
            (1_000_000_000, 1_000_000),
            (MAX_WINDOW_PERIODS, 1),
            (1_000_000_000, 3_600_000_000_000),
        ] {
            let full = full_record(window, period);
            // A record below `full` at a window's end gets at most window/period + 2 more.
            let most = full - 1 + (window / period) as u64 + 2;
            assert!(most <= u64::from(u32::MAX), "{window} {period}");
            // And it holds at least 2^31 − 3 wake-ups before it must be handed over.
            assert!(full >= (1 << 31) - 3, "{window} {period}");
        }
    }
}
