//! The figures a scenario's table can show, by name, from a step's result. Times are
//! returned in ns, rates in Hz, shares in %.

use tickscope_report::RunDocument;
use tickscope_system::clocks::ClocksResult;

/// What a step measured.
#[derive(Debug, Clone)]
pub enum StepData {
    /// A `run` step's result document.
    Run(Box<RunDocument>),
    /// A `clocks` step's result.
    Clocks(Box<ClocksResult>),
}

/// Every `run` figure: latency.{min,max,mean,stddev,p50,p99}, period.{samples,nominal,mean,
/// stddev,rms_jitter,min,max,minmax,stddev_pct,minmax_pct,mean_hz,nominal_hz}, samples,
/// overruns (`missed`, its earlier name, is still accepted in scenario files).
const RUN: &[&str] = &[
    "latency.min",
    "latency.max",
    "latency.mean",
    "latency.stddev",
    "latency.p50",
    "latency.p99",
    "period.samples",
    "period.nominal",
    "period.mean",
    "period.stddev",
    "period.rms_jitter",
    "period.min",
    "period.max",
    "period.minmax",
    "period.stddev_pct",
    "period.minmax_pct",
    "period.mean_hz",
    "period.nominal_hz",
    "samples",
    "overruns",
];

/// `clocks` figures: `clocks.NAME.{after_idle.min,after_idle.p50,after_idle.max,
/// deltas.min,cost.median}` with NAME a clock's name (`realtime`, `monotonic`, …).
const CLOCKS: &[&str] = &[
    "after_idle.min",
    "after_idle.p50",
    "after_idle.max",
    "deltas.min",
    "cost.median",
];

/// True when `metric` names a figure.
pub fn known(metric: &str) -> bool {
    RUN.contains(&metric)
        || metric == "missed"
        || metric
            .strip_prefix("clocks.")
            .and_then(|r| r.split_once('.'))
            .is_some_and(|(_, m)| CLOCKS.contains(&m))
}

/// The figure `metric` of `data`, if the step measured it.
pub fn value(metric: &str, data: &StepData) -> Option<f64> {
    match data {
        StepData::Run(doc) => run_value(metric, doc),
        StepData::Clocks(c) => clocks_value(metric, c),
    }
}

fn run_value(metric: &str, doc: &RunDocument) -> Option<f64> {
    let s = &doc.first().summary;
    let l = s.latency_ns.as_ref();
    let p = s.period_ns.as_ref();
    let nominal = doc.config.period_ns as f64;
    Some(match metric {
        "latency.min" => l?.min as f64,
        "latency.max" => l?.max as f64,
        "latency.mean" => l?.mean,
        "latency.stddev" => l?.stddev,
        "latency.p50" => l?.p50 as f64,
        "latency.p99" => l?.p99 as f64,
        "period.samples" => p?.samples as f64,
        "period.nominal" => nominal,
        "period.mean" => p?.mean,
        "period.stddev" => p?.stddev,
        "period.rms_jitter" => p?.rms_jitter,
        "period.min" => p?.min as f64,
        "period.max" => p?.max as f64,
        "period.minmax" => (p?.max - p?.min) as f64,
        "period.stddev_pct" => 100.0 * p?.stddev / nominal,
        "period.minmax_pct" => 100.0 * (p?.max - p?.min) as f64 / nominal,
        "period.mean_hz" => 1e9 / p?.mean,
        "period.nominal_hz" => 1e9 / nominal,
        "samples" => s.samples as f64,
        "overruns" | "missed" => s.overruns as f64,
        _ => return None,
    })
}

fn clocks_value(metric: &str, c: &ClocksResult) -> Option<f64> {
    let (name, m) = metric.strip_prefix("clocks.")?.split_once('.')?;
    let want = format!("clock_{name}").to_uppercase();
    let clock = c.clocks.iter().find(|r| r.name.to_uppercase() == want)?;
    let meas = clock.measured()?;
    Some(match m {
        "after_idle.min" => meas.after_idle.min as f64,
        "after_idle.p50" => meas.after_idle.p50 as f64,
        "after_idle.max" => meas.after_idle.max as f64,
        "deltas.min" => meas.deltas.min as f64,
        "cost.median" => meas.cost.median_ns,
        _ => return None,
    })
}

/// `ns` converted to `unit` (ns, us; other units are not times and pass through).
pub fn in_unit(v: f64, metric: &str, unit: &str) -> f64 {
    let is_time = !(metric.ends_with("_pct")
        || metric.ends_with("_hz")
        || metric.ends_with("samples")
        || metric == "overruns"
        || metric == "missed");
    match (is_time, unit) {
        (true, "us") => v / 1e3,
        (true, "ms") => v / 1e6,
        _ => v,
    }
}

/// A value for the table in `unit`.
pub fn show(v: f64, unit: &str) -> String {
    if v.is_nan() {
        return "-".into();
    }
    match unit {
        "ns" | "count" => format!("{v:.0}"),
        _ => format!("{v:.3}"),
    }
}
