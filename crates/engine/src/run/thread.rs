//! The body of a measuring thread: per-thread setup, report, wait for the start, measure.

use super::{Backend, PolicyRequest, RunConfig, AUTO_PRIORITY, MOCK_TID_BASE};
use crate::error::{Error, Facility};
use crate::mock::MockMethod;
use crate::mock_bulk;
use crate::record::LoopRecord;
use crate::sample::{RawSample, SampleStream};
use crate::setup::{self, privileges, AffinityGuard, Policy, PolicyGuard, TimerSlackGuard};
use crate::time::{read_clock, Nanos};
use crate::wait::{self, MethodObservations};
use crate::worker::{measure, LoopParams};
use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::mpsc;
use std::sync::Arc;

pub(super) enum Start {
    Go { first_expiry: Nanos },
    Abort,
}

pub(super) struct ThreadSetup {
    pub(super) tid: i32,
    pub(super) cpu_clock: libc::clockid_t,
    pub(super) policy: Policy,
    pub(super) policy_note: Option<String>,
    pub(super) slack: u64,
    pub(super) interface: &'static str,
    pub(super) granularity: Nanos,
}

pub(super) struct WorkerEnd {
    pub(super) cpu_time: Nanos,
    pub(super) wall: Nanos,
    /// The last wake-up's latency, ns ([`crate::worker::LoopEnd::last_latency`]).
    pub(super) last_latency: Option<Nanos>,
    pub(super) error: Option<String>,
    pub(super) report: Option<MethodObservations>,
}

/// What a measuring thread is handed: its ends of the rings and channels.
pub(super) struct WorkerPorts {
    pub(super) link: crate::worker::WindowLink,
    pub(super) first_record: Box<LoopRecord>,
    /// The raw-sample ring and the threshold above which the loop pushes a wake-up
    /// ([`crate::sample::SampleStream`]).
    pub(super) samples: Option<(rtrb::Producer<RawSample>, Arc<AtomicI64>)>,
    pub(super) setup_tx: mpsc::Sender<Result<ThreadSetup, Error>>,
    pub(super) go_rx: mpsc::Receiver<Start>,
}

/// What a thread holds while it measures: its affinity, policy and timer slack guards.
type ThreadGuards = (
    Option<AffinityGuard>,
    Option<PolicyGuard>,
    Option<TimerSlackGuard>,
);

/// Body of measuring thread `index`: per-thread setup, report, wait for the start, measure.
pub(super) fn worker_thread(
    cfg: &RunConfig,
    index: usize,
    cpu: Option<usize>,
    stop: &AtomicBool,
    ports: WorkerPorts,
) -> WorkerEnd {
    let WorkerPorts {
        mut link,
        first_record,
        mut samples,
        setup_tx,
        go_rx,
    } = ports;
    let fail = |msg: String| WorkerEnd {
        cpu_time: 0,
        wall: 0,
        last_latency: None,
        error: Some(msg),
        report: None,
    };
    let prepared = match &cfg.backend {
        Backend::System => prepare(cfg, cpu),
        Backend::Mock { latencies } => Ok(prepare_mock(index, latencies)),
    };
    let (guards, mut method, report) = match prepared {
        Ok(p) => p,
        Err(e) => {
            let msg = e.to_string();
            let _ = setup_tx.send(Err(e));
            return fail(msg);
        }
    };
    let _ = setup_tx.send(Ok(report));
    let first_expiry = match go_rx.recv() {
        Ok(Start::Go { first_expiry }) => first_expiry,
        _ => return fail("aborted before the start".into()),
    };
    if let Err(e) = method.arm(first_expiry, cfg.period_ns) {
        return fail(wait::explain_setup_error(cfg.method, &e));
    }
    setup::prefault_stack();
    let params = loop_params(cfg, first_expiry);
    let cpu0 = read_clock(libc::CLOCK_THREAD_CPUTIME_ID);
    let end = match (&cfg.backend, cfg.method) {
        // Virtual time with a script that never overruns: each window counted at once, the
        // same records as the loop below fills (crate::mock_bulk).
        (Backend::Mock { latencies }, _)
            if samples.is_none() && mock_bulk::applies(latencies, cfg.period_ns) =>
        {
            let started = method.now();
            mock_bulk::measure_in_bulk(latencies, &params, stop, &mut link, first_record, started)
        }
        // The default method, monomorphised: its wait is inlined into the loop instead of
        // called through the trait object (no state but the clock, nothing to arm).
        (_, wait::MethodKind::NanosleepAbs) if !cfg.backend.is_mock() => measure(
            &mut wait::NanosleepAbs::new(cfg.clock),
            &params,
            stop,
            &mut link,
            first_record,
            samples
                .as_mut()
                .map(|(ring, later_than)| SampleStream { ring, later_than }),
        ),
        _ => measure(
            method.as_mut(),
            &params,
            stop,
            &mut link,
            first_record,
            samples
                .as_mut()
                .map(|(ring, later_than)| SampleStream { ring, later_than }),
        ),
    };
    let cpu1 = read_clock(libc::CLOCK_THREAD_CPUTIME_ID);
    let report = method.observations();
    drop(method);
    // The ring first: the collector takes an abandoned ring for a thread that has ended,
    // and reads no policy back for its last windows after that (run/collector.rs), which
    // the guards' restore below would otherwise show.
    drop(link);
    drop(guards);
    WorkerEnd {
        cpu_time: if cfg.backend.is_mock() {
            0
        } else {
            cpu1 - cpu0
        },
        wall: end.last_woke - end.started,
        last_latency: end.last_latency,
        error: end.error.map(|e| format!("measuring thread stopped: {e}")),
        report: Some(report),
    }
}

/// The measuring loop's parameters for a run starting at `first_expiry`.
fn loop_params(cfg: &RunConfig, first_expiry: Nanos) -> LoopParams {
    LoopParams {
        first_expiry,
        period: cfg.period_ns,
        max_samples: cfg.loops.unwrap_or(u64::MAX),
        end: cfg
            .duration_ns
            .map_or(Nanos::MAX, |d| first_expiry.saturating_add(d)),
        overrun: cfg.overrun,
        window: cfg.window_ns,
        await_records: cfg.backend.is_mock(),
    }
}

/// A mock thread: no setting changed, a [`MockMethod`] on virtual time, a made-up thread id
/// and no CPU clock (so no CPU time is reported).
fn prepare_mock(
    index: usize,
    latencies: &[Nanos],
) -> (ThreadGuards, Box<dyn wait::WakeMethod>, ThreadSetup) {
    let method: Box<dyn wait::WakeMethod> = Box::new(MockMethod::new(0, latencies.to_vec()));
    let report = ThreadSetup {
        tid: MOCK_TID_BASE + index as i32,
        cpu_clock: -1, // no such clock: the collector reads no CPU time
        policy: Policy::Other { nice: 0 },
        policy_note: Some("mock: virtual time, nothing set".into()),
        slack: 50_000,
        interface: method.interface(),
        granularity: 1,
    };
    ((None, None, None), method, report)
}

/// A real thread: pinned, its policy and timer slack set (each a guard), its method made.
///
/// # Errors
/// [`Error::refused`] for the setting that could not be applied, with one sentence.
fn prepare(
    cfg: &RunConfig,
    cpu: Option<usize>,
) -> Result<(ThreadGuards, Box<dyn wait::WakeMethod>, ThreadSetup), Error> {
    {
        let affinity = match cpu {
            Some(c) => Some(AffinityGuard::pin(c).map_err(|e| {
                let msg = format!("cannot pin a measuring thread to CPU {c}: {e}");
                Error::refused(Facility::Affinity, msg, e)
            })?),
            None => None,
        };
        let (policy, note) = match cfg.policy {
            PolicyRequest::Exact(p) => (p, None),
            PolicyRequest::Auto => (
                Policy::Fifo {
                    priority: AUTO_PRIORITY,
                },
                None,
            ),
        };
        let (policy_guard, note) = match PolicyGuard::apply(policy) {
            Ok(g) => (g, note),
            Err(e) if cfg.policy == PolicyRequest::Auto => {
                let why = privileges::explain_policy_error(&policy, &e);
                let other = Policy::Other { nice: 0 };
                let g = PolicyGuard::apply(other).map_err(|e| {
                    Error::refused(
                        Facility::Policy,
                        privileges::explain_policy_error(&other, &e),
                        e,
                    )
                })?;
                (g, Some(format!("auto: using other, because {why}")))
            }
            Err(e) => {
                let msg = privileges::explain_policy_error(&policy, &e);
                return Err(Error::refused(Facility::Policy, msg, e));
            }
        };
        let note = note.or_else(|| {
            (cfg.policy == PolicyRequest::Auto).then(|| {
                format!("auto: using fifo priority {AUTO_PRIORITY}, the process may set it")
            })
        });
        let slack = match cfg.timer_slack_ns {
            Some(ns) => Some(TimerSlackGuard::set(ns).map_err(|e| {
                Error::refused(
                    Facility::TimerSlack,
                    format!("cannot set timer slack: {e}"),
                    e,
                )
            })?),
            None => None,
        };
        // The method's limits were checked once, by RunConfig::validate.
        let method =
            (cfg.method.descriptor().create)(cfg.clock, &cfg.method_options).map_err(|e| {
                let msg = wait::explain_setup_error(cfg.method, &e);
                Error::refused(Facility::WakeMethod, msg, e)
            })?;
        let mut cpu_clock: libc::clockid_t = 0;
        // SAFETY: pthread_self is this thread; `cpu_clock` is writable.
        unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut cpu_clock) };
        let report = ThreadSetup {
            tid: setup::gettid(),
            cpu_clock,
            policy: setup::current_policy().unwrap_or(policy),
            policy_note: note,
            slack: setup::current_timer_slack(),
            interface: method.interface(),
            granularity: method.granularity_ns(),
        };
        Ok(((affinity, Some(policy_guard), slack), method, report))
    }
}
