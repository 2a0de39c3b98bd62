//! The summary and the per-second windows as one CSV table (`--csv FILE`), for
//! spreadsheets and scripts: one row per series (each thread, and all threads merged when
//! there are several) and scope — first the totals of every run, then every window.
//!
//! Columns (times in integer ns, means and deviations in ns with decimals, empty where a
//! value does not exist): `run` (from 0), `method`, `round`, `thread` (`0`, `1`, …, `all`),
//! `scope` (`total` or `window`), `window` (index), `window_start_ns` (relative to the first
//! expiry), `samples`, `overruns`, `latency_min_ns`, `latency_mean_ns`,
//! `latency_p50_ns`, `latency_p99_ns`, `latency_p99_9_ns`, `latency_max_ns`, `dt_mean_ns`,
//! `dt_sd_ns` (about the mean), `dt_rms_jitter_ns` (about the nominal period), `dt_min_ns`,
//! `dt_max_ns`, `cpu_percent` (% of one core). Windows carry p99 but no p50/p99.9.

use super::{series, ExportError, Exporter};
use crate::document::RunDocument;
use serde::Serialize;
use tickscope_engine::result::{ThreadStats, WindowStats};
use tickscope_engine::time::Nanos;

/// Summary and windows as CSV.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExport;

#[derive(Serialize, Default)]
struct Record<'a> {
    run: usize,
    method: &'a str,
    round: u32,
    thread: String,
    scope: &'static str,
    window: Option<u64>,
    window_start_ns: Option<Nanos>,
    samples: u64,
    overruns: u64,
    latency_min_ns: Option<Nanos>,
    latency_mean_ns: Option<f64>,
    latency_p50_ns: Option<Nanos>,
    latency_p99_ns: Option<Nanos>,
    latency_p99_9_ns: Option<Nanos>,
    latency_max_ns: Option<Nanos>,
    dt_mean_ns: Option<f64>,
    dt_sd_ns: Option<f64>,
    dt_rms_jitter_ns: Option<f64>,
    dt_min_ns: Option<Nanos>,
    dt_max_ns: Option<Nanos>,
    cpu_percent: Option<f64>,
}

fn total<'a>(base: Record<'a>, t: &ThreadStats) -> Record<'a> {
    let l = t.latency_ns.as_ref();
    let p = t.period_ns.as_ref();
    Record {
        scope: "total",
        samples: t.samples,
        overruns: t.overruns,
        latency_min_ns: l.map(|l| l.min),
        latency_mean_ns: l.map(|l| l.mean),
        latency_p50_ns: l.map(|l| l.p50),
        latency_p99_ns: l.map(|l| l.p99),
        latency_p99_9_ns: l.map(|l| l.p99_9),
        latency_max_ns: l.map(|l| l.max),
        dt_mean_ns: p.map(|p| p.mean),
        dt_sd_ns: p.map(|p| p.stddev),
        dt_rms_jitter_ns: p.map(|p| p.rms_jitter),
        dt_min_ns: p.map(|p| p.min),
        dt_max_ns: p.map(|p| p.max),
        cpu_percent: Some(t.cpu_percent),
        ..base
    }
}

fn window<'a>(base: Record<'a>, w: &WindowStats) -> Record<'a> {
    Record {
        scope: "window",
        window: Some(w.index),
        window_start_ns: Some(w.start_ns),
        samples: w.samples,
        overruns: w.overruns,
        latency_min_ns: w.latency_min,
        latency_mean_ns: w.latency_mean,
        latency_p99_ns: w.latency_p99,
        latency_max_ns: w.latency_max,
        dt_mean_ns: w.period_mean,
        dt_sd_ns: w.period_stddev,
        dt_rms_jitter_ns: w.period_rms_jitter,
        dt_min_ns: w.period_min,
        dt_max_ns: w.period_max,
        cpu_percent: w.cpu_percent,
        ..base
    }
}

impl Exporter for CsvExport {
    fn what(&self) -> &'static str {
        "CSV"
    }

    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError> {
        let runs = doc.each_run();
        let mut totals = Vec::new();
        let mut windows = Vec::new();
        for (i, run) in runs.iter().enumerate() {
            for (name, t) in series(&run.threads, &run.summary) {
                let base = || Record {
                    run: i,
                    method: &run.method,
                    round: run.round,
                    thread: name.trim_start_matches('T').to_string(),
                    ..Record::default()
                };
                totals.push(total(base(), t));
                windows.extend(t.windows.iter().map(|w| window(base(), w)));
            }
        }
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in totals.iter().chain(&windows) {
            w.serialize(r)
                .map_err(|e| ExportError(format!("cannot write CSV: {e}")))?;
        }
        w.into_inner()
            .map_err(|e| ExportError(format!("cannot write CSV: {e}")))
    }
}
