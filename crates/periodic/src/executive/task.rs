//! One task of an [`Executive`](super::Executive): its timing declaration, what its callback
//! is told at each release, and how the callback says stop.

use crate::error::Error;
use crate::periodic::MAX_PERIOD_NS;
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::time::Nanos;

/// The timing declaration of a periodic task: its expiries are `t0 + phase + k·period`
/// (k = 0, 1, …) in integer ns on the executive's clock, where `t0` is the executive's start.
///
/// ```
/// use tickscope::{OverrunPolicy, Task};
///
/// let imu = Task::new(2_500_000) // every 2.5 ms (400 Hz)
///     .phase(100_000)            // 100 µs after t0
///     .budget(200_000)           // declared worst-case execution time 200 µs
///     .deadline(1_000_000)       // must finish 1 ms after each expiry
///     .overrun(OverrunPolicy::CatchUp)
///     .name("imu");
/// assert_eq!(imu.deadline_ns(), 1_000_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Task {
    pub(crate) name: String,
    pub(crate) period: Nanos,
    /// The exact period `num / den` ns (reduced) when given as a rate; `None`: `period`.
    pub(crate) exact: Option<(i64, i64)>,
    pub(crate) phase: Nanos,
    pub(crate) deadline: Option<Nanos>,
    pub(crate) budget: Option<Nanos>,
    pub(crate) priority: i32,
    pub(crate) overrun: OverrunPolicy,
}

impl Task {
    /// A task released every `period` ns (1 ..= [`MAX_PERIOD_NS`], checked when added), phase
    /// 0, deadline = period, no budget, priority 0, [`OverrunPolicy::Skip`], named after its
    /// period.
    pub fn new(period: Nanos) -> Task {
        Task {
            name: String::new(),
            period,
            exact: None,
            phase: 0,
            deadline: None,
            budget: None,
            priority: 0,
            overrun: OverrunPolicy::Skip,
        }
    }

    /// A task released `hz` times a second, exactly: release `k` is at
    /// `t0 + phase + round(k·10⁹/hz)` ns, so a rate whose period is not a whole number of ns
    /// (30 Hz, 85 Hz) keeps its rate with no drift, where `Task::new` with the rounded period
    /// would drift (85 Hz: 10 ns a second). `hz` is 1 ..= 10⁹ (checked when added).
    pub fn hz(hz: u64) -> Task {
        Task::hz_ratio(hz, 1)
    }

    /// A task released `num / den` times a second, exactly (0.5 Hz is `hz_ratio(1, 2)`):
    /// release `k` is at `t0 + phase + round(k·10⁹·den/num)` ns, rounded half up, each
    /// computed from `k` in integer arithmetic. [`Task::period_ns`] is the rounded period,
    /// used for ranks, names and the plan. The period must be 1 ns ..= 1 hour (checked when
    /// added); a zero `num` or `den` gives an invalid task.
    pub fn hz_ratio(num: u64, den: u64) -> Task {
        let (n, d) = (1_000_000_000i128 * i128::from(den), i128::from(num));
        if n == 0 || d == 0 {
            return Task::new(0);
        }
        let g = gcd(n, d);
        let (n, d) = (n / g, d / g);
        let rounded = (2 * n + d) / (2 * d);
        match (Nanos::try_from(rounded), i64::try_from(n), i64::try_from(d)) {
            (Ok(period), Ok(n), Ok(d)) if d > 1 => Task {
                exact: Some((n, d)),
                ..Task::new(period)
            },
            (Ok(period), _, _) if d == 1 => Task::new(period),
            _ => Task::new(Nanos::MAX),
        }
    }

    /// The period as the fraction `(num, den)` ns it is kept as: `(period, 1)` unless the
    /// task was given as a rate whose period is not a whole number of ns.
    pub fn exact_period_ns(&self) -> (i64, i64) {
        self.exact.unwrap_or((self.period, 1))
    }

    /// Offset of the first expiry after `t0`, ns (0 ..= [`MAX_PERIOD_NS`]).
    pub fn phase(mut self, ns: Nanos) -> Task {
        self.phase = ns;
        self
    }

    /// Relative deadline, ns after each expiry (1 ..= [`MAX_PERIOD_NS`]); a release that ends
    /// later is a deadline miss. Default: the period.
    pub fn deadline(mut self, ns: Nanos) -> Task {
        self.deadline = Some(ns);
        self
    }

    /// Declared worst-case execution time, ns (1 ..= [`MAX_PERIOD_NS`]): used by
    /// [`Executive::plan`](super::Executive::plan), and a release that runs longer counts as
    /// a budget overrun.
    pub fn budget(mut self, ns: Nanos) -> Task {
        self.budget = Some(ns);
        self
    }

    /// Priority among tasks due at the same time: higher runs first, as with SCHED_FIFO.
    /// Ties (all 0 by default) are broken by the shorter period — rate-monotonic order — then
    /// by the order the tasks were added.
    pub fn priority(mut self, priority: i32) -> Task {
        self.priority = priority;
        self
    }

    /// What to do when a release starts after later expiries of the same task have passed:
    /// skip them (default) or release each of them in turn, late. Both count them as overruns.
    pub fn overrun(mut self, policy: OverrunPolicy) -> Task {
        self.overrun = policy;
        self
    }

    /// A name for reports (default: the period, like `2.5ms`).
    pub fn name(mut self, name: impl Into<String>) -> Task {
        self.name = name.into();
        self
    }

    /// The period, ns.
    pub fn period_ns(&self) -> Nanos {
        self.period
    }

    /// The phase, ns.
    pub fn phase_ns(&self) -> Nanos {
        self.phase
    }

    /// The relative deadline, ns (the period unless set).
    pub fn deadline_ns(&self) -> Nanos {
        self.deadline.unwrap_or(self.period)
    }

    /// The budget, ns, if declared.
    pub fn budget_ns(&self) -> Option<Nanos> {
        self.budget
    }

    /// The priority (see [`Task::priority`]).
    pub fn priority_value(&self) -> i32 {
        self.priority
    }

    /// The overrun policy.
    pub fn overrun_policy(&self) -> OverrunPolicy {
        self.overrun
    }

    /// The name, or the period written like `2.5ms` when none was given.
    pub fn display_name(&self) -> String {
        if self.name.is_empty() {
            short_duration(self.period)
        } else {
            self.name.clone()
        }
    }

    /// Checks every field's range.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the field and its range.
    pub fn validate(&self) -> Result<(), Error> {
        let check = |what: &str, v: Nanos, min: Nanos| {
            if (min..=MAX_PERIOD_NS).contains(&v) {
                Ok(())
            } else {
                Err(Error::InvalidArgument(format!(
                    "task {}: the {what} must be {min} ..= {MAX_PERIOD_NS} ns (1 hour), not {v}",
                    self.display_name()
                )))
            }
        };
        check("period", self.period, 1)?;
        check("phase", self.phase, 0)?;
        if let Some(d) = self.deadline {
            check("deadline", d, 1)?;
        }
        if let Some(b) = self.budget {
            check("budget", b, 1)?;
        }
        Ok(())
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `ns` written with the largest unit that keeps it short: `2.5ms`, `40us`, `10s`, `7ns`.
pub(crate) fn short_duration(ns: Nanos) -> String {
    for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns.abs() >= scale {
            let v = ns as f64 / scale as f64;
            let s = format!("{v:.3}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            return format!("{s}{unit}");
        }
    }
    format!("{ns}ns")
}

/// Identifies a task within its executive: the order it was added in, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub usize);

/// What a task's callback is told at each release. Times are absolute ns on the
/// executive's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// The task released.
    pub task: TaskId,
    /// Position on the task's grid: `expiry = t0 + phase + index·period` (rounded to the ns
    /// for a period given as a rate, [`Task::hz`]).
    pub index: u64,
    /// The expiry this release is for.
    pub expiry: Nanos,
    /// When the callback was called (one clock read; the wake-up time when the release
    /// came straight from a wait).
    pub start: Nanos,
    /// `start − expiry`, ns: the release latency (wake-up latency plus any queueing behind
    /// other tasks of the same instant).
    pub latency: Nanos,
    /// Later expiries of this task that had already passed at `start`, counted once each
    /// (skipped, released next and late with [`OverrunPolicy::CatchUp`], or left behind by
    /// the moved grid with [`OverrunPolicy::Relative`]).
    pub overruns: u64,
}

/// What an observer set with [`Executive::on_complete`](super::Executive::on_complete) is
/// told after each release's callback has returned: the release and how long it took. Times
/// are absolute ns on the executive's clock, durations ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The release, as its callback was told.
    pub release: Release,
    /// When the callback returned (one clock read, never before `release.start`).
    pub end: Nanos,
    /// `end − expiry`: the response time.
    pub response: Nanos,
    /// The callback's time on the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), when the
    /// executive measures it ([`Executive::measure_execution_time`](super::Executive::measure_execution_time)).
    pub execution: Option<Nanos>,
    /// Whether the release started straight from the executive's wait (the first task of
    /// its instant), so that its latency is the OS wake-up latency alone.
    pub woken: bool,
    /// Whether it ended after `expiry + deadline` (a deadline miss).
    pub deadline_missed: bool,
    /// Whether it ran longer than the task's budget (CPU time when measured, else
    /// `end − start`); `false` without a budget.
    pub budget_overrun: bool,
}

/// What a task's callback returns: go on, or stop the executive's run after this release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Control {
    /// Keep running.
    #[default]
    Continue,
    /// Return from the current `run*` call once this release is recorded; the grids stay,
    /// so a later `run*` call continues them.
    Stop,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ranges() {
        assert_eq!(Task::new(2_500_000).display_name(), "2.5ms");
        assert_eq!(Task::new(10_000_000).display_name(), "10ms");
        assert_eq!(Task::new(40_000).display_name(), "40us");
        assert_eq!(Task::new(7).display_name(), "7ns");
        assert_eq!(Task::new(7).name("x").display_name(), "x");
        assert!(Task::new(0).validate().is_err());
        assert!(Task::new(1).phase(-1).validate().is_err());
        assert!(Task::new(1).budget(0).validate().is_err());
        let e = Task::new(1)
            .deadline(MAX_PERIOD_NS + 1)
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("deadline"), "{e}");
        assert_eq!(Task::new(5).deadline_ns(), 5);
        let t = Task::hz(85);
        assert_eq!(
            (t.period_ns(), t.exact_period_ns()),
            (11_764_706, (200_000_000, 17))
        );
        assert_eq!(Task::hz(1000), Task::new(1_000_000));
        assert_eq!(Task::hz_ratio(1, 2), Task::new(2_000_000_000));
        assert_eq!(Task::hz(30).exact_period_ns(), (100_000_000, 3));
        assert!(Task::hz(0).validate().is_err());
        assert!(Task::hz_ratio(1, 4000).validate().is_err());
    }
}
