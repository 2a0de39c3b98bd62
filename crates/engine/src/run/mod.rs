//! A measuring run: applies the settings, starts the measuring threads on a common grid,
//! collects their windows while they run and merges the results.
//!
//! Data flow: [`RunConfig`] → guards (process-wide here, per thread in the thread) → workers
//! ([`crate::worker::measure`]) → windows through wait-free rings → this collector →
//! [`RunEvent`]s for a live view and a [`RunOutcome`] at the end. Nothing here formats text.

mod backend;
mod collector;
mod config;
pub mod defaults;
mod events;
mod observed;
mod thread;

pub use backend::Backend;
pub(crate) use backend::{MOCK_FIRST_EXPIRY, MOCK_TID_BASE};
pub use config::{loops_span_ns, PolicyRequest, RunConfig, MAX_PERIOD_NS, MAX_RUN_NS};
pub use defaults::AUTO_PRIORITY;
pub use events::{Applied, AppliedThread, RunEvent, RunOutcome, SecondWindows};
pub use observed::Observed;

use crate::error::{Error, Facility};
use crate::sample::SAMPLE_RING;
use crate::setup::{self, privileges, MlockGuard, PmQosGuard};
use crate::time::{Clock, Nanos, SystemClock, NS_PER_MS, NS_PER_SEC};
use crate::wait;
use crate::worker::{resident_magnitude, window_link, WINDOW_RECORDS};
use collector::{Collector, CollectorEnds};
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};
use thread::{worker_thread, Start, ThreadSetup, WorkerEnd, WorkerPorts};

/// Runs a measurement. `stop` ends it early (the threads finish their current wait); `observer`
/// sees the applied settings, then one [`SecondWindows`] per window.
///
/// The steps, each a function below: the process-wide guards, the measuring threads and
/// their setup handshake, the settings as applied, the collection loop, the teardown. With
/// [`Backend::Mock`] in `cfg` the same steps run on virtual time (see [`Backend`]).
///
/// # Errors
/// [`ErrorKind::InvalidConfig`](crate::error::ErrorKind) for an invalid configuration,
/// [`ErrorKind::Permission`](crate::error::ErrorKind), `Unsupported` or `Setup` (with the
/// [`Facility`]) when an explicitly requested setting
/// (policy, CPU, PM QoS) cannot be applied — the message says what is missing,
/// [`ErrorKind::Os`](crate::error::ErrorKind) when a thread cannot be created.
pub fn run(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    observer: &mut dyn FnMut(RunEvent<'_>),
) -> Result<RunOutcome, Error> {
    cfg.validate()?;
    let guards = ProcessGuards::hold(cfg)?;
    let (workers, collectors) = spawn_workers(cfg, stop)?;
    let reports = await_setup(&workers)?;
    let (mlock_guard, mlock_note) = lock_memory(cfg);
    let applied = applied(cfg, &reports, &guards, mlock_guard.is_some(), mlock_note);
    observer(RunEvent::Started(&applied));

    let (first_expiry, started_at) = start_time(cfg);
    for w in &workers {
        let _ = w.go.send(Start::Go { first_expiry });
    }
    observer(RunEvent::Going { first_expiry });
    let mut collector = Collector::new(cfg, &reports, collectors, first_expiry);
    collector.start_cpu_clocks();
    // Mock threads never block, and no wake-up signal handler is installed for them.
    let kick = !cfg.backend.is_mock();
    collect(&workers, &mut collector, stop, kick, observer);
    let ended_at = end_time(cfg, started_at);
    let ends = join(workers);
    drop(mlock_guard);
    drop(guards);
    let (threads, summary) = collector.finish(&applied, &ends);
    Ok(RunOutcome {
        applied,
        threads,
        summary,
        started_at,
        ended_at,
        interrupted: stop.load(Ordering::Relaxed),
        error: ends.iter().find_map(|e| e.error.clone()),
    })
}

/// What the whole process holds for the run: the PM QoS request, the wake-up signal that
/// lets a stop interrupt a long wait, and what the method needs (itimer's SIGALRM block).
/// Nothing on a mock run.
struct ProcessGuards {
    pm_qos: Option<PmQosGuard>,
    pm_qos_note: Option<String>,
    _wake: Option<setup::WakeSignalGuard>,
    _method: Option<wait::ProcessGuard>,
}

impl ProcessGuards {
    fn hold(cfg: &RunConfig) -> Result<Self, Error> {
        if cfg.backend.is_mock() {
            return Ok(ProcessGuards {
                pm_qos: None,
                pm_qos_note: None,
                _wake: None,
                _method: None,
            });
        }
        let (pm_qos, pm_qos_note) = match cfg.pm_qos_us {
            Some(us) => match PmQosGuard::hold(us) {
                Ok(g) => (Some(g), None),
                Err(e) if cfg.pm_qos_required => {
                    let msg = privileges::explain_pm_qos_error(&e);
                    return Err(Error::refused(Facility::PmQos, msg, e));
                }
                Err(e) => (None, Some(privileges::explain_pm_qos_error(&e))),
            },
            None => (None, None),
        };
        let wake = setup::WakeSignalGuard::install()
            .map_err(|e| Error::os("cannot install the wake-up signal handler", e))?;
        // itimer: SIGALRM kept off this thread and the threads it starts, so that it lands
        // on the measuring thread.
        let method = match cfg.method.descriptor().process_guard {
            Some(guard) => Some(guard().map_err(|e| {
                let what = format!(
                    "cannot prepare the process for method {}",
                    cfg.method.name()
                );
                Error::os(what, e)
            })?),
            None => None,
        };
        Ok(ProcessGuards {
            pm_qos,
            pm_qos_note,
            _wake: Some(wake),
            _method: method,
        })
    }
}

/// A measuring thread as the coordinator sees it.
struct Worker {
    handle: JoinHandle<WorkerEnd>,
    go: mpsc::Sender<Start>,
    setup: mpsc::Receiver<Result<ThreadSetup, Error>>,
}

/// Starts one measuring thread per entry of `cfg.cpus`; each sets itself up and reports.
fn spawn_workers(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
) -> Result<(Vec<Worker>, Vec<CollectorEnds>), Error> {
    // A mock run races through virtual time; its loop waits for a free record rather than
    // merging windows (`LoopParams::await_records`), so it needs no more records than a
    // real run.
    let records = WINDOW_RECORDS;
    let mut workers = Vec::new();
    let mut collectors = Vec::new();
    for (index, &cpu) in cfg.cpus.iter().enumerate() {
        let (link, collector, first_record) =
            window_link(records, resident_magnitude(cfg.period_ns));
        let (samples, sample_rx, p99_gate) = match cfg.stream_samples {
            true => {
                let (mut tx, rx) = rtrb::RingBuffer::new(SAMPLE_RING);
                crate::sample::prefault_ring(&mut tx);
                let later_than = cfg.stream_later_than.map_or(Nanos::MIN, |l| l.initial());
                let gate = Arc::new(AtomicI64::new(later_than));
                let p99 = matches!(
                    cfg.stream_later_than,
                    Some(crate::sample::LateThreshold::PreviousP99 { .. })
                )
                .then(|| Arc::clone(&gate));
                (Some((tx, gate)), Some(rx), p99)
            }
            false => (None, None, None),
        };
        let (setup_tx, setup) = mpsc::channel();
        let (go, go_rx) = mpsc::channel();
        let ports = WorkerPorts {
            link,
            first_record,
            samples,
            setup_tx,
            go_rx,
        };
        let (cfg, stop) = (cfg.clone(), Arc::clone(stop));
        let handle = std::thread::Builder::new()
            .name(format!("tickscope-{index}"))
            .stack_size(setup::THREAD_STACK_BYTES)
            .spawn(move || worker_thread(&cfg, index, cpu, &stop, ports))
            .map_err(|e| Error::os(format!("cannot start measuring thread {index}"), e))?;
        workers.push(Worker { handle, go, setup });
        collectors.push((collector, sample_rx, p99_gate));
    }
    Ok((workers, collectors))
}

/// Windows a run will have, from its length (loops or duration); 1 when unbounded.
fn expected_windows(cfg: &RunConfig) -> usize {
    let by_loops = cfg
        .loops
        .map(|l| loops_span_ns(l, cfg.period_ns).unwrap_or(Nanos::MAX));
    let len = by_loops
        .into_iter()
        .chain(cfg.duration_ns)
        .min()
        .unwrap_or(cfg.window_ns);
    (len / cfg.window_ns.max(1)).clamp(0, 4096) as usize + 1
}

/// Waits for every thread's setup report; on any failure stops them all.
fn await_setup(workers: &[Worker]) -> Result<Vec<ThreadSetup>, Error> {
    let mut reports = Vec::new();
    let mut failure = None;
    for w in workers {
        match w.setup.recv() {
            Ok(Ok(r)) => reports.push(r),
            Ok(Err(e)) => failure = failure.or(Some(e)),
            Err(_) => {
                failure = failure.or(Some(Error::failed("a measuring thread died during setup")))
            }
        }
    }
    match failure {
        None => Ok(reports),
        Some(e) => {
            for w in workers {
                let _ = w.go.send(Start::Abort);
            }
            Err(e)
        }
    }
}

/// Locks memory now that every measuring thread has allocated what its loop touches (see
/// [`MlockGuard`] for why `MCL_FUTURE` is used only where no `RLIMIT_MEMLOCK` applies).
fn lock_memory(cfg: &RunConfig) -> (Option<MlockGuard>, Option<String>) {
    if !cfg.mlock || cfg.backend.is_mock() {
        return (None, None);
    }
    match MlockGuard::lock_touched() {
        Ok(g) if g.locks_future() => (Some(g), None),
        Ok(g) => {
            let limit = privileges::memlock_limit().unwrap_or(0) / 1024;
            let note = format!(
                "current mappings only (RLIMIT_MEMLOCK is {limit} KiB, so later ones are not \
                 locked; the measuring loop allocates nothing)"
            );
            (Some(g), Some(note))
        }
        Err(e) => (None, Some(privileges::explain_mlock_error(&e))),
    }
}

/// The settings in force, as the threads and the guards report them.
fn applied(
    cfg: &RunConfig,
    reports: &[ThreadSetup],
    guards: &ProcessGuards,
    mlock: bool,
    mlock_note: Option<String>,
) -> Applied {
    let first = &reports[0];
    let throttling = match cfg.backend.is_mock() {
        true => (None, None),
        false => (privileges::rt_runtime_us(), privileges::rt_period_us()),
    };
    Applied {
        policy: first.policy,
        policy_note: first.policy_note.clone(),
        mlock,
        mlock_note,
        pm_qos_us: guards.pm_qos.as_ref().map(PmQosGuard::limit_us),
        pm_qos_note: guards.pm_qos_note.clone(),
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
            throttling.0,
            throttling.1,
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
        housekeeping: None,
    }
}

/// A common first expiry a little ahead, so every thread is asleep before it, and the wall
/// time of the start (fixed on a mock run).
fn start_time(cfg: &RunConfig) -> (Nanos, SystemTime) {
    if cfg.backend.is_mock() {
        return (MOCK_FIRST_EXPIRY, SystemTime::UNIX_EPOCH);
    }
    let now = SystemClock(cfg.clock).now();
    (
        now + (10 * NS_PER_MS).max(cfg.period_ns.min(NS_PER_SEC)),
        SystemTime::now(),
    )
}

/// The wall time of the end: now, or on a mock run the start plus the planned length.
fn end_time(cfg: &RunConfig, started_at: SystemTime) -> SystemTime {
    match cfg.backend.is_mock() {
        true => {
            started_at + Duration::from_nanos(expected_windows(cfg) as u64 * cfg.window_ns as u64)
        }
        false => SystemTime::now(),
    }
}

/// Hands finished windows to the observer until every thread has ended; on a stop, wakes
/// the threads that are still waiting (every round: a wake that lands between a thread's
/// check of the stop flag and its next wait is lost, the next one is not).
fn collect(
    workers: &[Worker],
    collector: &mut Collector,
    stop: &AtomicBool,
    kick: bool,
    observer: &mut dyn FnMut(RunEvent<'_>),
) {
    loop {
        let all_done = workers.iter().all(|w| w.handle.is_finished());
        let took = collector.drain(observer, all_done);
        if all_done {
            return;
        }
        if took {
            continue; // more may be waiting (a mock run refills the rings at once)
        }
        if !kick {
            // Virtual time: the threads wait for their records (and a thread ahead of the
            // others for them), so a pause here would be the run's pace, not a saving.
            std::thread::yield_now();
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            for w in workers.iter().filter(|w| !w.handle.is_finished()) {
                setup::kick(w.handle.as_pthread_t());
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Joins the measuring threads; a panicked one becomes an error.
fn join(workers: Vec<Worker>) -> Vec<WorkerEnd> {
    workers
        .into_iter()
        .map(|w| {
            w.handle.join().unwrap_or(WorkerEnd {
                cpu_time: 0,
                wall: 0,
                last_latency: None,
                error: Some("a measuring thread panicked".into()),
                report: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
