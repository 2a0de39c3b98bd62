//! What `run --tasks` keeps of each task beside the executive's own statistics, so that a
//! task-set run has the outputs of a single-rate run: each task's release latency and start
//! intervals per window (one second) and in total, in the engine's [`WindowRecord`], and
//! its raw releases for `--samples`.
//!
//! Task `i` is recorded as measuring thread `i`: its "wake-up" is the release's start, its
//! latency `start − expiry`, its period the interval between consecutive starts against the
//! task's period, its CPU time the sum of its execution times. Beside that, per window, what
//! only a task has ([`TaskWindow`]): response and execution times, deadline misses, budget
//! overruns. Recording happens in the executive's completion observer, into memory allocated
//! before the run (the raw-sample buffer is reserved for one slice of the run and drained
//! after each slice).

use tickscope::Completion;
use tickscope_engine::record::WindowRecord;
use tickscope_engine::result::{ThreadStats, WindowStats};
use tickscope_engine::sample::RawSample;
use tickscope_engine::stats::{attach_buckets, totals_stats, window_stats};
use tickscope_engine::time::Nanos;
use tickscope_engine::window_histogram::WindowHistogram;
use tickscope_report::task_set::TaskWindow;

/// One task's records.
#[derive(Debug)]
pub(crate) struct TaskRecorder {
    /// The task's (rounded) period, ns: the nominal of its start intervals.
    period: Nanos,
    /// The window being filled.
    window: WindowRecord,
    /// Every finished window, added up.
    total: WindowRecord,
    last_start: Option<Nanos>,
    last_latency: Option<Nanos>,
    /// Raw releases not yet handed to the sinks (`None`: not kept).
    raw: Option<Vec<RawSample>>,
    seq: u64,
    /// Response and execution times of the window being filled.
    response: WindowHistogram,
    execution: WindowHistogram,
    /// What only a task has, for the window being filled (histograms apart).
    task_window: TaskWindow,
    /// Whether execution times were seen (measured by the executive).
    measured: bool,
    /// CPU time (execution times added up) of the finished windows, ns.
    cpu_ns: i128,
    /// Finished windows' statistics, when a sink renders them after the run (CSV).
    pub(crate) windows: Vec<WindowStats>,
}

impl TaskRecorder {
    /// A recorder for a task of `period` ns; `raw_capacity` releases of raw samples are
    /// reserved when `Some` (the most one slice of the run can hold).
    pub(crate) fn new(period: Nanos, raw_capacity: Option<usize>) -> Self {
        TaskRecorder {
            period,
            window: WindowRecord::new(),
            total: WindowRecord::new(),
            last_start: None,
            last_latency: None,
            raw: raw_capacity.map(Vec::with_capacity),
            seq: 0,
            response: WindowHistogram::new(),
            execution: WindowHistogram::new(),
            task_window: TaskWindow::default(),
            measured: false,
            cpu_ns: 0,
            windows: Vec::new(),
        }
    }

    /// Records one finished release of the task (called from the executive's completion
    /// observer).
    #[inline]
    pub(crate) fn record(&mut self, c: &Completion) {
        let r = &c.release;
        let w = &mut self.task_window;
        w.releases += 1;
        w.deadline_misses += u64::from(c.deadline_missed);
        w.budget_overruns += u64::from(c.budget_overrun);
        w.response_sum_ns += i128::from(c.response);
        w.response_max_ns = Some(w.response_max_ns.map_or(c.response, |m| m.max(c.response)));
        self.response.record(c.response);
        if let Some(e) = c.execution {
            w.execution_sum_ns += i128::from(e);
            self.execution.record(e);
            self.measured = true;
        }
        let dt = self.last_start.map(|l| (r.start - l, self.period));
        self.window.record(r.latency, dt);
        self.window.overruns += r.overruns;
        self.last_start = Some(r.start);
        self.last_latency = Some(r.latency);
        if let Some(raw) = self.raw.as_mut() {
            raw.push(RawSample {
                seq: self.seq,
                expiry: r.expiry,
                woke: r.start,
            });
        }
        self.seq += 1;
    }

    /// The raw releases recorded since the last call, handed to `f`, then forgotten.
    pub(crate) fn drain_raw(&mut self, f: &mut dyn FnMut(&[RawSample])) {
        if let Some(raw) = self.raw.as_mut() {
            if !raw.is_empty() {
                f(raw);
                raw.clear();
            }
        }
    }

    /// Closes window `index` (`window_ns` long): its statistics (with its histograms when
    /// `buckets`), and the window added to the total. Adds the window's releases to `merged`.
    pub(crate) fn close_window(
        &mut self,
        index: u64,
        window_ns: Nanos,
        buckets: bool,
        merged: &mut WindowRecord,
    ) -> (WindowStats, TaskWindow) {
        self.window.begin(index);
        let mut task = std::mem::take(&mut self.task_window);
        let cpu_percent = self
            .measured
            .then(|| task.execution_sum_ns as f64 * 100.0 / window_ns.max(1) as f64);
        let mut stats = window_stats(&self.window, window_ns, self.period, cpu_percent);
        if buckets {
            attach_buckets(&mut stats, &self.window);
            if task.releases > 0 {
                task.response = Some(self.response.buckets());
                if self.measured {
                    task.execution = Some(self.execution.buckets());
                }
            }
        }
        self.cpu_ns += task.execution_sum_ns;
        self.response.reset();
        self.execution.reset();
        merged.merge(&self.window);
        self.window.drain_into(&mut self.total);
        (stats, task)
    }

    /// Releases in the window being filled.
    pub(crate) fn pending(&self) -> u64 {
        self.window.samples()
    }

    /// The task's statistics as thread `thread` of a run `wall_ns` long (a window still
    /// open is added first); its CPU time is its execution times added up (0 unless the
    /// executive measured them).
    pub(crate) fn thread_stats(
        &mut self,
        thread: usize,
        tid: i32,
        cpu: Option<usize>,
        wall_ns: Nanos,
    ) -> ThreadStats {
        self.window.drain_into(&mut self.total);
        self.cpu_ns += std::mem::take(&mut self.task_window).execution_sum_ns;
        let mut s = totals_stats(&self.total, self.period);
        s.cpu_time_ns = Nanos::try_from(self.cpu_ns).unwrap_or(Nanos::MAX);
        s.wall_time_ns = wall_ns;
        if wall_ns > 0 {
            s.cpu_percent = s.cpu_time_ns as f64 * 100.0 / wall_ns as f64;
        }
        s.thread = Some(thread);
        s.tid = Some(tid);
        s.cpu = cpu;
        s.last_latency_ns = self.last_latency;
        s.windows = std::mem::take(&mut self.windows);
        s
    }

    /// The total so far (after [`TaskRecorder::thread_stats`]).
    pub(crate) fn total(&self) -> &WindowRecord {
        &self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope::{Release, TaskId};

    /// Release `k` of a 1000 ns task, started at `start`, working `exec` ns (on the CPU
    /// clock too), with a 600 ns deadline.
    fn done(k: u64, start: Nanos, overruns: u64, exec: Nanos) -> Completion {
        let expiry = k as Nanos * 1000;
        Completion {
            release: Release {
                task: TaskId(0),
                index: k,
                expiry,
                start,
                latency: start - expiry,
                overruns,
            },
            end: start + exec,
            response: start + exec - expiry,
            execution: Some(exec),
            woken: true,
            deadline_missed: start + exec - expiry > 600,
            budget_overrun: false,
        }
    }

    #[test]
    fn windows_add_up_to_the_total_and_raw_samples_drain() {
        let mut r = TaskRecorder::new(1000, Some(8));
        let mut merged = WindowRecord::new();
        r.record(&done(0, 10, 0, 100));
        r.record(&done(1, 1020, 0, 700));
        let (w0, t0) = r.close_window(0, 2000, true, &mut merged);
        assert_eq!((w0.index, w0.samples, w0.latency_max), (0, 2, Some(20)));
        assert!(w0.latency_buckets.is_some());
        // CPU time 800 ns of a 2000 ns window.
        assert_eq!(w0.cpu_percent, Some(40.0));
        assert_eq!((t0.releases, t0.deadline_misses), (2, 1));
        assert_eq!(
            (t0.response_sum_ns, t0.response_max_ns),
            (110 + 720, Some(720))
        );
        assert_eq!(t0.execution_sum_ns, 800);
        let counts = |b: &Option<tickscope_engine::histogram::HistogramBuckets>| {
            b.as_ref()
                .map(|b| b.buckets.iter().map(|(_, c)| c).sum::<u64>())
        };
        assert_eq!(
            (counts(&t0.response), counts(&t0.execution)),
            (Some(2), Some(2))
        );
        r.record(&done(3, 3500, 1, 50));
        let mut seen = Vec::new();
        r.drain_raw(&mut |s| seen.extend_from_slice(s));
        assert_eq!(seen.len(), 3);
        assert_eq!((seen[2].seq, seen[2].expiry, seen[2].woke), (2, 3000, 3500));
        r.drain_raw(&mut |_| panic!("nothing left"));
        assert_eq!(r.pending(), 1);
        let t = r.thread_stats(4, 77, Some(1), 4000);
        assert_eq!((t.thread, t.tid, t.cpu), (Some(4), Some(77), Some(1)));
        assert_eq!(
            (t.samples, t.overruns, t.last_latency_ns),
            (3, 1, Some(500))
        );
        // The open window's 50 ns count too: 850 ns of CPU time over 4000 ns.
        assert_eq!((t.cpu_time_ns, t.wall_time_ns), (850, 4000));
        assert!((t.cpu_percent - 21.25).abs() < 1e-9);
        let p = t.period_ns.unwrap();
        assert_eq!((p.samples, p.min, p.max), (2, 1010, 2480));
        assert_eq!(merged.samples(), 2);
        assert_eq!(r.total().samples(), 3);
    }

    #[test]
    fn without_execution_times_cpu_is_unknown_in_windows_and_zero_in_total() {
        let mut r = TaskRecorder::new(1000, None);
        let mut merged = WindowRecord::new();
        r.record(&Completion {
            execution: None,
            ..done(0, 10, 0, 100)
        });
        let (w, t) = r.close_window(0, 2000, true, &mut merged);
        assert_eq!((w.cpu_percent, t.execution.is_none()), (None, true));
        assert!(t.response.is_some());
        assert_eq!(r.thread_stats(0, 1, None, 2000).cpu_time_ns, 0);
    }
}
