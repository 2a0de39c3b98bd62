//! From `tickscope run`'s output flags to its sinks: every destination prepared and checked
//! before the first wake-up (see [`crate::output_path`]), the terminal last so that it can
//! say where the files went after the summary.

use crate::cli::RunArgs;
use crate::console;
use crate::exit::Failure;
use crate::output_path::prepare_outputs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tickscope_report::export::histogram_file::{HistogramOptions, MAX_BUCKETS};
use tickscope_report::sink::histogram::HistogramSink;
use tickscope_report::sink::registry::{self, Format};
use tickscope_report::sink::terminal::TerminalSink;
use tickscope_report::sink::RunSink;

/// Every export asked for, as (format, path): the long flags first, then `--export`.
///
/// # Errors
/// [`Failure::Usage`] for an `--export` that is not `FORMAT=PATH` with a known format.
fn wanted(args: &RunArgs) -> Result<Vec<(&'static Format, PathBuf)>, Failure> {
    let e = &args.exports;
    let mut out = Vec::new();
    for (name, path) in [
        ("json", &args.json),
        ("histogram", &e.histogram_file),
        ("csv", &e.csv),
        ("samples", &e.samples),
        ("hlog", &e.hlog),
    ] {
        if let Some(p) = path {
            out.push((registry::format(name).expect("registered"), p.clone()));
        }
    }
    for spec in &e.export {
        // FORMAT is text; PATH is any file name, UTF-8 or not.
        let bytes = spec.as_bytes();
        let shown = String::from_utf8_lossy(bytes);
        let split = bytes.iter().position(|&b| b == b'=');
        let (name, path) = match split {
            Some(at) => (&bytes[..at], &bytes[at + 1..]),
            None => {
                return Err(Failure::Usage(format!(
                    "--export '{}' is not FORMAT=PATH (formats: {})",
                    shown.escape_debug(),
                    registry::names()
                )))
            }
        };
        let format = std::str::from_utf8(name)
            .ok()
            .and_then(|n| registry::format(n.trim()))
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "--export: unknown format '{}' (formats: {})",
                    String::from_utf8_lossy(name).escape_debug(),
                    registry::names()
                ))
            })?;
        out.push((format, PathBuf::from(std::ffi::OsStr::from_bytes(path))));
    }
    Ok(out)
}

/// cyclictest's `-h N` / `-H N`: the histogram's range and layout, if asked for.
///
/// # Errors
/// [`Failure::Usage`] for a range that is not a whole number of µs in 1 ..= 100 000.
fn histogram_options(args: &RunArgs) -> Result<Option<HistogramOptions>, Failure> {
    let e = &args.exports;
    let (text, flag, all_column) = match (&e.histogram, &e.histofall) {
        (Some(t), _) => (t, "-h", false),
        (None, Some(t)) => (t, "-H", true),
        (None, None) => return Ok(None),
    };
    let range: usize = text
        .trim()
        .parse()
        .ok()
        .filter(|n| (1..=MAX_BUCKETS).contains(n))
        .ok_or_else(|| {
            Failure::Usage(format!(
                "{flag} '{text}' is not a histogram range: a whole number of µs from 1 to \
                 {MAX_BUCKETS} (cyclictest -h 400 tracks 0-399 µs)"
            ))
        })?;
    Ok(Some(HistogramOptions {
        range_us: Some(range),
        all_column,
        overflow_cycles: Vec::new(),
    }))
}

/// The sinks of the files a run writes (`--json`, `--csv`, `--hlog`, `--histogram-file`,
/// `--samples`, `--export`, cyclictest's `-h`), every destination prepared and checked.
///
/// # Errors
/// [`Failure::Usage`] for a malformed `--export`, a single-run format with several methods
/// or rounds, or any output that cannot be written or shares a file with another.
pub fn file_sinks(args: &RunArgs, comparison: bool) -> Result<Vec<Box<dyn RunSink>>, Failure> {
    let cyclictest = histogram_options(args)?;
    let mut wanted = wanted(args)?;
    if cyclictest.is_some() && !wanted.iter().any(|(f, _)| f.name == "histogram") {
        // cyclictest -h without --histfile: the histogram goes to standard output.
        wanted.push((
            registry::format("histogram").expect("registered"),
            "-".into(),
        ));
    }
    if comparison && wanted.iter().any(|(f, _)| f.single_run_only) {
        let flags: Vec<&str> = registry::FORMATS
            .iter()
            .filter(|f| f.single_run_only)
            .map(|f| f.flag)
            .collect();
        let (last, rest) = flags.split_last().expect("some formats are single-run");
        return Err(Failure::Usage(format!(
            "{} and {last} describe a single run; with several methods or rounds use --json \
             (it holds every run) and 'tickscope report'",
            rest.join(", ")
        )));
    }
    let named: Vec<(&str, &Path)> = wanted.iter().map(|(f, p)| (f.flag, p.as_path())).collect();
    let outputs = prepare_outputs(&named, &[])?;
    let mut sinks = Vec::with_capacity(outputs.len() + 1);
    for ((format, _), out) in wanted.iter().zip(outputs) {
        let sink: Box<dyn RunSink> = match (&cyclictest, format.name) {
            (Some(opts), "histogram") => Box::new(HistogramSink::new(out, opts.clone())),
            _ => (format.open)(out).map_err(|e| Failure::Usage(format!("{}: {e}", format.flag)))?,
        };
        sinks.push(sink);
    }
    Ok(sinks)
}

/// The sinks of a run: each export's ([`file_sinks`]), then the terminal's, then — for
/// `tickscope run -q` (`cyclictest_lines`) without a histogram — cyclictest's per-thread
/// lines.
///
/// # Errors
/// As [`file_sinks`].
pub fn sinks(
    args: &RunArgs,
    comparison: bool,
    stop: &Arc<AtomicBool>,
    cyclictest_lines: bool,
) -> Result<Vec<Box<dyn RunSink>>, Failure> {
    let cyclictest = histogram_options(args)?;
    let mut sinks = file_sinks(args, comparison)?;
    if let Some(explain) = super::explain::sinks(args, stop)? {
        sinks.extend(explain);
    }
    // What on this machine bears on the run, read before it starts (not on virtual time).
    if args.debug_mock.is_none() {
        let cpus: Vec<usize> = Vec::new();
        sinks.push(Box::new(tickscope_report::sink::doctor::DoctorSink::new(
            &cpus,
        )));
    }
    sinks.push(Box::new(TerminalSink::new(
        Box::new(console::Console),
        args.quiet,
        Arc::clone(stop),
    )));
    // cyclictest's `if (quiet && !histogram) print_stat(…)`: last, after the summary.
    if cyclictest_lines && args.quiet && cyclictest.is_none() && !comparison {
        sinks.push(Box::new(super::stat_lines::StatLines::new()));
    }
    Ok(sinks)
}
