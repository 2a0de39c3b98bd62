//! `run --tasks`: the periodic library's executive with synthetic work, in one thread, for
//! a run's length — per-task release latency, response time and misses, before a user
//! writes any code. Shows, for example, how a 10 ms task's work delays the 1 ms task at
//! every instant the two are due together.
//!
//! The run's settings apply where they make sense for one thread: the method (the library's
//! sleep, busy and hybrid strategies, [`strategy`]), policy, one CPU, memory lock, timer
//! slack, PM QoS, clock, duration and loops (total releases). The synthetic work spins on
//! the clock for `work=` after each release starts ([`spec`]).

pub mod spec;

use spec::TaskSpec;
use std::sync::atomic::{AtomicBool, Ordering};
use tickscope::{Control, Executive, Strategy, Task};
use tickscope_engine::run::{PolicyRequest, RunConfig, AUTO_PRIORITY};
use tickscope_engine::setup::{
    privileges, AffinityGuard, MlockGuard, PmQosGuard, Policy, PolicyGuard, TimerSlackGuard,
};
use tickscope_engine::time::{read_clock, NS_PER_MS, NS_PER_SEC};
use tickscope_engine::wait::MethodKind;
use tickscope_report::executive::TaskRow;

/// Why the tasks did not run to their end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TasksError {
    /// A setting cannot be applied or a task cannot be added (before the first release).
    Setting(String),
    /// A wait failed while the tasks ran.
    Wait(String),
}

/// The thread is set up and the tasks are about to start: what runs, for the header.
#[derive(Debug)]
pub struct Ready<'a> {
    /// The executive's strategy.
    pub strategy: Strategy,
    /// The policy the thread runs at (`SCHED_FIFO 98`, `SCHED_OTHER`).
    pub policy: &'a str,
    /// The tasks as planned.
    pub tasks: &'a [Task],
    /// What could not be set as asked (memory not locked, `auto` fell back to other), one
    /// sentence each, in the order found.
    pub notes: &'a [String],
}

/// The executive's strategy for `cfg`'s method: nanosleep-abs sleeps, busy spins (sleeping
/// every `busy_sleep_every`), hybrid sleeps until its margin and spins the rest. `None` for
/// the other methods.
pub fn strategy(cfg: &RunConfig) -> Option<Strategy> {
    match cfg.method {
        MethodKind::NanosleepAbs => Some(Strategy::Sleep),
        MethodKind::Busy => Some(Strategy::Busy {
            sleep_every: cfg.method_options.busy_sleep_every,
        }),
        MethodKind::Hybrid => Some(Strategy::Hybrid {
            margin: cfg.method_options.margin,
        }),
        _ => None,
    }
}

/// Runs `tasks` with `strategy` in the calling thread with `cfg`'s settings (held until
/// the end), for `cfg`'s loops (total releases) or duration (10 s without either), or
/// until `stop` is set (checked every 100 ms). `ready` is called once the thread is set up.
/// Returns one row per task, in the order given.
///
/// # Errors
/// [`TasksError::Setting`] when the PM QoS asked for explicitly, the CPU, the policy, the
/// timer slack or the clock cannot be applied, or a task is refused; [`TasksError::Wait`]
/// when a wait fails.
pub fn run(
    tasks: &[TaskSpec],
    strategy: Strategy,
    cfg: &RunConfig,
    stop: &AtomicBool,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<Vec<TaskRow>, TasksError> {
    let mut notes = Vec::new();
    let _settings = Settings::apply(cfg, &mut notes)?;
    let (_policy, policy) = apply_policy(cfg.policy, &mut notes)?;
    let _slack = timer_slack(cfg)?;
    let mut ex = executive(tasks, strategy, cfg)?;
    let planned: Vec<Task> = tasks.iter().map(|s| s.planned()).collect();
    ready(&Ready {
        strategy,
        policy: &policy,
        tasks: &planned,
        notes: &notes,
    });
    let fail = |e: tickscope::Error| TasksError::Wait(e.to_string());
    match cfg.loops {
        Some(n) => {
            ex.run_until(n).map_err(fail)?;
        }
        None => {
            // In slices, so that a stop ends the run within 100 ms; the grids go on across
            // slices unchanged.
            let end = ex.now() + cfg.duration_ns.unwrap_or(10 * NS_PER_SEC);
            while !stop.load(Ordering::Relaxed) {
                let left = end - ex.now();
                if left <= 0 {
                    break;
                }
                ex.run_for(left.min(100 * NS_PER_MS)).map_err(fail)?;
            }
        }
    }
    Ok(rows(&ex, tasks))
}

/// The executive over `tasks`, each spinning on the clock for its `work=` after its
/// release starts.
fn executive(
    tasks: &[TaskSpec],
    strategy: Strategy,
    cfg: &RunConfig,
) -> Result<Executive<'static>, TasksError> {
    let refused = |e: tickscope::Error| TasksError::Setting(e.to_string());
    let mut ex = Executive::new(strategy);
    ex.set_clock(cfg.clock).map_err(refused)?;
    let clock = cfg.clock.raw();
    for s in tasks {
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
        .map_err(refused)?;
    }
    Ok(ex)
}

/// One row per task: the executive's statistics beside the task's work.
fn rows(ex: &Executive<'_>, tasks: &[TaskSpec]) -> Vec<TaskRow> {
    ex.stats()
        .into_iter()
        .zip(tasks)
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
        .collect()
}

/// The thread's memory lock, PM QoS and CPU, restored when dropped (fields drop in
/// declaration order: the reverse of setting).
struct Settings {
    _affinity: Option<AffinityGuard>,
    _pm_qos: Option<PmQosGuard>,
    _mlock: Option<MlockGuard>,
}

impl Settings {
    /// Applies `cfg`'s memory lock (a failure is a note), PM QoS (a failure is an error only
    /// when asked for explicitly) and CPU, in that order.
    fn apply(cfg: &RunConfig, notes: &mut Vec<String>) -> Result<Settings, TasksError> {
        let mlock = match cfg.mlock.then(MlockGuard::lock).transpose() {
            Ok(g) => g,
            Err(e) => {
                notes.push(format!(
                    "warning: memory not locked: {}",
                    privileges::explain_mlock_error(&e)
                ));
                None
            }
        };
        let pm_qos = match cfg.pm_qos_us {
            Some(us) => match PmQosGuard::hold(us) {
                Ok(g) => Some(g),
                Err(e) if cfg.pm_qos_required => {
                    return Err(TasksError::Setting(format!(
                        "cannot hold --pm-qos {us}: {e}"
                    )))
                }
                Err(_) => None,
            },
            None => None,
        };
        let affinity = match cfg.cpus.first().copied().flatten() {
            Some(cpu) => Some(AffinityGuard::pin(cpu).map_err(|e| {
                TasksError::Setting(format!("cannot pin the thread to CPU {cpu}: {e}"))
            })?),
            None => None,
        };
        // Dropped in the reverse order of setting.
        Ok(Settings {
            _affinity: affinity,
            _pm_qos: pm_qos,
            _mlock: mlock,
        })
    }
}

/// `cfg`'s timer slack for this thread, restored when dropped.
fn timer_slack(cfg: &RunConfig) -> Result<Option<TimerSlackGuard>, TasksError> {
    cfg.timer_slack_ns
        .map(TimerSlackGuard::set)
        .transpose()
        .map_err(|e| TasksError::Setting(format!("cannot set the timer slack: {e}")))
}

/// Applies the requested policy to this thread; `auto` falls back to SCHED_OTHER (with a
/// note). Returns the guard and the policy as the header shows it.
fn apply_policy(
    req: PolicyRequest,
    notes: &mut Vec<String>,
) -> Result<(PolicyGuard, String), TasksError> {
    let describe = |p: &Policy| match p {
        Policy::Fifo { priority } => format!("SCHED_FIFO {priority}"),
        Policy::Rr { priority } => format!("SCHED_RR {priority}"),
        other => format!("{other:?}"),
    };
    let refused = |p: &Policy, e: &std::io::Error| {
        TasksError::Setting(privileges::explain_policy_error(p, e))
    };
    match req {
        PolicyRequest::Exact(p) => PolicyGuard::apply(p)
            .map(|g| (g, describe(&p)))
            .map_err(|e| refused(&p, &e)),
        PolicyRequest::Auto => {
            let fifo = Policy::Fifo {
                priority: AUTO_PRIORITY,
            };
            match PolicyGuard::apply(fifo) {
                Ok(g) => Ok((g, describe(&fifo))),
                Err(e) => {
                    notes.push(format!(
                        "auto: using other, because {}",
                        privileges::explain_policy_error(&fifo, &e)
                    ));
                    let other = Policy::Other { nice: 0 };
                    PolicyGuard::apply(other)
                        .map(|g| (g, "SCHED_OTHER".to_string()))
                        .map_err(|e| refused(&other, &e))
                }
            }
        }
    }
}
