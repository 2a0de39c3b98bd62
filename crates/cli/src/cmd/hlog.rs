//! `tickscope hlog merge` and `tickscope hlog stat`: percentiles over a time range or a
//! fleet from HdrHistogram interval logs, read at the tops of the histogram's buckets ([`tickscope_report::import::hlog`]). Merging
//! adds histograms — exact, unlike averaging percentiles (HdrHistogram's interval-log
//! rationale: "correctly calculate the 99.99th percentile for the entire hour",
//! <https://docs.rs/hdrhistogram/7.5.4/hdrhistogram/serialization/index.html>).

use crate::cli::{HlogCommand, HlogMergeArgs, HlogStatArgs};
use crate::console;
use crate::exit::Failure;
use crate::options::parse_duration;
use crate::output_path::prepare_outputs;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::hlog_merge::{merge, survey, MergeError, Merged};
use tickscope_report::hlog_stat::{stat_table, TimeRange};
use tickscope_report::import::hlog::{Reader, Totals};
use tickscope_report::import::open_input;
use tickscope_report::quoted;

/// Runs `tickscope hlog …`.
///
/// # Errors
/// [`Failure::Usage`] for a file that cannot be read or parsed, or a bad time; [`Failure::Runtime`]
/// when the output cannot be written.
pub fn execute(cmd: &HlogCommand) -> Result<(), Failure> {
    match cmd {
        HlogCommand::Merge(a) => merge_logs(a),
        HlogCommand::Stat(a) => stat(a),
    }
}

/// Opens one log to be read as it streams ([`open_input`]: a FIFO, device or directory is
/// refused at once).
fn open(path: &Path) -> Result<Reader<impl BufRead>, Failure> {
    let usage = |e: tickscope_report::import::ImportError| Failure::Usage(e.to_string());
    let mut input = open_input(path).map_err(usage)?;
    // A log may start with an untagged interval; only a JSON result is told apart here.
    let start = input.peek().map_err(usage)?;
    if start.starts_with('{') || start.starts_with('[') {
        return Err(Failure::Usage(format!(
            "{}: a JSON result, not an interval log",
            quoted(path)
        )));
    }
    Ok(Reader::new(input.into_reader()))
}

/// A reading error of the log at `path`, as one line.
fn bad(path: &Path) -> impl Fn(String) -> Failure + '_ {
    move |e| Failure::Usage(format!("{}: interval log: {e}", quoted(path)))
}

/// A merge's failure as the one line naming its log.
fn failure(files: &[PathBuf]) -> impl Fn(MergeError<Failure>) -> Failure + '_ {
    move |e| match e {
        MergeError::Read { index, message } => bad(&files[index])(message),
        MergeError::Caller(f) => f,
    }
}

fn warn<R: BufRead>(path: &Path, reader: &Reader<R>) {
    for w in reader.warnings() {
        eprintln!("tickscope: {}: {w}", quoted(path));
    }
}

fn merge_logs(a: &HlogMergeArgs) -> Result<(), Failure> {
    let inputs: Vec<&Path> = a.files.iter().map(PathBuf::as_path).collect();
    let out = prepare_outputs(&[("-o", a.output.as_path())], &inputs)?
        .pop()
        .ok_or_else(|| Failure::Runtime("no output prepared".into()))?;
    if a.files.iter().any(|p| p.as_os_str() == "-") {
        return Err(Failure::Usage(
            "hlog merge reads each log twice: give the logs as files, not '-'".into(),
        ));
    }
    // A first pass decodes no histogram: the earliest start (the merged log's StartTime), and
    // whether every log is in time order, so that the logs can be merged as they stream.
    let mut open_nth = |i: usize| open(&a.files[i]);
    let (origin, ordered) = survey(a.files.len(), &mut open_nth).map_err(failure(&a.files))?;
    let origin = origin.unwrap_or(0.0);
    let q = quoted(&a.output);
    let cannot = |e: &dyn std::fmt::Display| Failure::Runtime(format!("cannot write {q}: {e}"));
    let mut stream = out.stream().map_err(|e| cannot(&e))?;
    let mut ser = V2DeflateSerializer::new();
    let written = {
        let mut builder = IntervalLogWriterBuilder::new();
        // The reader refuses times beyond the year 9999: every sum here is a valid time.
        builder
            .add_comment(&format!(
                "tool: tickscope {} hlog merge of {} logs",
                env!("CARGO_PKG_VERSION"),
                a.files.len()
            ))
            .with_start_time(UNIX_EPOCH + Duration::from_secs_f64(origin.max(0.0)));
        let mut w = builder
            .begin_log_with(&mut stream, &mut ser)
            .map_err(|e| cannot(&e))?;
        let mut emit = |tag: &str, i: &Merged| -> Result<(), Failure> {
            let Some(h) = &i.histogram else {
                return Ok(());
            };
            w.write_histogram(
                h,
                Duration::from_secs_f64((i.start - origin).max(0.0)),
                Duration::from_secs_f64(i.length),
                Tag::new(tag),
            )
            .map_err(|e| cannot(&e))
        };
        let mut done = |i: usize, r: &Reader<_>| warn(&a.files[i], r);
        merge(a.files.len(), ordered, &mut open_nth, &mut done, &mut emit)
            .map_err(failure(&a.files))?
    };
    stream.commit().map_err(|e| cannot(&e))?;
    console::line(format!(
        "{written} intervals from {} logs written to {q}",
        a.files.len(),
    ));
    Ok(())
}

fn stat(a: &HlogStatArgs) -> Result<(), Failure> {
    let time = |s: &Option<String>, flag: &str| -> Result<Option<f64>, Failure> {
        s.as_deref()
            .map(|t| {
                if t.trim() == "0" {
                    return Ok(0.0);
                }
                parse_duration(t, flag, NS_PER_SEC)
                    .map(|ns| ns as f64 / 1e9)
                    .map_err(Failure::Usage)
            })
            .transpose()
    };
    let mut range = TimeRange::new(time(&a.from, "--from")?, time(&a.to, "--to")?)
        .map_err(|e| Failure::Usage(format!("--from/--to: {e}")))?;
    // One time axis for a fleet: seconds from the earliest log's start. Only a range needs
    // it, found in a first pass that decodes no histogram.
    if range.is_bounded() {
        if a.files.iter().any(|p| p.as_os_str() == "-") {
            return Err(Failure::Usage(
                "--from/--to read each log twice: give the log as a file, not '-'".into(),
            ));
        }
        let mut earliest: Option<f64> = None;
        for path in &a.files {
            if let Some(o) = open(path)?.origin().map_err(bad(path))? {
                earliest = Some(earliest.map_or(o, |e| e.min(o)));
            }
        }
        range.origin = earliest.unwrap_or(0.0);
    }
    // One pass, one histogram per tag: memory does not grow with the log.
    let mut totals = Totals::default();
    for path in &a.files {
        let mut reader = open(path)?;
        totals
            .add_log(&mut reader, |h| range.keeps(a.tag.as_deref(), h))
            .map_err(bad(path))?;
        warn(path, &reader);
    }
    if let Some(t) = &a.tag {
        if !totals.tags.contains_key(t) {
            return Err(Failure::Usage(format!(
                "--tag {t}: no such tag (tags: {})",
                totals.tag_names().join(", ")
            )));
        }
    }
    console::line(stat_table(&totals));
    Ok(())
}
