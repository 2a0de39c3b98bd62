//! What a run reports: the settings applied, each second while it runs, and the outcome.

use crate::result::{ThreadStats, WindowStats};
use crate::sample::RawSample;
use crate::setup::Policy;
use crate::time::{ClockId, Nanos};
use crate::wait::MethodKind;
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// What was actually set, next to what was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    /// The policy the measuring threads run under (read back from the kernel).
    pub policy: Policy,
    /// Why the policy differs from the request (for `auto`), if it does.
    pub policy_note: Option<String>,
    /// Whether `mlockall` is in force.
    pub mlock: bool,
    /// Why memory is not locked, if it was asked for.
    pub mlock_note: Option<String>,
    /// The PM QoS CPU latency limit held, µs, if any.
    pub pm_qos_us: Option<i32>,
    /// Why PM QoS is not held, if it was asked for.
    pub pm_qos_note: Option<String>,
    /// The timer slack of the measuring threads, ns (read back).
    pub timer_slack_ns: u64,
    /// A remark on timer slack (for example that RT policies ignore it).
    pub timer_slack_note: Option<String>,
    /// The method used.
    pub method: MethodKind,
    /// The kernel interface the method used (e.g. `clock_nanosleep(TIMER_ABSTIME)`).
    pub interface: String,
    /// The coarsest step in which the method's timeout is expressed, ns.
    pub granularity_ns: Nanos,
    /// A warning about the method under the applied settings (for example that a busy-wait
    /// under SCHED_FIFO can be RT-throttled), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method_note: Option<String>,
    /// The clock.
    pub clock: ClockId,
    /// Per measuring thread: index, kernel thread id and CPU.
    pub threads: Vec<AppliedThread>,
    /// Where the tool's own non-measuring threads (collector, trace reader, signal
    /// handling, waiters) run, or why they may share the measured CPUs; set by the command
    /// line, `None` when it says nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub housekeeping: Option<String>,
}

/// One measuring thread as started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedThread {
    /// Thread index (0-based).
    pub thread: usize,
    /// Kernel thread id, for `chrt -p`, `taskset -p` and `/proc/<pid>/task/<tid>`.
    pub tid: i32,
    /// CPU it is pinned to, or `None`.
    pub cpu: Option<usize>,
}

/// One second (window) of every thread, delivered while the run goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct SecondWindows {
    /// Window index.
    pub index: u64,
    /// The run's first expiry (absolute ns on the run's clock): window k starts at
    /// `first_expiry + k·window`.
    pub first_expiry: Nanos,
    /// Each thread's statistics for the window, by thread index (a thread whose window is
    /// missing — it stopped early — is left out).
    pub threads: Vec<(usize, WindowStats)>,
    /// All threads merged.
    pub merged: WindowStats,
}

/// What a run reports while it goes on.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// Every thread is set up and about to start; the settings in force.
    Started(&'a Applied),
    /// The threads were told to go, after [`RunEvent::Started`]: the run's first expiry
    /// (absolute ns on the run's clock), so that thread `t`'s expiries are `first_expiry +
    /// k·period` from here on (moved by an overrun only under `--overrun relative`). Not
    /// sent by an observation of another program (`tickscope attach`), which tells nothing
    /// to go.
    Going {
        /// The first expiry, ns.
        first_expiry: Nanos,
    },
    /// A window is complete for every thread.
    Second(&'a SecondWindows),
    /// Raw wake-ups of one thread, in order (only with [`RunConfig::stream_samples`](super::RunConfig::stream_samples)).
    Samples {
        /// Thread index.
        thread: usize,
        /// The next samples of that thread.
        samples: &'a [RawSample],
    },
    /// A thread joined the run while it goes on (`tickscope attach` following a program
    /// that started a periodic thread): the settings in force, the new thread last in
    /// [`Applied::threads`]. Comes before that thread's first samples and windows.
    Joined(&'a Applied),
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// What was set.
    pub applied: Applied,
    /// Per measuring thread.
    pub threads: Vec<ThreadStats>,
    /// All threads merged (same shape; `thread`, `tid`, `cpu` are `None`).
    pub summary: ThreadStats,
    /// Wall-clock time when measuring started.
    pub started_at: SystemTime,
    /// Wall-clock time when measuring ended.
    pub ended_at: SystemTime,
    /// Whether the run was stopped early through the stop flag (Ctrl-C, SIGTERM).
    pub interrupted: bool,
    /// An OS error that ended a measuring thread early, if any.
    pub error: Option<String>,
}
