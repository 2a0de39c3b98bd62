//! `--hlog FILE`: one HdrHistogram per window per thread in the HdrHistogram interval-log
//! format (see [`crate::import::hlog`] for the format and its source), appended to the file
//! itself as the windows finish (readable while the run goes on:
//! [`Output::stream_in_place`]), for exact percentiles over any time range and any set of machines later
//! (`tickscope hlog stat`, `tickscope hlog merge`, HistogramLogAnalyzer).
//!
//! Per window: tag `T<k>` for thread k's wake-up latencies ≥ 0 (ns), `all` for every
//! thread merged, and `T<k>.early` for thread k's early wake-ups (latency < 0) as absolute
//! values — an HdrHistogram holds no negative values. Histograms are HdrHistogram's
//! compressed V2 encoding, at tickscope's 2 significant figures, written from the window's
//! counters (`encode`: the same bytes as the `hdrhistogram` crate's serializer, at a few
//! thousand instructions per window); the header is the crate's `IntervalLogWriter`'s.
//! `StartTime` is the wall-clock time of the run's first expiry; each interval's start is
//! relative to it. Interval_Max is in ns (no MaxValueDivisor).
//!
//! The values come from the engine's window histograms ([`SinkNeeds::latency_histograms`]):
//! the collector hands over each window's latency counters, counted by the measuring loop in
//! HdrHistogram's own buckets and order (see [`tickscope_engine::window_counts`]), so the
//! loop does the same work with or without `--hlog` and no wake-up goes through a ring.
//! The counts are exact: each bucket's count is recorded at a value of that bucket, which
//! gives the same histogram (and the same encoded bytes) as recording every wake-up. A
//! window is written as soon as every thread has delivered it; a record that covers several
//! windows (a collector held up) is written as one interval of that length.
//!
//! A day-long run's log stays small ([`crate::coarse`]): `all` has an interval per window
//! for the whole run, but after the first stretch (an hour; 4 h ÷ threads with more than
//! four threads) each thread's `T<k>` and `T<k>.early` have one interval per minute, the
//! merge of that minute's windows (exact: the counts are added up). Such an interval is
//! written when the next one starts, or when the run ends.
//!
//! A write that fails (a full disk, a lost mount) is said at once on stderr — one line, the
//! first error only — and the log stops there; the run goes on (its other outputs are not
//! lost), and the run fails at its end with that error, as every output failure does.

use super::{RunContext, RunSink, SinkError, SinkNeeds};
use crate::coarse::Grain;
use crate::document::RunDocument;
pub use crate::hlog_section::HlogSection;
use crate::output::{Output, OutputStream};
use crate::quoted;
use encode::{Scratch, Sparse, View};
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2Serializer;
use hdrhistogram::Histogram;
use std::io::Write;
use std::time::{Duration, SystemTime};
use tickscope_engine::histogram::{HIGHEST_TRACKABLE, SIGNIFICANT_FIGURES};
use tickscope_engine::run::{Applied, SecondWindows};
use tickscope_engine::time::{read_clock, Nanos};
use tickscope_engine::window_counts::WindowCounts;

/// The legend line HdrHistogram's Java `HistogramLogWriter.outputLegend()` writes (the
/// crate's reader skips it; the crate's writer does not write it).
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// A fresh histogram with the engine's bounds and precision.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_TRACKABLE, SIGNIFICANT_FIGURES)
        .expect("constant histogram bounds are valid")
}

/// The wall-clock time of `t` read on `clock`, truncated to whole ms: the log's StartTime
/// line has ms precision (the `hdrhistogram` crate writes it with three decimals), and the
/// result's `hlog.start_time` must equal it.
fn wall_clock_of(t: Nanos, clock: libc::clockid_t) -> SystemTime {
    let ago = (read_clock(clock) - t).max(0) as u64;
    let at = SystemTime::now() - Duration::from_nanos(ago);
    let ms = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

/// The header line of a task set's log (`run --tasks … --hlog`): this prefix, then the task
/// names as a JSON array of strings, task `k` being tag `T<k>` (`tasks: ["1ms","2.5ms"]`).
/// `tickscope gate` reads it to judge the tasks one by one.
pub const TASKS_PREFIX: &str = "tasks (tag T<k> = task k): ";

/// Prints one line on stderr, as the CLI prints its warnings.
fn warn_on_stderr(line: &str) {
    eprintln!("tickscope: {line}");
}

/// One thread's values in one window, or in the coarse window `range` (its first window,
/// one past its last), as non-zero counts ([`encode::Sparse`]).
struct Open {
    latency: Sparse,
    early: Sparse,
    range: (u64, u64),
}

impl Open {
    fn new(range: (u64, u64)) -> Self {
        Open {
            latency: Sparse::new(),
            early: Sparse::new(),
            range,
        }
    }

    /// Adds a window's counts: values ≥ 0 to `latency`, the magnitudes of the others to
    /// `early` (the same counts as every wake-up's).
    fn add(&mut self, counts: &WindowCounts) {
        encode::merge(&mut self.latency, View::Counts(counts.positive()));
        encode::merge(&mut self.early, View::Counts(counts.negative()));
    }
}

/// A thread's window written as it came: thread, counts, (first window, one past its last).
type Fine<'a> = (usize, &'a WindowCounts, (u64, u64));

/// One line of the log: tag, counts, first window, windows covered.
type Line<'a> = (String, View<'a>, u64, u64);

/// Writes the interval log (see the module docs).
pub struct HlogSink {
    section: HlogSection,
    early_tags: std::collections::BTreeSet<usize>,
    shown: String,
    quoted: String,
    /// The destination until the first window is written: opened then, so that a run that
    /// fails before measuring leaves an existing file as it was.
    out: Option<Output>,
    stream: Option<OutputStream>,
    error: Option<String>,
    /// Says the first write error at once (stderr; replaced in tests).
    warn: fn(&str),
    /// Buffers reused from line to line.
    scratch: Scratch,
    header: Option<String>,
    window: Nanos,
    clock: libc::clockid_t,
    /// The wall-clock time of the run's first expiry, whole ms (the precision of the log's
    /// StartTime line).
    start: Option<SystemTime>,
    threads: usize,
    /// Windows written (lines tagged `all`).
    written: u64,
    /// Whether the header and legend are written.
    begun: bool,
    /// Per thread, its coarse window being merged ([`crate::coarse`]).
    coarse: Vec<Option<Open>>,
    /// A task set's task names, task `k` tagged `T<k>` ([`RunSink::task_names`]).
    tasks: Vec<String>,
}

impl HlogSink {
    /// Opens the stream on `out`.
    ///
    /// # Errors
    /// [`SinkError`] when the destination cannot be opened.
    pub fn new(out: Output) -> Result<Self, SinkError> {
        let (shown, q) = (out.shown(), quoted(out.path()));
        let path = out.path().to_string_lossy().into_owned();
        let absolute = (path != "-")
            .then(|| std::path::absolute(out.path()).ok())
            .flatten()
            .map(|p| p.to_string_lossy().into_owned());
        Ok(HlogSink {
            section: HlogSection {
                path,
                absolute,
                start_time: None,
                window_ns: 1_000_000_000,
                tags: Vec::new(),
            },
            early_tags: std::collections::BTreeSet::new(),
            shown,
            quoted: q,
            out: Some(out),
            stream: None,
            error: None,
            warn: warn_on_stderr,
            scratch: Scratch::default(),
            header: None,
            window: 1_000_000_000,
            clock: libc::CLOCK_MONOTONIC,
            start: None,
            threads: 0,
            written: 0,
            begun: false,
            coarse: Vec::new(),
            tasks: Vec::new(),
        })
    }

    /// Writes `lines`, or stops the log at the first error.
    fn write_or_stop(&mut self, lines: &[Line<'_>]) {
        if self.error.is_some() || lines.is_empty() {
            return;
        }
        if let Err(e) = self.write_lines(lines) {
            (self.warn)(&format!(
                "--hlog: {e}; the interval log stops here, the run goes on and will fail at \
                 its end"
            ));
            self.error = Some(e);
            self.stream = None;
        }
    }

    /// Opens the log at its own path (so that a long run's log can be read while it
    /// grows), once.
    fn open(&mut self) -> Result<(), String> {
        if let Some(out) = self.out.take() {
            let stream = out
                .stream_in_place()
                .map_err(|e| format!("cannot write {}: {e}", self.quoted))?;
            self.stream = Some(stream);
        }
        Ok(())
    }

    fn write_lines(&mut self, lines: &[Line<'_>]) -> Result<(), String> {
        self.open()?;
        let Some(stream) = &mut self.stream else {
            return Ok(());
        };
        let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", self.quoted);
        let mut buf = Vec::with_capacity(4096);
        if let Some(comments) = self.header.take() {
            // The header by the crate's writer; the legend after it, as the Java writer
            // puts it.
            let start = self.start.unwrap_or_else(SystemTime::now);
            IntervalLogWriterBuilder::new()
                .add_comment(&comments)
                .with_start_time(start)
                .begin_log_with(&mut buf, &mut V2Serializer::new())
                .map_err(|e| cannot(&e))?;
        }
        if !self.begun {
            self.begun = true;
            buf.extend_from_slice(LEGEND.as_bytes());
        }
        let window = self.window as u64;
        // The counts of each line written, and where its text lies in `buf`: a line with
        // the same counts as an earlier one (`all` with one thread) copies its text.
        let mut written: Vec<(View<'_>, std::ops::Range<usize>)> = Vec::new();
        for (tag, h, first, span) in lines {
            let times = (first * window, window * span.max(&1));
            let text = match written.iter().find(|(w, _)| w.same(h)) {
                Some((_, text)) => {
                    let text = text.clone();
                    encode::line_again(tag, times, *h, text.clone(), &mut buf);
                    text
                }
                None => encode::line(tag, times, *h, &mut self.scratch, &mut buf),
            };
            written.push((*h, text));
        }
        stream.write_all(&buf).map_err(|e| cannot(&e))?;
        stream.flush().map_err(|e| cannot(&e))?;
        self.written += lines.iter().filter(|l| l.0 == "all").count() as u64;
        Ok(())
    }

    /// Writes thread `t`'s coarse window, if one is being merged.
    fn flush_coarse(&mut self, t: usize) {
        let Some(open) = self.coarse.get_mut(t).and_then(Option::take) else {
            return;
        };
        let (first, end) = open.range;
        let mut lines = vec![(
            format!("T{t}"),
            View::Sparse(&open.latency),
            first,
            end - first,
        )];
        if !open.early.is_empty() {
            self.early_tags.insert(t);
            lines.push((
                format!("T{t}.early"),
                View::Sparse(&open.early),
                first,
                end - first,
            ));
        }
        self.write_or_stop(&lines);
    }
}

impl RunSink for HlogSink {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds {
            latency_histograms: true,
            ..SinkNeeds::default()
        }
    }

    fn started(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        self.window = ctx.config.window_ns;
        self.clock = ctx.config.clock.raw();
        self.threads = applied.threads.len();
        self.start = None;
        let cpus: Vec<String> = applied
            .threads
            .iter()
            .map(|t| t.cpu.map_or_else(|| "unpinned".into(), |c| c.to_string()))
            .collect();
        // The settings as `tickscope compare` reads them from a result file, so that a
        // log and the result of the same run compare equal (crate::import::hlog).
        let (_, priority) = crate::import::tickscope::policy_and_priority(&applied.policy);
        self.header = Some(format!(
            "tool: tickscope {}\nmethod: {}\npolicy: {}\npriority: {priority}\ninterval_ns: {}\n\
             window_ns: {}\nclock: {}\nhost: {}\nkernel: {}\npreemption: {}\n\
             pm_qos: {}\ntimer_slack: {} ns\nthreads (cpu): {}\nunit: ns; tags T<k> thread k, \
             all = every thread, T<k>.early = |latency| of early wake-ups",
            env!("CARGO_PKG_VERSION"),
            applied.method.name(),
            applied.policy.name(),
            ctx.config.period_ns,
            ctx.config.window_ns,
            ctx.config.clock.name(),
            ctx.system.hostname,
            ctx.system.kernel_release,
            ctx.system.preemption_model.as_deref().unwrap_or("unknown"),
            applied
                .pm_qos_us
                .map_or("not held".to_string(), |us| format!("{us} µs")),
            applied.timer_slack_ns,
            cpus.join(",")
        ));
        if let (Some(header), false) = (self.header.as_mut(), self.tasks.is_empty()) {
            // A JSON array of strings: one line whatever the names hold.
            let names = serde_json::to_string(&self.tasks).unwrap_or_default();
            header.push_str(&format!("\n{TASKS_PREFIX}{names}"));
        }
    }

    fn task_names(&mut self, names: &[String]) {
        self.tasks = names.to_vec();
    }

    fn thread_joined(&mut self, _ctx: &RunContext<'_>, applied: &Applied) {
        // Its intervals are tagged `T<k>` like the others' from its first window on (the
        // header lists the threads of the start); `hlog.tags` lists it.
        self.threads = applied.threads.len();
        if !self.coarse.is_empty() {
            self.coarse.resize_with(self.threads, || None);
        }
    }

    fn window(&mut self, _ctx: &RunContext<'_>, second: &SecondWindows) {
        if self.start.is_none() {
            self.start = Some(wall_clock_of(second.first_expiry, self.clock));
        }
        if self.coarse.len() != self.threads {
            self.coarse = std::iter::repeat_with(|| None).take(self.threads).collect();
        }
        let index = second.index;
        // Windows written as they came: their buckets, read in place.
        let mut fine: Vec<Fine<'_>> = Vec::new();
        let mut span = 1;
        let mut any = false;
        for (t, w) in &second.threads {
            let (true, Some(buckets)) = (*t < self.threads, &w.latency_buckets) else {
                continue;
            };
            any = true;
            span = span.max(w.span);
            let range = (w.index, w.index + w.span.max(1));
            match Grain::of(Some(*t), self.threads, self.window).group(w.index) {
                None => fine.push((*t, buckets, range)),
                Some(group) => {
                    if self.coarse[*t].as_ref().is_some_and(|o| o.range.0 != group) {
                        self.flush_coarse(*t);
                    }
                    let open = self.coarse[*t].get_or_insert_with(|| Open::new((group, range.1)));
                    open.range.1 = open.range.1.max(range.1);
                    open.add(buckets);
                }
            }
        }
        if !any {
            return;
        }
        let mut lines: Vec<Line<'_>> = Vec::with_capacity(2 * fine.len() + 1);
        for &(t, counts, (first, end)) in &fine {
            let (early, latency) = (
                View::Counts(counts.negative()),
                View::Counts(counts.positive()),
            );
            lines.push((format!("T{t}"), latency, first, end - first));
            if early.last().is_some() {
                self.early_tags.insert(t);
                lines.push((format!("T{t}.early"), early, first, end - first));
            }
        }
        // Every thread's wake-ups ≥ 0: the merged record's buckets (the thread's own with
        // one thread), which the collector built from the same records.
        let none = Sparse::new();
        let all = match &second.merged.latency_buckets {
            Some(b) => View::Counts(b.positive()),
            None => View::Sparse(&none),
        };
        lines.push(("all".into(), all, index, span));
        self.write_or_stop(&lines);
    }

    fn annotate(&mut self, doc: &mut RunDocument) {
        // The run has ended (annotate comes after each run): its coarse windows are done.
        for t in 0..self.coarse.len() {
            self.flush_coarse(t);
        }
        let mut s = self.section.clone();
        s.window_ns = self.window;
        s.start_time = self
            .start
            .map(|t| humantime::format_rfc3339_millis(t).to_string());
        s.tags = (0..self.threads).map(|t| format!("T{t}")).collect();
        s.tags.push("all".into());
        s.tags
            .extend(self.early_tags.iter().map(|t| format!("T{t}.early")));
        doc.hlog = Some(s);
    }

    fn finish(&mut self, _doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        if self.error.is_none() {
            if let Err(e) = self.open() {
                self.error = Some(e); // no window at all: an empty log
            }
        }
        let committed = match (self.error.take(), self.stream.take()) {
            (Some(e), _) => Err(e),
            (None, Some(s)) => s
                .commit()
                .map_err(|e| format!("cannot write {}: {e}", self.quoted)),
            (None, None) => return Ok(()),
        };
        committed.map_err(SinkError)?;
        notes.push(format!(
            "{} intervals written to {}",
            self.written, self.shown
        ));
        Ok(())
    }
}

mod encode;
#[cfg(test)]
mod tests;
