//! The `tasks` section of a result document written by `tickscope run --tasks … --json`:
//! what each task of the set was (period, phase, deadline, budget, priority, overrun
//! policy, synthetic work) and what only a task has (response and execution times, deadline
//! misses, budget overruns).
//!
//! Task `i` is also thread `i` of the document's run (`threads[i]`): its release latency
//! (start − expiry) is that entry's `latency_ns`, its start jitter its `period_ns`, its
//! overruns and per-second windows are there too, so every reader of `threads` (`report`'s
//! per-thread plots, `compare`, `gate`) reads tasks without knowing about them. Field by
//! field: `docs/result-schema.md`, section `tasks`.

use serde::{Deserialize, Serialize};
use tickscope_engine::histogram::HistogramBuckets;
use tickscope_engine::result::LatencyStats;
use tickscope_engine::time::Nanos;

/// The task set of a `run --tasks` document, in the order the tasks were given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSet {
    /// The executive's wait strategy (`sleep`, `busy`, `hybrid`).
    pub strategy: String,
    /// One entry per task; entry `i` describes thread `i` of the run.
    pub tasks: Vec<TaskEntry>,
}

/// One task: its declaration and the statistics a plain thread does not have. Times in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEntry {
    /// The task's name (`name=`, else its period as written, `2.5ms`).
    pub name: String,
    /// The period, ns (rounded to the ns for a rate such as 85 Hz, whose releases are kept
    /// at the exact instants; see docs/executive.md).
    pub period_ns: Nanos,
    /// The exact period as the fraction `[numerator, denominator]` ns (`[1000000000, 85]`
    /// for 85 Hz; `[p, 1]` for a whole number of ns).
    pub period_exact_ns: [u64; 2],
    /// Offset of the first release after the executive's start, ns.
    pub phase_ns: Nanos,
    /// Relative deadline, ns (the period unless given).
    pub deadline_ns: Nanos,
    /// Declared budget, ns; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ns: Option<Nanos>,
    /// Explicit priority among tasks due together (higher first; 0 unless given).
    pub priority: i32,
    /// What follows an overrun: `skip`, `catch-up` or `relative`.
    pub overrun_policy: String,
    /// Synthetic busy work per release (`work=`), ns; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_ns: Option<Nanos>,
    /// Releases run.
    pub releases: u64,
    /// Expiries that passed before a release of the task started (as `threads[i].overruns`).
    pub overruns: u64,
    /// Releases that ended after expiry + deadline.
    pub deadline_misses: u64,
    /// Releases that ran longer than the budget.
    pub budget_overruns: u64,
    /// Releases that started straight from the executive's wait (no queueing behind
    /// another task of the same instant).
    pub woken: u64,
    /// Largest latency of those releases: the OS wake-up latency alone, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeup_latency_max_ns: Option<Nanos>,
    /// Response time (end − expiry) with its histogram; absent before the first release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_ns: Option<LatencyStats>,
    /// Execution time on the thread's CPU clock with its histogram; absent unless measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_ns: Option<LatencyStats>,
}

/// One finished window (one second) of one task, beside its thread's window statistics
/// (latency, start intervals, overruns): what only a task has, for the sinks that export a
/// task set as it runs ([`crate::sink::RunSink::task_window`]). Times in ns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskWindow {
    /// The task's index in the set (its thread index).
    pub task: usize,
    /// Releases that ended in this window.
    pub releases: u64,
    /// Of those, releases that ended after expiry + deadline.
    pub deadline_misses: u64,
    /// Of those, releases that ran longer than the budget.
    pub budget_overruns: u64,
    /// Response times (end − expiry) of the window's releases, at HdrHistogram's resolution
    /// (2 significant figures); `None` without releases.
    pub response: Option<HistogramBuckets>,
    /// The exact sum of those response times, ns.
    pub response_sum_ns: i128,
    /// Largest response time of the window; `None` without releases.
    pub response_max_ns: Option<Nanos>,
    /// Execution times on the thread's CPU clock, as `response`; `None` unless measured.
    pub execution: Option<HistogramBuckets>,
    /// The exact sum of those execution times: the task's CPU time in the window, ns.
    pub execution_sum_ns: i128,
}

impl TaskSet {
    /// The name of thread `i` of a document holding this set: the task's name, if any.
    pub fn name_of(&self, i: usize) -> Option<&str> {
        self.tasks.get(i).map(|t| t.name.as_str())
    }
}
