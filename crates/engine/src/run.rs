//! A measuring run: applies the settings, starts the measuring threads on a common grid,
//! collects their windows while they run and merges the results.
//!
//! Data flow: [`RunConfig`] → guards (process-wide here, per thread in the thread) → workers
//! ([`crate::worker::measure`]) → windows through wait-free rings → this collector →
//! [`RunEvent`]s for a live view and a [`RunOutcome`] at the end. Nothing here formats text.

use crate::error::Error;
use crate::grid::OverrunPolicy;
use crate::record::WindowRecord;
use crate::result::{ThreadStats, WindowStats};
use crate::sample::{RawSample, SAMPLE_RING};
use crate::setup::{
    self, privileges, AffinityGuard, MlockGuard, PmQosGuard, Policy, PolicyGuard, TimerSlackGuard,
};
use crate::stats::{latency_stats, period_stats, window_stats};
use crate::time::{read_clock, Clock, ClockId, Nanos, SystemClock, NS_PER_MS, NS_PER_SEC};
use crate::wait::{self, MethodKind, MethodOptions, MethodReport};
use crate::worker::{measure, window_link, CollectorLink, LoopParams};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The real-time priority `auto` tries (cyclictest's usual `-p 90`).
pub const AUTO_PRIORITY: u8 = 90;

/// Which policy to run the measuring threads under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyRequest {
    /// SCHED_FIFO priority [`AUTO_PRIORITY`] where the process may set it, else SCHED_OTHER
    /// (nice 0); the outcome and the reason are reported in [`Applied::policy_note`].
    Auto,
    /// Exactly this policy, or an error that says what is missing.
    Exact(Policy),
}

/// Everything a run needs, already validated by the caller's option parsing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// How the threads wait.
    pub method: MethodKind,
    /// Tunables of the method.
    pub method_options: MethodOptions,
    /// The clock slept on and read.
    pub clock: ClockId,
    /// The period (interval between expiries), ns, > 0.
    pub period_ns: Nanos,
    /// Stop after this many wake-ups per thread (cyclictest `-l`).
    pub loops: Option<u64>,
    /// Stop before the first expiry at or after this long after the first expiry, ns.
    pub duration_ns: Option<Nanos>,
    /// Scheduling policy.
    pub policy: PolicyRequest,
    /// One entry per measuring thread: the CPU it is pinned to, or `None` for unpinned.
    pub cpus: Vec<Option<usize>>,
    /// Lock memory with `mlockall` (failure is reported, not fatal).
    pub mlock: bool,
    /// Timer slack for the measuring threads, ns; `None` leaves the default.
    pub timer_slack_ns: Option<u64>,
    /// CPU wake-up latency limit to hold through PM QoS, µs; `None` leaves it alone.
    pub pm_qos_us: Option<i32>,
    /// Treat a PM QoS failure as an error (the user asked for it explicitly).
    pub pm_qos_required: bool,
    /// What to do after an overrun.
    pub overrun: OverrunPolicy,
    /// Length of a statistics window, ns (normally one second).
    pub window_ns: Nanos,
    /// Stream every raw wake-up to the observer ([`RunEvent::Samples`]).
    pub stream_samples: bool,
}

impl RunConfig {
    /// A default run: absolute sleeps on CLOCK_MONOTONIC every `period_ns`, one unpinned
    /// thread, for 10 s, policy auto, mlock, 1 ns slack, PM QoS 0 µs if allowed.
    pub fn new(period_ns: Nanos) -> Self {
        RunConfig {
            method: MethodKind::NanosleepAbs,
            method_options: MethodOptions::default(),
            clock: ClockId::Monotonic,
            period_ns,
            loops: None,
            duration_ns: Some(10 * NS_PER_SEC),
            policy: PolicyRequest::Auto,
            cpus: vec![None],
            mlock: true,
            timer_slack_ns: Some(1),
            pm_qos_us: Some(0),
            pm_qos_required: false,
            overrun: OverrunPolicy::Skip,
            window_ns: NS_PER_SEC,
            stream_samples: false,
        }
    }

    fn validate(&self) -> Result<(), Error> {
        let bad = |s: &str| Err(Error::Config(s.to_string()));
        if self.period_ns <= 0 {
            return bad("the interval must be positive");
        }
        if self.window_ns <= 0 {
            return bad("the statistics window must be positive");
        }
        if self.cpus.is_empty() {
            return bad("at least one measuring thread is needed");
        }
        if self.loops == Some(0) {
            return bad("--loops must be at least 1");
        }
        if self.duration_ns.is_some_and(|d| d <= 0) {
            return bad("--duration must be positive");
        }
        wait::check(self.method, self.clock, self.cpus.len(), self.period_ns).map_err(Error::Config)
    }
}

/// What was actually set, next to what was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    /// The policy the measuring threads run under (read back from the kernel).
    pub policy: Policy,
    /// Why the policy differs from the request (for `auto`), if it does.
    pub policy_note: Option<String>,
    /// Whether `mlockall` is in force.
    pub mlock: bool,
    /// Why memory is not locked, if it was asked for.
    pub mlock_note: Option<String>,
    /// The PM QoS CPU latency limit held, µs, if any.
    pub pm_qos_us: Option<i32>,
    /// Why PM QoS is not held, if it was asked for.
    pub pm_qos_note: Option<String>,
    /// The timer slack of the measuring threads, ns (read back).
    pub timer_slack_ns: u64,
    /// A remark on timer slack (for example that RT policies ignore it).
    pub timer_slack_note: Option<String>,
    /// The method used.
    pub method: MethodKind,
    /// The kernel interface the method used (e.g. `clock_nanosleep(TIMER_ABSTIME)`).
    pub interface: String,
    /// The coarsest step in which the method's timeout is expressed, ns.
    pub granularity_ns: Nanos,
    /// A warning about the method under the applied settings (for example that a busy-wait
    /// under SCHED_FIFO can be RT-throttled), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method_note: Option<String>,
    /// The clock.
    pub clock: ClockId,
    /// Per measuring thread: index, kernel thread id and CPU.
    pub threads: Vec<AppliedThread>,
}

/// One measuring thread as started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedThread {
    /// Thread index (0-based).
    pub thread: usize,
    /// Kernel thread id, for `chrt -p`, `taskset -p` and `/proc/<pid>/task/<tid>`.
    pub tid: i32,
    /// CPU it is pinned to, or `None`.
    pub cpu: Option<usize>,
}

/// One second (window) of every thread, delivered while the run goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct SecondReport {
    /// Window index.
    pub index: u64,
    /// Each thread's statistics for the window, by thread index (a thread whose window is
    /// missing — it stopped early — is left out).
    pub threads: Vec<(usize, WindowStats)>,
    /// All threads merged.
    pub merged: WindowStats,
}

/// What a run reports while it goes on.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// Every thread is set up and about to start; the settings in force.
    Started(&'a Applied),
    /// A window is complete for every thread.
    Second(&'a SecondReport),
    /// Raw wake-ups of one thread, in order (only with [`RunConfig::stream_samples`]).
    Samples {
        /// Thread index.
        thread: usize,
        /// The next samples of that thread.
        samples: &'a [RawSample],
    },
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// What was set.
    pub applied: Applied,
    /// Per measuring thread.
    pub threads: Vec<ThreadStats>,
    /// All threads merged (same shape; `thread`, `tid`, `cpu` are `None`).
    pub summary: ThreadStats,
    /// Wall-clock time when measuring started.
    pub started_at: SystemTime,
    /// Wall-clock time when measuring ended.
    pub ended_at: SystemTime,
    /// Whether the run was stopped early through the stop flag (Ctrl-C, SIGTERM).
    pub interrupted: bool,
    /// An OS error that ended a measuring thread early, if any.
    pub error: Option<String>,
}

enum Start {
    Go { first_expiry: Nanos },
    Abort,
}

struct SetupReport {
    tid: i32,
    cpu_clock: libc::clockid_t,
    policy: Policy,
    policy_note: Option<String>,
    slack: u64,
    interface: &'static str,
    granularity: Nanos,
}

struct WorkerEnd {
    cpu_time: Nanos,
    wall: Nanos,
    error: Option<String>,
    report: Option<MethodReport>,
}

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
    // The interval timer's SIGALRM goes to the process: keep it off this thread (and the
    // threads it starts, which inherit the mask) so that it lands on the measuring thread.
    let _alarm_block = match cfg.method {
        MethodKind::Itimer => Some(wait::AlarmBlock::new().map_err(|e| Error::Os {
            context: "cannot block SIGALRM in the coordinating thread".into(),
            source: e,
        })?),
        _ => None,
    };
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

/// What a measuring thread is handed: its ends of the rings and channels.
struct WorkerPorts {
    link: crate::worker::WindowLink,
    first_record: Box<WindowRecord>,
    samples: Option<rtrb::Producer<RawSample>>,
    setup_tx: mpsc::Sender<Result<SetupReport, String>>,
    go_rx: mpsc::Receiver<Start>,
}

/// Body of a measuring thread: per-thread setup, report, wait for the start, measure.
fn worker_thread(
    cfg: &RunConfig,
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
        error: Some(msg),
        report: None,
    };
    let prepared = (|| -> Result<_, String> {
        let affinity = match cpu {
            Some(c) => Some(
                AffinityGuard::pin(c)
                    .map_err(|e| format!("cannot pin a measuring thread to CPU {c}: {e}"))?,
            ),
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
                let g = PolicyGuard::apply(other)
                    .map_err(|e| privileges::explain_policy_error(&other, &e))?;
                (g, Some(format!("auto: using other, because {why}")))
            }
            Err(e) => return Err(privileges::explain_policy_error(&policy, &e)),
        };
        let note = note.or_else(|| {
            (cfg.policy == PolicyRequest::Auto).then(|| {
                format!("auto: using fifo priority {AUTO_PRIORITY}, the process may set it")
            })
        });
        let slack = match cfg.timer_slack_ns {
            Some(ns) => {
                Some(TimerSlackGuard::set(ns).map_err(|e| format!("cannot set timer slack: {e}"))?)
            }
            None => None,
        };
        let method = wait::create(cfg.method, cfg.clock, &cfg.method_options)
            .map_err(|e| wait::explain_setup_error(cfg.method, &e))?;
        let mut cpu_clock: libc::clockid_t = 0;
        // SAFETY: pthread_self is this thread; `cpu_clock` is writable.
        unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut cpu_clock) };
        let report = SetupReport {
            tid: setup::gettid(),
            cpu_clock,
            policy: setup::current_policy().unwrap_or(policy),
            policy_note: note,
            slack: setup::current_timer_slack(),
            interface: method.interface(),
            granularity: method.granularity_ns(),
        };
        Ok(((affinity, policy_guard, slack), method, report))
    })();
    let (guards, mut method, report) = match prepared {
        Ok(p) => p,
        Err(msg) => {
            let _ = setup_tx.send(Err(msg.clone()));
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
    let params = LoopParams {
        first_expiry,
        period: cfg.period_ns,
        max_samples: cfg.loops.unwrap_or(u64::MAX),
        end: cfg
            .duration_ns
            .map_or(Nanos::MAX, |d| first_expiry.saturating_add(d)),
        overrun: cfg.overrun,
        window: cfg.window_ns,
    };
    let cpu0 = read_clock(libc::CLOCK_THREAD_CPUTIME_ID);
    let end = measure(
        method.as_mut(),
        &params,
        stop,
        &mut link,
        first_record,
        samples.as_mut(),
    );
    let cpu1 = read_clock(libc::CLOCK_THREAD_CPUTIME_ID);
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

/// Per-thread totals kept by the collector.
struct ThreadAccum {
    total: Box<WindowRecord>,
    windows: Vec<WindowStats>,
    delivered_through: Option<u64>,
    cpu_clock: libc::clockid_t,
    last_cpu_read: Option<(Nanos, Nanos)>,
}

/// A second some threads have delivered: their statistics and their merged record.
type PendingSecond = (Vec<(usize, WindowStats)>, Option<Box<WindowRecord>>);

/// Receives windows from the measuring threads, keeps totals, groups windows by second.
struct Collector {
    links: Vec<CollectorLink>,
    sample_rings: Vec<Option<rtrb::Consumer<RawSample>>>,
    accums: Vec<ThreadAccum>,
    pending: BTreeMap<u64, PendingSecond>,
    period: Nanos,
    window: Nanos,
}

impl Collector {
    fn new(
        cfg: &RunConfig,
        reports: &[SetupReport],
        links: Vec<(CollectorLink, Option<rtrb::Consumer<RawSample>>)>,
    ) -> Self {
        let (links, sample_rings) = links.into_iter().unzip();
        Collector {
            sample_rings,
            accums: reports
                .iter()
                .map(|r| ThreadAccum {
                    total: Box::new(WindowRecord::new()),
                    windows: Vec::new(),
                    delivered_through: None,
                    cpu_clock: r.cpu_clock,
                    last_cpu_read: None,
                })
                .collect(),
            links,
            pending: BTreeMap::new(),
            period: cfg.period_ns,
            window: cfg.window_ns,
        }
    }

    /// Takes the first CPU-time reading of every thread, as measuring starts.
    fn start_cpu_clocks(&mut self) {
        let wall = read_clock(libc::CLOCK_MONOTONIC);
        for acc in &mut self.accums {
            acc.last_cpu_read = thread_cpu(acc.cpu_clock).map(|c| (wall, c));
        }
    }

    /// Takes every finished window; emits the seconds every thread has delivered (all of
    /// them when `final_drain`).
    fn drain(&mut self, observer: &mut dyn FnMut(RunEvent<'_>), final_drain: bool) {
        for (thread, ring) in self.sample_rings.iter_mut().enumerate() {
            let Some(ring) = ring else { continue };
            let n = ring.slots();
            if let Ok(chunk) = ring.read_chunk(n) {
                let (a, b) = chunk.as_slices();
                for part in [a, b] {
                    if !part.is_empty() {
                        observer(RunEvent::Samples {
                            thread,
                            samples: part,
                        });
                    }
                }
                chunk.commit_all();
            }
        }
        let threads = self.links.len();
        for (t, link) in self.links.iter_mut().enumerate() {
            let acc = &mut self.accums[t];
            while let Ok(mut rec) = link.full.pop() {
                let cpu = cpu_percent(acc, rec.thread_cpu_ns);
                let stats = window_stats(&rec, self.window, self.period, cpu);
                acc.total.merge(&rec);
                acc.delivered_through = Some(rec.index + rec.span - 1);
                if rec.samples() > 0 {
                    acc.windows.push(stats.clone());
                    let entry = self.pending.entry(rec.index).or_default();
                    if threads > 1 {
                        // Merged record for the second, allocated only when there is
                        // something to merge.
                        let merged = entry.1.get_or_insert_with(|| Box::new(WindowRecord::new()));
                        merged.merge(&rec);
                        merged.index = rec.index;
                        merged.span = merged.span.max(rec.span);
                    }
                    entry.0.push((t, stats));
                }
                rec.clear();
                let _ = link.empty.push(rec);
            }
        }
        let ready_through = if final_drain {
            u64::MAX
        } else {
            self.accums
                .iter()
                .map(|a| a.delivered_through.unwrap_or(0))
                .min()
                .unwrap_or(0)
        };
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() > ready_through
                || (!final_drain && self.accums.iter().any(|a| a.delivered_through.is_none()))
            {
                break;
            }
            let (index, (mut per_thread, merged_rec)) = entry.remove_entry();
            per_thread.sort_by_key(|(t, _)| *t);
            let merged = match merged_rec {
                Some(rec) => {
                    let cpu = per_thread
                        .iter()
                        .filter_map(|(_, w)| w.cpu_percent)
                        .reduce(|a, b| a + b);
                    window_stats(&rec, self.window, self.period, cpu)
                }
                None => per_thread[0].1.clone(),
            };
            let report = SecondReport {
                index,
                threads: per_thread,
                merged,
            };
            observer(RunEvent::Second(&report));
        }
    }

    fn finish(self, applied: &Applied, ends: &[WorkerEnd]) -> (Vec<ThreadStats>, ThreadStats) {
        let mut all = WindowRecord::new();
        let mut threads = Vec::new();
        for (t, acc) in self.accums.into_iter().enumerate() {
            all.merge(&acc.total);
            let end = &ends[t];
            threads.push(thread_stats(
                &acc.total,
                self.period,
                Some(&applied.threads[t]),
                (end.cpu_time, end.wall),
                end.report.clone(),
                acc.windows,
            ));
        }
        let cpu: Nanos = ends.iter().map(|e| e.cpu_time).sum();
        let wall = ends.iter().map(|e| e.wall).max().unwrap_or(0);
        let mut merged_windows: BTreeMap<u64, Vec<&WindowStats>> = BTreeMap::new();
        for t in &threads {
            for w in &t.windows {
                merged_windows.entry(w.index).or_default().push(w);
            }
        }
        let summary_windows = if threads.len() == 1 {
            threads[0].windows.clone()
        } else {
            merged_windows
                .values()
                .map(|ws| merge_window_stats(ws))
                .collect()
        };
        let reports: Vec<&MethodReport> = ends.iter().filter_map(|e| e.report.as_ref()).collect();
        let report = (!reports.is_empty()).then(|| MethodReport::merge(reports));
        let summary = thread_stats(
            &all,
            self.period,
            None,
            (cpu, wall),
            report,
            summary_windows,
        );
        (threads, summary)
    }
}

/// The measuring thread's CPU use since the collector's previous read, % of one core.
/// `final_cpu` is the thread's own last read, for the record it handed over on exit.
fn cpu_percent(acc: &mut ThreadAccum, final_cpu: Option<Nanos>) -> Option<f64> {
    let cpu = match final_cpu {
        Some(c) => c,
        None => thread_cpu(acc.cpu_clock)?,
    };
    let wall = read_clock(libc::CLOCK_MONOTONIC);
    let prev = acc.last_cpu_read.replace((wall, cpu))?;
    let dwall = wall - prev.0;
    (dwall > 0).then(|| 100.0 * (cpu - prev.1) as f64 / dwall as f64)
}

/// Reads another thread's CPU clock (from `pthread_getcpuclockid`); `None` once it exited.
fn thread_cpu(clock: libc::clockid_t) -> Option<Nanos> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable; the clock id came from pthread_getcpuclockid.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0).then(|| crate::time::from_timespec(&ts))
}

/// Merges per-thread window statistics after the fact (for the summary's windows): exact
/// for counts, extremes and means; the p99 and the SDs are the worst thread's.
fn merge_window_stats(ws: &[&WindowStats]) -> WindowStats {
    let samples: u64 = ws.iter().map(|w| w.samples).sum();
    let weighted = |f: fn(&WindowStats) -> Option<f64>| {
        let (sum, n) = ws.iter().fold((0.0, 0u64), |(s, n), w| match f(w) {
            Some(v) => (s + v * w.samples as f64, n + w.samples),
            None => (s, n),
        });
        (n > 0).then(|| sum / n as f64)
    };
    let maxf = |f: fn(&WindowStats) -> Option<f64>| ws.iter().filter_map(|w| f(w)).reduce(f64::max);
    WindowStats {
        index: ws[0].index,
        span: ws.iter().map(|w| w.span).max().unwrap_or(1),
        start_ns: ws[0].start_ns,
        samples,
        overruns: ws.iter().map(|w| w.overruns).sum(),
        latency_min: ws.iter().filter_map(|w| w.latency_min).min(),
        latency_mean: weighted(|w| w.latency_mean),
        latency_p99: ws.iter().filter_map(|w| w.latency_p99).max(),
        latency_max: ws.iter().filter_map(|w| w.latency_max).max(),
        period_mean: weighted(|w| w.period_mean),
        period_stddev: maxf(|w| w.period_stddev),
        period_rms_jitter: maxf(|w| w.period_rms_jitter),
        period_min: ws.iter().filter_map(|w| w.period_min).min(),
        period_max: ws.iter().filter_map(|w| w.period_max).max(),
        cpu_percent: ws.iter().filter_map(|w| w.cpu_percent).reduce(|a, b| a + b),
    }
}

/// Builds the statistics of one thread (or of all, merged) from its totals; `times` is
/// (CPU time, wall time) of the measuring loop, ns.
pub(crate) fn thread_stats(
    total: &WindowRecord,
    period: Nanos,
    applied: Option<&AppliedThread>,
    (cpu_time, wall): (Nanos, Nanos),
    method_report: Option<MethodReport>,
    windows: Vec<WindowStats>,
) -> ThreadStats {
    ThreadStats {
        thread: applied.map(|a| a.thread),
        tid: applied.map(|a| a.tid),
        cpu: applied.and_then(|a| a.cpu),
        samples: total.samples(),
        overruns: total.overruns,
        samples_dropped: total.samples_dropped,
        latency_ns: latency_stats(&total.latency, &total.latency_hist),
        period_ns: period_stats(&total.period, &total.period_dev_hist, period),
        cpu_time_ns: cpu_time,
        wall_time_ns: wall,
        cpu_percent: if wall > 0 {
            100.0 * cpu_time as f64 / wall as f64
        } else {
            0.0
        },
        method_report,
        windows,
    }
}
