//! In-process explanation of a loop's late wake-ups ([`Periodic::explain`], cargo feature
//! `explain`): why the calling thread woke later than a threshold, by cause, from the same
//! trace capture and attribution as `tickscope run --explain` (the `tickscope-explain`
//! crate's controller: BPF when permitted, else the tracefs text trace).
//!
//! The loop's side is one wait-free push per late wake-up into a fixed ring (`rtrb`, a
//! single-producer single-consumer ring: no lock, no allocation, no system call); a wake-up
//! that finds the ring full is counted as dropped. Everything else — the trace, the join of
//! each late wake-up with its events, the counts — runs on a housekeeping thread the library
//! starts, placed on the CPUs the loop is not pinned to. [`Periodic::explanation`] returns
//! the counts so far (it takes the lock the housekeeping thread publishes under; call it
//! between waits, like [`Periodic::stats`]).
//!
//! Tracing needs root, or `CAP_BPF` + `CAP_PERFMON` for the BPF backend (docs/explain.md);
//! without them [`Periodic::explain`] fails with an [`Error::Os`] of `EPERM` whose message
//! says so.
//!
//! [`Periodic::explain`]: crate::Periodic::explain
//! [`Periodic::explanation`]: crate::Periodic::explanation
//! [`Periodic::stats`]: crate::Periodic::stats

use crate::error::Error;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;
use tickscope_engine::run::{Applied, AppliedThread, RunConfig};
use tickscope_engine::sample::RawSample;
use tickscope_engine::setup::Policy;
use tickscope_engine::time::{ClockId, Nanos};
use tickscope_engine::wait::MethodKind;
use tickscope_explain::controller::{Controller, ExplainOptions, Hooks, Mode, Threshold};
use tickscope_explain::section::ExplainSection;
use tickscope_system::system::virtualized;

/// Late wake-ups the ring holds between two reads of the housekeeping thread (every
/// [`READ_EVERY`]): 4096, i.e. every wake-up of a 10 kHz loop late for 0.4 s.
pub const RING: usize = 4096;

/// How often the housekeeping thread takes the late wake-ups and reads the trace.
pub const READ_EVERY: Duration = Duration::from_millis(20);

/// One cause of late wake-ups, with what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseCount {
    /// The cause, in `tickscope run --explain`'s words (`other thread`, `irq`, `exit from
    /// idle`, `cpu busy`, …; docs/explain.md).
    pub cause: String,
    /// Late wake-ups it caused.
    pub count: u64,
    /// Their latencies summed, ns.
    pub total_ns: Nanos,
    /// The largest of them, ns.
    pub max_ns: Nanos,
    /// Its most frequent culprit (a thread's command name, an IRQ's name), when named.
    pub culprit: Option<String>,
}

/// Why the loop's wake-ups were late, so far.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Explanation {
    /// Where the causes come from: `bpf` or `tracefs`.
    pub backend: String,
    /// Wake-ups later than the threshold since explanation was turned on.
    pub late: u64,
    /// Of those, not attributed yet (in the ring, or waiting for their trace events).
    pub pending: u64,
    /// Of those, dropped because the ring was full (never explained).
    pub dropped: u64,
    /// The causes, most frequent first; their counts add up to `late − pending − dropped`.
    pub causes: Vec<CauseCount>,
}

impl Explanation {
    /// The section's causes; `late`, `pending` and `dropped` are the loop's to fill in.
    fn of(section: &ExplainSection) -> Explanation {
        let Some(t) = section.threads.first() else {
            return Explanation {
                backend: section.backend.clone(),
                ..Explanation::default()
            };
        };
        let mut causes: Vec<CauseCount> = t
            .causes
            .causes
            .iter()
            .map(|(cause, row)| CauseCount {
                cause: cause.clone(),
                count: row.count,
                total_ns: row.total_ns,
                max_ns: row.max_ns,
                culprit: row
                    .details
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|(d, _)| d.clone()),
            })
            .collect();
        causes.sort_by(|a, b| b.count.cmp(&a.count).then(a.cause.cmp(&b.cause)));
        Explanation {
            backend: section.backend.clone(),
            causes,
            ..Explanation::default()
        }
    }
}

/// The explainer of one loop: the ring's producing end (the loop's), and the housekeeping
/// thread that consumes it.
pub(crate) struct Explainer {
    ring: rtrb::Producer<RawSample>,
    threshold: Nanos,
    seq: u64,
    late: u64,
    dropped: u64,
    shared: Arc<Mutex<Explanation>>,
    stop: Arc<AtomicBool>,
    /// The loop's first expiry once its grid started (0 before), for the housekeeping
    /// thread to hand to the controller ([`Explainer::going`]).
    grid: Arc<AtomicI64>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Explainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Explainer")
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

/// What the loop is, for the controller (as a run reports its settings).
pub(crate) struct LoopInfo {
    /// The loop's thread.
    pub tid: i32,
    /// The CPU it is pinned to, if it is.
    pub cpu: Option<usize>,
    /// Its wait.
    pub method: MethodKind,
    /// Its period, ns.
    pub period_ns: Nanos,
    /// Its clock.
    pub clock: ClockId,
}

fn no_capture(_: &Path, _: &str, _: &tickscope_explain::bundle::Bundle) -> io::Result<PathBuf> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the library writes no capture bundle",
    ))
}

/// Moves the calling thread off `cpu` (the loop's), when it has other CPUs.
fn keep_off(cpu: Option<usize>) {
    let Some(cpu) = cpu else { return };
    let others: Vec<usize> = tickscope_engine::setup::allowed_cpus()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| *c != cpu)
        .collect();
    if others.is_empty() {
        return;
    }
    // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET and
    // sched_setaffinity(0, …) act on this thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in others {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

impl Explainer {
    /// Starts explaining the wake-ups of the loop `info` later than `threshold_ns`: the
    /// housekeeping thread sets up the trace and says whether it could.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a threshold below 0; [`Error::Os`] with `EPERM` when
    /// tracing is not permitted (the message names the privileges), with the OS error when
    /// the thread cannot be started.
    pub(crate) fn start(threshold_ns: Nanos, info: LoopInfo) -> Result<Explainer, Error> {
        if threshold_ns < 0 {
            return Err(Error::InvalidArgument(format!(
                "the explain threshold must be 0 or more ns, not {threshold_ns}"
            )));
        }
        let (producer, mut consumer) = rtrb::RingBuffer::<RawSample>::new(RING);
        let shared = Arc::new(Mutex::new(Explanation::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
        let grid = Arc::new(AtomicI64::new(0));
        let (shared2, stop2, grid2) = (Arc::clone(&shared), Arc::clone(&stop), Arc::clone(&grid));
        let thread = std::thread::Builder::new()
            .name("tickscope-why".into())
            .spawn(move || {
                keep_off(info.cpu);
                let opts = ExplainOptions {
                    mode: Mode::Trace,
                    threshold: Threshold::Fixed(threshold_ns),
                    rules: Vec::new(),
                    capture_dir: PathBuf::new(),
                    capture_limit: 0,
                    cooldown: Duration::from_millis(200),
                    keep_breakdowns: 20,
                    buffer_kb: 4096,
                    log: None,
                    log_events: false,
                };
                let hooks = Hooks {
                    write_capture: no_capture,
                    latest_context: || None,
                };
                let mut c = match Controller::new(opts, Arc::clone(&stop2), virtualized(), hooks) {
                    Ok((c, _)) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let mut config = RunConfig::new(info.period_ns);
                config.clock = info.clock;
                config.method = info.method;
                let applied = Applied {
                    policy: Policy::Other { nice: 0 },
                    policy_note: None,
                    mlock: false,
                    mlock_note: None,
                    pm_qos_us: None,
                    pm_qos_note: None,
                    timer_slack_ns: 0,
                    timer_slack_note: None,
                    method: info.method,
                    interface: String::new(),
                    granularity_ns: 1,
                    method_note: None,
                    clock: info.clock,
                    threads: vec![AppliedThread {
                        thread: 0,
                        tid: info.tid,
                        cpu: info.cpu,
                    }],
                    housekeeping: None,
                };
                c.started(&config, 1, 0, &applied);
                let _ = ready_tx.send(Ok(()));
                let mut batch: Vec<RawSample> = Vec::with_capacity(RING);
                let publish = |c: &mut Controller| {
                    let e = Explanation::of(&c.section());
                    *shared2.lock().unwrap_or_else(PoisonError::into_inner) = e;
                };
                loop {
                    let done = stop2.load(Ordering::Relaxed);
                    // The grid, once the loop started it: a method that spins to its expiry
                    // is judged against it from then on (`Controller::going`).
                    let first_expiry = grid2.swap(0, Ordering::Acquire);
                    if first_expiry != 0 {
                        c.going(first_expiry);
                    }
                    batch.clear();
                    while let Ok(s) = consumer.pop() {
                        batch.push(s);
                    }
                    c.samples(0, &batch);
                    publish(&mut c);
                    if done {
                        break;
                    }
                    std::thread::sleep(READ_EVERY);
                }
                c.run_finished(None);
                let _ = c.finish();
                publish(&mut c);
            })
            .map_err(|e| Error::os("cannot start the explain thread".into(), e))?;
        let answer = ready_rx
            .recv()
            .unwrap_or_else(|_| Err("the explain thread ended before setting up the trace".into()));
        if let Err(why) = answer {
            let _ = thread.join();
            return Err(Error::os(
                format!(
                    "cannot explain this loop's wake-ups: {why} (tracing needs root, or \
                     CAP_BPF and CAP_PERFMON)"
                ),
                io::Error::from_raw_os_error(libc::EPERM),
            ));
        }
        Ok(Explainer {
            ring: producer,
            threshold: threshold_ns,
            seq: 0,
            late: 0,
            dropped: 0,
            shared,
            stop,
            grid,
            thread: Some(thread),
        })
    }

    /// The loop's grid started (or was running when explanation began): `first_expiry` ns
    /// on the loop's clock is on it. One atomic store, once per grid; the housekeeping thread
    /// passes it on.
    pub(crate) fn going(&self, first_expiry: Nanos) {
        self.grid.store(first_expiry, Ordering::Release);
    }

    /// Hands one wake-up to the explainer when it is late: one wait-free push, or a count
    /// when the ring is full. No lock, no allocation, no system call.
    #[inline]
    pub(crate) fn push(&mut self, expiry: Nanos, woke: Nanos) {
        let seq = self.seq;
        self.seq += 1;
        if woke - expiry <= self.threshold {
            return;
        }
        self.late += 1;
        if self.ring.push(RawSample { seq, expiry, woke }).is_err() {
            self.dropped += 1;
        }
    }

    /// The explanation so far.
    pub(crate) fn snapshot(&self) -> Explanation {
        let s = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let counted: u64 = s.causes.iter().map(|c| c.count).sum();
        Explanation {
            late: self.late,
            dropped: self.dropped,
            pending: self.late.saturating_sub(self.dropped + counted),
            ..s.clone()
        }
    }
}

impl Drop for Explainer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
