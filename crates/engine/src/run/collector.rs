//! The collector: receives windows from the measuring threads, keeps totals, groups windows
//! by second for the live view, and builds the final statistics.

use super::thread::{ThreadSetup, WorkerEnd};
use super::{Applied, AppliedThread, RunConfig, RunEvent, SecondWindows};
use crate::record::WindowRecord;
use crate::result::{ThreadStats, WindowStats};
use crate::sample::RawSample;
use crate::stats::{attach_buckets, attach_latency_buckets, totals_stats, window_stats};
use crate::time::{read_clock, Nanos};
use crate::wait::MethodObservations;
use crate::worker::CollectorLink;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// Per-thread totals kept by the collector.
struct ThreadAccum {
    total: Box<WindowRecord>,
    windows: Vec<WindowStats>,
    delivered_through: Option<u64>,
    cpu_clock: libc::clockid_t,
    last_cpu_read: Option<(Nanos, Nanos)>,
    /// The policy read back while the thread still measured (see `drain_windows`).
    last_policy: Option<String>,
}

/// On virtual time, how many windows a thread may be ahead of the slowest thread still
/// measuring before the collector leaves its records in the ring (so that its loop waits,
/// [`crate::worker::LoopParams::await_records`]). Mock threads run as fast as the CPU lets
/// them, one far ahead of another; without this bound every second the slow one has not
/// reached would wait in `pending` with its merged record (about 147 KiB), and memory would
/// grow with the run's length. A real clock keeps the threads within a window of each other.
const MOCK_LEAD: u64 = 2;

/// What the collector holds of one measuring thread: its window link, its raw-sample ring,
/// and the loop's late threshold when the collector keeps it at the latest p99.
pub(super) type CollectorEnds = (
    crate::worker::CollectorLink,
    Option<rtrb::Consumer<crate::sample::RawSample>>,
    // The loop's late threshold, when the collector keeps it at the latest p99.
    Option<Arc<AtomicI64>>,
);

/// A second some threads have delivered: their statistics and their merged record.
type PendingSecond = (Vec<(usize, WindowStats)>, Option<Box<WindowRecord>>);

/// Receives windows from the measuring threads, keeps totals, groups windows by second.
pub(super) struct Collector {
    links: Vec<CollectorLink>,
    sample_rings: Vec<Option<rtrb::Consumer<RawSample>>>,
    /// Per thread, the loop's late threshold when it follows the latest p99
    /// ([`crate::sample::LateThreshold::PreviousP99`]).
    p99_gates: Vec<Option<Arc<AtomicI64>>>,
    accums: Vec<ThreadAccum>,
    pending: BTreeMap<u64, PendingSecond>,
    /// All threads' windows merged, second by second (kept like the threads' windows).
    summary_windows: Vec<WindowStats>,
    period: Nanos,
    window: Nanos,
    keep_windows: bool,
    /// Which histograms each window carries: `Some(true)` both ([`RunConfig::window_histograms`]),
    /// `Some(false)` the latencies' only ([`RunConfig::window_latency_histograms`]).
    window_histograms: Option<bool>,
    /// Hold a thread that runs ahead ([`MOCK_LEAD`]): virtual time only.
    throttle: bool,
    /// The run's first expiry (absolute ns), passed on with every second.
    first_expiry: Nanos,
    /// Per thread, the tid whose policy each window reads back
    /// ([`crate::setup::read_back`]); `None` for a thread that is not one of this process's
    /// (virtual time).
    policy_tids: Vec<Option<i32>>,
}

impl Collector {
    pub(super) fn new(
        cfg: &RunConfig,
        reports: &[ThreadSetup],
        links: Vec<CollectorEnds>,
        first_expiry: Nanos,
    ) -> Self {
        let (mut sample_rings, mut p99_gates) = (Vec::new(), Vec::new());
        let links = links
            .into_iter()
            .map(|(link, ring, gate)| {
                sample_rings.push(ring);
                p99_gates.push(gate);
                link
            })
            .collect();
        Collector {
            sample_rings,
            p99_gates,
            accums: reports
                .iter()
                .map(|r| ThreadAccum {
                    total: Box::new(WindowRecord::untouched()),
                    windows: Vec::new(),
                    delivered_through: None,
                    cpu_clock: r.cpu_clock,
                    last_cpu_read: None,
                    last_policy: None,
                })
                .collect(),
            links,
            pending: BTreeMap::new(),
            summary_windows: Vec::new(),
            period: cfg.period_ns,
            window: cfg.window_ns,
            keep_windows: cfg.keep_windows,
            window_histograms: match (cfg.window_histograms, cfg.window_latency_histograms) {
                (true, _) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            },
            throttle: cfg.backend.is_mock(),
            first_expiry,
            // Virtual time's threads have made-up tids: nothing to read back.
            policy_tids: reports
                .iter()
                .map(|r| (!cfg.backend.is_mock()).then_some(r.tid))
                .collect(),
        }
    }

    /// Takes the first CPU-time reading of every thread, as measuring starts.
    pub(super) fn start_cpu_clocks(&mut self) {
        let wall = read_clock(libc::CLOCK_MONOTONIC);
        for acc in &mut self.accums {
            acc.last_cpu_read = thread_cpu(acc.cpu_clock).map(|c| (wall, c));
        }
    }

    /// Takes the finished windows (at most a ring's worth per thread, [`WINDOW_RECORDS`]:
    /// every record there is); emits the seconds every thread has delivered (all of them
    /// when `final_drain`).
    ///
    /// [`WINDOW_RECORDS`]: crate::worker::WINDOW_RECORDS
    ///
    /// Returns true when a window was taken (the caller drains again before sleeping).
    // Never inlined: a symbol of its own for the start-up layout and its test (docs/dist.md);
    // called once per pass of the collector, not per wake-up.
    #[inline(never)]
    pub(super) fn drain(
        &mut self,
        observer: &mut dyn FnMut(RunEvent<'_>),
        final_drain: bool,
    ) -> bool {
        self.drain_samples(observer);
        self.drain_windows(observer, final_drain)
    }

    /// Hands the raw samples waiting in every thread's ring to the observer.
    fn drain_samples(&mut self, observer: &mut dyn FnMut(RunEvent<'_>)) {
        for (thread, ring) in self.sample_rings.iter_mut().enumerate() {
            let Some(ring) = ring else { continue };
            let n = ring.slots();
            if let Ok(chunk) = ring.read_chunk(n) {
                let (a, b) = chunk.as_slices();
                for part in [a, b] {
                    if !part.is_empty() {
                        observer(RunEvent::Samples {
                            thread,
                            samples: part,
                        });
                    }
                }
                chunk.commit_all();
            }
        }
    }

    /// Whether thread `t` has ended and every record it sent has been taken: it delivers
    /// no more windows, so the seconds after its last one need not wait for it.
    fn ended(&self, t: usize) -> bool {
        let full = &self.links[t].full;
        full.is_abandoned() && full.is_empty()
    }

    /// The first window index the slowest thread still measuring has not delivered
    /// (`u64::MAX` when every thread has ended).
    fn slowest_next(&self) -> u64 {
        (0..self.accums.len())
            .filter(|&t| !self.ended(t))
            .map(|t| self.accums[t].delivered_through.map_or(0, |d| d + 1))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Takes the finished window records into the totals and emits the complete seconds.
    fn drain_windows(&mut self, observer: &mut dyn FnMut(RunEvent<'_>), final_drain: bool) -> bool {
        let threads = self.links.len();
        let mut took = false;
        // Virtual time: records of a thread more than MOCK_LEAD windows ahead wait.
        let limit = match self.throttle && !final_drain {
            true => self.slowest_next().saturating_add(MOCK_LEAD),
            false => u64::MAX,
        };
        for (t, link) in self.links.iter_mut().enumerate() {
            let acc = &mut self.accums[t];
            // At most one ring's worth per pass, so that seconds are emitted as they come
            // even when a thread refills the ring as fast as it is drained (virtual time).
            for _ in 0..crate::worker::WINDOW_RECORDS {
                if acc.delivered_through.map_or(0, |d| d + 1) > limit {
                    break;
                }
                let Ok(mut rec) = link.full.pop() else { break };
                took = true;
                let cpu = cpu_percent(acc, rec.thread_cpu_ns);
                let mut stats = window_stats(&rec, self.window, self.period, cpu);
                // Read back now, as the window is taken — unless the thread has ended: it
                // lets go of its ring before its policy guard restores the policy it had
                // before (run/thread.rs), so a read after that may say what it returned to,
                // not what it ran with. Checked after the read: a restore the read saw came
                // after the ring was let go. Then the window keeps the last policy read
                // while the thread measured (this read only when none was).
                let read = self.policy_tids[t].and_then(crate::setup::read_back);
                stats.policy = if link.full.is_abandoned() {
                    acc.last_policy.clone().or(read)
                } else {
                    acc.last_policy.clone_from(&read);
                    read
                };
                acc.delivered_through = Some(rec.index + rec.span - 1);
                if rec.samples() > 0 {
                    if self.keep_windows {
                        acc.windows.push(stats.clone());
                    }
                    // After the copy kept above: the kept windows carry no histograms.
                    match self.window_histograms {
                        Some(true) => attach_buckets(&mut stats, &rec),
                        Some(false) => attach_latency_buckets(&mut stats, &rec),
                        None => {}
                    }
                    let entry = self.pending.entry(rec.index).or_default();
                    if threads > 1 {
                        // Merged record for the second, allocated only when there is
                        // something to merge.
                        let merged = entry
                            .1
                            .get_or_insert_with(|| Box::new(WindowRecord::untouched()));
                        merged.merge(&rec);
                        merged.index = rec.index;
                        merged.span = merged.span.max(rec.span);
                    }
                    entry.0.push((t, stats));
                }
                // Into the totals and cleared, in one pass over the used counters.
                rec.drain_into(&mut acc.total);
                let _ = link.empty.push(rec);
            }
        }
        // A thread that has ended (an error stopped it early) holds no second back: else
        // every later second would wait in `pending` until the run ends.
        let live: Vec<usize> = (0..threads).filter(|&t| !self.ended(t)).collect();
        let ready_through = if final_drain {
            u64::MAX
        } else {
            live.iter()
                .map(|&t| self.accums[t].delivered_through.unwrap_or(0))
                .min()
                .unwrap_or(u64::MAX)
        };
        let waiting = live
            .iter()
            .any(|&t| self.accums[t].delivered_through.is_none());
        // Every wake-up of the windows taken was pushed before its window's record: the
        // samples are handed over before the seconds are reported, so that a sink's
        // threshold changes only between the wake-ups it has seen and those it has not.
        if took {
            self.drain_samples(observer);
        }
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() > ready_through || (!final_drain && waiting) {
                break;
            }
            let (index, (mut per_thread, merged_rec)) = entry.remove_entry();
            per_thread.sort_by_key(|(t, _)| *t);
            let mut merged = match &merged_rec {
                Some(rec) => {
                    let cpu = per_thread
                        .iter()
                        .filter_map(|(_, w)| w.cpu_percent)
                        .reduce(|a, b| a + b);
                    window_stats(rec, self.window, self.period, cpu)
                }
                None => per_thread[0].1.clone(),
            };
            if self.keep_windows && threads > 1 {
                self.summary_windows.push(merged.clone());
            }
            match (&merged_rec, self.window_histograms) {
                (Some(rec), Some(true)) => attach_buckets(&mut merged, rec),
                (Some(rec), Some(false)) => attach_latency_buckets(&mut merged, rec),
                _ => {}
            }
            let report = SecondWindows {
                index,
                first_expiry: self.first_expiry,
                threads: per_thread,
                merged,
            };
            observer(RunEvent::Second(&report));
            // The loop's p99 threshold follows the second just reported: the wake-ups it
            // now pushes are received after the observers saw this second.
            for (t, w) in &report.threads {
                if let (Some(Some(gate)), Some(p99)) = (self.p99_gates.get(*t), w.latency_p99) {
                    gate.store(p99.max(1), Ordering::Relaxed);
                }
            }
        }
        took
    }

    pub(super) fn finish(
        mut self,
        applied: &Applied,
        ends: &[WorkerEnd],
    ) -> (Vec<ThreadStats>, ThreadStats) {
        // The window records circulating in the rings (74 KiB each) are freed first, so the
        // statistics built below reuse their memory instead of raising the peak RSS.
        drop(std::mem::take(&mut self.links));
        drop(std::mem::take(&mut self.sample_rings));
        drop(std::mem::take(&mut self.p99_gates));
        // With one thread its totals are the run's: no merged record (147 KiB) is allocated.
        let single = self.accums.len() == 1;
        let mut all: Option<Box<WindowRecord>> = None;
        let mut threads = Vec::new();
        for (t, acc) in self.accums.into_iter().enumerate() {
            let end = &ends[t];
            let mut stats = thread_stats(
                &acc.total,
                self.period,
                Some(&applied.threads[t]),
                (end.cpu_time, end.wall),
                end.report.clone(),
                acc.windows,
            );
            stats.last_latency_ns = end.last_latency;
            threads.push(stats);
            match &mut all {
                None if single => all = Some(acc.total),
                None => {
                    let mut merged = Box::new(WindowRecord::untouched());
                    merged.merge(&acc.total);
                    all = Some(merged);
                }
                Some(all) => all.merge(&acc.total),
            }
        }
        let cpu: Nanos = ends.iter().map(|e| e.cpu_time).sum();
        let wall = ends.iter().map(|e| e.wall).max().unwrap_or(0);
        // The merged windows are those reported live (exact: from the merged records).
        let summary_windows = if threads.len() == 1 {
            threads[0].windows.clone()
        } else {
            self.summary_windows
        };
        let reports: Vec<&MethodObservations> =
            ends.iter().filter_map(|e| e.report.as_ref()).collect();
        let report = (!reports.is_empty()).then(|| MethodObservations::merge(reports));
        let all = all.unwrap_or_default();
        let summary = thread_stats(
            &all,
            self.period,
            None,
            (cpu, wall),
            report,
            summary_windows,
        );
        (threads, summary)
    }
}

/// The measuring thread's CPU use since the collector's previous read, % of one core.
/// `final_cpu` is the thread's own last read, for the record it handed over on exit.
fn cpu_percent(acc: &mut ThreadAccum, final_cpu: Option<Nanos>) -> Option<f64> {
    let cpu = match final_cpu {
        Some(c) => c,
        None => thread_cpu(acc.cpu_clock)?,
    };
    let wall = read_clock(libc::CLOCK_MONOTONIC);
    let prev = acc.last_cpu_read.replace((wall, cpu))?;
    let dwall = wall - prev.0;
    (dwall > 0).then(|| 100.0 * (cpu - prev.1) as f64 / dwall as f64)
}

/// Reads another thread's CPU clock (from `pthread_getcpuclockid`); `None` once it exited.
fn thread_cpu(clock: libc::clockid_t) -> Option<Nanos> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable; the clock id came from pthread_getcpuclockid.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0).then(|| crate::time::from_timespec(&ts))
}

/// Builds the statistics of one thread (or of all, merged) from its totals; `times` is
/// (CPU time, wall time) of the measuring loop, ns.
pub(crate) fn thread_stats(
    total: &WindowRecord,
    period: Nanos,
    applied: Option<&AppliedThread>,
    (cpu_time, wall): (Nanos, Nanos),
    method_report: Option<MethodObservations>,
    windows: Vec<WindowStats>,
) -> ThreadStats {
    ThreadStats {
        thread: applied.map(|a| a.thread),
        tid: applied.map(|a| a.tid),
        cpu: applied.and_then(|a| a.cpu),
        cpu_time_ns: cpu_time,
        wall_time_ns: wall,
        cpu_percent: if wall > 0 {
            100.0 * cpu_time as f64 / wall as f64
        } else {
            0.0
        },
        method_report,
        windows,
        ..totals_stats(total, period)
    }
}
