//! Whether a tickscope result document is internally consistent, before anything renders
//! it: a file edited by hand, cut, or written by a broken program is refused with one line
//! instead of drawing nonsense or panicking (a plot with its maximum below its minimum).
//!
//! Checked for every run's threads and summary: latency `min ≤ p50 ≤ p90 ≤ p99 ≤ p99.9 ≤
//! p99.99 ≤ max`, `min ≤ mean ≤ max`, early wake-ups and histogram counts that add up to
//! the samples (with checked sums, so a count of 2^64−1 cannot wrap), histogram values in
//! ascending order and within ±1 h; period `min ≤ max`, deviation percentiles in order;
//! windows with `min ≤ max`; a positive interval.

use super::{MAX_LATENCY_NS, MAX_SAMPLES};
use crate::document::RunDocument;
use tickscope_engine::histogram::HistogramBuckets;
use tickscope_engine::result::{LatencyStats, PeriodStats, ThreadStats};

/// Checks `doc`; the error says which run, thread and figure is wrong.
///
/// # Errors
/// One sentence naming the first inconsistency found.
pub fn check(doc: &RunDocument) -> Result<(), String> {
    if doc.config.period_ns <= 0 {
        return Err(format!("the interval is {} ns", doc.config.period_ns));
    }
    for run in doc.each_run() {
        let name = &run.method;
        for (i, t) in run.threads.iter().enumerate() {
            thread(t).map_err(|e| format!("run {name}, thread {i}: {e}"))?;
        }
        thread(&run.summary).map_err(|e| format!("run {name}, summary: {e}"))?;
    }
    Ok(())
}

fn thread(t: &ThreadStats) -> Result<(), String> {
    if t.samples > MAX_SAMPLES || t.overruns > MAX_SAMPLES {
        return Err(format!("{} samples, more than any run holds", t.samples));
    }
    if let Some(l) = &t.latency_ns {
        latency(l, t.samples)?;
    }
    if let Some(p) = &t.period_ns {
        period(p)?;
    }
    for w in &t.windows {
        let ordered = |lo: Option<i64>, hi: Option<i64>| lo.zip(hi).is_none_or(|(a, b)| a <= b);
        if !ordered(w.latency_min, w.latency_max) || !ordered(w.period_min, w.period_max) {
            return Err(format!(
                "window {}: its minimum is above its maximum",
                w.index
            ));
        }
        if w.samples > MAX_SAMPLES {
            return Err(format!("window {}: {} samples", w.index, w.samples));
        }
    }
    Ok(())
}

fn latency(l: &LatencyStats, samples: u64) -> Result<(), String> {
    let chain = [
        ("min", l.min),
        ("p50", l.p50),
        ("p90", l.p90),
        ("p99", l.p99),
        ("p99.9", l.p99_9),
        ("p99.99", l.p99_99),
        ("max", l.max),
    ];
    for pair in chain.windows(2) {
        if pair[0].1 > pair[1].1 {
            return Err(format!(
                "latency {} ({} ns) is above {} ({} ns)",
                pair[0].0, pair[0].1, pair[1].0, pair[1].1
            ));
        }
    }
    if !(l.mean >= l.min as f64 && l.mean <= l.max as f64) {
        return Err(format!("latency mean {} ns lies outside min … max", l.mean));
    }
    if !(l.stddev >= 0.0 && l.stddev.is_finite()) {
        return Err(format!("latency SD is {}", l.stddev));
    }
    if l.early > samples {
        return Err(format!("{} early wake-ups of {samples} samples", l.early));
    }
    let counted = buckets(&l.histogram, "latency")?;
    if counted != samples {
        return Err(format!(
            "the latency histogram holds {counted} wake-ups, the samples are {samples}"
        ));
    }
    Ok(())
}

fn period(p: &PeriodStats) -> Result<(), String> {
    if p.min > p.max {
        return Err(format!("period min {} ns is above max {} ns", p.min, p.max));
    }
    if !(p.abs_deviation_p50 <= p.abs_deviation_p99 && p.abs_deviation_p99 <= p.abs_deviation_p99_9)
    {
        return Err("the period deviation percentiles are not in order".into());
    }
    if !(p.mean.is_finite() && p.stddev.is_finite() && p.stddev >= 0.0) {
        return Err("the period mean or SD is not a number".into());
    }
    buckets(&p.deviation_histogram, "period deviation")?;
    Ok(())
}

/// The sum of a histogram's counts, checked; values ascending and within ±1 h.
fn buckets(h: &HistogramBuckets, what: &str) -> Result<u64, String> {
    let mut sum: u64 = 0;
    let mut last = i64::MIN;
    for &(v, c) in &h.buckets {
        if v <= last && last != i64::MIN {
            return Err(format!("the {what} histogram is not in ascending order"));
        }
        if v.abs() > MAX_LATENCY_NS {
            return Err(format!("the {what} histogram holds a value of {v} ns"));
        }
        last = v;
        sum = sum
            .checked_add(c)
            .filter(|&s| s <= MAX_SAMPLES)
            .ok_or_else(|| {
                format!("the {what} histogram's counts add up to more than any run holds")
            })?;
    }
    Ok(sum)
}
