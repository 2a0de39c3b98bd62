//! `tickscope run`: measure, show each second, summarise, write the result file — or, with
//! several methods or rounds, run each in turn and print one comparison table.
//!
//! A comparison runs the methods in the order of [`tickscope_engine::compare::schedule`]
//! (each round rotated by one), every run with the same configuration but its method and
//! started the same way by the engine (fresh threads, same setup, first expiry the same
//! distance ahead, no sample discarded). Per-second lines are left out; one line per
//! finished run shows progress. The result file is rewritten after every run, so an
//! interruption or a crash keeps what was measured.

use super::signals::stop_flag;
use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::options::{run_plan, RunPlan};
use crate::output_path::check_output_dir;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::compare::schedule;
use tickscope_engine::run::{run, RunConfig, RunEvent};
use tickscope_engine::system::{self, SystemInfo};
use tickscope_engine::wait::MethodKind;
use tickscope_report::methods_table::{comparison_header, methods_table, run_line};
use tickscope_report::{terminal, write_atomic, MethodRun, RunDocument};

/// Runs the measurement described by `args`.
///
/// # Errors
/// [`Failure::Usage`] for bad flags or a requested setting that cannot be applied;
/// [`Failure::Runtime`] when the result file cannot be written or a thread fails.
pub fn execute(args: &RunArgs) -> Result<(), Failure> {
    if let Some(tasks) = &args.tasks {
        return super::tasks::execute(args, tasks);
    }
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
    if let Some(path) = &args.json {
        check_output_dir("--json", path)?;
    }
    for note in &plan.left_out {
        eprintln!("tickscope: {note}");
    }
    let system = system::detect();
    let stop = stop_flag().map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    if plan.is_comparison() {
        compare(args, &plan, &system, &stop)
    } else {
        single(args, &plan.config, &system, &stop)
    }
}

/// One method, one round: header, per-second lines, summary, export files.
fn single(
    args: &RunArgs,
    cfg: &RunConfig,
    system: &SystemInfo,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let mut cfg = cfg.clone();
    let mut exports = super::exports::Exports::prepare(&args.exports, &mut cfg)?;
    let cfg = &cfg;
    let threads = cfg.cpus.len();
    let quiet = args.quiet;
    let mut stdout = std::io::stdout();
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
        let _ = writeln!(stdout, "{text}");
        let _ = stdout.flush();
    };
    let outcome = run(cfg, stop, &mut observer)?;
    if outcome.interrupted {
        eprintln!("tickscope: interrupted; the summary covers what ran");
    }
    println!(
        "\n{}",
        terminal::summary(&outcome.threads, &outcome.summary)
    );
    let error = outcome.error.clone();
    let doc = RunDocument::new(system.clone(), cfg.clone(), outcome);
    if let Some(path) = &args.json {
        write_document(path, &doc)?;
        if !quiet {
            println!("result written to {}", path.display());
        }
    }
    exports.finish(&doc, quiet)?;
    match error {
        Some(e) => Err(Failure::Runtime(e)),
        None => Ok(()),
    }
}

/// Several methods or rounds: one line per run, then the comparison table.
fn compare(
    args: &RunArgs,
    plan: &RunPlan,
    system: &SystemInfo,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let order = schedule(&plan.methods, plan.rounds);
    let quiet = args.quiet;
    let mut runs: Vec<MethodRun> = Vec::new();
    let mut error: Option<String> = None;
    let mut warned: Vec<MethodKind> = Vec::new();
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
                println!(
                    "{}",
                    comparison_header(system, &cfg, applied, &plan.methods, plan.rounds)
                );
            }
        };
        let outcome = run(&cfg, stop, &mut observer)?;
        let entry = MethodRun::new(planned.round, planned.order, &outcome);
        if !quiet {
            println!("{}", run_line(&entry, order.len()));
        }
        if let Some(e) = &outcome.error {
            error.get_or_insert(format!("{}: {e}", planned.method.name()));
        }
        runs.push(entry);
        if let Some(path) = &args.json {
            let doc = RunDocument::from_runs(
                system.clone(),
                plan.config.clone(),
                runs.clone(),
                error.clone(),
            );
            write_document(path, &doc)?;
        }
    }
    if stop.load(Ordering::Relaxed) {
        eprintln!("tickscope: interrupted; the table covers the runs that took place");
    }
    if !runs.is_empty() {
        println!("\n{}", methods_table(&runs));
        if let (Some(path), false) = (&args.json, quiet) {
            println!("result written to {}", path.display());
        }
    }
    match error {
        Some(e) => Err(Failure::Runtime(e)),
        None => Ok(()),
    }
}

/// Writes a result document atomically.
fn write_document(path: &Path, doc: &RunDocument) -> Result<(), Failure> {
    write_atomic(path, doc.to_json().as_bytes())
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))
}
