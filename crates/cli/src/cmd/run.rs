//! `tickscope run`: measure, show each second, summarise, write the result file — or, with
//! several methods or rounds, run each in turn and print one comparison table.
//!
//! A comparison runs the methods in the order of [`tickscope_engine::schedule::schedule`]
//! (each round rotated by one), every run with the same configuration but its method and
//! started the same way by the engine (fresh threads, same setup, first expiry the same
//! distance ahead, no sample discarded). Per-second lines are left out; one line per
//! finished run shows progress. The result file is rewritten after every run, so an
//! interruption or a crash keeps what was measured.

use super::signals::stoppable;
use super::sinks::sinks;
use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::options::run_plan;
use crate::session_args::{load, outcome, placement, say};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tickscope_report::sink::RunSink;
use tickscope_session::{Plan, Session};
use tickscope_system::system;

/// Runs the measurement described by `args`: plan, sinks, then one session
/// ([`tickscope_session::Session::run`]) over every run of the plan.
///
/// # Errors
/// [`Failure::Usage`] for bad flags, an output that cannot be written, or a requested
/// setting that cannot be applied — all before the first wake-up; [`Failure::Runtime`]
/// when a result file cannot be written or a thread fails.
pub fn execute(args: &RunArgs) -> Result<(), Failure> {
    if args.tasks.is_some() || args.tasks_file.is_some() {
        return super::tasks::execute(args);
    }
    let stop = stoppable();
    let (session, sinks) = prepare(args, Vec::new(), false, true, &stop)?;
    outcome(session.run(sinks, &stop))
}

/// The session and sinks of `tickscope run` with `args`: `extra` sinks first (so that their
/// sections are in the document every other sink sees), every run's windows kept when
/// `keep_windows` (or a sink needs them). `cyclictest_lines`: `-q` ends with cyclictest's
/// per-thread lines (`tickscope run`, not a scenario's step). With `--load`, the session
/// starts the load before the first wake-up and stops it after the last.
///
/// # Errors
/// [`Failure::Usage`] for bad flags, a load that cannot run, or an output that cannot be
/// written.
pub fn prepare(
    args: &RunArgs,
    extra: Vec<Box<dyn RunSink>>,
    keep_windows: bool,
    cyclictest_lines: bool,
    stop: &Arc<AtomicBool>,
) -> Result<(Session<'static>, Vec<Box<dyn RunSink>>), Failure> {
    let plan = run_plan(args).map_err(Failure::Usage)?;
    let mock = plan.config.backend.is_mock();
    // A mock run changes nothing on the system: its threads stay where they are.
    let placement = match mock {
        true => None,
        false => Some(
            placement(args.housekeeping_cpus.as_deref(), &plan.config.cpus)
                .map_err(Failure::Usage)?,
        ),
    };
    let load = load(args.load.as_deref(), args.load_cpus.as_deref())?;
    let mut all = extra;
    all.extend(sinks(args, plan.is_comparison(), stop, cyclictest_lines)?);
    for note in &plan.left_out {
        eprintln!("tickscope: {note}");
    }
    let system = match mock {
        true => system::mock(),
        false => system::detect(),
    };
    let plan = Plan {
        config: plan.config,
        methods: plan.methods,
        rounds: plan.rounds,
    };
    let mut session = Session::new(plan, system, &say);
    session.placement = placement;
    session.load = load;
    session.keep_windows = keep_windows;
    session.command_line = Some(std::env::args_os().collect());
    session.redact = args.redact;
    session.word_notes = crate::engine_errors::word_notes;
    Ok((session, all))
}
