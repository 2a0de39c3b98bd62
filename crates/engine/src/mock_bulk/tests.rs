use super::*;
use crate::grid::OverrunPolicy;
use crate::mock::MockMethod;
use crate::result::WindowStats;
use crate::stats::{attach_buckets, window_stats};
use crate::wait::WakeMethod;
use crate::worker::{measure, window_link};

const MS: Nanos = 1_000_000;

/// How a loop ended: wake-ups, start, last wake-up, last latency.
type Ending = (u64, Nanos, Nanos, Option<Nanos>);

/// Every record a loop hands over, as statistics with their histograms, and how it ended.
/// `bulk` picks [`measure_in_bulk`], else the measuring loop on a [`MockMethod`]. Enough
/// records circulate that neither loop ever waits for the collector.
fn records(
    latencies: &[Nanos],
    params: &LoopParams,
    bulk: bool,
) -> (Vec<(WindowStats, u64)>, Ending) {
    let (mut link, mut collector, first) = window_link(64, 0);
    let stop = AtomicBool::new(false);
    let mut method = MockMethod::new(0, latencies.to_vec());
    let end = match bulk {
        true => measure_in_bulk(latencies, params, &stop, &mut link, first, method.now()),
        false => measure(&mut method, params, &stop, &mut link, first, None),
    };
    let mut out = Vec::new();
    while let Ok(rec) = collector.full.pop() {
        let mut stats = window_stats(&rec, params.window, params.period, None);
        attach_buckets(&mut stats, &rec);
        out.push((stats, rec.overruns));
    }
    let summary = (end.samples, end.started, end.last_woke, end.last_latency);
    (out, summary)
}

fn params(period: Nanos, window: Nanos) -> LoopParams {
    LoopParams {
        first_expiry: 10 * MS,
        period,
        max_samples: u64::MAX,
        end: Nanos::MAX,
        overrun: OverrunPolicy::Skip,
        window,
        await_records: true,
    }
}

/// Counted in bulk, every window — counts, sums, extremes, both histograms — and the loop's
/// end are exactly what the measuring loop records wake-up by wake-up, whether the run ends
/// by its length or its count of wake-ups, mid-window or not, with windows that are no
/// multiple of the period and scripts that do not divide a window.
#[test]
fn bulk_windows_equal_the_measuring_loops() {
    let scripts: [&[Nanos]; 4] = [
        &[20_000, 30_000, 25_000, 999_000, 1_000_000],
        &[15_000],
        &[0, 1, 2, 3, 4, 5, 6_000],
        &[
            400_000, 17_000, 17_000, 90_000, 3_000, 65_000, 12_345, 54_321, 1_000, 2_000, 8_000,
        ],
    ];
    for script in scripts {
        for (period, window, samples, length) in [
            (MS, 1_000 * MS, u64::MAX, 5_300 * MS),
            (MS, 1_000 * MS, 2_345, Nanos::MAX),
            (3 * MS, 1_000 * MS, u64::MAX, 4_000 * MS),
            (MS, 37 * MS, 1_000, Nanos::MAX),
            (MS, MS, 50, Nanos::MAX),
        ] {
            let mut p = params(period, window);
            p.max_samples = samples;
            p.end = p.first_expiry.saturating_add(length);
            let (loop_windows, loop_end) = records(script, &p, false);
            let (bulk_windows, bulk_end) = records(script, &p, true);
            assert!(loop_windows.len() > 1);
            assert_eq!(bulk_windows, loop_windows, "{script:?} {period} {window}");
            assert_eq!(bulk_end, loop_end, "{script:?} {period} {window}");
        }
    }
}

#[test]
fn only_scripts_within_the_period_are_counted_in_bulk() {
    assert!(applies(&[0, MS], MS));
    assert!(!applies(&[20_000, MS + 1], MS));
    assert!(!applies(&[-1, 20_000], MS));
    assert!(!applies(&[], MS));
}
