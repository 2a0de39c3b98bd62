//! Timed actions on the measuring threads (a scenario step's `[[steps.actions]]`): at a
//! given time after the threads start, switch their policy as `chrt -p` would
//! (sched_setscheduler(2) on each thread id from [`Applied::threads`]). Done on a timer
//! thread of its own, never the measuring one; recorded, with the outcome, in the
//! scenario document.

use serde::Serialize;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tickscope_engine::run::Applied;
use tickscope_engine::time::Nanos;
use tickscope_report::sink::{RunContext, RunSink};

/// One action to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// When, ns after the threads start.
    pub at_ns: Nanos,
    /// `fifo`, `rr` or `other`.
    pub policy: String,
    /// Priority for fifo and rr.
    pub priority: i32,
}

/// What an action did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// When it was planned, ns after the threads started.
    pub at_ns: Nanos,
    /// When it was done, ns after the threads started; `None` if the step ended first.
    pub done_at_ns: Option<Nanos>,
    /// What was asked (`fifo 1`).
    pub action: String,
    /// The thread ids changed.
    pub tids: Vec<i32>,
    /// The error, if the kernel refused (e.g. not permitted without root).
    pub error: Option<String>,
}

/// The sink that runs the actions of one step.
pub struct ActionSink {
    planned: Vec<Planned>,
    outcomes: Arc<Mutex<Vec<Outcome>>>,
    cancel: Option<mpsc::Sender<()>>,
    timer: Option<JoinHandle<()>>,
}

impl ActionSink {
    /// A sink doing `planned`, reporting into `outcomes`.
    pub fn new(planned: Vec<Planned>, outcomes: Arc<Mutex<Vec<Outcome>>>) -> Self {
        ActionSink {
            planned,
            outcomes,
            cancel: None,
            timer: None,
        }
    }
}

fn set_policy(tid: i32, policy: &str, priority: i32) -> Result<(), String> {
    let (p, prio) = match policy {
        "fifo" => (libc::SCHED_FIFO, priority),
        "rr" => (libc::SCHED_RR, priority),
        _ => (libc::SCHED_OTHER, 0),
    };
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: a plain system call on a thread id with a parameter we own.
    match unsafe { libc::sched_setscheduler(tid, p, &param) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error().to_string()),
    }
}

impl RunSink for ActionSink {
    fn started(&mut self, _ctx: &RunContext<'_>, applied: &Applied) {
        let tids: Vec<i32> = applied.threads.iter().map(|t| t.tid).collect();
        let mut planned = self.planned.clone();
        planned.sort_by_key(|p| p.at_ns);
        let outcomes = Arc::clone(&self.outcomes);
        let (tx, rx) = mpsc::channel::<()>();
        let t0 = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("tickscope-actions".into())
            .spawn(move || {
                for p in planned {
                    let mut o = Outcome {
                        at_ns: p.at_ns,
                        done_at_ns: None,
                        action: match p.policy.as_str() {
                            "other" => "other".into(),
                            _ => format!("{} {}", p.policy, p.priority),
                        },
                        tids: tids.clone(),
                        error: None,
                    };
                    let due = t0 + Duration::from_nanos(p.at_ns as u64);
                    let wait = due.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {
                            let errors: Vec<String> = tids
                                .iter()
                                .filter_map(|&t| set_policy(t, &p.policy, p.priority).err())
                                .collect();
                            o.done_at_ns = Some(t0.elapsed().as_nanos() as Nanos);
                            o.error = errors.into_iter().next();
                        }
                        _ => {
                            if let Ok(mut v) = outcomes.lock() {
                                v.push(o);
                            }
                            continue; // cancelled: record the rest as not done
                        }
                    }
                    if let Ok(mut v) = outcomes.lock() {
                        v.push(o);
                    }
                }
            });
        if let Ok(h) = spawned {
            self.cancel = Some(tx);
            self.timer = Some(h);
        }
    }
}

impl Drop for ActionSink {
    fn drop(&mut self) {
        drop(self.cancel.take());
        if let Some(h) = self.timer.take() {
            let _ = h.join();
        }
    }
}
