//! The `target` section of a result document: the running program `tickscope attach`
//! measured, and how its wake-ups were read (absent for `tickscope run`, which measures its
//! own threads).

use serde::{Deserialize, Serialize};

/// The program attached to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Its process id.
    pub pid: i32,
    /// Its command name (`/proc/PID/comm`).
    pub comm: String,
    /// The threads measured, in the order of the document's thread indices.
    pub threads: Vec<TargetThread>,
    /// Which point in time stands for "woke": `sys_exit` (the wait's return to user space,
    /// `raw_syscalls:sys_exit`), see docs/attach.md.
    pub woke_point: String,
    /// Resolution of the wake-up times, ns (1000: the text trace prints µs, truncated).
    pub woke_resolution_ns: i64,
    /// Timer wake-ups read but not counted: threads that were not measured, or wake-ups of
    /// measured threads before the observation started.
    #[serde(default)]
    pub wake_ups_ignored: u64,
    /// Threads that appeared or exited while attached, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One thread measured, as inferred when it was chosen: before the measurement, or when it
/// began waking from a timer during it (the target's `notes` say when).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetThread {
    /// Kernel thread id.
    pub tid: i32,
    /// Its command name (`/proc/PID/task/TID/comm`).
    pub comm: String,
    /// Period inferred: the median interval between its successive expiries, ns.
    pub period_ns: i64,
    /// Its wait (`clock_nanosleep(TIMER_ABSTIME)`, `timerfd read`, …).
    pub wait: String,
    /// tickscope's name of that wait (`nanosleep-abs`, `timerfd`, …, as `--method` names
    /// them); absent for a wait tickscope has no method for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The clock of its timer (`monotonic`, `realtime`, …).
    pub clock: String,
    /// Share (0–1) of its intervals that were a whole number of periods while inferring.
    pub regular: f64,
    /// Whether it was inferred periodic (a thread named with `--tid` is measured anyway).
    pub periodic: bool,
}
