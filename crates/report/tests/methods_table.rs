//! The comparison of wake-up methods (`tickscope run --method a,b` or `all`), pinned with a
//! snapshot: one row per method, medians over rounds, the notes each method adds.

mod common;

use tickscope_engine::record::WindowRecord;
use tickscope_engine::result::ThreadStats;
use tickscope_engine::run::Applied;
use tickscope_engine::stats::{latency_stats, period_stats};
use tickscope_engine::wait::{MarginStats, MethodKind, MethodObservations};
use tickscope_report::methods_table::{methods_table, run_line};
use tickscope_report::MethodRun;

const MS: i64 = 1_000_000;

/// A run of `method` whose wake-ups are `MS` apart plus `lat[k]` ns late.
fn run(method: MethodKind, round: u32, order: u32, lat: &[i64], cpu: f64) -> MethodRun {
    let mut rec = WindowRecord::new();
    let mut last = None;
    for (k, &l) in lat.iter().enumerate() {
        let woke = k as i64 * MS + l;
        rec.record(l, last.map(|p: i64| (woke - p, MS)));
        last = Some(woke);
    }
    let report = match method {
        MethodKind::Hybrid => Some(MethodObservations {
            margin: Some(MarginStats {
                mode: "auto".into(),
                initial_ns: 200_000,
                calibrated_ns: Some(40_000 + order as i64),
                final_ns: 30_000 + 1_000 * round as i64,
                min_ns: 30_000,
                max_ns: 200_000,
                mean_ns: 40_000.0 + 10_000.0 * round as f64,
                sleeps: lat.len() as u64,
                overshot: 1,
                max_overshoot_ns: 90_000,
            }),
            ..MethodObservations::default()
        }),
        MethodKind::Timerfd => Some(MethodObservations {
            timer_overruns: Some(2),
            ..MethodObservations::default()
        }),
        _ => None,
    };
    let summary = ThreadStats {
        thread: None,
        tid: None,
        cpu: None,
        samples: rec.samples(),
        overruns: 2,
        samples_dropped: 0,
        latency_ns: latency_stats(&rec.latency, &rec.latency_hist),
        period_ns: period_stats(&rec.period, &rec.period_dev_hist, MS),
        cpu_time_ns: 0,
        wall_time_ns: 0,
        cpu_percent: cpu,
        last_latency_ns: None,
        method_report: report,
        windows: Vec::new(),
    };
    MethodRun {
        method: method.name().into(),
        round,
        order,
        started_at: "2026-11-21T00:00:00Z".into(),
        ended_at: "2026-11-21T00:00:10Z".into(),
        interrupted: false,
        applied: Applied {
            granularity_ns: if method == MethodKind::Itimer {
                1_000
            } else {
                1
            },
            method_note: (method == MethodKind::Busy).then(|| "busy spins".into()),
            ..common::applied(0, method)
        },
        threads: Vec::new(),
        summary,
    }
}

#[test]
fn one_row_per_method_with_medians_over_rounds() {
    let lat: Vec<i64> = (0..100).map(|k| 10_000 + 100 * k).collect();
    let runs = vec![
        run(MethodKind::Timerfd, 1, 0, &lat, 2.0),
        run(MethodKind::Busy, 1, 1, &[50, 60, 70], 99.0),
        run(MethodKind::Hybrid, 1, 2, &[0, 5, 10, 15], 8.0),
        run(MethodKind::Busy, 2, 3, &[40, 90, 80], 97.0),
        run(MethodKind::Hybrid, 2, 4, &[1, 2, 3, 4], 6.0),
        run(MethodKind::Itimer, 2, 5, &[20_000, 30_000], 3.0),
    ];
    insta::assert_snapshot!(methods_table(&runs));
}

#[test]
fn run_lines_count_from_one() {
    let r = run(MethodKind::Busy, 2, 3, &[40, 90, 80], 97.0);
    assert_eq!(
        run_line(&r, 6),
        "[4/6] busy, round 2: 3 samples, latency p50 80 ns p99 90 ns max 90 ns, overruns 2, \
         CPU 97.0 %"
    );
}
