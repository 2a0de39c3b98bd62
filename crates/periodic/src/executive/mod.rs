//! Several periodic tasks in one real-time thread: an exact multi-rate executive.
//!
//! Control programs run several rates at once — a 1 kHz control loop, a 400 Hz sensor read,
//! a 100 Hz planner, a 10 Hz logger. Dividing a base tick (`counter % (base / rate)`, as
//! ros2_control's controller manager does) rounds every rate to a divisor of the base: a
//! 40 Hz task under a 100 Hz tick runs at 50 Hz (ros2_control pull request 1082,
//! <https://github.com/ros-controls/ros2_control/pull/1082>). Here every task has its own
//! grid `t0 + phase + k·period` in integer ns on one clock, computed from `k` alone, so any
//! set of periods — non-divisors, non-harmonic — is exact by construction and never drifts.
//!
//! * [`Executive`]: add [`Task`]s with callbacks, then `run`, `run_for` or `run_until` them in
//!   the calling thread with a [`Strategy`](crate::Strategy) (sleep, busy, hybrid).
//! * Dispatch: wait until the earliest next expiry, then run the released task of highest
//!   priority ([`Task::priority`], rate-monotonic by default); tasks due at the same instant
//!   run in that order. One thread, so a running task is never preempted.
//! * [`TaskStats`]: per task, release latency, response time, optional execution time,
//!   deadline misses, missed releases, start jitter, budget overruns.
//! * [`Plan`]: hyperperiod, utilisation, the Liu & Layland bound, non-preemptive
//!   response-time analysis and the coincidence table, before running.
//! * [`queue`]: the queue of next expiries — a binary heap or a linear scan, not a timer
//!   wheel (the reasons, and a measured comparison, are in the module and `bench/README.md`).

mod plan;
pub mod queue;
mod rate;
mod record;
mod run;
mod task;
#[cfg(test)]
mod tests;

pub use plan::{Coincidence, Plan, PlanTask, MAX_HYPERPERIOD_NS, MAX_PLAN_RELEASES};
pub use record::TaskStats;
pub use run::{Executive, QueueKind, StopHandle, MAX_TASKS};
pub use task::{Completion, Control, Release, Task, TaskId};
