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
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::import::hlog::{add_into, Reader, Totals};
use tickscope_report::import::open_input;
use tickscope_report::quoted;

/// Runs `tickscope hlog …`.
///
/// # Errors
/// [`Failure::Usage`] for a file that cannot be read or parsed, or a bad time; [`Failure::Runtime`]
/// when the output cannot be written.
pub fn execute(cmd: &HlogCommand) -> Result<(), Failure> {
    match cmd {
        HlogCommand::Merge(a) => merge(a),
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

fn warn<R: BufRead>(path: &Path, reader: &Reader<R>) {
    for w in reader.warnings() {
        eprintln!("tickscope: {}: {w}", quoted(path));
    }
}

/// One interval of the merged log.
struct Merged {
    start: f64,
    length: f64,
    histogram: Option<Histogram<u64>>,
}

/// The key intervals are merged by: start in ms since the epoch, tag.
type Key = (i64, String);

fn key(start: f64, tag: String) -> Key {
    ((start * 1000.0).round() as i64, tag)
}

/// Adds an interval read from `path` to `pending`.
fn add(
    pending: &mut BTreeMap<Key, Merged>,
    head: tickscope_report::import::hlog::Head,
    h: &Histogram<u64>,
    path: &Path,
) -> Result<(), Failure> {
    let line = head.line;
    let m = pending.entry(key(head.start, head.tag)).or_insert(Merged {
        start: head.start,
        length: head.length,
        histogram: None,
    });
    m.length = m.length.max(head.length);
    add_into(&mut m.histogram, h).map_err(|e| bad(path)(format!("line {line}: {e}")))
}

/// Where merged intervals go, in time order.
type Emit<'a> = dyn FnMut(&str, &Merged) -> Result<(), Failure> + 'a;

/// Merges logs whose intervals are each in time order, as they stream: every log is read
/// at once, always the one whose next interval starts first, and an interval is written as
/// soon as no log can add to it any more. Memory: the intervals of one start (tags × logs).
fn merge_in_order(files: &[PathBuf], emit: &mut Emit<'_>) -> Result<u64, Failure> {
    let mut sources = Vec::with_capacity(files.len());
    for path in files {
        let mut reader = open(path)?;
        let next = reader.next_head().map_err(bad(path))?;
        sources.push((path, reader, next));
    }
    let mut pending: BTreeMap<Key, Merged> = BTreeMap::new();
    let mut written = 0;
    loop {
        let first = sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.2.as_ref().map(|h| (i, h.start)))
            .min_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((i, _)) = first {
            let (path, reader, next) = &mut sources[i];
            if let Some(head) = next.take() {
                let h = reader.histogram().map_err(bad(path))?;
                add(&mut pending, head, &h, path)?;
            }
            *next = reader.next_head().map_err(bad(path))?;
            if next.is_none() {
                warn(path, reader);
            }
        }
        let horizon = sources
            .iter()
            .filter_map(|s| s.2.as_ref())
            .map(|h| key(h.start, String::new()).0)
            .min();
        while let Some(e) = pending.first_entry() {
            if horizon.is_some_and(|t| e.key().0 >= t) {
                break;
            }
            let ((_, tag), m) = e.remove_entry();
            emit(&tag, &m)?;
            written += 1;
        }
        if first.is_none() {
            return Ok(written);
        }
    }
}

/// Merges logs in any order: every interval of the merged log is held until all are read
/// (memory: one histogram per interval of the merged log).
fn merge_in_memory(files: &[PathBuf], emit: &mut Emit<'_>) -> Result<u64, Failure> {
    let mut merged: BTreeMap<Key, Merged> = BTreeMap::new();
    for path in files {
        let mut reader = open(path)?;
        while let Some(head) = reader.next_head().map_err(bad(path))? {
            let h = reader.histogram().map_err(bad(path))?;
            add(&mut merged, head, &h, path)?;
        }
        warn(path, &reader);
    }
    let written = merged.len() as u64;
    for ((_, tag), m) in merged {
        emit(&tag, &m)?;
    }
    Ok(written)
}

fn merge(a: &HlogMergeArgs) -> Result<(), Failure> {
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
    // whether every log is in time order (as every HdrHistogram writer writes) so that the
    // logs can be merged as they stream.
    let mut origin: Option<f64> = None;
    let mut ordered = true;
    for path in &a.files {
        let mut reader = open(path)?;
        let mut last = f64::NEG_INFINITY;
        while let Some(h) = reader.next_head().map_err(bad(path))? {
            ordered &= h.start >= last;
            last = last.max(h.start);
            origin = Some(origin.map_or(h.start, |o| o.min(h.start)));
        }
    }
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
        if ordered {
            merge_in_order(&a.files, &mut emit)?
        } else {
            merge_in_memory(&a.files, &mut emit)?
        }
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
    let (from, to) = (time(&a.from, "--from")?, time(&a.to, "--to")?);
    if let (Some(f), Some(t)) = (from, to) {
        if t <= f {
            return Err(Failure::Usage(format!(
                "--to ({t} s) must be after --from ({f} s)"
            )));
        }
    }
    // One time axis for a fleet: seconds from the earliest log's start. Only a range needs
    // it, found in a first pass that decodes no histogram.
    let mut origin = 0.0;
    if from.is_some() || to.is_some() {
        let mut earliest: Option<f64> = None;
        for path in &a.files {
            if path.as_os_str() == "-" {
                return Err(Failure::Usage(
                    "--from/--to read each log twice: give the log as a file, not '-'".into(),
                ));
            }
            if let Some(o) = open(path)?.origin().map_err(bad(path))? {
                earliest = Some(earliest.map_or(o, |e| e.min(o)));
            }
        }
        origin = earliest.unwrap_or(0.0);
    }
    let in_range = |start: f64| {
        let t = start - origin;
        !(from.is_some_and(|f| t < f - 1e-9) || to.is_some_and(|e| t >= e - 1e-9))
    };
    // One pass, one histogram per tag: memory does not grow with the log.
    let mut totals = Totals::default();
    for path in &a.files {
        let mut reader = open(path)?;
        totals
            .add_log(&mut reader, |h| {
                a.tag.as_ref().is_none_or(|t| *t == h.tag) && in_range(h.start)
            })
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
    console::line(format!(
        "{:<10} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "tag", "intervals", "count", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max"
    ));
    for (tag, total) in &totals.tags {
        let Some(h) = &total.histogram else { continue };
        let us = |v: u64| format!("{:.3}", v as f64 / 1e3);
        let q = |p: f64| us(h.highest_equivalent(h.value_at_quantile(p)));
        let name = if tag.is_empty() { "(none)" } else { tag };
        console::line(format!(
            "{:<10} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            name,
            total.intervals,
            h.len(),
            us(h.min()),
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            q(0.9999),
            us(h.max())
        ));
    }
    console::line("values in µs (ns in the log), percentiles at HdrHistogram's bucket tops");
    Ok(())
}
