//! `tickscope run --tasks`: the library's executive with synthetic work, in one thread, for
//! the run's duration — per-task release latency, response time and misses, before a user
//! writes any code. Shows, for example, how a 10 ms task's work delays the 1 ms task at
//! every instant the two are due together.
//!
//! The other `run` flags keep their meaning where they apply to one thread: `--method`
//! (nanosleep-abs, busy or hybrid: the library's sleep, busy and hybrid strategies, with
//! `--busy-sleep-every` and `--margin`), `--policy`/`-p`/`--nice`, `-a` (one CPU),
//! `--mlock`, `--timer-slack`, `--pm-qos`, `--clock`, `-D`, `-l` (total releases). The
//! synthetic work spins on the clock for `work=` after each release starts.

use super::plan::{plan_view, read_task_file};
use super::signals::stoppable;
use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::options::run_plan;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope::Strategy;
use tickscope_engine::run::{RunConfig, SecondWindows};
use tickscope_report::executive::{plan_text, tasks_table};
use tickscope_report::sink::RunSink;
use tickscope_report::units::ns_i;
use tickscope_session::tasks::file::parse_task_file_to_run;
use tickscope_session::tasks::spec::TaskSpec;
use tickscope_session::tasks::{self, Outputs, Ready, TasksError};

/// A task set and what runs it, checked before anything runs.
pub struct Prepared {
    /// The tasks, in the order given.
    pub specs: Vec<TaskSpec>,
    /// The executive's strategy (from `--method`).
    pub strategy: Strategy,
    /// The run's settings; its nominal period is the shortest task's, its duration 10 s
    /// when neither `-D` nor `-l` is given.
    pub config: RunConfig,
}

/// The task set of `args` (`--tasks` or `--tasks-file`) with the settings that run it.
///
/// # Errors
/// [`Failure::Usage`] for a bad list or file, `--load`, `--debug-mock`, `--explain`,
/// several methods or rounds, several CPUs, or a method the executive has no strategy for.
pub fn prepare(args: &RunArgs) -> Result<Prepared, Failure> {
    let specs = match (&args.tasks, &args.tasks_file) {
        (_, Some(path)) => {
            let (text, shown) = read_task_file(path)?;
            parse_task_file_to_run(&text, &shown).map_err(Failure::Usage)?
        }
        (Some(list), None) => list.to_run().map_err(Failure::Usage)?,
        (None, None) => return Err(Failure::Usage("give --tasks or --tasks-file".into())),
    };
    if args.load.is_some() {
        return Err(Failure::Usage(
            "--tasks runs without --load; start the load beside it, or measure it with a \
             single-rate run ('tickscope run --load …')"
                .into(),
        ));
    }
    if args.debug_mock.is_some() {
        return Err(Failure::Usage(
            "--tasks runs on the real clock; drop --debug-mock".into(),
        ));
    }
    if args.explain.explain.is_some() || !args.explain.on_late.is_empty() {
        return Err(Failure::Usage(
            "--tasks does not trace: drop --explain/--on-late, or explain a single-rate run \
             at the shortest task's period"
                .into(),
        ));
    }
    let plan = run_plan(args).map_err(Failure::Usage)?;
    let cfg = &plan.config;
    if plan.is_comparison() {
        return Err(Failure::Usage(
            "--tasks runs one method once: give a single --method and no --rounds".into(),
        ));
    }
    if cfg.cpus.len() > 1 {
        return Err(Failure::Usage(
            "--tasks runs every task in one thread: give -a one CPU, and no -t".into(),
        ));
    }
    let strategy = tasks::strategy(cfg).ok_or_else(|| {
        Failure::Usage(format!(
            "--tasks waits with nanosleep-abs, busy or hybrid (the library's strategies), \
             not {}",
            cfg.method.name()
        ))
    })?;
    let config = tasks::run_config(&specs, cfg);
    Ok(Prepared {
        specs,
        strategy,
        config,
    })
}

/// Runs the executive over `--tasks` with the other flags of `args`
/// ([`tickscope_session::tasks::run`]), printing a line per task every second, then the
/// tasks' table; the files asked for (`--json`, `--csv`, `--hlog`, `--histogram-file`,
/// `--samples`) are written as for a single-rate run, task `i` as thread `i`.
///
/// # Errors
/// [`Failure::Usage`] for a bad `--tasks` list, a flag that does not apply to one thread,
/// an output that cannot be written, or a setting that cannot be applied;
/// [`Failure::Runtime`] when a wait fails or a file cannot be finished.
pub fn execute(args: &RunArgs) -> Result<(), Failure> {
    let prepared = prepare(args)?;
    let sinks = super::sinks::file_sinks(args, false)?;
    run_prepared(args, &prepared, sinks, &stoppable())
}

/// Runs `p` with `sinks` (each task's files, or `monitor`'s metrics) until its end or
/// `stop`, printing unless `-q` a line per task every second, then the tasks' table.
///
/// # Errors
/// [`Failure::Usage`] for a setting that cannot be applied; [`Failure::Runtime`] when a
/// wait fails or an output cannot be finished.
pub fn run_prepared(
    args: &RunArgs,
    p: &Prepared,
    sinks: Vec<Box<dyn RunSink>>,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let cfg = &p.config;
    let system = tickscope_system::system::detect();
    let names: Vec<String> = p.specs.iter().map(|s| s.task.display_name()).collect();
    let quiet = args.quiet;
    let mut on_window = |w: &SecondWindows| {
        if !quiet {
            for line in second_lines(w, &names) {
                crate::console::line(line);
            }
        }
    };
    let mut outputs = Outputs {
        sinks,
        system: &system,
        command_line: Some(std::env::args_os().collect()),
        on_window: &mut on_window,
    };
    let finished = tasks::run(
        &p.specs,
        p.strategy,
        cfg,
        stop,
        &mut |r| header(r, cfg, args.quiet),
        &mut outputs,
    )
    .map_err(|e| match e {
        TasksError::Setting(m) => Failure::Usage(m),
        TasksError::Wait(m) => Failure::Runtime(m),
    })?;
    crate::console::line(tasks_table(&finished.rows).trim_end_matches('\n'));
    for note in &finished.notes {
        crate::console::line(note);
    }
    // Stopping is how a monitor ends; a run with an end was cut short.
    let has_end = cfg.duration_ns.is_some() || cfg.loops.is_some();
    if has_end && stop.load(Ordering::Relaxed) && !crate::console::stdout_closed() {
        eprintln!("tickscope: interrupted; the tables cover the run until then");
    }
    match finished.failures.is_empty() {
        true => Ok(()),
        false => Err(Failure::Runtime(finished.failures.join("; "))),
    }
}

/// One line per task for a finished window: its releases, release latency (p99, max) and
/// overruns, like the per-second line of a single-rate run.
fn second_lines(w: &SecondWindows, names: &[String]) -> Vec<String> {
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let opt = |v: Option<i64>| v.map_or("-".to_string(), ns_i);
    w.threads
        .iter()
        .map(|(i, s)| {
            let name = names.get(*i).map_or("?", String::as_str);
            format!(
                "{:>4}s  {:<width$}  releases {:>6}  lat p99 {:>9}  max {:>9}  overruns {}",
                w.index + 1,
                tickscope_report::escaped(name),
                s.samples,
                opt(s.latency_p99),
                opt(s.latency_max),
                s.overruns,
            )
        })
        .collect()
}

/// The notes on settings (stderr), then, unless `quiet`, the header and the tasks' plan.
fn header(r: &Ready<'_>, cfg: &RunConfig, quiet: bool) {
    for note in r.notes {
        eprintln!("tickscope: {note}");
    }
    if quiet {
        return;
    }
    crate::console::line(format!(
        "tickscope {} — {} tasks in one thread, {} strategy, CLOCK_{}, {}, {}",
        env!("CARGO_PKG_VERSION"),
        r.tasks.len(),
        r.strategy.name(),
        cfg.clock.name().to_uppercase(),
        r.policy,
        match (cfg.loops, cfg.duration_ns) {
            (Some(n), _) => format!("{n} releases"),
            (None, Some(d)) => format!("{:.1} s", d as f64 / 1e9),
            (None, None) => "until stopped".to_string(),
        }
    ));
    let plan = plan_text(&plan_view(r.tasks, &tickscope::Plan::of(r.tasks)));
    crate::console::line(plan.trim_end_matches('\n'));
    crate::console::line("");
}
