//! `tickscope attach`'s run: the timer wake-ups of another program's threads, read from a
//! trace instance that follows the process ([`tickscope_explain::tracefs::TraceInstance::follow`]),
//! joined with the expiries they answered ([`tickscope_explain::wakeups`]) and folded into a
//! run's windows ([`tickscope_engine::run::Observed`]), so that every sink sees them as it
//! sees a run's (docs/attach.md).
//!
//! [`discover`] watches the threads before the measurement, to find the periodic ones.
//! [`Observation::run`] is the measurement: it narrows the trace to the waits, reads it every
//! [`READ_EVERY`] and hands each wake-up to its thread's window until the stop flag, the
//! duration or the target's exit. Threads that begin waking from a timer during the
//! measurement join it once found periodic ([`tickscope_explain::roster`]); threads that
//! exit are noted. Nothing is changed in the target.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tickscope_engine::run::{Applied, AppliedThread, Observed, RunConfig, RunEvent, RunOutcome};
use tickscope_engine::sample::RawSample;
use tickscope_engine::time::{read_clock, Nanos, NS_PER_MS, NS_PER_SEC};
use tickscope_explain::infer::{clock_name, Pattern};
use tickscope_explain::roster::{Roster, Routed};
use tickscope_explain::tracefs::{attach_events, InstanceSpec, TraceInstance};
use tickscope_explain::wakeups::{Seen, Tracker, WakeUp};
use tickscope_explain::Event;
use tickscope_report::sink::RunSink;
use tickscope_report::target::{Target, TargetThread};
use tickscope_report::RunDocument;
use tickscope_system::target as proc_target;

/// How often the trace is read.
pub const READ_EVERY: Duration = Duration::from_millis(20);
/// Per-CPU trace buffer, KiB: the target's timer and wait events only.
pub const BUFFER_KB: u32 = 4096;
/// At most this many wake-ups are kept per thread while finding the periodic ones.
const DISCOVER_CAP: usize = 100_000;

/// The trace instance's settings for `events` (every CPU, [`BUFFER_KB`] each).
pub fn instance_spec(events: Vec<tickscope_explain::tracefs::EventSpec>) -> InstanceSpec {
    InstanceSpec {
        buffer_kb: BUFFER_KB,
        cpus: Vec::new(),
        events,
    }
}

/// The trace's text, read as it comes and decoded.
#[derive(Debug, Default)]
pub struct TraceReader {
    buf: Vec<u8>,
    parser: tickscope_explain::LineParser,
}

impl TraceReader {
    /// The events the trace holds now (a line cut at the end of a read waits for the next).
    ///
    /// # Errors
    /// The OS error of the read, in words.
    pub fn read(&mut self, trace: &mut TraceInstance) -> Result<Vec<Event>, String> {
        trace
            .read_available(&mut self.buf)
            .map_err(|e| format!("reading the trace: {e}"))?;
        let Some(end) = self.buf.iter().rposition(|&b| b == b'\n') else {
            return Ok(Vec::new());
        };
        let text = String::from_utf8_lossy(&self.buf[..=end]);
        let parser = &mut self.parser;
        let events = text.lines().filter_map(|l| parser.parse(l)).collect();
        drop(text);
        self.buf.drain(..=end);
        Ok(events)
    }
}

/// Watches the followed threads of process `pid` for `for_ns` (or until `stop`, or the
/// process's exit) and returns each thread's timer wake-ups, in order.
///
/// # Errors
/// A failure to read the trace, in words.
pub fn discover(
    pid: i32,
    trace: &mut TraceInstance,
    reader: &mut TraceReader,
    tracker: &mut Tracker,
    for_ns: Nanos,
    stop: &AtomicBool,
) -> Result<BTreeMap<i32, Vec<WakeUp>>, String> {
    let started = Instant::now();
    let mut found: BTreeMap<i32, Vec<WakeUp>> = BTreeMap::new();
    loop {
        let done = started.elapsed().as_nanos() as Nanos >= for_ns
            || stop.load(Ordering::Relaxed)
            || !proc_target::alive(pid);
        for e in reader.read(trace)? {
            if let Seen::WakeUp(w) = tracker.push(&e) {
                let list = found.entry(w.tid).or_default();
                if list.len() < DISCOVER_CAP {
                    list.push(w);
                }
            }
        }
        if done {
            return Ok(found);
        }
        std::thread::sleep(READ_EVERY);
    }
}

/// The document's line for thread `p` of process `pid`.
pub fn target_thread(pid: i32, p: &Pattern) -> TargetThread {
    TargetThread {
        tid: p.tid,
        comm: proc_target::thread_comm(pid, p.tid),
        period_ns: p.period_ns,
        wait: p.wait.describe(),
        method: p.wait.method_name().map(str::to_string),
        clock: clock_name(p.clock).into(),
        regular: p.regular,
        periodic: p.periodic,
    }
}

/// Adds the `target` section to every document (put it first among the sinks, so that
/// every other one sees it); the observation fills in its threads and notes as it goes.
pub struct TargetSink(pub Rc<RefCell<Target>>);

impl RunSink for TargetSink {
    fn annotate(&mut self, doc: &mut RunDocument) {
        doc.target = Some(self.0.borrow().clone());
    }
}

/// One observation: what it reads and where it reports.
pub struct Observation<'a> {
    /// The process.
    pub pid: i32,
    /// The threads measured from the start, with their patterns.
    pub chosen: Vec<Pattern>,
    /// Whether threads found periodic later join (false when the user named the threads).
    pub follow_new: bool,
    /// The settings in force in the chosen threads, as a run reports its own.
    pub applied: Applied,
    /// The trace instance following the process.
    pub trace: &'a mut TraceInstance,
    /// Its reader.
    pub reader: &'a mut TraceReader,
    /// The join of expiries and wake-ups, carried over from [`discover`].
    pub tracker: &'a mut Tracker,
    /// The document's `target` section ([`TargetSink`]).
    pub target: Rc<RefCell<Target>>,
}

/// The state of a measurement in progress.
struct Measuring {
    pid: i32,
    t0: Nanos,
    end: Option<Nanos>,
    observed: Observed,
    roster: Roster,
    batch: Vec<Vec<RawSample>>,
    cpu_before: Vec<Option<Nanos>>,
    applied: Applied,
    ignored: u64,
    notes: Vec<String>,
}

impl Measuring {
    fn after(&self, ts: Nanos) -> String {
        format!("{:.1} s", (ts - self.t0) as f64 / NS_PER_SEC as f64)
    }

    /// Counts wake-up `w` of measured thread `i`, when it lies in the observation.
    fn record(&mut self, i: usize, w: &WakeUp) {
        if w.expiry >= self.t0 && self.end.is_none_or(|e| w.expiry < e) {
            let s = self
                .observed
                .record(i, w.expiry, w.woke, u64::from(w.passed));
            self.batch[i].push(s);
        } else {
            self.ignored += 1;
        }
    }

    /// Thread `p`, found periodic now, is measured from here on, its wake-ups so far too;
    /// the sinks learn of it first ([`RunEvent::Joined`]).
    fn join(
        &mut self,
        (index, p, wake_ups): (usize, &Pattern, &[WakeUp]),
        target: &RefCell<Target>,
        observer: &mut dyn FnMut(RunEvent<'_>),
    ) {
        let i = self.observed.add_thread(p.period_ns.max(1));
        debug_assert_eq!(i, index);
        self.batch.push(Vec::new());
        self.cpu_before.push(proc_target::cpu_time(p.tid));
        self.applied.threads.push(AppliedThread {
            thread: i,
            tid: p.tid,
            cpu: None,
        });
        let line = target_thread(self.pid, p);
        let first = wake_ups.first().map_or(self.t0, |w| w.woke);
        self.notes.push(format!(
            "thread {} ({}) began waking from a timer after {}: periodic, every {}, {}; \
             measured from then on as T{i}",
            p.tid,
            line.comm,
            self.after(first),
            tickscope_engine::units::ns_i(p.period_ns),
            p.wait.describe()
        ));
        target.borrow_mut().threads.push(line);
        observer(RunEvent::Joined(&self.applied));
        for w in wake_ups {
            self.record(i, w);
        }
    }

    /// Takes one event of the trace.
    fn take(
        &mut self,
        e: &Event,
        (tracker, target): (&mut Tracker, &RefCell<Target>),
        observer: &mut dyn FnMut(RunEvent<'_>),
    ) {
        match tracker.push(e) {
            Seen::WakeUp(w) => match self.roster.route(w) {
                Routed::Measured(i, w) => self.record(i, &w),
                Routed::Joined {
                    index,
                    pattern,
                    wake_ups,
                } => self.join((index, &pattern, &wake_ups), target, observer),
                Routed::Kept => {}
                Routed::Unmeasured { tid, first } => {
                    self.ignored += 1;
                    if first {
                        self.notes.push(format!(
                            "thread {tid} ({}) woke from a timer but is not measured \
                             (not among the threads named, not periodic, a wait attach \
                             has no method for, or {} threads measured already)",
                            proc_target::thread_comm(self.pid, tid),
                            tickscope_explain::roster::MAX_MEASURED
                        ));
                    }
                }
            },
            Seen::Exit(t) if self.roster.exited(t) => {
                let i = self.roster.index_of(t).unwrap_or(0);
                let at = self.after(e.ts);
                self.notes
                    .push(format!("thread {t} (T{i}) exited after {at}"));
            }
            _ => {}
        }
    }

    /// Hands the samples read to the sinks (when they stream them) and closes the windows
    /// the trace has passed.
    fn flush(&mut self, cfg: &RunConfig, now: Nanos, observer: &mut dyn FnMut(RunEvent<'_>)) {
        if cfg.stream_samples {
            for (i, b) in self.batch.iter().enumerate() {
                if !b.is_empty() {
                    observer(RunEvent::Samples {
                        thread: i,
                        samples: b,
                    });
                }
            }
        }
        self.batch.iter_mut().for_each(Vec::clear);
        self.observed.close_before(now, observer);
    }

    /// Each thread's CPU time since it was first measured, ns (0 when unknown).
    fn cpu(&self) -> Vec<Nanos> {
        self.applied
            .threads
            .iter()
            .zip(&self.cpu_before)
            .map(|(t, b)| match (b, proc_target::cpu_time(t.tid)) {
                (Some(b), Some(a)) => a - b,
                _ => 0,
            })
            .collect()
    }
}

impl Observation<'_> {
    /// The system calls whose exits are wake-ups: the chosen threads' waits, and with
    /// [`Observation::follow_new`] every wait attach has a method for.
    fn wait_syscalls(&self) -> Vec<i64> {
        let mut nrs: Vec<i64> = self
            .chosen
            .iter()
            .flat_map(|p| p.syscalls.clone())
            .collect();
        if self.follow_new {
            nrs.extend(tickscope_explain::infer::WAIT_SYSCALLS);
        }
        nrs.sort_unstable();
        nrs.dedup();
        nrs
    }

    fn start(&mut self, cfg: &RunConfig) -> (Measuring, Option<String>) {
        let nrs = self.wait_syscalls();
        self.tracker.set_wait_syscalls(nrs.clone());
        let error = self
            .trace
            .start(&instance_spec(attach_events(&nrs)))
            .err()
            .map(|e| format!("attach: {e}"));
        let t0 = read_clock(libc::CLOCK_MONOTONIC);
        let tids: Vec<i32> = self.chosen.iter().map(|p| p.tid).collect();
        let mut observed = Observed::new(
            cfg.period_ns,
            cfg.window_ns,
            t0,
            (
                cfg.keep_windows,
                cfg.window_histograms || cfg.window_latency_histograms,
            ),
        );
        for p in &self.chosen {
            observed.add_thread(p.period_ns.max(1));
        }
        let m = Measuring {
            pid: self.pid,
            t0,
            end: cfg.duration_ns.map(|d| t0 + d),
            observed,
            roster: Roster::new(&tids, self.follow_new),
            batch: vec![Vec::new(); tids.len()],
            cpu_before: tids.iter().map(|t| proc_target::cpu_time(*t)).collect(),
            applied: self.applied.clone(),
            ignored: 0,
            notes: Vec::new(),
        };
        (m, error)
    }

    /// The run (see the module text). A failure to read the trace ends it with that
    /// failure as the run's error.
    pub fn run(
        &mut self,
        cfg: &RunConfig,
        stop: &Arc<AtomicBool>,
        observer: &mut dyn FnMut(RunEvent<'_>),
    ) -> RunOutcome {
        observer(RunEvent::Started(&self.applied));
        let started_at = SystemTime::now();
        let (mut m, mut error) = self.start(cfg);
        let longest = self.chosen.iter().map(|p| p.period_ns).max().unwrap_or(0);
        let margin = 2 * longest + 50 * NS_PER_MS;
        while error.is_none() {
            let now = read_clock(libc::CLOCK_MONOTONIC);
            let gone = !proc_target::alive(self.pid);
            let ended = stop.load(Ordering::Relaxed) || m.end.is_some_and(|e| now >= e + margin);
            match self.reader.read(self.trace) {
                Ok(events) => events
                    .iter()
                    .for_each(|e| m.take(e, (self.tracker, &self.target), observer)),
                Err(e) => error = Some(e),
            }
            m.flush(cfg, now - margin, observer);
            if gone {
                m.notes
                    .push(format!("process {} exited; detached", self.pid));
            }
            if gone || ended {
                break;
            }
            std::thread::sleep(READ_EVERY);
        }
        self.trace.freeze();
        let cpu = m.cpu();
        {
            let mut t = self.target.borrow_mut();
            t.wake_ups_ignored = m.ignored;
            t.notes = std::mem::take(&mut m.notes);
        }
        let interrupted = stop.load(Ordering::Relaxed);
        let ended_at = SystemTime::now();
        let mut outcome = m.observed.finish(
            m.applied,
            &cpu,
            (started_at, ended_at),
            interrupted,
            observer,
        );
        outcome.error = error;
        outcome
    }
}
