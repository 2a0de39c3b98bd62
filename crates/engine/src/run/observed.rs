//! A run observed from outside: the wake-ups of threads tickscope does not run (`tickscope
//! attach` reads them from trace events), folded into the same window records, per-second
//! windows and statistics as a measuring run's, so that every sink and the result document
//! treat them alike.
//!
//! Wake-ups arrive per thread in order, each with its expiry and wake time (ns,
//! CLOCK_MONOTONIC). Window `k` holds the expiries in `[t0 + k·W, t0 + (k+1)·W)`, as in a run
//! ([`crate::record::WindowRecord`]); a window is complete once the caller says the source
//! has passed its end ([`Observed::close_before`]).

use super::collector::thread_stats;
use super::{Applied, RunEvent, RunOutcome, SecondWindows};
use crate::record::WindowRecord;
use crate::result::{ThreadStats, WindowStats};
use crate::sample::RawSample;
use crate::stats::{attach_buckets, window_stats};
use crate::time::Nanos;
use std::collections::BTreeMap;
use std::time::SystemTime;

/// One observed thread's totals and open windows.
struct ObservedThread {
    period: Nanos,
    open: BTreeMap<u64, Box<WindowRecord>>,
    total: Box<WindowRecord>,
    windows: Vec<WindowStats>,
    last_woke: Option<Nanos>,
    first_expiry: Option<Nanos>,
    seq: u64,
    last_latency: Option<Nanos>,
}

/// Wake-ups of observed threads, in windows and totals (see the module text).
pub struct Observed {
    period: Nanos,
    window: Nanos,
    t0: Nanos,
    keep_windows: bool,
    window_histograms: bool,
    threads: Vec<ObservedThread>,
    summary_windows: Vec<WindowStats>,
    last_woke: Option<Nanos>,
    closed_through: Option<u64>,
}

impl Observed {
    /// An observation with nominal `period_ns` (for the merged period deviation), windows of
    /// `window_ns` counted from `t0` (ns, CLOCK_MONOTONIC); `keep_windows` keeps every
    /// window's statistics for the final document (as [`super::RunConfig::keep_windows`]),
    /// `window_histograms` hands each second's histograms to the sinks (as
    /// [`super::RunConfig::window_histograms`]).
    ///
    /// # Panics
    /// When `window_ns` is not positive.
    pub fn new(
        period_ns: Nanos,
        window_ns: Nanos,
        t0: Nanos,
        (keep_windows, window_histograms): (bool, bool),
    ) -> Self {
        assert!(window_ns > 0, "window length must be positive");
        Observed {
            period: period_ns,
            window: window_ns,
            t0,
            keep_windows,
            window_histograms,
            threads: Vec::new(),
            summary_windows: Vec::new(),
            last_woke: None,
            closed_through: None,
        }
    }

    /// Adds a thread whose own nominal period is `period_ns` (its period deviation is
    /// counted from it); returns its index.
    pub fn add_thread(&mut self, period_ns: Nanos) -> usize {
        self.threads.push(ObservedThread {
            period: period_ns,
            open: BTreeMap::new(),
            total: Box::new(WindowRecord::new()),
            windows: Vec::new(),
            last_woke: None,
            first_expiry: None,
            seq: 0,
            last_latency: None,
        });
        self.threads.len() - 1
    }

    /// Records one wake-up of thread `thread`: its expiry, when it woke, and how many
    /// earlier expiries it passed (overruns). Returns the sample as a run streams it.
    /// Expiries before `t0` count in window 0.
    ///
    /// # Panics
    /// When `thread` was not added.
    pub fn record(&mut self, thread: usize, expiry: Nanos, woke: Nanos, passed: u64) -> RawSample {
        let (t0, window) = (self.t0, self.window);
        let th = &mut self.threads[thread];
        let period = th.period;
        // A wake-up later than the margin its window was closed with counts in the first
        // window still open.
        let k =
            (((expiry - t0).max(0) / window) as u64).max(self.closed_through.map_or(0, |c| c + 1));
        let rec = th.open.entry(k).or_insert_with(|| {
            let mut r = Box::new(WindowRecord::new());
            r.begin(k);
            r
        });
        let dt = th.last_woke.map(|l| (woke - l, period));
        rec.record(woke - expiry, dt);
        rec.overruns += passed;
        th.last_woke = Some(woke);
        th.first_expiry.get_or_insert(expiry);
        th.last_latency = Some(woke - expiry);
        let sample = RawSample {
            seq: th.seq,
            expiry,
            woke,
        };
        th.seq += 1;
        self.last_woke = Some(self.last_woke.map_or(woke, |l| l.max(woke)));
        sample
    }

    /// Completes every window that ends at or before `now` (ns, CLOCK_MONOTONIC: how far
    /// the source has been read), handing each to `observer` as a run's second.
    pub fn close_before(&mut self, now: Nanos, observer: &mut dyn FnMut(RunEvent<'_>)) {
        let done = (now - self.t0).div_euclid(self.window);
        if done <= 0 {
            return;
        }
        self.close_through(done as u64 - 1, observer);
    }

    fn close_through(&mut self, last: u64, observer: &mut dyn FnMut(RunEvent<'_>)) {
        if last != u64::MAX {
            self.closed_through = Some(self.closed_through.map_or(last, |c| c.max(last)));
        }
        loop {
            let next = self
                .threads
                .iter()
                .filter_map(|t| t.open.keys().next().copied())
                .min();
            let Some(k) = next.filter(|k| *k <= last) else {
                return;
            };
            let mut per_thread = Vec::new();
            let mut merged = WindowRecord::new();
            merged.begin(k);
            for (i, th) in self.threads.iter_mut().enumerate() {
                let Some(mut rec) = th.open.remove(&k) else {
                    continue;
                };
                let mut stats = window_stats(&rec, self.window, th.period, None);
                if self.keep_windows {
                    th.windows.push(stats.clone());
                }
                // After the copy kept above: the kept windows carry no histograms.
                if self.window_histograms {
                    attach_buckets(&mut stats, &*rec);
                }
                merged.merge(&rec);
                per_thread.push((i, stats));
                rec.drain_into(&mut th.total);
            }
            let merged_rec = merged;
            let mut merged = window_stats(&merged_rec, self.window, self.period, None);
            if self.keep_windows && self.threads.len() > 1 {
                self.summary_windows.push(merged.clone());
            }
            if self.window_histograms {
                attach_buckets(&mut merged, &merged_rec);
            }
            observer(RunEvent::Second(&SecondWindows {
                index: k,
                first_expiry: self.t0,
                threads: per_thread,
                merged,
            }));
        }
    }

    /// Wake-ups recorded so far, all threads.
    pub fn samples(&self) -> u64 {
        self.threads
            .iter()
            .map(|t| t.total.samples() + t.open.values().map(|r| r.samples()).sum::<u64>())
            .sum()
    }

    /// Completes the remaining windows and builds the outcome. `cpu_ns[i]`: thread `i`'s
    /// CPU time over the observation, ns, when known (0 otherwise); its wall time is from
    /// its first expiry to its last wake-up.
    pub fn finish(
        mut self,
        applied: Applied,
        cpu_ns: &[Nanos],
        (started_at, ended_at): (SystemTime, SystemTime),
        interrupted: bool,
        observer: &mut dyn FnMut(RunEvent<'_>),
    ) -> RunOutcome {
        self.close_through(u64::MAX, observer);
        let mut all = WindowRecord::new();
        let mut threads: Vec<ThreadStats> = Vec::new();
        let (mut cpu_sum, mut wall_max) = (0, 0);
        for (i, th) in self.threads.into_iter().enumerate() {
            let wall = match (th.first_expiry, th.last_woke) {
                (Some(f), Some(l)) => (l - f).max(0),
                _ => 0,
            };
            let cpu = cpu_ns.get(i).copied().unwrap_or(0);
            cpu_sum += cpu;
            wall_max = wall_max.max(wall);
            let mut stats = thread_stats(
                &th.total,
                th.period,
                applied.threads.get(i),
                (cpu, wall),
                None,
                th.windows,
            );
            stats.last_latency_ns = th.last_latency;
            all.merge(&th.total);
            threads.push(stats);
        }
        let summary_windows = match threads.len() {
            1 => threads[0].windows.clone(),
            _ => self.summary_windows,
        };
        let summary = thread_stats(
            &all,
            self.period,
            None,
            (cpu_sum, wall_max),
            None,
            summary_windows,
        );
        RunOutcome {
            applied,
            threads,
            summary,
            started_at,
            ended_at,
            interrupted,
            error: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::AppliedThread;

    fn applied(n: usize) -> Applied {
        Applied {
            policy: crate::setup::Policy::Other { nice: 0 },
            policy_note: None,
            mlock: false,
            mlock_note: None,
            pm_qos_us: None,
            pm_qos_note: None,
            timer_slack_ns: 50_000,
            timer_slack_note: None,
            method: crate::wait::MethodKind::NanosleepAbs,
            interface: "clock_nanosleep(TIMER_ABSTIME)".into(),
            granularity_ns: 1,
            method_note: None,
            clock: crate::time::ClockId::Monotonic,
            threads: (0..n)
                .map(|thread| AppliedThread {
                    thread,
                    tid: 100 + thread as i32,
                    cpu: None,
                })
                .collect(),
            housekeeping: None,
        }
    }

    #[test]
    fn wake_ups_become_windows_and_totals() {
        let mut o = Observed::new(1_000_000, 10_000_000, 0, (true, true));
        let (a, b) = (o.add_thread(1_000_000), o.add_thread(2_000_000));
        let mut seconds = Vec::new();
        for k in 0..25i64 {
            let e = k * 1_000_000;
            o.record(a, e, e + 5_000, 0);
            if k % 2 == 0 {
                o.record(b, e, e + 20_000, u64::from(k == 4));
            }
            o.close_before(e, &mut |ev| {
                if let RunEvent::Second(s) = ev {
                    assert!(s.merged.latency_buckets.is_some());
                    seconds.push((s.index, s.threads.len(), s.merged.samples));
                }
            });
        }
        assert_eq!(seconds, vec![(0, 2, 15), (1, 2, 15)]);
        assert_eq!(o.samples(), 38);
        let outcome = o.finish(
            applied(2),
            &[1_000, 2_000],
            (SystemTime::UNIX_EPOCH, SystemTime::UNIX_EPOCH),
            false,
            &mut |ev| {
                if let RunEvent::Second(s) = ev {
                    seconds.push((s.index, s.threads.len(), s.merged.samples));
                }
            },
        );
        assert_eq!(seconds.last(), Some(&(2, 2, 8)));
        assert_eq!(outcome.threads[0].samples, 25);
        assert_eq!(outcome.threads[1].samples, 13);
        assert_eq!(outcome.threads[1].overruns, 1);
        assert_eq!(outcome.summary.samples, 38);
        let l = outcome.threads[0].latency_ns.as_ref().unwrap();
        assert_eq!((l.min, l.max), (5_000, 5_000));
        assert_eq!(outcome.threads[0].windows.len(), 3);
        assert_eq!(outcome.summary.cpu_time_ns, 3_000);
    }
}
