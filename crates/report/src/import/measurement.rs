//! The common shape every importer reads a result file into: [`Measurement`]s with their
//! [`LatencyFigures`] and [`Setting`]s, the [`Importer`] trait, and the bounds a result must
//! keep.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use tickscope_engine::time::Nanos;

/// Which program wrote a result file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceFormat {
    /// `tickscope run --json` (schema `tickscope.run/2`, or `/1`).
    Tickscope,
    /// `cyclictest --json=FILE` (rt-tests ≥ 2.0).
    Cyclictest,
    /// jitterdebugger's `results.json` (`-o DIR`), or its JSON on stdout.
    Jitterdebugger,
    /// An HdrHistogram interval log (`--hlog`, jHiccup, cassandra-stress, …).
    Hlog,
}

impl SourceFormat {
    /// The program's name.
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Tickscope => "tickscope",
            SourceFormat::Cyclictest => "cyclictest",
            SourceFormat::Jitterdebugger => "jitterdebugger",
            SourceFormat::Hlog => "hlog",
        }
    }
}

/// A setting that can differ between measurements; the order is the order of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// The measuring program and its version.
    Tool,
    /// Kernel release (`uname -r`).
    Kernel,
    /// Preemption model.
    Preemption,
    /// Wake-up method.
    Method,
    /// Scheduling policy (`fifo`, `other`, …).
    Policy,
    /// Real-time priority or nice value.
    Priority,
    /// Period between expiries.
    Interval,
    /// Number of measuring threads.
    Threads,
    /// Clock waited on.
    Clock,
    /// CPU wake-up latency limit held through PM QoS.
    PmQos,
    /// Timer slack of the measuring threads.
    TimerSlack,
    /// The load run beside the measurement and what it achieved (tickscope `--load`).
    Load,
    /// The command line that produced the file, when the file records it.
    Command,
}

impl Setting {
    /// The row label for people and the key for programs (CSV rows, JSON keys).
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Setting::Tool => ("tool", "tool"),
            Setting::Kernel => ("kernel", "kernel"),
            Setting::Preemption => ("preemption", "preemption"),
            Setting::Method => ("method", "method"),
            Setting::Policy => ("policy", "policy"),
            Setting::Priority => ("priority", "priority"),
            Setting::Interval => ("interval", "interval"),
            Setting::Threads => ("threads", "threads"),
            Setting::Clock => ("clock", "clock"),
            Setting::PmQos => ("PM QoS", "pm_qos"),
            Setting::TimerSlack => ("timer slack", "timer_slack"),
            Setting::Load => ("load", "load"),
            Setting::Command => ("command", "command"),
        }
    }

    /// The row label (`PM QoS`).
    pub fn label(self) -> &'static str {
        self.names().0
    }

    /// The key programs see (`pm_qos`), as in the JSON.
    pub fn key(self) -> &'static str {
        self.names().1
    }
}

/// Wake-up latency figures of one measurement, ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyFigures {
    /// Smallest latency, ns.
    pub min: Nanos,
    /// Mean, ns.
    pub mean: f64,
    /// Median, ns; `None` when the file has no histogram.
    pub p50: Option<Nanos>,
    /// 99th percentile, ns; `None` when the file has no histogram.
    pub p99: Option<Nanos>,
    /// 99.9th percentile, ns; `None` when the file has no histogram.
    pub p99_9: Option<Nanos>,
    /// Largest latency, ns.
    pub max: Nanos,
    /// The percentiles (`p50`, `p99`, `p99_9`) that fall among wake-ups beyond the source
    /// histogram's range: their value is that range's end, a lower bound, not the
    /// percentile. Empty for tickscope files, whose histograms have no range limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lower_bounds: Vec<&'static str>,
}

/// One column of a comparison: a run (all its threads merged) as read from a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// The column's name: the file's stem, with the method (and round) for a file holding
    /// several runs; replaced by `--label`.
    pub label: String,
    /// The file it was read from.
    pub source: String,
    /// Which program wrote it.
    pub format: SourceFormat,
    /// The settings the file records (absent when it does not say).
    pub settings: BTreeMap<Setting, String>,
    /// Wake-ups measured, all threads.
    pub samples: u64,
    /// Latency; `None` when nothing was measured.
    pub latency_ns: Option<LatencyFigures>,
    /// Width of the histogram buckets percentiles were read from, ns: 1000 for tools that
    /// record whole µs, 1 for whole ns; `None` for tickscope (buckets of a relative width, see
    /// `tickscope_engine::histogram::SIGNIFICANT_FIGURES`).
    pub resolution_ns: Option<Nanos>,
    /// Standard deviation of the period dt about its mean, ns (tickscope only).
    pub dt_sd_ns: Option<f64>,
    /// Overruns: expiries that passed before the thread woke for the previous one (tickscope
    /// only; the other tools do not count them).
    pub overruns: Option<u64>,
    /// CPU used by the measuring threads, % of one core (tickscope only).
    pub cpu_percent: Option<f64>,
    /// Remarks on how the figures were obtained (histogram overflows, no histogram, …).
    pub notes: Vec<String>,
    /// Another tool's threads as latency distributions, for plotting (`tickscope report`
    /// of a cyclictest or jitterdebugger file); empty for tickscope files, whose documents
    /// are plotted directly. Percentiles and the standard deviation are read from the
    /// tool's histogram; wake-ups beyond its range are left out of the distribution.
    #[serde(skip)]
    pub threads: Vec<(String, tickscope_engine::result::ThreadStats)>,
}

/// A file that cannot be read as a result: names the file and says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The file.
    pub path: String,
    /// What is wrong with it, one line.
    pub problem: String,
}

impl fmt::Display for ImportError {
    /// `'path': problem`, the path quoted so the message stays one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            crate::quoted(Path::new(&self.path)),
            self.problem
        )
    }
}

impl std::error::Error for ImportError {}

/// One result-file format.
pub trait Importer {
    /// The format this importer reads.
    fn format(&self) -> SourceFormat;
    /// Whether the parsed JSON looks like this format (top-level keys only).
    fn recognizes(&self, json: &Value) -> bool;
    /// Reads the measurements; `stem` is the file's stem, for labels.
    ///
    /// # Errors
    /// A one-line description of what is missing or malformed.
    fn import(&self, json: Value, stem: &str) -> Result<Vec<Measurement>, String>;
}

/// The most wake-ups a result may hold: 2^53 (every count stays exact as a JSON number and
/// in an `f64`; a 1 µs loop would need 285 years to reach it). A larger count is refused.
pub const MAX_SAMPLES: u64 = 1 << 53;
/// The largest latency a result may hold, ns: one hour, the longest period tickscope accepts.
pub const MAX_LATENCY_NS: Nanos = 3_600_000_000_000;
