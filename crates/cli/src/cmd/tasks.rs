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
use super::task_spec::parse_tasks_to_run;
use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::options::run_plan;
use std::sync::atomic::Ordering;
use tickscope::{Control, Executive, Strategy, Task};
use tickscope_engine::run::{PolicyRequest, AUTO_PRIORITY};
use tickscope_engine::setup::{
    privileges, AffinityGuard, MlockGuard, PmQosGuard, Policy, PolicyGuard, TimerSlackGuard,
};
use tickscope_engine::time::{read_clock, NS_PER_MS, NS_PER_SEC};
use tickscope_engine::wait::MethodKind;
use tickscope_report::executive::{plan_text, tasks_table, TaskRow};

/// Runs the executive over `--tasks` with the other flags of `args`.
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
    let strategy = match cfg.method {
        MethodKind::NanosleepAbs => Strategy::Sleep,
        MethodKind::Busy => Strategy::Busy {
            sleep_every: cfg.method_options.busy_sleep_every,
        },
        MethodKind::Hybrid => Strategy::Hybrid {
            margin: cfg.method_options.margin,
        },
        other => {
            return Err(Failure::Usage(format!(
                "--tasks waits with nanosleep-abs, busy or hybrid (the library's strategies), \
                 not {}",
                other.name()
            )))
        }
    };
    // Thread settings, held until the end of this function.
    let _mlock = cfg.mlock.then(MlockGuard::lock).transpose().or_else(|e| {
        eprintln!(
            "tickscope: warning: memory not locked: {}",
            privileges::explain_mlock_error(&e)
        );
        Ok::<_, Failure>(None)
    })?;
    let _pm_qos = match cfg.pm_qos_us {
        Some(us) => match PmQosGuard::hold(us) {
            Ok(g) => Some(g),
            Err(e) if cfg.pm_qos_required => {
                return Err(Failure::Usage(format!("cannot hold --pm-qos {us}: {e}")))
            }
            Err(_) => None,
        },
        None => None,
    };
    let _affinity = match cfg.cpus.first().copied().flatten() {
        Some(cpu) => Some(
            AffinityGuard::pin(cpu)
                .map_err(|e| Failure::Usage(format!("cannot pin the thread to CPU {cpu}: {e}")))?,
        ),
        None => None,
    };
    let (_policy, policy_note) = apply_policy(cfg.policy)?;
    let _slack = match cfg.timer_slack_ns {
        Some(ns) => Some(
            TimerSlackGuard::set(ns)
                .map_err(|e| Failure::Usage(format!("cannot set the timer slack: {e}")))?,
        ),
        None => None,
    };

    let mut ex = Executive::new(strategy);
    ex.set_clock(cfg.clock)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let clock = cfg.clock.raw();
    for s in &specs {
        let work = s.work_ns.unwrap_or(0);
        ex.add(s.task.clone(), move |r| {
            if work > 0 {
                let until = r.start + work;
                while read_clock(clock) < until {
                    std::hint::spin_loop();
                }
            }
            Control::Continue
        })
        .map_err(|e| Failure::Usage(e.to_string()))?;
    }
    let tasks: Vec<Task> = specs.iter().map(|s| s.planned()).collect();
    let duration = cfg.duration_ns.unwrap_or(10 * NS_PER_SEC);
    if !args.quiet {
        crate::console::line(format!(
            "tickscope {} — {} tasks in one thread, {} strategy, CLOCK_{}, {}, {}",
            env!("CARGO_PKG_VERSION"),
            tasks.len(),
            strategy.name(),
            cfg.clock.name().to_uppercase(),
            policy_note,
            match cfg.loops {
                Some(n) => format!("{n} releases"),
                None => format!("{:.1} s", duration as f64 / 1e9),
            }
        ));
        let plan = plan_text(&plan_view(&tasks, &tickscope::Plan::of(&tasks)));
        crate::console::line(plan.trim_end_matches('\n'));
        crate::console::line("");
    }
    let stop = stoppable();
    let fail = |e: tickscope::Error| Failure::Runtime(e.to_string());
    match cfg.loops {
        Some(n) => {
            ex.run_until(n).map_err(fail)?;
        }
        None => {
            // In slices, so that Ctrl-C ends the run within 100 ms; the grids go on across
            // slices unchanged.
            let end = ex.now() + duration;
            while !stop.load(Ordering::Relaxed) {
                let left = end - ex.now();
                if left <= 0 {
                    break;
                }
                ex.run_for(left.min(100 * NS_PER_MS)).map_err(fail)?;
            }
        }
    }
    let rows: Vec<TaskRow> = ex
        .stats()
        .into_iter()
        .zip(&specs)
        .map(|(s, spec)| TaskRow {
            name: s.name,
            period_ns: s.period_ns,
            work_ns: spec.work_ns,
            releases: s.releases,
            overruns: s.overruns,
            deadline_misses: s.deadline_misses,
            budget_overruns: s.budget_overruns,
            latency: s.latency,
            wakeup_max: s.wakeup_latency_max,
            response: s.response,
            start_period: s.start_period,
        })
        .collect();
    crate::console::line(tasks_table(&rows).trim_end_matches('\n'));
    if stop.load(Ordering::Relaxed) && !crate::console::stdout_closed() {
        eprintln!("tickscope: interrupted; the tables cover the run until then");
    }
    Ok(())
}

/// Applies the requested policy to this thread; `auto` falls back to SCHED_OTHER.
fn apply_policy(req: PolicyRequest) -> Result<(PolicyGuard, String), Failure> {
    let describe = |p: &Policy| match p {
        Policy::Fifo { priority } => format!("SCHED_FIFO {priority}"),
        Policy::Rr { priority } => format!("SCHED_RR {priority}"),
        other => format!("{other:?}"),
    };
    match req {
        PolicyRequest::Exact(p) => PolicyGuard::apply(p)
            .map(|g| (g, describe(&p)))
            .map_err(|e| Failure::Usage(privileges::explain_policy_error(&p, &e))),
        PolicyRequest::Auto => {
            let fifo = Policy::Fifo {
                priority: AUTO_PRIORITY,
            };
            match PolicyGuard::apply(fifo) {
                Ok(g) => Ok((g, describe(&fifo))),
                Err(e) => {
                    eprintln!(
                        "tickscope: auto: using other, because {}",
                        privileges::explain_policy_error(&fifo, &e)
                    );
                    let other = Policy::Other { nice: 0 };
                    PolicyGuard::apply(other)
                        .map(|g| (g, "SCHED_OTHER".to_string()))
                        .map_err(|e| Failure::Usage(privileges::explain_policy_error(&other, &e)))
                }
            }
        }
    }
}
