//! `tickscope monitor --attach PID`: always-on metrics of a program that is already running —
//! the wake-ups of its periodic threads, read from kernel trace events as `tickscope attach`
//! reads them ([`super::attach::observe`]), exported under monitor's metric names
//! ([`PrometheusSink::for_target`]: each thread also labelled with its `tid` and `comm`) on
//! `--listen` and/or `--textfile`, with `--explain`'s cause counters.
//!
//! The threads are found during `--discover`; threads found periodic later join (their
//! series appear then), at most [`tickscope_explain::roster::MAX_MEASURED`] in all. When the
//! target exits, the monitor ends cleanly: the last windows and the last textfile are
//! written and the exit status is 0 (a supervisor restarts it with the program; docs/monitor.md).

use super::attach::{check, keep_off, observe, Extra, Watch};
use super::monitor::{destinations, refuse_run_only_flags, textfile_every, Endpoints};
use super::signals::stoppable;
use super::sinks::sinks;
use crate::cli::{MonitorArgs, RunArgs};
use crate::exit::Failure;
use clap::{Args, FromArgMatches};
use tickscope_report::sink::prometheus::PrometheusSink;
use tickscope_report::sink::RunSink;
use tickscope_session::Companion;

/// The flags of `run` that set up tickscope's own measuring threads, each with its value in
/// `r` (as text, to compare with the defaults).
fn measurement_flags(r: &RunArgs) -> Vec<(&'static str, String)> {
    vec![
        ("-i/--interval", format!("{:?}", r.interval)),
        ("-l/--loops", format!("{:?}", r.loops)),
        ("--method", format!("{:?}", r.method)),
        ("--busy-sleep-every", format!("{:?}", r.busy_sleep_every)),
        ("--margin", format!("{:?}", r.margin)),
        ("-y/--policy", format!("{:?}", r.policy)),
        ("-p/--priority", format!("{:?}", r.priority)),
        ("--nice", format!("{:?}", r.nice)),
        ("--deadline-runtime", format!("{:?}", r.deadline_runtime)),
        ("-t/--threads", format!("{:?}", r.threads)),
        ("-a/--affinity", format!("{:?}", r.affinity)),
        ("-S/--smp", format!("{:?}", r.smp)),
        ("-d/--distance", format!("{:?}", r.distance)),
        ("-n/--nanosleep", format!("{:?}", r.nanosleep)),
        ("-m/--mlock", format!("{:?}", r.mlock)),
        ("--no-mlock", format!("{:?}", r.no_mlock)),
        ("--timer-slack", format!("{:?}", r.timer_slack)),
        (
            "--allow-rt-spin-all-cpus",
            format!("{:?}", r.allow_rt_spin_all_cpus),
        ),
        ("--pm-qos", format!("{:?}", r.pm_qos)),
        ("--no-pm-qos", format!("{:?}", r.no_pm_qos)),
        ("--clock", format!("{:?}", r.clock)),
        ("--overrun", format!("{:?}", r.overrun)),
        ("--housekeeping-cpus", format!("{:?}", r.housekeeping_cpus)),
        ("--debug-mock", format!("{:?}", r.debug_mock)),
    ]
}

/// Refuses the flags that set up tickscope's own measuring threads: with `--attach` the
/// target's threads are measured as they are, and tickscope's threads go to the CPUs the
/// target may not use.
///
/// # Errors
/// [`Failure::Usage`] naming the first such flag given.
fn refuse_measurement_flags(r: &RunArgs) -> Result<(), Failure> {
    let cmd = RunArgs::augment_args(clap::Command::new("monitor"));
    let defaults = cmd
        .try_get_matches_from(["monitor"])
        .and_then(|m| RunArgs::from_arg_matches(&m))
        .map_err(|e| Failure::Runtime(format!("internal: default options: {e}")))?;
    let given = measurement_flags(r)
        .into_iter()
        .zip(measurement_flags(&defaults))
        .find(|(a, d)| a.1 != d.1);
    match given {
        Some(((flag, _), _)) => Err(Failure::Usage(format!(
            "monitor --attach measures the target's threads as they run: {flag} sets up \
             tickscope's own threads and does not apply (tickscope's threads go to the CPUs \
             the target may not use)"
        ))),
        None => Ok(()),
    }
}

/// Runs `tickscope monitor --attach PID` (see the module text).
///
/// # Errors
/// As [`super::monitor::execute`] and [`super::attach::execute`]: bad flags, a process that
/// does not exist, missing privileges (named with the fix), no periodic thread found.
pub fn execute(args: &MonitorArgs, pid: i32) -> Result<(), Failure> {
    refuse_run_only_flags(args)?;
    refuse_measurement_flags(&args.run)?;
    let every = textfile_every(args)?;
    let watch = Watch {
        pid,
        tid: args.tid.clone(),
        duration: args.run.duration.clone(),
        discover: args.discover.clone(),
        list: false,
        quiet: args.run.quiet,
    };
    let c = check(&watch)?;
    let to = destinations(args)?;
    let hk_cpus = keep_off(&c.present);
    let stop = stoppable();
    let sinks = sinks(&args.run, false, &stop, false)?;
    let extra: Extra<'_> = Box::new(move |config, system, target| {
        let (prom, expo) = PrometheusSink::for_target(system, config, target);
        let endpoints = Endpoints::start(to, expo, every, hk_cpus)?;
        let sinks: Vec<Box<dyn RunSink>> = vec![Box::new(prom)];
        let companions: Vec<Box<dyn Companion>> = vec![Box::new(endpoints)];
        Ok((sinks, companions))
    });
    observe(&watch, &c, (sinks, args.run.redact), &stop, Some(extra))
}
