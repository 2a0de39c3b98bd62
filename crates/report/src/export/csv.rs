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
use crate::statistics::{Figure, Statistic};
use serde::Serialize;

/// Summary and windows as CSV.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExport;

/// The statistics columns, in order, after the columns that say which series and scope a
/// row is (keys and values from [`crate::statistics`]).
pub const COLUMNS: [Statistic; 14] = [
    Statistic::Samples,
    Statistic::Overruns,
    Statistic::LatencyMin,
    Statistic::LatencyMean,
    Statistic::LatencyP50,
    Statistic::LatencyP99,
    Statistic::LatencyP99_9,
    Statistic::LatencyMax,
    Statistic::DtMean,
    Statistic::DtSd,
    Statistic::DtRmsJitter,
    Statistic::DtMin,
    Statistic::DtMax,
    Statistic::CpuPercent,
];

/// The columns before the statistics.
const SERIES_COLUMNS: [&str; 7] = [
    "run",
    "method",
    "round",
    "thread",
    "scope",
    "window",
    "window_start_ns",
];

/// One CSV row: which series and scope, then [`COLUMNS`].
#[derive(Serialize)]
struct Record<'a> {
    run: usize,
    method: &'a str,
    round: u32,
    thread: String,
    scope: &'static str,
    window: Option<u64>,
    window_start_ns: Option<tickscope_engine::time::Nanos>,
    figures: [Figure; COLUMNS.len()],
}

impl Exporter for CsvExport {
    fn what(&self) -> &'static str {
        "CSV"
    }

    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError> {
        let mut totals = Vec::new();
        let mut windows = Vec::new();
        for (i, run) in doc.each_run().iter().enumerate() {
            for (name, t) in series(&run.threads, &run.summary) {
                let thread = name.trim_start_matches('T').to_string();
                totals.push(Record {
                    run: i,
                    method: &run.method,
                    round: run.round,
                    thread: thread.clone(),
                    scope: "total",
                    window: None,
                    window_start_ns: None,
                    figures: COLUMNS.map(|s| s.of_thread(t)),
                });
                windows.extend(t.windows.iter().map(|w| Record {
                    run: i,
                    method: &run.method,
                    round: run.round,
                    thread: thread.clone(),
                    scope: "window",
                    window: Some(w.index),
                    window_start_ns: Some(w.start_ns),
                    figures: COLUMNS.map(|s| s.of_window(w)),
                }));
            }
        }
        let fail = |e: csv::Error| ExportError(format!("cannot write CSV: {e}"));
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.write_record(
            SERIES_COLUMNS
                .iter()
                .copied()
                .chain(COLUMNS.map(Statistic::key)),
        )
        .map_err(fail)?;
        for r in totals.iter().chain(&windows) {
            w.serialize(r).map_err(fail)?;
        }
        w.into_inner()
            .map_err(|e| ExportError(format!("cannot write CSV: {e}")))
    }
}
