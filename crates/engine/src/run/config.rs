//! What a run is asked to do: [`RunConfig`] and the policy request.

use super::defaults;
use crate::error::{Error, Message, Setting};
use crate::grid::OverrunPolicy;
use crate::setup::Policy;
use crate::time::{ClockId, Nanos, NS_PER_SEC};
use crate::wait::{self, MethodKind, MethodOptions};
use serde::{Deserialize, Serialize};

/// Which policy to run the measuring threads under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyRequest {
    /// SCHED_FIFO priority [`super::AUTO_PRIORITY`] where the process may set it, else SCHED_OTHER
    /// (nice 0); the outcome and the reason are reported in [`super::Applied::policy_note`].
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
    /// Stream every raw wake-up to the observer ([`super::RunEvent::Samples`]).
    pub stream_samples: bool,
}

impl RunConfig {
    /// A default run: absolute sleeps on CLOCK_MONOTONIC every `period_ns`, one unpinned
    /// thread, for 10 s, policy auto, mlock, 1 ns slack, PM QoS 0 µs if allowed (the
    /// values of [`super::defaults`]).
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
        }
    }

    pub(super) fn validate(&self) -> Result<(), Error> {
        let bad = |setting: Setting, s: &str| {
            Err(Error::invalid(
                setting,
                Message::default().setting(setting).t(s),
            ))
        };
        if self.period_ns <= 0 {
            return Err(Error::invalid(
                Setting::Interval,
                Message::text("the interval must be positive"),
            ));
        }
        if self.window_ns <= 0 {
            return Err(Error::invalid(
                Setting::Window,
                Message::text("the statistics window must be positive"),
            ));
        }
        if self.cpus.is_empty() {
            return Err(Error::invalid(
                Setting::Threads,
                Message::text("at least one measuring thread is needed"),
            ));
        }
        if self.loops == Some(0) {
            return bad(Setting::Loops, " must be at least 1");
        }
        if self.duration_ns.is_some_and(|d| d <= 0) {
            return bad(Setting::Duration, " must be positive");
        }
        wait::check(self.method, self.clock, self.cpus.len(), self.period_ns)
    }
}
