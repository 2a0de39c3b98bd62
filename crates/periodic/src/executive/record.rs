//! Per-task statistics of an executive: what is recorded at each release, and the summary
//! [`TaskStats`] built from it.

use super::task::Task;
use tickscope_engine::moments::Moments;
use tickscope_engine::record::WindowRecord;
use tickscope_engine::result::{LatencyStats, PeriodStats};
use tickscope_engine::stats::{latency_stats, period_stats};
use tickscope_engine::time::Nanos;
use tickscope_engine::window_histogram::WindowHistogram;

/// One task's running statistics since the run started or the last reset. All times ns.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskStats {
    /// The task's name ([`Task::display_name`]).
    pub name: String,
    /// The period, ns.
    pub period_ns: Nanos,
    /// The relative deadline, ns.
    pub deadline_ns: Nanos,
    /// The declared budget, ns.
    pub budget_ns: Option<Nanos>,
    /// Releases run (callback calls).
    pub releases: u64,
    /// Missed releases: expiries that passed before a release of the same task started
    /// (sum of [`Release::overruns`](super::Release::overruns)).
    pub overruns: u64,
    /// Releases that ended after `expiry + deadline`.
    pub deadline_misses: u64,
    /// Releases whose execution time (thread CPU time when measured, else `end − start`)
    /// exceeded the budget.
    pub budget_overruns: u64,
    /// Release latency `start − expiry`; `None` before the first release.
    pub latency: Option<LatencyStats>,
    /// Releases that started straight from the executive's wait (the first task of an
    /// instant): their latency is the OS wake-up latency alone, with no queueing.
    pub woken: u64,
    /// Largest latency among the `woken` releases (the OS wake-up latency), ns.
    pub wakeup_latency_max: Option<Nanos>,
    /// Mean latency of the `woken` releases, ns.
    pub wakeup_latency_mean: Option<f64>,
    /// Response time `end − expiry`; `None` before the first release.
    pub response: Option<LatencyStats>,
    /// Execution time on the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`, read at start
    /// and end); `None` unless the executive measures it.
    pub execution: Option<LatencyStats>,
    /// Start jitter: the interval between consecutive release starts against the period;
    /// `None` before the second release.
    pub start_period: Option<PeriodStats>,
}

/// Everything recorded for one task; allocated before the run, never growing.
#[derive(Debug)]
pub(crate) struct TaskRecord {
    /// Latency (`start − expiry`), start intervals and overruns.
    start: WindowRecord,
    response: Moments,
    response_hist: WindowHistogram,
    execution: Option<(Moments, WindowHistogram)>,
    woken: Moments,
    deadline_misses: u64,
    budget_overruns: u64,
    last_start: Option<Nanos>,
}

/// One release's measurements, as handed to [`TaskRecord::record`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    pub expiry: Nanos,
    pub start: Nanos,
    pub end: Nanos,
    pub cpu_ns: Option<Nanos>,
    pub woken: bool,
    pub overruns: u64,
}

impl TaskRecord {
    /// A record; `execution` allocates the execution-time histogram too.
    pub fn new(execution: bool) -> Self {
        TaskRecord {
            start: WindowRecord::new(),
            response: Moments::default(),
            response_hist: WindowHistogram::new(),
            execution: execution.then(|| (Moments::default(), WindowHistogram::new())),
            woken: Moments::default(),
            deadline_misses: 0,
            budget_overruns: 0,
            last_start: None,
        }
    }

    /// Records one release of `task`; returns whether it missed its deadline and whether it
    /// overran its budget. No allocation.
    #[inline]
    pub fn record(&mut self, task: &Task, s: Sample) -> (bool, bool) {
        let latency = s.start - s.expiry;
        let dt = self.last_start.map(|l| (s.start - l, task.period));
        self.start.record(latency, dt);
        self.start.overruns += s.overruns;
        self.last_start = Some(s.start);
        let response = s.end - s.expiry;
        self.response.record(response);
        self.response_hist.record(response);
        if s.woken {
            self.woken.record(latency);
        }
        let missed = response > task.deadline_ns();
        if missed {
            self.deadline_misses += 1;
        }
        if let (Some((m, h)), Some(cpu)) = (self.execution.as_mut(), s.cpu_ns) {
            m.record(cpu);
            h.record(cpu);
        }
        let over = task
            .budget
            .is_some_and(|budget| s.cpu_ns.unwrap_or(s.end - s.start) > budget);
        if over {
            self.budget_overruns += 1;
        }
        (missed, over)
    }

    /// Forgets everything but the last start (so the next interval is still measured).
    pub fn clear(&mut self) {
        self.start.clear();
        self.response = Moments::default();
        self.response_hist.reset();
        if let Some((m, h)) = self.execution.as_mut() {
            *m = Moments::default();
            h.reset();
        }
        self.woken = Moments::default();
        self.deadline_misses = 0;
        self.budget_overruns = 0;
    }

    /// The summary. Allocates.
    pub fn stats(&self, task: &Task) -> TaskStats {
        let r = &self.start;
        TaskStats {
            name: task.display_name(),
            period_ns: task.period,
            deadline_ns: task.deadline_ns(),
            budget_ns: task.budget,
            releases: r.samples(),
            overruns: r.overruns,
            deadline_misses: self.deadline_misses,
            budget_overruns: self.budget_overruns,
            latency: latency_stats(&r.latency, &r.latency_hist),
            woken: self.woken.count,
            wakeup_latency_max: self.woken.max(),
            wakeup_latency_mean: self.woken.mean(),
            response: latency_stats(&self.response, &self.response_hist),
            execution: self
                .execution
                .as_ref()
                .and_then(|(m, h)| latency_stats(m, h)),
            start_period: period_stats(&r.period, &r.period_dev_hist, task.period),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_counted_in_every_statistic_it_concerns() {
        let task = Task::new(1000).deadline(500).budget(100);
        let mut r = TaskRecord::new(true);
        let s = |expiry, start, end, cpu, woken, overruns| Sample {
            expiry,
            start,
            end,
            cpu_ns: Some(cpu),
            woken,
            overruns,
        };
        r.record(&task, s(1000, 1010, 1060, 50, true, 0));
        r.record(&task, s(2000, 2200, 2700, 150, false, 0)); // deadline miss, budget overrun
        r.record(&task, s(4000, 5100, 5150, 40, true, 1)); // deadline miss (1150 > 500)
        let st = r.stats(&task);
        assert_eq!((st.releases, st.overruns), (3, 1));
        assert_eq!((st.deadline_misses, st.budget_overruns), (2, 1));
        let lat = st.latency.unwrap();
        assert_eq!((lat.min, lat.max), (10, 1100));
        assert_eq!(st.response.unwrap().max, 1150);
        assert_eq!(st.execution.unwrap().max, 150);
        assert_eq!((st.woken, st.wakeup_latency_max), (2, Some(1100)));
        assert_eq!(st.start_period.unwrap().samples, 2);
        r.clear();
        assert_eq!(r.stats(&task).releases, 0);
    }
}
