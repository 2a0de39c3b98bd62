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

use super::plan::plan_view;
use super::signals::stoppable;
use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::options::run_plan;
use std::sync::atomic::Ordering;
use tickscope_engine::run::RunConfig;
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::executive::{plan_text, tasks_table};
use tickscope_session::tasks::spec::parse_tasks_to_run;
use tickscope_session::tasks::{self, Ready, TasksError};

/// Runs the executive over `--tasks` with the other flags of `args`
/// ([`tickscope_session::tasks::run`]), then prints the tasks' table.
///
/// # Errors
/// [`Failure::Usage`] for a bad `--tasks` list, a flag that does not apply to one thread,
/// or a setting that cannot be applied; [`Failure::Runtime`] when a wait fails.
pub fn execute(args: &RunArgs, spec: &str) -> Result<(), Failure> {
    let specs = parse_tasks_to_run(spec).map_err(Failure::Usage)?;
    let e = &args.exports;
    if args.json.is_some()
        || e.histogram_file.is_some()
        || e.csv.is_some()
        || e.samples.is_some()
        || args.load.is_some()
        || args.debug_mock.is_some()
    {
        return Err(Failure::Usage(
            "--tasks prints its tables only; --json, --histogram-file, --csv, --samples, \
             --load and --debug-mock apply to single-rate runs"
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
    let stop = stoppable();
    let rows = tasks::run(&specs, strategy, cfg, &stop, &mut |r| {
        header(r, cfg, args.quiet)
    })
    .map_err(|e| match e {
        TasksError::Setting(m) => Failure::Usage(m),
        TasksError::Wait(m) => Failure::Runtime(m),
    })?;
    crate::console::line(tasks_table(&rows).trim_end_matches('\n'));
    if stop.load(Ordering::Relaxed) && !crate::console::stdout_closed() {
        eprintln!("tickscope: interrupted; the tables cover the run until then");
    }
    Ok(())
}

/// The notes on settings (stderr), then, unless `quiet`, the header and the tasks' plan.
fn header(r: &Ready<'_>, cfg: &RunConfig, quiet: bool) {
    for note in r.notes {
        eprintln!("tickscope: {note}");
    }
    if quiet {
        return;
    }
    let duration = cfg.duration_ns.unwrap_or(10 * NS_PER_SEC);
    crate::console::line(format!(
        "tickscope {} — {} tasks in one thread, {} strategy, CLOCK_{}, {}, {}",
        env!("CARGO_PKG_VERSION"),
        r.tasks.len(),
        r.strategy.name(),
        cfg.clock.name().to_uppercase(),
        r.policy,
        match cfg.loops {
            Some(n) => format!("{n} releases"),
            None => format!("{:.1} s", duration as f64 / 1e9),
        }
    ));
    let plan = plan_text(&plan_view(r.tasks, &tickscope::Plan::of(r.tasks)));
    crate::console::line(plan.trim_end_matches('\n'));
    crate::console::line("");
}
