//! From `tickscope run`'s `--explain`, `--on-late` and `--break` to the explain and context
//! sinks (see [`tickscope_session::trace`]).

use crate::cli::RunArgs;
use crate::exit::Failure;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tickscope_explain::controller::ExplainOptions;
use tickscope_explain::on_late::{break_rule, parse_latency, parse_rule, Rule};
use tickscope_report::sink::RunSink;
use tickscope_session::trace::{Mode, Threshold};

/// Per-CPU trace buffer, KiB: at this machine's ~10 000 events per second per traced CPU
/// (about 60 bytes each) it holds seconds, while the collector drains it every 20 ms.
const BUFFER_KB: u32 = 4096;

/// The explain and context sinks, when `--explain`, `--on-late` or `--break` is given.
///
/// # Errors
/// [`Failure::Usage`] for a malformed threshold or rule, and for `--explain=trace` where
/// tracing is not permitted (the sentence says why and how to allow it).
pub fn sinks(
    args: &RunArgs,
    stop: &Arc<AtomicBool>,
) -> Result<Option<Vec<Box<dyn RunSink>>>, Failure> {
    let e = &args.explain;
    if e.explain.is_none() && e.on_late.is_empty() && e.break_us.is_none() {
        return match e.explain_threshold.is_some()
            || e.capture_dir.is_some()
            || e.explain_log.is_some()
        {
            true => Err(Failure::Usage(
                "--explain-threshold, --explain-log and --capture-dir need --explain, --on-late \
                 or --break"
                    .into(),
            )),
            false => Ok(None),
        };
    }
    let mode = match e.explain.as_deref() {
        Some("trace") => Mode::Trace,
        Some("bpf") => Mode::Bpf,
        Some("tracefs") => Mode::Tracefs,
        Some("context") => Mode::Context,
        _ => Mode::Auto,
    };
    let threshold = threshold(e.explain_threshold.as_deref())?;
    let rules = rules(&e.on_late, e.break_us.as_deref())?;
    let capture_dir = e
        .capture_dir
        .clone()
        .unwrap_or_else(|| default_capture_dir(args));
    let opts = ExplainOptions {
        mode,
        threshold,
        rules,
        capture_dir,
        capture_limit: e.capture_limit,
        cooldown: Duration::from_millis(200),
        keep_breakdowns: 20,
        buffer_kb: BUFFER_KB,
        log: e.explain_log.clone(),
        log_events: e.explain_log_events,
    };
    let trace = tickscope_session::trace::sinks(opts, stop).map_err(Failure::Usage)?;
    if let Some(n) = trace.note {
        eprintln!("tickscope: {n}");
    }
    Ok(Some(trace.sinks))
}

/// `--explain-threshold`: a latency (100 µs when not given) or `p99`.
///
/// # Errors
/// [`Failure::Usage`] for a malformed latency.
fn threshold(text: Option<&str>) -> Result<Threshold, Failure> {
    Ok(match text {
        None => Threshold::Fixed(100_000),
        Some("p99") => Threshold::P99,
        Some(t) => Threshold::Fixed(
            parse_latency(t).map_err(|m| Failure::Usage(format!("--explain-threshold: {m}")))?,
        ),
    })
}

/// The `--on-late` rules in order, then `--break`'s.
///
/// # Errors
/// [`Failure::Usage`] naming the flag of a malformed rule.
fn rules(on_late: &[String], break_us: Option<&str>) -> Result<Vec<Rule>, Failure> {
    let mut rules = Vec::new();
    for r in on_late {
        rules.push(parse_rule(r).map_err(|m| Failure::Usage(format!("--on-late: {m}")))?);
    }
    if let Some(us) = break_us {
        rules.push(break_rule(us).map_err(|m| Failure::Usage(format!("--break: {m}")))?);
    }
    Ok(rules)
}

/// Where captures go without `--capture-dir`: beside the `--json` file
/// (`FILE.captures`), else `tickscope-captures` in the working directory.
fn default_capture_dir(args: &RunArgs) -> PathBuf {
    match &args.json {
        Some(j) if j.as_os_str() != "-" => {
            let mut p = j.clone().into_os_string();
            p.push(".captures");
            PathBuf::from(p)
        }
        _ => PathBuf::from("tickscope-captures"),
    }
}
