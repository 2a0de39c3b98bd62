use super::*;
use tickscope_engine::record::WindowRecord;
use tickscope_engine::stats::{attach_buckets, window_stats};

const SECOND: Nanos = 1_000_000_000;

#[test]
fn merged_series_keep_the_first_hour_then_minutes() {
    let g = Grain::merged(SECOND);
    assert_eq!((g.fine_windows(), g.coarse_windows()), (3600, 60));
    assert_eq!(g.group(0), None);
    assert_eq!(g.group(3599), None);
    assert_eq!(g.group(3600), Some(3600));
    assert_eq!(g.group(3659), Some(3600));
    assert_eq!(g.group(3660), Some(3660));
    // A run's only thread is its merged series.
    assert_eq!(Grain::of(Some(0), 1, SECOND), g);
    assert_eq!(Grain::of(None, 64, SECOND), g);
}

#[test]
fn many_threads_share_four_thread_hours_at_full_grain() {
    for threads in [2, 3, 4] {
        assert_eq!(Grain::per_thread(SECOND, threads).fine_windows(), 3600);
    }
    assert_eq!(Grain::per_thread(SECOND, 8).fine_windows(), 1800);
    // 14400 s / 64 = 225 s, rounded up to whole minutes.
    let g = Grain::of(Some(5), 64, SECOND);
    assert_eq!(
        (g.fine_windows(), g.group(239), g.group(240)),
        (240, None, Some(240))
    );
}

#[test]
fn windows_of_a_minute_or_longer_are_never_coarsened() {
    let g = Grain::merged(60 * SECOND);
    assert_eq!(g.coarse_windows(), 1);
    assert_eq!(g.group(1_000_000), None);
    // 100 ms windows: 600 per coarse window, 36 000 before.
    let g = Grain::merged(SECOND / 10);
    assert_eq!((g.fine_windows(), g.coarse_windows()), (36_000, 600));
}

/// A window of `n` wake-ups with latencies from `lat` and periods around 1 ms.
fn record(index: u64, n: u64, lat: impl Fn(u64) -> Nanos) -> WindowRecord {
    let mut r = WindowRecord::new();
    r.begin(index);
    for k in 0..n {
        let dt = 1_000_000 + (k as Nanos * 7919 % 2001) - 1000;
        r.record(lat(k), Some((dt, 1_000_000)));
    }
    r.overruns = index % 3;
    r
}

#[test]
fn a_coarse_window_equals_its_windows_merged_exactly() {
    let mut all = WindowRecord::new();
    all.begin(3600);
    let mut coarse = CoarseWindow::default();
    for index in 3600..3660 {
        let r = record(index, 997, |k| 20_000 + ((k * index) % 5000) as Nanos * 3);
        all.merge(&r);
        let mut w = window_stats(&r, SECOND, 1_000_000, Some(2.0));
        attach_buckets(&mut w, &r);
        assert!(coarse.add(3600, &w, SECOND).is_none());
    }
    all.index = 3600;
    let got = coarse.take(SECOND).expect("wake-ups were added");
    let want = window_stats(&all, SECOND, 1_000_000, Some(2.0));
    assert_eq!(
        (got.index, got.span, got.start_ns),
        (3600, 60, 3600 * SECOND)
    );
    assert_eq!((got.samples, got.overruns), (want.samples, want.overruns));
    assert_eq!(got.latency_p99, want.latency_p99);
    assert_eq!(
        (got.latency_min, got.latency_max),
        (want.latency_min, want.latency_max)
    );
    assert_eq!(
        (got.period_min, got.period_max),
        (want.period_min, want.period_max)
    );
    let close = |a: Option<f64>, b: Option<f64>| {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
    };
    close(got.latency_mean, want.latency_mean);
    close(got.period_mean, want.period_mean);
    close(got.period_stddev, want.period_stddev);
    close(got.period_rms_jitter, want.period_rms_jitter);
    close(got.cpu_percent, Some(2.0));
    assert!(coarse.take(SECOND).is_none(), "taken once");
}

#[test]
fn the_next_group_finishes_the_previous_one() {
    let mut coarse = CoarseWindow::default();
    let mut finished = Vec::new();
    for index in 3600..3725 {
        let r = record(index, 10, |_| 5_000);
        let mut w = window_stats(&r, SECOND, 1_000_000, None);
        attach_buckets(&mut w, &r);
        let g = Grain::merged(SECOND).group(index).unwrap();
        finished.extend(coarse.add(g, &w, SECOND));
    }
    finished.extend(coarse.take(SECOND));
    let spans: Vec<(u64, u64, u64)> = finished
        .iter()
        .map(|w| (w.index, w.span, w.samples))
        .collect();
    assert_eq!(spans, [(3600, 60, 600), (3660, 60, 600), (3720, 5, 50)]);
}
