//! `tickscope run`: measure, show each second, summarise, write the result file — or, with
//! several methods or rounds, run each in turn and print one comparison table.
//!
//! A comparison runs the methods in the order of [`tickscope_engine::compare::schedule`]
//! (each round rotated by one), every run with the same configuration but its method and
//! started the same way by the engine (fresh threads, same setup, first expiry the same
//! distance ahead, no sample discarded). Per-second lines are left out; one line per
//! finished run shows progress. The result file is rewritten after every run, so an
//! interruption or a crash keeps what was measured.

use super::exports::Exports;
use super::signals::stoppable;
use crate::cli::RunArgs;
use crate::console;
use crate::exit::Failure;
use crate::options::{run_plan, RunPlan};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::run::{run, RunConfig, RunEvent};
use tickscope_engine::schedule::schedule;
use tickscope_engine::system::{self, SystemInfo};
use tickscope_engine::wait::MethodKind;
use tickscope_report::methods_table::{comparison_header, methods_table, run_line};
use tickscope_report::{terminal, MethodRun, RunDocument};

/// Runs the measurement described by `args`.
///
/// # Errors
/// [`Failure::Usage`] for bad flags, an output that cannot be written, or a requested
/// setting that cannot be applied — all before the first wake-up; [`Failure::Runtime`]
/// when a result file cannot be written or a thread fails.
pub fn execute(args: &RunArgs) -> Result<(), Failure> {
    let plan = run_plan(args).map_err(Failure::Usage)?;
    let e = &args.exports;
    if plan.is_comparison()
        && (e.histogram_file.is_some() || e.csv.is_some() || e.samples.is_some())
    {
        return Err(Failure::Usage(
            "--histogram-file, --csv and --samples describe a single run; with several methods \
             or rounds use --json (it holds every run) and 'tickscope report'"
                .into(),
        ));
    }
    let mut cfg = plan.config.clone();
    let exports = Exports::prepare(args, &mut cfg)?;
    for note in &plan.left_out {
        eprintln!("tickscope: {note}");
    }
    let system = system::detect();
    let stop = stoppable();
    if plan.is_comparison() {
        compare(args, &plan, exports, &system, &stop)
    } else {
        single(args, &cfg, exports, &system, &stop)
    }
}

/// One method, one round: header, per-second lines, the files, then the summary.
fn single(
    args: &RunArgs,
    cfg: &RunConfig,
    mut exports: Exports,
    system: &SystemInfo,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let threads = cfg.cpus.len();
    let quiet = args.quiet;
    let mut observer = |event: RunEvent<'_>| {
        exports.observe(&event);
        if let RunEvent::Started(applied) = &event {
            if let Some(note) = &applied.method_note {
                eprintln!("tickscope: warning: {note}");
            }
        }
        if quiet {
            return;
        }
        let text = match event {
            RunEvent::Started(applied) => format!(
                "{}\n{}",
                terminal::header(system, cfg, applied),
                terminal::second_header()
            ),
            RunEvent::Second(report) => terminal::second_lines(report, cfg.period_ns, threads),
            RunEvent::Samples { .. } => return,
        };
        console::line(text);
    };
    let outcome = run(cfg, stop, &mut observer)?;
    let interrupted = outcome.interrupted;
    let summary = terminal::summary(&outcome.threads, &outcome.summary);
    let error = outcome.error.clone();
    let doc = RunDocument::new(system.clone(), cfg.clone(), outcome);
    // The files first: a closed or full standard output must not cost the result.
    let (written, files) = exports.finish(&doc);
    if interrupted && !console::stdout_closed() {
        eprintln!("tickscope: interrupted; the summary covers what ran");
    }
    console::line(format!("\n{summary}"));
    if !quiet {
        written.into_iter().for_each(console::line);
    }
    files?;
    match error {
        Some(e) => Err(Failure::Runtime(e)),
        None => Ok(()),
    }
}
/// Several methods or rounds: one line per run, then the comparison table. The result
/// file is rewritten after every run (a regular file; a stream gets the last version once).
fn compare(
    args: &RunArgs,
    plan: &RunPlan,
    mut exports: Exports,
    system: &SystemInfo,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let order = schedule(&plan.methods, plan.rounds);
    let quiet = args.quiet;
    let mut runs: Vec<MethodRun> = Vec::new();
    let mut error: Option<String> = None;
    let mut warned: Vec<MethodKind> = Vec::new();
    let document = |runs: &[MethodRun], error: &Option<String>| {
        RunDocument::from_runs(
            system.clone(),
            plan.config.clone(),
            runs.to_vec(),
            error.clone(),
        )
    };
    for planned in &order {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let cfg = RunConfig {
            method: planned.method,
            ..plan.config.clone()
        };
        let first = runs.is_empty();
        let mut observer = |event: RunEvent<'_>| {
            let RunEvent::Started(applied) = event else {
                return;
            };
            if let Some(note) = &applied.method_note {
                if !warned.contains(&applied.method) {
                    warned.push(applied.method);
                    eprintln!("tickscope: warning: {note}");
                }
            }
            if first && !quiet {
                console::line(comparison_header(
                    system,
                    &cfg,
                    applied,
                    &plan.methods,
                    plan.rounds,
                ));
            }
        };
        let outcome = run(&cfg, stop, &mut observer)?;
        let entry = MethodRun::new(planned.round, planned.order, &outcome);
        if !quiet {
            console::line(run_line(&entry, order.len()));
        }
        if let Some(e) = &outcome.error {
            error.get_or_insert(format!("{}: {e}", planned.method.name()));
        }
        runs.push(entry);
        exports.checkpoint(&document(&runs, &error))?;
    }
    // No run finished (stopped at once): no file, as for any output never completed.
    let (written, files) = if runs.is_empty() {
        (Vec::new(), Ok(()))
    } else {
        exports.finish(&document(&runs, &error))
    };
    if stop.load(Ordering::Relaxed) && !console::stdout_closed() {
        eprintln!("tickscope: interrupted; the table covers the runs that took place");
    }
    if !runs.is_empty() {
        console::line(format!("\n{}", methods_table(&runs)));
        if !quiet {
            written.into_iter().for_each(console::line);
        }
    }
    files?;
    match error {
        Some(e) => Err(Failure::Runtime(e)),
        None => Ok(()),
    }
}
