//! Other tools' threads (cyclictest's threads, jitterdebugger's CPUs) made into a
//! [`Measurement`]: their histograms' percentiles and the merged "all threads" figures.

use super::{LatencyFigures, Measurement, Setting, SourceFormat, MAX_LATENCY_NS, MAX_SAMPLES};
use serde_json::Value;
use std::collections::BTreeMap;
use tickscope_engine::time::Nanos;

/// The value at quantile `q` (0.0 ..= 1.0) of a histogram given as ascending
/// `(value, count)` pairs: the value of the bucket holding the sample of rank
/// `max(1, ceil(q·n))` — the same rank rule as tickscope's own percentiles.
/// `None` when the histogram is empty.
pub fn bucket_quantile(buckets: &[(Nanos, u64)], q: f64) -> Option<Nanos> {
    let n: u64 = buckets.iter().map(|b| b.1).sum();
    if n == 0 {
        return None;
    }
    let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0;
    buckets.iter().find_map(|&(v, c)| {
        seen += c;
        (seen >= rank).then_some(v)
    })
}

/// One thread (cyclictest) or CPU (jitterdebugger) of another tool's result, already in ns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolThread {
    /// Wake-ups measured.
    pub count: u64,
    /// Smallest, largest latency, ns.
    pub min: Nanos,
    /// Largest latency, ns.
    pub max: Nanos,
    /// Mean latency, ns.
    pub mean: f64,
    /// Histogram, ascending `(ns, count)`.
    pub histogram: Vec<(Nanos, u64)>,
}

/// Reads the per-thread objects shared by cyclictest and jitterdebugger:
/// `{"histogram": {"<units>": count, …}, "<count_key>": n, "min": …, "max": …, "avg": …}`,
/// values in units of `unit_ns`.
pub(crate) fn tool_threads(
    map: &serde_json::Map<String, Value>,
    what: &str,
    count_key: &str,
    unit_ns: Nanos,
) -> Result<Vec<ToolThread>, String> {
    let mut threads = Vec::new();
    let mut keys: Vec<(u64, &String)> = map
        .keys()
        .map(|k| {
            k.parse::<u64>()
                .map(|n| (n, k))
                .map_err(|_| format!("{what} key '{k}' is not a number"))
        })
        .collect::<Result<_, _>>()?;
    keys.sort();
    for (_, key) in keys {
        let t = &map[key];
        let num = |field: &str| {
            t.get(field)
                .and_then(Value::as_f64)
                .ok_or_else(|| format!("{what} {key} has no number '{field}'"))
        };
        let count = t
            .get(count_key)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{what} {key} has no whole number '{count_key}'"))?;
        let hist = t
            .get("histogram")
            .and_then(Value::as_object)
            .ok_or_else(|| format!("{what} {key} has no 'histogram' object"))?;
        let mut histogram = hist
            .iter()
            .map(|(k, v)| {
                let value: Nanos = k
                    .parse()
                    .map_err(|_| format!("{what} {key}: histogram bucket '{k}' is not a number"))?;
                let c = v.as_u64().ok_or_else(|| {
                    format!("{what} {key}: histogram count of bucket {k} is not a whole number")
                })?;
                let ns = value
                    .checked_mul(unit_ns)
                    .filter(|ns| ns.abs() <= MAX_LATENCY_NS);
                let ns = ns.ok_or_else(|| {
                    format!("{what} {key}: histogram bucket '{k}' is beyond any latency")
                })?;
                Ok((ns, c))
            })
            .collect::<Result<Vec<_>, String>>()?;
        histogram.sort();
        let in_histogram = histogram
            .iter()
            .try_fold(0u64, |sum, b| sum.checked_add(b.1))
            .filter(|&n| n <= MAX_SAMPLES)
            .ok_or_else(|| {
                format!("{what} {key}: the histogram's counts add up to more than any run holds")
            })?;
        if count > MAX_SAMPLES {
            return Err(format!(
                "{what} {key}: '{count_key}' is {count}, more than any run holds"
            ));
        }
        if in_histogram > count {
            return Err(format!(
                "{what} {key}: the histogram holds {in_histogram} samples but '{count_key}' is {count}"
            ));
        }
        let t = ToolThread {
            count,
            min: (num("min")? * unit_ns as f64).round() as Nanos,
            max: (num("max")? * unit_ns as f64).round() as Nanos,
            mean: num("avg")? * unit_ns as f64,
            histogram,
        };
        if count > 0 && !(t.min <= t.max && t.mean >= t.min as f64 && t.mean <= t.max as f64) {
            return Err(format!(
                "{what} {key}: min, avg and max are not in order ({} ≤ {} ≤ {} ns expected)",
                t.min, t.mean, t.max
            ));
        }
        threads.push(t);
    }
    if threads.is_empty() {
        return Err(format!("no {what} in the file"));
    }
    // Every later sum (merging threads and buckets) then fits too.
    threads
        .iter()
        .try_fold(0u64, |sum, t| sum.checked_add(t.count))
        .filter(|&n| n <= MAX_SAMPLES)
        .ok_or_else(|| format!("the {what}s' counts add up to more than any run holds"))?;
    Ok(threads)
}

/// Merges other tools' threads into one measurement's figures. Wake-ups beyond the
/// histogram's range (the tools count them but keep no value) make any percentile that
/// falls among them a lower bound: `limit_ns`, the range's end when the file says it, else
/// just above the largest bucket.
fn merge_tool_threads(
    threads: &[ToolThread],
    unit_ns: Nanos,
    limit_ns: Option<Nanos>,
    tool: &str,
) -> (u64, Option<LatencyFigures>, Vec<String>) {
    let mut notes = Vec::new();
    let unit = if unit_ns == 1 { "ns" } else { "µs" };
    notes.push(format!(
        "{tool} records whole {unit}: percentiles are read from its 1 {unit} histogram buckets"
    ));
    let measured: Vec<&ToolThread> = threads.iter().filter(|t| t.count > 0).collect();
    let samples: u64 = measured.iter().map(|t| t.count).sum();
    if samples == 0 {
        return (0, None, notes);
    }
    let mut merged: BTreeMap<Nanos, u64> = BTreeMap::new();
    let mut overflow = 0;
    let mut empty = false;
    for t in &measured {
        let in_hist: u64 = t.histogram.iter().map(|b| b.1).sum();
        empty |= in_hist == 0;
        for &(v, c) in &t.histogram {
            *merged.entry(v).or_default() += c;
        }
        overflow += t.count - in_hist;
    }
    let limit = limit_ns
        .or_else(|| merged.keys().next_back().map(|v| v + unit_ns))
        .unwrap_or(0);
    // Wake-ups beyond the range sort last, at a value no latency has.
    if overflow > 0 {
        merged.insert(Nanos::MAX, overflow);
    }
    let buckets: Vec<(Nanos, u64)> = merged.into_iter().collect();
    let mut lower_bounds = Vec::new();
    let mut quantile = |q, key| {
        if empty {
            return None;
        }
        let v = bucket_quantile(&buckets, q)?;
        if v == Nanos::MAX {
            lower_bounds.push(key);
            Some(limit)
        } else {
            Some(v)
        }
    };
    let (p50, p99, p99_9) = (
        quantile(0.5, "p50"),
        quantile(0.99, "p99"),
        quantile(0.999, "p99_9"),
    );
    if empty {
        notes.push(format!(
            "the file has no histogram ({tool} ran without -h): no percentiles"
        ));
    } else if overflow > 0 {
        let s = if overflow == 1 { "" } else { "s" };
        notes.push(format!(
            "{overflow} wake-up{s} at or beyond the histogram's end ({}): percentiles among \
             them are shown as lower bounds (≥)",
            crate::units::ns_i(limit)
        ));
    }
    let figures = LatencyFigures {
        min: measured.iter().map(|t| t.min).min().unwrap_or(0),
        mean: measured
            .iter()
            .map(|t| t.mean * t.count as f64)
            .sum::<f64>()
            / samples as f64,
        p50,
        p99,
        p99_9,
        max: measured.iter().map(|t| t.max).max().unwrap_or(0),
        lower_bounds,
    };
    (samples, Some(figures), notes)
}

/// The measurement of another tool's file: its threads merged (see [`merge_tool_threads`])
/// under the file's stem, with the settings the file records.
pub(crate) fn tool_measurement(
    format: SourceFormat,
    stem: &str,
    threads: &[ToolThread],
    (unit_ns, limit_ns): (Nanos, Option<Nanos>),
    mut settings: BTreeMap<Setting, String>,
) -> Measurement {
    let (samples, latency_ns, notes) =
        merge_tool_threads(threads, unit_ns, limit_ns, format.name());
    settings.insert(Setting::Threads, threads.len().to_string());
    Measurement {
        label: stem.to_string(),
        source: String::new(),
        format,
        settings,
        samples,
        latency_ns,
        resolution_ns: Some(unit_ns),
        dt_sd_ns: None,
        overruns: None,
        cpu_percent: None,
        notes,
        threads: threads
            .iter()
            .enumerate()
            .filter(|(_, t)| t.count > 0)
            .map(|(i, t)| (format!("T{i}"), thread_stats(i, t)))
            .collect(),
    }
}

/// A tool's thread as [`ThreadStats`] with only the latency filled in: min, max and mean as
/// the tool recorded them, percentiles and standard deviation from its histogram.
fn thread_stats(index: usize, t: &ToolThread) -> tickscope_engine::result::ThreadStats {
    use tickscope_engine::histogram::HistogramBuckets;
    use tickscope_engine::result::{LatencyStats, ThreadStats};
    let n: u64 = t.histogram.iter().map(|b| b.1).sum();
    let q = |x: f64| bucket_quantile(&t.histogram, x).unwrap_or(t.max);
    let variance = if n > 0 {
        t.histogram
            .iter()
            .map(|&(v, c)| c as f64 * (v as f64 - t.mean).powi(2))
            .sum::<f64>()
            / n as f64
    } else {
        0.0
    };
    ThreadStats {
        thread: Some(index),
        tid: None,
        cpu: None,
        samples: t.count,
        overruns: 0,
        samples_dropped: 0,
        latency_ns: Some(LatencyStats {
            min: t.min,
            max: t.max,
            mean: t.mean,
            stddev: variance.sqrt(),
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            early: 0,
            histogram: HistogramBuckets {
                significant_figures: 0,
                buckets: t.histogram.clone(),
            },
        }),
        period_ns: None,
        cpu_time_ns: 0,
        wall_time_ns: 0,
        cpu_percent: 0.0,
        last_latency_ns: None,
        method_report: None,
        windows: Vec::new(),
    }
}

/// A string field of a JSON object, if present.
pub(crate) fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}
