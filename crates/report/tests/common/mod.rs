//! Deterministic run documents for renderer tests: synthetic wake-ups pushed through the
//! engine's own recording and statistics, so no test depends on real timing.

#![allow(dead_code)]

use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::record::WindowRecord;
use tickscope_engine::result::ThreadStats;
use tickscope_engine::run::{Applied, AppliedThread, RunConfig};
use tickscope_engine::setup::Policy;
use tickscope_engine::stats::{latency_stats, period_stats, window_stats};
use tickscope_engine::time::{ClockId, Nanos};
use tickscope_engine::wait::MethodKind;
use tickscope_report::{MethodRun, RunDocument, ToolInfo, RUN_SCHEMA};
use tickscope_system::system::SystemInfo;

/// Period of the synthetic runs: 1 ms.
pub const PERIOD: Nanos = 1_000_000;

/// Latency of wake-up `k` of thread `t`, ns: a 10-20 µs body, a 150 µs bump every 997
/// wake-ups, a 2.5 ms stall at wake-up 2500 and one early wake-up at 1234.
pub fn latency(t: usize, k: u64) -> Nanos {
    match k {
        2500 => 2_500_000 + t as Nanos * 100_000,
        1234 => -3_000,
        _ if k % 997 == 996 => 150_000 + t as Nanos * 10_000,
        _ => 10_000 + ((k * 7919 + t as u64 * 31) % 101) as Nanos * 100,
    }
}

/// One thread's statistics over `seconds` one-second windows of 1000 wake-ups.
pub fn thread(t: usize, seconds: u64, shift: Nanos) -> ThreadStats {
    let mut total = WindowRecord::new();
    let mut windows = Vec::new();
    let mut last: Option<Nanos> = None;
    for s in 0..seconds {
        let mut w = WindowRecord::new();
        w.begin(s);
        for i in 0..1000 {
            let k = s * 1000 + i;
            let expiry = k as Nanos * PERIOD;
            let lat = latency(t, k) + shift;
            let woke = expiry + lat;
            w.record(lat, last.map(|l| (woke - l, PERIOD)));
            last = Some(woke);
        }
        if s == 2 {
            w.overruns = 2;
        }
        total.merge(&w);
        windows.push(window_stats(
            &w,
            1_000_000_000,
            PERIOD,
            Some(2.0 + t as f64),
        ));
    }
    ThreadStats {
        thread: Some(t),
        tid: Some(1000 + t as i32),
        cpu: Some(t),
        samples: total.samples(),
        overruns: total.overruns,
        samples_dropped: 0,
        latency_ns: latency_stats(&total.latency, &total.latency_hist),
        period_ns: period_stats(&total.period, &total.period_dev_hist, PERIOD),
        cpu_time_ns: 40_000_000,
        wall_time_ns: seconds as Nanos * 1_000_000_000,
        cpu_percent: 2.0 + t as f64,
        last_latency_ns: None,
        method_report: None,
        windows,
    }
}

/// The merged summary of threads built by [`thread`] (same inputs, recorded together).
pub fn summary(threads: usize, seconds: u64, shift: Nanos) -> ThreadStats {
    let mut total = WindowRecord::new();
    let mut windows = Vec::new();
    for s in 0..seconds {
        let mut merged = WindowRecord::new();
        merged.begin(s);
        for t in 0..threads {
            let mut w = WindowRecord::new();
            let mut last: Option<Nanos> = None;
            for i in 0..1000 {
                let k = s * 1000 + i;
                let woke = k as Nanos * PERIOD + latency(t, k) + shift;
                w.record(latency(t, k) + shift, last.map(|l| (woke - l, PERIOD)));
                last = Some(woke);
            }
            if s == 2 {
                w.overruns = 2;
            }
            merged.merge(&w);
        }
        total.merge(&merged);
        windows.push(window_stats(&merged, 1_000_000_000, PERIOD, Some(5.0)));
    }
    ThreadStats {
        thread: None,
        tid: None,
        cpu: None,
        samples: total.samples(),
        overruns: total.overruns,
        samples_dropped: 0,
        latency_ns: latency_stats(&total.latency, &total.latency_hist),
        period_ns: period_stats(&total.period, &total.period_dev_hist, PERIOD),
        cpu_time_ns: 40_000_000 * threads as Nanos,
        wall_time_ns: seconds as Nanos * 1_000_000_000,
        cpu_percent: 5.0,
        last_latency_ns: None,
        method_report: None,
        windows,
    }
}

/// The settings of a FIFO 90 run of `method` with `threads` pinned threads.
pub fn applied(threads: usize, method: MethodKind) -> Applied {
    Applied {
        policy: Policy::Fifo { priority: 90 },
        policy_note: None,
        mlock: true,
        mlock_note: None,
        pm_qos_us: Some(0),
        pm_qos_note: None,
        timer_slack_ns: 1,
        timer_slack_note: Some("real-time threads get no timer slack from the kernel".into()),
        method,
        interface: "clock_nanosleep(TIMER_ABSTIME)".into(),
        granularity_ns: 1,
        method_note: None,
        clock: ClockId::Monotonic,
        threads: (0..threads)
            .map(|t| AppliedThread {
                thread: t,
                tid: 1000 + t as i32,
                cpu: Some(t),
            })
            .collect(),
        housekeeping: None,
    }
}

/// A single-run document: `threads` threads, `seconds` seconds at 1 ms.
pub fn document(threads: usize, seconds: u64) -> RunDocument {
    let mut config = RunConfig::new(PERIOD);
    config.duration_ns = Some(seconds as Nanos * 1_000_000_000);
    config.cpus = (0..threads).map(Some).collect();
    config.overrun = OverrunPolicy::Skip;
    let system = SystemInfo {
        hostname: "testbox".into(),
        kernel_release: "6.18.0-test".into(),
        kernel_version: "#1 SMP PREEMPT_DYNAMIC".into(),
        machine: "x86_64".into(),
        cpu_model: Some("Test CPU <2 GHz> & co".into()),
        cpu_count: 2,
        clocksource: Some("tsc".into()),
        preemption_model: Some("none (PREEMPT_DYNAMIC, kernel log)".into()),
        virtualization: Some("KVM".into()),
        default_timer_slack_ns: 50_000,
        cpuidle_driver: Some("haltpoll".into()),
        rt_runtime_us: Some(950_000),
        rt_period_us: Some(1_000_000),
        cmdline: Some("console=ttyS0 quiet".into()),
    };
    let run = MethodRun {
        method: MethodKind::NanosleepAbs.name().into(),
        round: 1,
        order: 0,
        started_at: "2026-11-21T12:00:00.000000000Z".into(),
        ended_at: "2026-11-21T12:00:05.000000000Z".into(),
        interrupted: false,
        applied: applied(threads, MethodKind::NanosleepAbs),
        threads: (0..threads).map(|t| thread(t, seconds, 0)).collect(),
        summary: summary(threads, seconds, 0),
    };
    let mut doc = RunDocument::of_runs(system, config, vec![run], false, None);
    doc.tool = ToolInfo {
        name: "tickscope".into(),
        version: "0.1.0".into(),
    };
    assert_eq!(doc.schema, RUN_SCHEMA);
    doc
}

/// A document holding two runs (two methods), the second 20 µs later throughout.
pub fn two_method_document(threads: usize, seconds: u64) -> RunDocument {
    let mut doc = document(threads, seconds);
    let run = |order: u32, method: MethodKind, shift: Nanos| MethodRun {
        method: method.name().into(),
        round: 1,
        order,
        started_at: doc.started_at().to_string(),
        ended_at: doc.ended_at().to_string(),
        interrupted: false,
        applied: applied(threads, method),
        threads: (0..threads).map(|t| thread(t, seconds, shift)).collect(),
        summary: summary(threads, seconds, shift),
    };
    doc.runs = vec![
        run(0, MethodKind::NanosleepAbs, 0),
        run(1, MethodKind::NanosleepRel, 20_000),
    ];
    doc.comparison = true;
    doc
}
