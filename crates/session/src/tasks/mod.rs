//! `run --tasks`: the periodic library's executive with synthetic work, in one thread, for
//! a run's length — per-task release latency, response time and misses, before a user
//! writes any code. Shows, for example, how a 10 ms task's work delays the 1 ms task at
//! every instant the two are due together.
//!
//! The run's settings apply where they make sense for one thread: the method (the library's
//! sleep, busy and hybrid strategies, [`strategy`]), policy, one CPU, memory lock, timer
//! slack, PM QoS, clock, duration and loops (total releases). The synthetic work spins on
//! the clock for `work=` after each release starts ([`spec`]).

pub mod file;
pub mod outputs;
mod recorder;
pub mod spec;

pub use outputs::Outputs;
use recorder::TaskRecorder;
use spec::TaskSpec;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;
use tickscope::{Control, Executive, Strategy, Task, TaskStats};
use tickscope_engine::run::{PolicyRequest, RunConfig, AUTO_PRIORITY};
use tickscope_engine::setup::{
    privileges, AffinityGuard, MlockGuard, PmQosGuard, Policy, PolicyGuard, TimerSlackGuard,
};
use tickscope_engine::time::{read_clock, Nanos, NS_PER_MS, NS_PER_SEC};
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

/// The settings a task set runs with: `cfg` with its nominal period set to the shortest
/// task's (the interval settings do not apply to a task set) and, when neither a duration
/// nor a count of loops is given, a duration of 10 s.
pub fn run_config(specs: &[TaskSpec], cfg: &RunConfig) -> RunConfig {
    RunConfig {
        period_ns: specs
            .iter()
            .map(|s| s.task.period_ns())
            .min()
            .unwrap_or(cfg.period_ns),
        duration_ns: match cfg.loops {
            Some(_) => cfg.duration_ns,
            None => cfg.duration_ns.or(Some(10 * NS_PER_SEC)),
        },
        ..cfg.clone()
    }
}

/// What a task-set run leaves: the terminal table's rows, and what the output sinks said.
#[derive(Debug)]
pub struct Finished {
    /// One row per task, in the order given.
    pub rows: Vec<TaskRow>,
    /// The lines the files added ("result written to …"), to print after the table.
    pub notes: Vec<String>,
    /// Outputs that could not be written, one sentence each.
    pub failures: Vec<String>,
}

/// The longest slice of the run between two looks at `stop`, ns.
const SLICE_NS: Nanos = 100 * NS_PER_MS;

/// Runs `tasks` with `strategy` in the calling thread with `cfg`'s settings (held until
/// the end), for `cfg`'s loops (total releases) or duration (until stopped without either:
/// `monitor --tasks`), or until `stop` is set (checked every 100 ms). `ready` is called once the thread is set up.
/// Every task is recorded as a measuring thread of a single-rate run (task `i` is thread
/// `i`, the `recorder` module), so `outputs`' sinks write what they write for one: per-second
/// windows (closed every `cfg.window_ns` of a run given by its duration; one window for a
/// run given by its loops), raw releases, and the result document with its `tasks`
/// section (`outputs::document`).
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
    outputs: &mut Outputs<'_>,
) -> Result<Finished, TasksError> {
    let mut notes = Vec::new();
    let settings = Settings::apply(cfg, &mut notes)?;
    let (_policy, policy, applied_policy) = apply_policy(cfg.policy, &mut notes)?;
    let _slack = timer_slack(cfg)?;
    let needs = outputs.needs();
    let recorders: Rc<RefCell<Vec<TaskRecorder>>> = Rc::new(RefCell::new(
        tasks
            .iter()
            .map(|s| {
                let per_slice = SLICE_NS / s.task.period_ns().max(1) + 64;
                let raw = needs
                    .any_samples()
                    .then(|| usize::try_from(per_slice.min(1 << 20)).unwrap_or(1 << 20));
                TaskRecorder::new(s.task.period_ns(), raw)
            })
            .collect(),
    ));
    let mut ex = executive(tasks, strategy, cfg, &recorders)?;
    let planned: Vec<Task> = tasks.iter().map(|s| s.planned()).collect();
    ready(&Ready {
        strategy,
        policy: &policy,
        tasks: &planned,
        notes: &notes,
    });
    let applied = outputs::Settings {
        policy: applied_policy,
        policy_note: notes.iter().find(|n| n.starts_with("auto:")).cloned(),
        mlock: (
            settings.locked(),
            notes.iter().find(|n| n.contains("memory")).cloned(),
        ),
        strategy,
        cfg,
        tid: tickscope_engine::setup::gettid(),
        tasks: tasks.len(),
    }
    .applied();
    let methods = [cfg.method];
    let ctx = outputs::context(outputs.system, cfg, &methods);
    let names: Vec<String> = ex.stats().into_iter().map(|s| s.name).collect();
    for s in outputs.sinks.iter_mut() {
        s.task_names(&names);
        s.started(&ctx, &applied);
    }
    let started_at = SystemTime::now();
    let cpu0 = read_clock(libc::CLOCK_THREAD_CPUTIME_ID);
    let begin = ex.now();
    let fail = |e: tickscope::Error| TasksError::Wait(e.to_string());
    let mut window = 0u64;
    let flush = |outputs: &mut Outputs<'_>| {
        for (i, r) in recorders.borrow_mut().iter_mut().enumerate() {
            r.drain_raw(&mut |s| {
                for sink in outputs.sinks.iter_mut() {
                    sink.samples(i, s);
                }
            });
        }
    };
    match cfg.loops {
        Some(n) => {
            ex.run_until(n).map_err(fail)?;
            flush(outputs);
        }
        None => {
            // In slices ending at each window's end, at most 100 ms long, so that a stop
            // ends the run within 100 ms; the grids go on across slices unchanged.
            let end = cfg
                .duration_ns
                .map_or(Nanos::MAX, |d| begin.saturating_add(d));
            while !stop.load(Ordering::Relaxed) {
                let now = ex.now();
                if now >= end {
                    break;
                }
                let boundary = begin + (window as Nanos + 1) * cfg.window_ns;
                ex.run_for((end.min(boundary) - now).clamp(0, SLICE_NS))
                    .map_err(fail)?;
                flush(outputs);
                if ex.now() >= boundary {
                    let mut r = recorders.borrow_mut();
                    outputs::close_window(&mut r, window, begin, cfg, needs, outputs, &ctx);
                    window += 1;
                }
            }
        }
    }
    if recorders.borrow().iter().any(|r| r.pending() > 0) {
        let mut r = recorders.borrow_mut();
        outputs::close_window(&mut r, window, begin, cfg, needs, outputs, &ctx);
    }
    let (cpu_ns, wall_ns) = (
        read_clock(libc::CLOCK_THREAD_CPUTIME_ID) - cpu0,
        ex.now() - begin,
    );
    let stats = ex.stats();
    let rows = rows(&stats, tasks);
    let doc = outputs::document(
        outputs::Ran {
            started_at,
            ended_at: SystemTime::now(),
            interrupted: stop.load(Ordering::Relaxed),
            applied,
            strategy,
            specs: tasks,
            stats: &stats,
            cpu_ns,
            wall_ns,
        },
        &mut recorders.borrow_mut(),
        cfg,
        outputs,
    );
    drop(ex);
    let doc = crate::deliver::annotated(&mut outputs.sinks, doc);
    let (mut notes, mut failures) = (Vec::new(), Vec::new());
    for s in outputs.sinks.iter_mut() {
        if let Err(e) = s.run_finished(&ctx, &doc) {
            failures.push(e.to_string());
        }
    }
    for s in outputs.sinks.iter_mut() {
        if let Err(e) = s.finish(&doc, &mut notes) {
            failures.push(e.to_string());
        }
    }
    Ok(Finished {
        rows,
        notes,
        failures,
    })
}

/// The executive over `tasks`, each spinning on the clock for its `work=` after its
/// release starts, each finished release recorded in its task's recorder, execution times
/// measured.
fn executive(
    tasks: &[TaskSpec],
    strategy: Strategy,
    cfg: &RunConfig,
    recorders: &Rc<RefCell<Vec<TaskRecorder>>>,
) -> Result<Executive<'static>, TasksError> {
    let refused = |e: tickscope::Error| TasksError::Setting(e.to_string());
    let mut ex = Executive::new(strategy);
    ex.set_clock(cfg.clock).map_err(refused)?;
    // Each task's CPU time and execution-time histogram (two reads of the thread CPU clock
    // per release).
    ex.measure_execution_time(true).map_err(refused)?;
    let recorders = Rc::clone(recorders);
    ex.on_complete(move |c| {
        if let Some(rec) = recorders.borrow_mut().get_mut(c.release.task.0) {
            rec.record(c);
        }
    })
    .map_err(refused)?;
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
fn rows(stats: &[TaskStats], tasks: &[TaskSpec]) -> Vec<TaskRow> {
    stats
        .iter()
        .cloned()
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
    /// Whether memory is locked.
    fn locked(&self) -> bool {
        self._mlock.is_some()
    }

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
/// note). Returns the guard, the policy as the header shows it, and the policy.
fn apply_policy(
    req: PolicyRequest,
    notes: &mut Vec<String>,
) -> Result<(PolicyGuard, String, Policy), TasksError> {
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
            .map(|g| (g, describe(&p), p))
            .map_err(|e| refused(&p, &e)),
        PolicyRequest::Auto => {
            let fifo = Policy::Fifo {
                priority: AUTO_PRIORITY,
            };
            match PolicyGuard::apply(fifo) {
                Ok(g) => Ok((g, describe(&fifo), fifo)),
                Err(e) => {
                    notes.push(format!(
                        "auto: using other, because {}",
                        privileges::explain_policy_error(&fifo, &e)
                    ));
                    let other = Policy::Other { nice: 0 };
                    PolicyGuard::apply(other)
                        .map(|g| (g, "SCHED_OTHER".to_string(), other))
                        .map_err(|e| refused(&other, &e))
                }
            }
        }
    }
}
