//! What `run --tasks` keeps of each task beside the executive's own statistics, so that a
//! task-set run has the outputs of a single-rate run: each task's release latency and start
//! intervals per window (one second) and in total, in the engine's [`WindowRecord`], and
//! its raw releases for `--samples`.
//!
//! Task `i` is recorded as measuring thread `i`: its "wake-up" is the release's start, its
//! latency `start − expiry`, its period the interval between consecutive starts against the
//! task's period. Recording happens in the task's callback, into memory allocated before
//! the run (the raw-sample buffer is reserved for one slice of the run and drained after
//! each slice).

use tickscope::Release;
use tickscope_engine::record::WindowRecord;
use tickscope_engine::result::{ThreadStats, WindowStats};
use tickscope_engine::sample::RawSample;
use tickscope_engine::stats::{attach_buckets, totals_stats, window_stats};
use tickscope_engine::time::Nanos;

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
            windows: Vec::new(),
        }
    }

    /// Records one release of the task (called from its callback).
    #[inline]
    pub(crate) fn record(&mut self, r: &Release) {
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
    ) -> WindowStats {
        self.window.begin(index);
        let mut stats = window_stats(&self.window, window_ns, self.period, None);
        if buckets {
            attach_buckets(&mut stats, &self.window);
        }
        merged.merge(&self.window);
        self.window.drain_into(&mut self.total);
        stats
    }

    /// Releases in the window being filled.
    pub(crate) fn pending(&self) -> u64 {
        self.window.samples()
    }

    /// The task's statistics as thread `thread` (a window still open is added first).
    pub(crate) fn thread_stats(
        &mut self,
        thread: usize,
        tid: i32,
        cpu: Option<usize>,
    ) -> ThreadStats {
        self.window.drain_into(&mut self.total);
        let mut s = totals_stats(&self.total, self.period);
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
    use tickscope::TaskId;

    fn release(k: u64, start: Nanos, overruns: u64) -> Release {
        let expiry = k as Nanos * 1000;
        Release {
            task: TaskId(0),
            index: k,
            expiry,
            start,
            latency: start - expiry,
            overruns,
        }
    }

    #[test]
    fn windows_add_up_to_the_total_and_raw_samples_drain() {
        let mut r = TaskRecorder::new(1000, Some(8));
        let mut merged = WindowRecord::new();
        r.record(&release(0, 10, 0));
        r.record(&release(1, 1020, 0));
        let w0 = r.close_window(0, 2000, true, &mut merged);
        assert_eq!((w0.index, w0.samples, w0.latency_max), (0, 2, Some(20)));
        assert!(w0.latency_buckets.is_some());
        r.record(&release(3, 3500, 1));
        let mut seen = Vec::new();
        r.drain_raw(&mut |s| seen.extend_from_slice(s));
        assert_eq!(seen.len(), 3);
        assert_eq!((seen[2].seq, seen[2].expiry, seen[2].woke), (2, 3000, 3500));
        r.drain_raw(&mut |_| panic!("nothing left"));
        assert_eq!(r.pending(), 1);
        let t = r.thread_stats(4, 77, Some(1));
        assert_eq!((t.thread, t.tid, t.cpu), (Some(4), Some(77), Some(1)));
        assert_eq!(
            (t.samples, t.overruns, t.last_latency_ns),
            (3, 1, Some(500))
        );
        let p = t.period_ns.unwrap();
        assert_eq!((p.samples, p.min, p.max), (2, 1010, 2480));
        assert_eq!(merged.samples(), 2);
        assert_eq!(r.total().samples(), 3);
    }
}
