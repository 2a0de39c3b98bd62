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
use crate::document::{MethodRun, RunDocument};
use crate::statistics::{Figure, Statistic};
use serde::Serialize;
use tickscope_engine::result::{ThreadStats, WindowStats};

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

/// The columns of a window row after the series columns `run`, `method`, `round` and
/// `thread`: what [`crate::sink::csv::CsvSink`] spools while the run goes on, before it
/// knows the run's name.
#[derive(Serialize)]
pub(crate) struct WindowTail {
    scope: &'static str,
    window: u64,
    window_start_ns: tickscope_engine::time::Nanos,
    figures: [Figure; COLUMNS.len()],
}

impl WindowTail {
    /// The row of window `w`.
    pub(crate) fn of(w: &WindowStats) -> Self {
        WindowTail {
            scope: "window",
            window: w.index,
            window_start_ns: w.start_ns,
            figures: COLUMNS.map(|s| s.of_window(w)),
        }
    }
}

/// The `thread` column of each series of `run`, with its statistics, in the order of the
/// rows: each thread (`0`, `1`, …), then `all` when there are several.
pub(crate) fn thread_series(run: &MethodRun) -> Vec<(String, &ThreadStats)> {
    series(&run.threads, &run.summary)
        .into_iter()
        .map(|(name, t)| (name.trim_start_matches('T').to_string(), t))
        .collect()
}

/// A CSV writer as every row of the table is written (no header row of its own).
pub(crate) fn writer<W: std::io::Write>(to: W) -> csv::Writer<W> {
    csv::WriterBuilder::new().has_headers(false).from_writer(to)
}

/// Writes the header row and the `total` rows of every run of `doc`.
///
/// # Errors
/// Any error writing to `w`.
pub(crate) fn write_head<W: std::io::Write>(
    w: &mut csv::Writer<W>,
    doc: &RunDocument,
) -> Result<(), csv::Error> {
    w.write_record(
        SERIES_COLUMNS
            .iter()
            .copied()
            .chain(COLUMNS.map(Statistic::key)),
    )?;
    for (i, run) in doc.each_run().iter().enumerate() {
        for (thread, t) in thread_series(run) {
            w.serialize(Record {
                run: i,
                method: &run.method,
                round: run.round,
                thread,
                scope: "total",
                window: None,
                window_start_ns: None,
                figures: COLUMNS.map(|s| s.of_thread(t)),
            })?;
        }
    }
    Ok(())
}

impl Exporter for CsvExport {
    fn what(&self) -> &'static str {
        "CSV"
    }

    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError> {
        let fail = |e: csv::Error| ExportError(format!("cannot write CSV: {e}"));
        let mut w = writer(Vec::new());
        write_head(&mut w, doc).map_err(fail)?;
        for (i, run) in doc.each_run().iter().enumerate() {
            for (thread, t) in thread_series(run) {
                for win in &t.windows {
                    w.serialize(Record {
                        run: i,
                        method: &run.method,
                        round: run.round,
                        thread: thread.clone(),
                        scope: "window",
                        window: Some(win.index),
                        window_start_ns: Some(win.start_ns),
                        figures: COLUMNS.map(|s| s.of_window(win)),
                    })
                    .map_err(fail)?;
                }
            }
        }
        w.into_inner()
            .map_err(|e| ExportError(format!("cannot write CSV: {e}")))
    }
}
