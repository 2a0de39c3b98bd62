//! `tickscope hlog merge` and `tickscope hlog stat`: percentiles over a time range or a
//! fleet from HdrHistogram interval logs, read at the tops of the histogram's buckets ([`tickscope_report::import::hlog`]). Merging
//! adds histograms — exact, unlike averaging percentiles (HdrHistogram's interval-log
//! rationale: "correctly calculate the 99.99th percentile for the entire hour",
//! <https://docs.rs/hdrhistogram/7.5.4/hdrhistogram/serialization/index.html>).

use crate::cli::{HlogCommand, HlogMergeArgs, HlogStatArgs};
use crate::console;
use crate::exit::Failure;
use crate::options::parse_duration;
use crate::output_path::{finish, prepare_outputs};
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::import::hlog::{parse, Interval, Log};
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

fn read_all(files: &[PathBuf]) -> Result<Vec<Log>, Failure> {
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", quoted(p))))?;
            let log = parse(&text)
                .map_err(|e| Failure::Usage(format!("{}: interval log: {e}", quoted(p))))?;
            for w in &log.warnings {
                eprintln!("tickscope: {}: {w}", quoted(p));
            }
            Ok(log)
        })
        .collect()
}

/// Intervals of every log keyed by (tag, start in ms since the epoch), merged.
fn merged_intervals(logs: &[Log]) -> Result<BTreeMap<(String, i64), Interval>, Failure> {
    let mut out: BTreeMap<(String, i64), Interval> = BTreeMap::new();
    for i in logs.iter().flat_map(|l| &l.intervals) {
        let key = (i.tag.clone(), (i.start * 1000.0).round() as i64);
        match out.get_mut(&key) {
            Some(m) => {
                let mut h = std::mem::replace(&mut m.histogram, Histogram::new(1).expect("valid"));
                h.auto(true);
                h.add(&i.histogram)
                    .map_err(|e| Failure::Usage(format!("cannot merge histograms: {e:?}")))?;
                m.histogram = h;
                m.length = m.length.max(i.length);
            }
            None => {
                out.insert(key, i.clone());
            }
        }
    }
    Ok(out)
}

fn merge(a: &HlogMergeArgs) -> Result<(), Failure> {
    let inputs: Vec<&Path> = a.files.iter().map(PathBuf::as_path).collect();
    let out = prepare_outputs(&[("-o", a.output.as_path())], &inputs)?
        .pop()
        .expect("one output");
    let logs = read_all(&a.files)?;
    let merged = merged_intervals(&logs)?;
    let origin = merged
        .values()
        .map(|i| i.start)
        .reduce(f64::min)
        .unwrap_or(0.0);
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut builder = IntervalLogWriterBuilder::new();
        builder
            .add_comment(&format!(
                "tool: tickscope {} hlog merge of {} logs",
                env!("CARGO_PKG_VERSION"),
                logs.len()
            ))
            .with_start_time(UNIX_EPOCH + Duration::from_secs_f64(origin));
        let mut w = builder
            .begin_log_with(&mut buf, &mut ser)
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        let mut by_time: Vec<&Interval> = merged.values().collect();
        by_time.sort_by(|x, y| x.start.total_cmp(&y.start).then(x.tag.cmp(&y.tag)));
        for i in by_time {
            w.write_histogram(
                &i.histogram,
                Duration::from_secs_f64((i.start - origin).max(0.0)),
                Duration::from_secs_f64(i.length),
                Tag::new(&i.tag),
            )
            .map_err(|e| Failure::Runtime(format!("cannot encode an interval: {e}")))?;
        }
    }
    finish(out, &buf)?;
    console::line(format!(
        "{} intervals from {} logs written to {}",
        merged.len(),
        logs.len(),
        quoted(&a.output)
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
    let logs = read_all(&a.files)?;
    // One time axis for a fleet: seconds from the earliest log's start.
    let origin = logs.iter().map(Log::origin).reduce(f64::min).unwrap_or(0.0);
    let mut tags: Vec<String> = logs
        .iter()
        .flat_map(|l| l.tags())
        .map(str::to_string)
        .collect();
    tags.sort();
    tags.dedup();
    if let Some(t) = &a.tag {
        if !tags.contains(t) {
            return Err(Failure::Usage(format!(
                "--tag {t}: no such tag (tags: {})",
                tags.join(", ")
            )));
        }
        tags = vec![t.clone()];
    }
    console::line(format!(
        "{:<10} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "tag", "intervals", "count", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max"
    ));
    for tag in &tags {
        let mut h: Option<Histogram<u64>> = None;
        let mut n = 0;
        for i in logs
            .iter()
            .flat_map(|l| &l.intervals)
            .filter(|i| &i.tag == tag)
        {
            let t = i.start - origin;
            if from.is_some_and(|f| t < f - 1e-9) || to.is_some_and(|e| t >= e - 1e-9) {
                continue;
            }
            n += 1;
            match &mut h {
                Some(m) => m
                    .add(&i.histogram)
                    .map_err(|e| Failure::Usage(format!("cannot merge: {e:?}")))?,
                None => {
                    let mut c = i.histogram.clone();
                    c.auto(true);
                    h = Some(c);
                }
            }
        }
        let Some(h) = h else { continue };
        let us = |v: u64| format!("{:.3}", v as f64 / 1e3);
        let q = |p: f64| us(h.highest_equivalent(h.value_at_quantile(p)));
        let name = if tag.is_empty() { "(none)" } else { tag };
        console::line(format!(
            "{:<10} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            name,
            n,
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
