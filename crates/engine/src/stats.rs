//! Turning recorded windows into [`crate::result`] statistics.

use crate::moments::Moments;
use crate::record::WindowRecord;
use crate::result::{LatencyStats, PeriodStats, ThreadStats, WindowStats};
use crate::time::Nanos;
use crate::window_counts::WindowCounts;
use crate::window_histogram::{Count, WindowHistogram};
use std::sync::Arc;

/// Latency statistics of a record; `None` without samples.
pub fn latency_stats<C: Count>(m: &Moments, h: &WindowHistogram<C>) -> Option<LatencyStats> {
    let (min, max) = (m.min()?, m.max()?);
    // Bucket upper bounds can lie beyond the exact extremes; clamp to them.
    let q = |q: f64| h.value_at_quantile(q).map_or(max, |v| v.clamp(min, max));
    Some(LatencyStats {
        min,
        max,
        mean: m.mean()?,
        stddev: m.stddev()?,
        p50: q(0.50),
        p90: q(0.90),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        early: h.negative_count(),
        histogram: h.buckets(),
    })
}

/// Period statistics of a record against `nominal` ns; `None` without periods.
pub fn period_stats<C: Count>(
    m: &Moments,
    dev: &WindowHistogram<C>,
    nominal: Nanos,
) -> Option<PeriodStats> {
    let max_dev = m.max()?.abs_diff(nominal).max(m.min()?.abs_diff(nominal)) as Nanos;
    let q = |q: f64| {
        dev.abs_value_at_quantile(q)
            .map_or(max_dev, |v| v.min(max_dev))
    };
    Some(PeriodStats {
        nominal,
        samples: m.count,
        mean: m.mean()?,
        stddev: m.stddev()?,
        rms_jitter: m.rms_about(nominal)?,
        min: m.min()?,
        max: m.max()?,
        abs_deviation_p50: q(0.50),
        abs_deviation_p99: q(0.99),
        abs_deviation_p99_9: q(0.999),
        deviation_histogram: dev.buckets(),
    })
}

/// Statistics of a whole record — one thread's totals, or all threads' merged — with no
/// identity (thread, tid, CPU), no CPU or wall time and no windows: the caller fills those in
/// where it knows them. `nominal` is the period, ns.
pub fn totals_stats<C: Count>(total: &WindowRecord<C>, nominal: Nanos) -> ThreadStats {
    ThreadStats {
        thread: None,
        tid: None,
        cpu: None,
        samples: total.samples(),
        overruns: total.overruns,
        samples_dropped: total.samples_dropped,
        latency_ns: latency_stats(&total.latency, &total.latency_hist),
        period_ns: period_stats(&total.period, &total.period_dev_hist, nominal),
        cpu_time_ns: 0,
        wall_time_ns: 0,
        cpu_percent: 0.0,
        last_latency_ns: None,
        method_report: None,
        windows: Vec::new(),
    }
}

/// Statistics of one window record. `window` is the window length and `nominal` the
/// period, both ns; `cpu_percent` is what the collector measured for it.
pub fn window_stats<C: Count>(
    r: &WindowRecord<C>,
    window: Nanos,
    nominal: Nanos,
    cpu_percent: Option<f64>,
) -> WindowStats {
    let p99 = r
        .latency_hist
        .value_at_quantile_of(0.99, r.latency.count)
        .zip(r.latency.max())
        .map(|(v, max)| v.min(max));
    WindowStats {
        index: r.index,
        span: r.span,
        start_ns: r.index as Nanos * window,
        samples: r.samples(),
        overruns: r.overruns,
        latency_min: r.latency.min(),
        latency_mean: r.latency.mean(),
        latency_p99: p99,
        latency_max: r.latency.max(),
        period_mean: r.period.mean(),
        period_stddev: r.period.stddev(),
        period_rms_jitter: r.period.rms_about(nominal),
        period_min: r.period.min(),
        period_max: r.period.max(),
        cpu_percent,
        policy: None,
        latency_buckets: None,
        deviation_buckets: None,
    }
}

/// Attaches the window's histograms of `r` to `stats` ([`WindowStats::latency_buckets`],
/// [`WindowStats::deviation_buckets`]): a copy of the counters the window used.
pub fn attach_buckets<C: Count>(stats: &mut WindowStats, r: &WindowRecord<C>) {
    stats.latency_buckets = WindowCounts::of(&r.latency_hist).map(Arc::new);
    stats.deviation_buckets = WindowCounts::of(&r.period_dev_hist).map(Arc::new);
}

/// Attaches only the window's latency histogram of `r` to `stats`
/// ([`WindowStats::latency_buckets`]), for outputs that need no period deviations (`--hlog`):
/// the period-deviation counters, spread as widely as the latencies', are not walked.
pub fn attach_latency_buckets<C: Count>(stats: &mut WindowStats, r: &WindowRecord<C>) {
    stats.latency_buckets = WindowCounts::of(&r.latency_hist).map(Arc::new);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_a_known_record() {
        let mut r = WindowRecord::new();
        r.begin(3);
        let mut last = None;
        for (k, lat) in [10, 20, 30, 40, -5].into_iter().enumerate() {
            let woke = k as Nanos * 1000 + lat;
            r.record(lat, last.map(|l: Nanos| (woke - l, 1000)));
            last = Some(woke);
        }
        let w = window_stats(&r, 1_000_000_000, 1000, None);
        assert_eq!((w.index, w.samples, w.start_ns), (3, 5, 3_000_000_000));
        assert_eq!((w.latency_min, w.latency_max), (Some(-5), Some(40)));
        let l = latency_stats(&r.latency, &r.latency_hist).unwrap();
        assert_eq!((l.p50, l.early, l.mean), (20, 1, 19.0));
        let p = period_stats(&r.period, &r.period_dev_hist, 1000).unwrap();
        assert_eq!((p.samples, p.min, p.max), (4, 955, 1010));
        assert_eq!(p.abs_deviation_p99, 45);
        assert!(latency_stats(&Moments::default(), &WindowHistogram::new()).is_none());
    }
}
