//! The measuring threads seen from the coordinator: spawn, setup handshake, start, stop
//! kicks and join.

use super::backend::Backend;
use super::thread::{worker_thread, SetupReport, Start, WorkerEnd, WorkerPorts};
use super::RunConfig;
use crate::error::{Error, ErrorKind, Message, Setting};
use crate::sample::{RawSample, SAMPLE_RING};
use crate::setup;
use crate::time::Nanos;
use crate::worker::{window_link, CollectorLink};
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The collector's ends of one thread's rings: windows, and raw samples when streamed.
pub(super) type Links = Vec<(CollectorLink, Option<rtrb::Consumer<RawSample>>)>;

/// The measuring threads of a run.
pub(super) struct Workers {
    threads: Vec<(JoinHandle<WorkerEnd>, mpsc::Sender<Start>)>,
    setup_rx: Vec<mpsc::Receiver<Result<SetupReport, Error>>>,
    links: Links,
}

impl Workers {
    /// Starts one measuring thread per entry of `cfg.cpus`; each sets itself up and waits.
    ///
    /// # Errors
    /// [`ErrorKind::Os`](crate::error::ErrorKind::Os) when a thread cannot be created (those already started end when the
    /// returned error drops their start channels).
    pub(super) fn spawn(
        cfg: &RunConfig,
        stop: &Arc<AtomicBool>,
        backend: &Arc<dyn Backend>,
    ) -> Result<Self, Error> {
        let mut w = Workers {
            threads: Vec::new(),
            setup_rx: Vec::new(),
            links: Vec::new(),
        };
        for (index, &cpu) in cfg.cpus.iter().enumerate() {
            let (link, collector, first_record) = window_link();
            let (samples, sample_rx) = if cfg.stream_samples {
                let (tx, rx) = rtrb::RingBuffer::new(SAMPLE_RING);
                (Some(tx), Some(rx))
            } else {
                (None, None)
            };
            let (setup_tx, setup_rx) = mpsc::channel();
            let (go_tx, go_rx) = mpsc::channel();
            let ports = WorkerPorts {
                link,
                first_record,
                samples,
                setup_tx,
                go_rx,
            };
            let (cfg, stop, backend) = (cfg.clone(), Arc::clone(stop), Arc::clone(backend));
            let handle = std::thread::Builder::new()
                .name(format!("tickscope-{index}"))
                .stack_size(4 * setup::PREFAULT_BYTES)
                .spawn(move || worker_thread(&cfg, index, cpu, &stop, ports, &*backend))
                .map_err(|e| Error::os(format!("cannot start measuring thread {index}"), e))?;
            w.threads.push((handle, go_tx));
            w.setup_rx.push(setup_rx);
            w.links.push((collector, sample_rx));
        }
        Ok(w)
    }

    /// Waits for every thread's setup report, in thread order.
    ///
    /// # Errors
    /// The first thread's failure; every thread is then told to
    /// abort and joined.
    pub(super) fn await_setup(&mut self) -> Result<Vec<SetupReport>, Error> {
        let mut reports = Vec::new();
        let mut failure = None;
        for rx in &self.setup_rx {
            match rx.recv() {
                Ok(Ok(r)) => reports.push(r),
                Ok(Err(e)) => failure = failure.or(Some(e)),
                Err(_) => failure = failure.or(Some(died_during_setup())),
            }
        }
        match failure {
            None => Ok(reports),
            Some(e) => {
                for (handle, go) in self.threads.drain(..) {
                    let _ = go.send(Start::Abort);
                    let _ = handle.join();
                }
                Err(e)
            }
        }
    }

    /// Lets every thread start measuring at `first_expiry`.
    pub(super) fn start(&self, first_expiry: Nanos) {
        for (_, go) in &self.threads {
            let _ = go.send(Start::Go { first_expiry });
        }
    }

    /// The collector's ends of the rings (once).
    pub(super) fn take_links(&mut self) -> Links {
        std::mem::take(&mut self.links)
    }

    /// Whether every thread has ended.
    pub(super) fn all_finished(&self) -> bool {
        self.threads.iter().all(|(h, _)| h.is_finished())
    }

    /// Interrupts the wait of every thread still running (after a stop).
    pub(super) fn kick_running(&self, backend: &dyn Backend) {
        for (h, _) in self.threads.iter().filter(|(h, _)| !h.is_finished()) {
            backend.kick(h.as_pthread_t());
        }
    }

    /// Joins every thread; a thread that panicked ends with that error.
    pub(super) fn join(self) -> Vec<WorkerEnd> {
        self.threads
            .into_iter()
            .map(|(h, _)| {
                h.join().unwrap_or(WorkerEnd {
                    cpu_time: 0,
                    wall: 0,
                    error: Some("a measuring thread panicked".into()),
                    report: None,
                })
            })
            .collect()
    }
}

/// The error of a thread that ended before it reported its setup (it panicked).
fn died_during_setup() -> Error {
    Error::new(
        ErrorKind::Refused {
            setting: Setting::Threads,
        },
        Message::text("a measuring thread died during setup"),
    )
}
