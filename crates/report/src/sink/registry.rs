//! The file formats a run can be exported to, by name: one line each.
//!
//! `tickscope run --export FORMAT=PATH` takes these names, and each long flag (`--json`,
//! `--csv`, …) is the same as `--export` with its format. A new format is a new file (an
//! [`Exporter`](crate::export::Exporter) for a file rendered at the end, or a
//! [`RunSink`] for one written while the run goes on) plus one line in [`FORMATS`].

use super::csv::CsvSink;
use super::histogram::HistogramSink;
use super::hlog::HlogSink;
use super::json::JsonSink;
use super::samples::SamplesSink;
use super::{RunSink, SinkError};
use crate::export::histogram_file::HistogramOptions;
use crate::output::Output;

/// Opens a sink on a prepared output.
pub type OpenSink = fn(Output) -> Result<Box<dyn RunSink>, SinkError>;

/// One export format: its name, the long flag that also selects it, whether it describes a
/// single run only (not a comparison of several), what it is, and how to open it.
#[derive(Clone, Copy)]
pub struct Format {
    /// The name used with `--export NAME=PATH`.
    pub name: &'static str,
    /// The long flag that selects it, e.g. `--json`.
    pub flag: &'static str,
    /// True when the file describes one run only (refused with several methods or rounds).
    pub single_run_only: bool,
    /// What the file holds (the formats table of docs/run.md is made from it).
    pub about: &'static str,
    /// Opens the sink.
    pub open: OpenSink,
}

/// Every export format.
#[rustfmt::skip]
pub const FORMATS: &[Format] = &[
    Format { name: "json", flag: "--json", single_run_only: false, about: "the result document (tickscope.run/2)", open: |o| Ok(Box::new(JsonSink::new(o))) },
    Format { name: "histogram", flag: "--histogram-file", single_run_only: true, about: "the latency histogram in cyclictest's -h format", open: |o| Ok(Box::new(HistogramSink::new(o, HistogramOptions::default()))) },
    Format { name: "csv", flag: "--csv", single_run_only: true, about: "the summary and the per-second windows as CSV", open: |o| Ok(Box::new(CsvSink::new(o))) },
    Format { name: "samples", flag: "--samples", single_run_only: true, about: "every wake-up as CSV, streamed", open: |o| SamplesSink::new(o).map(|s| Box::new(s) as Box<dyn RunSink>) },
    Format { name: "hlog", flag: "--hlog", single_run_only: true, about: "an HdrHistogram interval log: one histogram per window per thread, streamed", open: |o| HlogSink::new(o).map(|s| Box::new(s) as Box<dyn RunSink>) },
];

/// The format called `name`, if any.
pub fn format(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.name == name)
}

/// Every format's name, comma-separated, for messages.
pub fn names() -> String {
    FORMATS
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_flags_are_unique_and_found() {
        for f in FORMATS {
            assert_eq!(format(f.name).map(|g| g.flag), Some(f.flag));
            assert_eq!(FORMATS.iter().filter(|g| g.flag == f.flag).count(), 1);
        }
        assert!(format("xml").is_none());
    }
}
