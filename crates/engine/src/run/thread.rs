//! The body of a measuring thread: per-thread setup (through the backend), report, wait for
//! the start, measure.

use super::backend::{Backend, PreparedThread};
use super::RunConfig;
use crate::error::Error;
use crate::record::WindowRecord;
use crate::sample::RawSample;
use crate::setup::{self, Policy};
use crate::time::Nanos;
use crate::wait::{self, MethodReport};
use crate::worker::{measure, LoopParams};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;

/// The coordinator's word to a thread that is set up.
pub(super) enum Start {
    /// Measure, with this first expiry (absolute ns on the run's clock).
    Go { first_expiry: Nanos },
    /// Another thread failed: end without measuring.
    Abort,
}

/// What a thread set up, for [`super::Applied`] and the collector.
pub(crate) struct SetupReport {
    /// Kernel thread id.
    pub(crate) tid: i32,
    /// The thread's CPU-time clock, where CPU time is measured.
    pub(crate) cpu_clock: Option<libc::clockid_t>,
    /// The policy in force (read back).
    pub(crate) policy: Policy,
    /// Why the policy differs from the request, for `auto`.
    pub(crate) policy_note: Option<String>,
    /// The timer slack in force, ns.
    pub(crate) slack: u64,
    /// The method's kernel interface.
    pub(crate) interface: &'static str,
    /// The method's granularity, ns.
    pub(crate) granularity: Nanos,
}

/// How a thread ended.
pub(super) struct WorkerEnd {
    pub(super) cpu_time: Nanos,
    pub(super) wall: Nanos,
    pub(super) error: Option<String>,
    pub(super) report: Option<MethodReport>,
}

impl WorkerEnd {
    fn failed(msg: String) -> Self {
        WorkerEnd {
            cpu_time: 0,
            wall: 0,
            error: Some(msg),
            report: None,
        }
    }
}

/// What a measuring thread is handed: its ends of the rings and channels.
pub(super) struct WorkerPorts {
    pub(super) link: crate::worker::WindowLink,
    pub(super) first_record: Box<WindowRecord>,
    pub(super) samples: Option<rtrb::Producer<RawSample>>,
    pub(super) setup_tx: mpsc::Sender<Result<SetupReport, Error>>,
    pub(super) go_rx: mpsc::Receiver<Start>,
}

/// Body of measuring thread `index`: setup, report, wait for the start, measure.
pub(super) fn worker_thread(
    cfg: &RunConfig,
    index: usize,
    cpu: Option<usize>,
    stop: &AtomicBool,
    ports: WorkerPorts,
    backend: &dyn Backend,
) -> WorkerEnd {
    let WorkerPorts {
        mut link,
        first_record,
        mut samples,
        setup_tx,
        go_rx,
    } = ports;
    let PreparedThread {
        guards,
        mut method,
        report,
    } = match backend.prepare_thread(cfg, index, cpu) {
        Ok(p) => p,
        Err(e) => {
            let msg = e.to_string();
            let _ = setup_tx.send(Err(e));
            return WorkerEnd::failed(msg);
        }
    };
    let _ = setup_tx.send(Ok(report));
    let first_expiry = match go_rx.recv() {
        Ok(Start::Go { first_expiry }) => first_expiry,
        _ => return WorkerEnd::failed("aborted before the start".into()),
    };
    if let Err(e) = method.arm(first_expiry, cfg.period_ns) {
        return WorkerEnd::failed(wait::explain_setup_error(cfg.method, &e).to_string());
    }
    setup::prefault_stack();
    let params = loop_params(cfg, first_expiry, backend.virtual_time());
    let cpu0 = backend.thread_cpu_time();
    let end = measure(
        method.as_mut(),
        &params,
        stop,
        &mut link,
        first_record,
        samples.as_mut(),
    );
    let cpu1 = backend.thread_cpu_time();
    let report = method.report();
    drop(method);
    drop(guards);
    WorkerEnd {
        cpu_time: cpu1 - cpu0,
        wall: end.last_woke - end.started,
        error: end.error.map(|e| format!("measuring thread stopped: {e}")),
        report: Some(report),
    }
}

/// The measuring loop's parameters for a run starting at `first_expiry`.
fn loop_params(cfg: &RunConfig, first_expiry: Nanos, lossless: bool) -> LoopParams {
    LoopParams {
        first_expiry,
        period: cfg.period_ns,
        max_samples: cfg.loops.unwrap_or(u64::MAX),
        end: cfg
            .duration_ns
            .map_or(Nanos::MAX, |d| first_expiry.saturating_add(d)),
        overrun: cfg.overrun,
        window: cfg.window_ns,
        lossless,
    }
}
