//! A measuring run: applies the settings, starts the measuring threads on a common grid,
//! collects their windows while they run and merges the results.
//!
//! Data flow: [`RunConfig`] → guards (process-wide here, per thread in the thread) → workers
//! ([`crate::worker::measure`]) → windows through wait-free rings → this collector →
//! [`RunEvent`]s for a live view and a [`RunOutcome`] at the end. Nothing here formats text.
//!
//! The coordinator, `run_with`, is a sequence of short steps: validate, hold the
//! process-wide settings (`Backend::hold_process`), spawn the threads and wait for their
//! setup (`Workers`), lock memory, report [`RunEvent::Started`], start every thread on a
//! common first expiry, collect windows until every thread ended (`collect`), join and
//! merge (`finish`). Where settings, methods and time come from is the `backend` seam:
//! [`run`] uses the real machine, [`run_on_mock`] virtual time.

mod backend;
mod collector;
mod config;
pub mod defaults;
mod events;
mod mock_backend;
mod thread;
mod workers;

pub use config::{PolicyRequest, RunConfig};
pub use defaults::AUTO_PRIORITY;
pub use events::{Applied, AppliedThread, RunEvent, RunOutcome, SecondReport};
pub use mock_backend::{MockRun, MOCK_SCRIPT_LEN, MOCK_STARTED_AT_UNIX_S, MOCK_START_NS};

use crate::error::Error;
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC};
use crate::wait;
use backend::{Backend, MemoryHold, ProcessHold, SystemBackend};
use collector::Collector;
use mock_backend::MockBackend;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use thread::{SetupReport, WorkerEnd};
use workers::Workers;

/// Runs a measurement. `stop` ends it early (the threads finish their current wait); `observer`
/// sees the applied settings, then one [`SecondReport`] per window.
///
/// # Errors
/// [`ErrorKind::InvalidConfig`](crate::error::ErrorKind::InvalidConfig) for an invalid
/// configuration; [`ErrorKind::Permission`](crate::error::ErrorKind::Permission),
/// [`ErrorKind::Unsupported`](crate::error::ErrorKind::Unsupported) or
/// [`ErrorKind::Refused`](crate::error::ErrorKind::Refused) when an explicitly requested
/// setting (policy, CPU, PM QoS, method) cannot be applied — the message says what is
/// missing; [`ErrorKind::Os`](crate::error::ErrorKind::Os) when a thread cannot be created.
pub fn run(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    observer: &mut dyn FnMut(RunEvent<'_>),
) -> Result<RunOutcome, Error> {
    run_with(cfg, stop, observer, Arc::new(SystemBackend))
}

/// Runs the whole engine — validation, threads, setup handshake, measuring loops, windows,
/// collector, outcome — on virtual time instead of the kernel's clocks: every wake-up comes
/// from `mock`'s latency script (see [`MockRun`]) and nothing on the system is changed (no
/// policy, affinity, timer slack, `mlockall` or PM QoS; settings are reported as asked).
/// For a given `cfg` and `mock` the events and the outcome are the same on every machine
/// and every call — for a front end's debug mode (hyperfine's `--debug-mode` is the model)
/// and for snapshot tests. A run of 10 s at 1 ms takes well under a second.
///
/// # Errors
/// As [`run`], for the configuration (a method's limits are still enforced).
pub fn run_on_mock(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    observer: &mut dyn FnMut(RunEvent<'_>),
    mock: &MockRun,
) -> Result<RunOutcome, Error> {
    run_with(cfg, stop, observer, Arc::new(MockBackend(*mock)))
}

/// The coordinator on any backend (see the module docs).
fn run_with(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    observer: &mut dyn FnMut(RunEvent<'_>),
    backend: Arc<dyn Backend>,
) -> Result<RunOutcome, Error> {
    cfg.validate()?;
    let process = backend.hold_process(cfg)?;
    let mut workers = Workers::spawn(cfg, stop, &backend)?;
    let reports = workers.await_setup()?;
    // Locked now that every measuring thread has allocated what its loop touches.
    let memory = backend.lock_memory(cfg);
    let applied = applied(cfg, &reports, &process, &memory, backend.rt_limits());
    observer(RunEvent::Started(&applied));

    // A common first expiry a little ahead, so every thread is asleep before it.
    let first_expiry = backend.now(cfg.clock) + start_lead(cfg.period_ns);
    let started_at = backend.started_at();
    workers.start(first_expiry);
    let mut collector = Collector::new(cfg, &reports, workers.take_links());
    collect(&workers, &mut collector, stop, observer, &*backend);
    let ends = workers.join();
    drop(memory);
    drop(process);
    Ok(finish(applied, collector, &ends, stop, |wall| {
        (started_at, backend.ended_at(started_at, wall))
    }))
}

/// How far ahead of now the first expiry lies: 10 ms, or one period up to 1 s if longer.
fn start_lead(period: Nanos) -> Nanos {
    (10 * NS_PER_MS).max(period.min(NS_PER_SEC))
}

/// What was set, from the threads' reports and the process-wide holds.
fn applied(
    cfg: &RunConfig,
    reports: &[SetupReport],
    process: &ProcessHold,
    memory: &MemoryHold,
    (rt_runtime_us, rt_period_us): (Option<i64>, Option<i64>),
) -> Applied {
    let first = &reports[0];
    Applied {
        policy: first.policy,
        policy_note: first.policy_note.clone(),
        mlock: memory.locked,
        mlock_note: memory.note.clone(),
        pm_qos_us: process.pm_qos_us,
        pm_qos_note: process.pm_qos_note.clone(),
        timer_slack_ns: first.slack,
        timer_slack_note: (first.policy.is_realtime() && cfg.timer_slack_ns.is_some())
            .then(|| "real-time threads get no timer slack from the kernel".to_string()),
        method: cfg.method,
        interface: first.interface.to_string(),
        granularity_ns: first.granularity,
        method_note: wait::throttle_warning(
            cfg.method,
            &cfg.method_options,
            &first.policy,
            cfg.period_ns,
            rt_runtime_us,
            rt_period_us,
        ),
        clock: cfg.clock,
        threads: reports
            .iter()
            .enumerate()
            .map(|(thread, r)| AppliedThread {
                thread,
                tid: r.tid,
                cpu: cfg.cpus[thread],
            })
            .collect(),
    }
}

/// Hands finished windows to `observer` until every thread has ended; after a stop, keeps
/// interrupting the threads' waits.
fn collect(
    workers: &Workers,
    collector: &mut Collector,
    stop: &AtomicBool,
    observer: &mut dyn FnMut(RunEvent<'_>),
    backend: &dyn Backend,
) {
    collector.start_cpu_clocks();
    loop {
        let all_done = workers.all_finished();
        collector.drain(observer, all_done);
        if all_done {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            // Repeated every round: a kick that lands between the thread's check of the
            // stop flag and its next wait is lost, the next one is not.
            workers.kick_running(backend);
        }
        std::thread::sleep(backend.poll_interval());
    }
}

/// The outcome: per-thread and merged statistics, the first thread error, whether the run
/// was stopped. `times` gives (start, end) wall-clock times from the longest thread's
/// measuring time, ns.
fn finish(
    applied: Applied,
    collector: Collector,
    ends: &[WorkerEnd],
    stop: &AtomicBool,
    times: impl FnOnce(Nanos) -> (std::time::SystemTime, std::time::SystemTime),
) -> RunOutcome {
    let interrupted = stop.load(Ordering::Relaxed);
    let error = ends.iter().find_map(|e| e.error.clone());
    let (threads, summary) = collector.finish(&applied, ends);
    let (started_at, ended_at) = times(summary.wall_time_ns);
    RunOutcome {
        applied,
        threads,
        summary,
        started_at,
        ended_at,
        interrupted,
        error,
    }
}

#[cfg(test)]
mod tests;
