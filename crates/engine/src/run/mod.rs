//! A measuring run: applies the settings, starts the measuring threads on a common grid,
//! collects their windows while they run and merges the results.
//!
//! Data flow: [`RunConfig`] → guards (process-wide here, per thread in the thread) → workers
//! ([`crate::worker::measure`]) → windows through wait-free rings → this collector →
//! [`RunEvent`]s for a live view and a [`RunOutcome`] at the end. Nothing here formats text.

mod collector;
mod config;
mod events;
mod thread;

pub use config::{PolicyRequest, RunConfig, AUTO_PRIORITY};
pub use events::{Applied, AppliedThread, RunEvent, RunOutcome, SecondReport};

use crate::error::Error;
use crate::sample::SAMPLE_RING;
use crate::setup::{self, privileges, MlockGuard, PmQosGuard};
use crate::time::{Clock, SystemClock, NS_PER_MS, NS_PER_SEC};
use crate::wait;
use crate::worker::window_link;
use collector::Collector;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use thread::{worker_thread, SetupReport, Start, WorkerEnd, WorkerPorts};

/// Runs a measurement. `stop` ends it early (the threads finish their current wait); `observer`
/// sees the applied settings, then one [`SecondReport`] per window.
///
/// # Errors
/// [`Error::Config`] for an invalid configuration; [`Error::Setup`] when an explicitly
/// requested setting (policy, CPU, PM QoS) cannot be applied — the message says what is
/// missing; [`Error::Os`] when a thread cannot be created.
pub fn run(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    observer: &mut dyn FnMut(RunEvent<'_>),
) -> Result<RunOutcome, Error> {
    cfg.validate()?;
    let (pm_qos_guard, pm_qos_note) = match cfg.pm_qos_us {
        Some(us) => match PmQosGuard::hold(us) {
            Ok(g) => (Some(g), None),
            Err(e) if cfg.pm_qos_required => {
                return Err(Error::Setup(privileges::explain_pm_qos_error(&e)))
            }
            Err(e) => (None, Some(privileges::explain_pm_qos_error(&e))),
        },
        None => (None, None),
    };

    // Lets a stop interrupt a long wait instead of waiting up to a whole period.
    let wake_guard = setup::WakeSignalGuard::install().map_err(|e| Error::Os {
        context: "cannot install the wake-up signal handler".into(),
        source: e,
    })?;
    // Process-wide set-up the method declares (itimer: SIGALRM blocked in this thread).
    let _process_guard = cfg.method.descriptor().set_up_process_guard()?;
    let mut workers = Vec::new();
    let mut setup_rx = Vec::new();
    let mut collectors = Vec::new();
    for (index, &cpu) in cfg.cpus.iter().enumerate() {
        let (link, collector, first_record) = window_link();
        let (sample_tx, sample_rx) = if cfg.stream_samples {
            let (tx, rx) = rtrb::RingBuffer::new(SAMPLE_RING);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let (setup_tx, srx) = mpsc::channel::<Result<SetupReport, String>>();
        let (go_tx, go_rx) = mpsc::channel::<Start>();
        let cfg = cfg.clone();
        let stop = Arc::clone(stop);
        let handle = std::thread::Builder::new()
            .name(format!("tickscope-{index}"))
            .stack_size(4 * setup::PREFAULT_BYTES)
            .spawn(move || {
                let ports = WorkerPorts {
                    link,
                    first_record,
                    samples: sample_tx,
                    setup_tx,
                    go_rx,
                };
                worker_thread(&cfg, cpu, &stop, ports)
            })
            .map_err(|e| Error::Os {
                context: format!("cannot start measuring thread {index}"),
                source: e,
            })?;
        workers.push((handle, go_tx));
        setup_rx.push(srx);
        collectors.push((collector, sample_rx));
    }

    let mut reports = Vec::new();
    let mut failure = None;
    for rx in &setup_rx {
        match rx.recv() {
            Ok(Ok(r)) => reports.push(r),
            Ok(Err(msg)) => failure = failure.or(Some(msg)),
            Err(_) => failure = failure.or(Some("a measuring thread died during setup".into())),
        }
    }
    if let Some(msg) = failure {
        for (handle, go) in workers {
            let _ = go.send(Start::Abort);
            let _ = handle.join();
        }
        return Err(Error::Setup(msg));
    }

    // Locked now that every measuring thread has allocated what its loop touches: see
    // MlockGuard for why MCL_FUTURE is used only where no RLIMIT_MEMLOCK applies.
    let (mlock_guard, mlock_note) = if cfg.mlock {
        match MlockGuard::lock() {
            Ok(g) if g.locks_future() => (Some(g), None),
            Ok(g) => {
                let limit = privileges::memlock_limit().unwrap_or(0) / 1024;
                let note = format!(
                    "current mappings only (RLIMIT_MEMLOCK is {limit} KiB, so later ones are \
                     not locked; the measuring loop allocates nothing)"
                );
                (Some(g), Some(note))
            }
            Err(e) => (None, Some(privileges::explain_mlock_error(&e))),
        }
    } else {
        (None, None)
    };
    let first = &reports[0];
    let applied = Applied {
        policy: first.policy,
        policy_note: first.policy_note.clone(),
        mlock: mlock_guard.is_some(),
        mlock_note,
        pm_qos_us: pm_qos_guard.as_ref().map(PmQosGuard::limit_us),
        pm_qos_note,
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
            privileges::rt_runtime_us(),
            privileges::rt_period_us(),
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
    };
    observer(RunEvent::Started(&applied));

    // A common first expiry a little ahead, so every thread is asleep before it.
    let clock = SystemClock(cfg.clock);
    let first_expiry = clock.now() + (10 * NS_PER_MS).max(cfg.period_ns.min(NS_PER_SEC));
    let started_at = SystemTime::now();
    for (_, go) in &workers {
        let _ = go.send(Start::Go { first_expiry });
    }

    let mut collector = Collector::new(cfg, &reports, collectors);
    collector.start_cpu_clocks();
    loop {
        let all_done = workers.iter().all(|(h, _)| h.is_finished());
        collector.drain(observer, all_done);
        if all_done {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            // Repeated every round: a kick that lands between the thread's check of the
            // stop flag and its next wait is lost, the next one is not.
            for (h, _) in workers.iter().filter(|(h, _)| !h.is_finished()) {
                setup::kick(h.as_pthread_t());
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended_at = SystemTime::now();
    let ends: Vec<WorkerEnd> = workers
        .into_iter()
        .map(|(h, _)| {
            h.join().unwrap_or(WorkerEnd {
                cpu_time: 0,
                wall: 0,
                error: Some("a measuring thread panicked".into()),
                report: None,
            })
        })
        .collect();
    drop(pm_qos_guard);
    drop(mlock_guard);
    drop(wake_guard);
    let interrupted = stop.load(Ordering::Relaxed);
    let error = ends.iter().find_map(|e| e.error.clone());
    let (threads, summary) = collector.finish(&applied, &ends);
    Ok(RunOutcome {
        applied,
        threads,
        summary,
        started_at,
        ended_at,
        interrupted,
        error,
    })
}
