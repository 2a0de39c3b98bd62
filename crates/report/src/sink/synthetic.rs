//! A synthetic run for the sinks' tests: raw samples, the engine's own window records and
//! the [`SecondWindows`]s the collector would emit for them, without a clock or a thread.

use super::RunContext;
use tickscope_engine::record::WindowRecord;
use tickscope_engine::run::{Applied, AppliedThread, RunConfig, SecondWindows};
use tickscope_engine::sample::RawSample;
use tickscope_engine::setup::Policy;
use tickscope_engine::stats::{attach_buckets, window_stats};
use tickscope_engine::time::{ClockId, Nanos};
use tickscope_engine::wait::MethodKind;
use tickscope_system::system::SystemInfo;

/// Period of the synthetic run, ns (1 ms).
pub const PERIOD: Nanos = 1_000_000;
/// Window of the synthetic run, ns (1 s).
pub const WINDOW: Nanos = 1_000_000_000;

/// One window of the synthetic run: each thread's samples, and the report.
pub struct Window {
    /// Samples by thread.
    pub samples: Vec<Vec<RawSample>>,
    /// What the collector reports for the window.
    pub report: SecondWindows,
}

/// A synthetic run: what the sinks see, and the engine's totals per thread.
pub struct Run {
    /// The settings.
    pub config: RunConfig,
    /// The machine (detected).
    pub system: SystemInfo,
    /// The settings applied.
    pub applied: Applied,
    /// The windows in order.
    pub windows: Vec<Window>,
    /// Every window of each thread merged, as the engine merges them.
    pub totals: Vec<WindowRecord>,
}

/// The latency of wake-up `k` of thread `t`, ns: a deterministic spread over −3 µs … 150 ms
/// that hits bucket edges (1 µs, 2 µs, 100 ms) exactly.
pub fn latency(t: usize, k: u64) -> Nanos {
    let x = (k.wrapping_mul(2_654_435_761).wrapping_add(t as u64 * 97)) % 1000;
    match x {
        0..=9 => -(x as Nanos) * 300,
        10..=19 => 1000,
        20..=29 => 2000,
        30..=34 => 100_000_000,
        35..=39 => 150_000_000,
        _ => 500 + (x as Nanos).pow(3) / 37,
    }
}

/// A run of `threads` threads over `windows` windows of `per_window` wake-ups each.
pub fn run(threads: usize, windows: u64, per_window: u64) -> Run {
    let config = RunConfig {
        cpus: (0..threads).map(Some).collect(),
        ..RunConfig::new(PERIOD)
    };
    let applied = Applied {
        policy: Policy::Other { nice: 0 },
        policy_note: None,
        mlock: false,
        mlock_note: None,
        pm_qos_us: None,
        pm_qos_note: None,
        timer_slack_ns: 1,
        timer_slack_note: None,
        method: MethodKind::NanosleepAbs,
        interface: "clock_nanosleep(TIMER_ABSTIME)".into(),
        granularity_ns: 1,
        method_note: None,
        clock: ClockId::Monotonic,
        threads: (0..threads)
            .map(|t| AppliedThread {
                thread: t,
                tid: 0,
                cpu: Some(t),
            })
            .collect(),
        housekeeping: None,
    };
    let mut totals: Vec<WindowRecord> = (0..threads).map(|_| WindowRecord::new()).collect();
    let mut last: Vec<Option<Nanos>> = vec![None; threads];
    let t0: Nanos = 5_000_000_000;
    let mut out = Vec::new();
    for w in 0..windows {
        let mut samples = Vec::new();
        let mut stats = Vec::new();
        let mut merged = WindowRecord::new();
        for t in 0..threads {
            let mut rec = WindowRecord::new();
            rec.begin(w);
            let mut s = Vec::new();
            for j in 0..per_window {
                let seq = w * per_window + j;
                let expiry = t0 + seq as Nanos * (WINDOW / per_window as Nanos);
                let woke = expiry + latency(t, seq);
                rec.record(woke - expiry, last[t].map(|l| (woke - l, PERIOD)));
                last[t] = Some(woke);
                s.push(RawSample { seq, expiry, woke });
            }
            rec.overruns = u64::from(w % 3 == 1);
            let mut st = window_stats(&rec, WINDOW, PERIOD, Some(1.0));
            attach_buckets(&mut st, &rec);
            stats.push((t, st));
            totals[t].merge(&rec);
            merged.merge(&rec);
            merged.index = w;
            merged.span = 1;
            samples.push(s);
        }
        out.push(Window {
            samples,
            report: SecondWindows {
                index: w,
                first_expiry: t0,
                threads: stats,
                merged: {
                    let mut m = window_stats(&merged, WINDOW, PERIOD, None);
                    attach_buckets(&mut m, &merged);
                    m
                },
            },
        });
    }
    Run {
        config,
        system: tickscope_system::system::detect(),
        applied,
        windows: out,
        totals,
    }
}

impl Run {
    /// The context every event of this run is given.
    pub fn ctx(&self) -> RunContext<'_> {
        RunContext {
            system: &self.system,
            config: &self.config,
            methods: std::slice::from_ref(&self.config.method),
            rounds: 1,
            index: 0,
            total: 1,
        }
    }

    /// Hands the whole run to `sink` as the engine would (samples before each window).
    pub fn feed(&self, sink: &mut dyn super::RunSink) {
        let ctx = self.ctx();
        sink.started(&ctx, &self.applied);
        for w in &self.windows {
            for (t, s) in w.samples.iter().enumerate() {
                sink.samples(t, s);
            }
            sink.window(&ctx, &w.report);
        }
    }
}

impl Run {
    /// A result document for the run (for the sinks' `run_finished` and `finish`).
    pub fn document(&self) -> crate::RunDocument {
        use tickscope_engine::result::ThreadStats;
        use tickscope_engine::stats::totals_stats;
        let stats = |r: &WindowRecord, thread: Option<usize>| ThreadStats {
            thread,
            cpu: thread,
            ..totals_stats(r, PERIOD)
        };
        let mut all = WindowRecord::new();
        for t in &self.totals {
            all.merge(t);
        }
        let run = crate::MethodRun {
            method: self.applied.method.name().to_string(),
            round: 1,
            order: 0,
            started_at: "2026-11-21T12:00:00.000000000Z".into(),
            ended_at: "2026-11-21T12:00:05.000000000Z".into(),
            interrupted: false,
            applied: self.applied.clone(),
            threads: (0..self.totals.len())
                .map(|t| stats(&self.totals[t], Some(t)))
                .collect(),
            summary: stats(&all, None),
        };
        let mut doc = crate::RunDocument::of_runs(
            self.system.clone(),
            self.config.clone(),
            vec![run],
            false,
            None,
        );
        doc.tool = crate::ToolInfo {
            name: "tickscope".into(),
            version: "0.1.0".into(),
        };
        doc
    }
}
