//! Reading result files — tickscope's own and other tools' — into [`Measurement`]s, the
//! common shape `tickscope compare` puts side by side.
//!
//! One file per format, each behind [`Importer`]: [`tickscope`] (`tickscope.run/2` and `/1`),
//! [`cyclictest`] (rt-tests `cyclictest --json`) and [`jitterdebugger`] (its `results.json`).
//! The format is recognised from the JSON itself, never from the file name.
//!
//! Other tools record latency in whole µs (or whole ns with their `-N`/`--nsec`); their
//! percentiles are read off their histograms, whose buckets are that unit wide
//! ([`Measurement::resolution_ns`]).

pub mod cyclictest;
pub mod hlog;
pub mod jitterdebugger;
pub mod tickscope;
pub mod validate;

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

/// Every importer, tried in this order.
pub fn importers() -> [&'static dyn Importer; 3] {
    [
        &tickscope::TickscopeImporter,
        &cyclictest::CyclictestImporter,
        &jitterdebugger::JitterdebuggerImporter,
    ]
}

/// Reads a result file of any known format. An interval log is read as it streams
/// ([`hlog::import_from`]), never whole; a JSON result is read whole ([`Opened::into_text`]).
///
/// # Errors
/// An [`ImportError`] naming the file when it cannot be read, is not JSON, is truncated,
/// is of no known format or lacks what its format requires.
pub fn read(path: &Path) -> Result<Vec<Measurement>, ImportError> {
    let name = path.display().to_string();
    let stem = path
        .file_stem()
        .map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
    let mut input = open_input(path)?;
    if input.is_hlog()? {
        return input.import_hlog(&stem);
    }
    let text = input.into_text()?;
    parse(&name, &stem, &text)
}

/// The largest JSON result file read whole: 256 MiB. A day-long `-t all` run on 64 CPUs stays
/// well below it; anything larger is not a result (or is `/dev/zero`). Interval logs, read as
/// they stream, have no such limit.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// An input opened for reading by [`open_input`]: a regular file, or standard input.
pub struct Opened {
    name: String,
    /// The file's size, when it is one.
    len: Option<u64>,
    reader: std::io::BufReader<Box<dyn std::io::Read>>,
}

/// Opens an input — every importer's and `tickscope hlog`'s — without blocking: a regular
/// file, or standard input for `-`. The file is opened with `O_NONBLOCK` and checked with
/// `fstat(2)` before anything is read, so a FIFO, a device, a socket or a directory is
/// refused at once instead of blocking (a FIFO without a writer) or reading forever.
///
/// # Errors
/// [`ImportError`] naming the file: cannot be opened, or not a regular file.
pub fn open_input(path: &Path) -> Result<Opened, ImportError> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = path.display().to_string();
    let fail = |problem: String| ImportError {
        path: name.clone(),
        problem,
    };
    let (reader, len): (Box<dyn std::io::Read>, _) = if path.as_os_str() == "-" {
        (Box::new(std::io::stdin()), None)
    } else {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        let meta = file
            .metadata()
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        if !meta.is_file() {
            return Err(fail(
                "not a regular file; give a result file, or '-' for standard input".into(),
            ));
        }
        (Box::new(file), Some(meta.len()))
    };
    Ok(Opened {
        name,
        len,
        reader: std::io::BufReader::with_capacity(64 << 10, reader),
    })
}

impl Opened {
    fn fail(&self, problem: String) -> ImportError {
        ImportError {
            path: self.name.clone(),
            problem,
        }
    }

    /// The input's first bytes (up to 64, after leading white space, lossily as text),
    /// without consuming them; empty for an empty input.
    ///
    /// # Errors
    /// [`ImportError`] when it cannot be read.
    pub fn peek(&mut self) -> Result<String, ImportError> {
        use std::io::BufRead;
        let name = self.name.clone();
        loop {
            let buf = self.reader.fill_buf().map_err(|e| ImportError {
                path: name.clone(),
                problem: format!("cannot read: {e}"),
            })?;
            let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            if buf.is_empty() || blank < buf.len() {
                let end = buf.len().min(blank + 64);
                return Ok(String::from_utf8_lossy(&buf[blank..end]).into_owned());
            }
            // Only white space so far: drop it and look further.
            self.reader.consume(blank);
        }
    }

    /// Whether the input starts like an interval log ([`hlog::looks_like_hlog`]), judged
    /// from its first bytes ([`Opened::peek`]).
    ///
    /// # Errors
    /// [`ImportError`] when it cannot be read.
    pub fn is_hlog(&mut self) -> Result<bool, ImportError> {
        let start = self.peek()?;
        let marker = "\"StartTimestamp\"";
        Ok(hlog::looks_like_hlog(&start)
            || (start.len() < marker.len() && !start.is_empty() && marker.starts_with(&*start)))
    }

    /// Reads it whole as text, at most [`MAX_INPUT_BYTES`].
    ///
    /// # Errors
    /// [`ImportError`] naming the file: cannot be read, too large, not UTF-8.
    pub fn into_text(mut self) -> Result<String, ImportError> {
        use std::io::Read;
        if let Some(len) = self.len.filter(|&l| l > MAX_INPUT_BYTES) {
            return Err(self.fail(format!(
                "{len} bytes, larger than any result file (at most {} MiB)",
                MAX_INPUT_BYTES >> 20
            )));
        }
        let mut bytes = Vec::new();
        (&mut self.reader)
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.fail(format!("cannot read: {e}")))?;
        if bytes.len() as u64 > MAX_INPUT_BYTES {
            return Err(self.fail(format!(
                "larger than any result file (at most {} MiB)",
                MAX_INPUT_BYTES >> 20
            )));
        }
        String::from_utf8(bytes).map_err(|_| self.fail("not text (UTF-8)".into()))
    }

    /// The input as it streams, for [`hlog::Reader`].
    pub fn into_reader(self) -> impl std::io::BufRead {
        self.reader
    }

    /// Reads it as an interval log: one comparison column ([`hlog::import_from`]), whose
    /// source is the input's name and label `stem`.
    ///
    /// # Errors
    /// [`ImportError`] naming the file: as [`hlog::import_from`].
    pub fn import_hlog(self, stem: &str) -> Result<Vec<Measurement>, ImportError> {
        let name = self.name.clone();
        let mut m = hlog::import_from(self.reader, stem).map_err(|p| ImportError {
            path: name.clone(),
            problem: format!("interval log: {p}"),
        })?;
        m.source = name;
        Ok(vec![m])
    }
}

/// The text of a result file: a regular file, or standard input for `-`, at most
/// [`MAX_INPUT_BYTES`], opened by [`open_input`] (a FIFO, a device or a directory is refused
/// at once).
///
/// # Errors
/// [`ImportError`] naming the file: cannot be opened, not a regular file, too large, not
/// UTF-8.
pub fn read_input(path: &Path) -> Result<String, ImportError> {
    open_input(path)?.into_text()
}

/// Reads result-file contents; `name` is used in errors and as the measurements' source,
/// `stem` in their labels.
///
/// # Errors
/// As [`read`], apart from reading the file.
pub fn parse(name: &str, stem: &str, text: &str) -> Result<Vec<Measurement>, ImportError> {
    let fail = |problem: String| ImportError {
        path: name.to_string(),
        problem,
    };
    if text.trim().is_empty() {
        return Err(fail("the file is empty".into()));
    }
    if hlog::looks_like_hlog(text) {
        let mut m = hlog::import(text, stem).map_err(|p| fail(format!("interval log: {p}")))?;
        m.source = name.to_string();
        return Ok(vec![m]);
    }
    let json: Value = serde_json::from_str(text).map_err(|e| {
        fail(if e.is_eof() {
            format!(
                "truncated: the JSON ends early (line {}, column {})",
                e.line(),
                e.column()
            )
        } else {
            format!("not valid JSON: {e}")
        })
    })?;
    if !json.is_object() {
        return Err(fail("not a result file: the JSON is not an object".into()));
    }
    let importer = importers()
        .into_iter()
        .find(|i| i.recognizes(&json))
        .ok_or_else(|| {
            fail(
                "not a tickscope, cyclictest --json or jitterdebugger result \
                  (none of the keys 'schema', 'thread' or 'cpu' at the top level)"
                    .into(),
            )
        })?;
    let format = importer.format();
    let mut found = importer
        .import(json, stem)
        .map_err(|p| fail(format!("{} result: {p}", format.name())))?;
    for m in &mut found {
        m.source = name.to_string();
    }
    Ok(found)
}

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

/// The most wake-ups a result may hold: 2^53 (every count stays exact as a JSON number and
/// in an `f64`; a 1 µs loop would need 285 years to reach it). A larger count is refused.
pub const MAX_SAMPLES: u64 = 1 << 53;
/// The largest latency a result may hold, ns: one hour, the longest period tickscope accepts.
pub const MAX_LATENCY_NS: Nanos = 3_600_000_000_000;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_buckets_use_the_rank_rule() {
        let b = [(1, 1), (2, 2), (10, 1)];
        assert_eq!(bucket_quantile(&b, 0.0), Some(1));
        assert_eq!(bucket_quantile(&b, 0.25), Some(1));
        assert_eq!(bucket_quantile(&b, 0.5), Some(2));
        assert_eq!(bucket_quantile(&b, 0.75), Some(2));
        assert_eq!(bucket_quantile(&b, 0.99), Some(10));
        assert_eq!(bucket_quantile(&[], 0.5), None);
    }

    #[test]
    fn unknown_empty_and_broken_files_name_the_problem() {
        let e = parse("x.json", "x", "").unwrap_err();
        assert_eq!(e.to_string(), "'x.json': the file is empty");
        let e = parse("x.json", "x", "{\"a\": [1, 2").unwrap_err();
        assert!(e.problem.starts_with("truncated"), "{e}");
        let e = parse("x.json", "x", "hello").unwrap_err();
        assert!(e.problem.starts_with("not valid JSON"), "{e}");
        let e = parse("x.json", "x", "[1]").unwrap_err();
        assert!(e.problem.contains("not an object"), "{e}");
        let e = parse("x.json", "x", "{\"a\": 1}").unwrap_err();
        assert!(e.problem.starts_with("not a tickscope"), "{e}");
    }
}
