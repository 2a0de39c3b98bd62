//! `tickscope attach --pid PID`: measure the wake-ups of a program that is already running,
//! from kernel trace events alone (docs/attach.md).
//!
//! Steps: check the target and the flags; prepare every output (the same sinks as `tickscope
//! run`); create a private trace instance that follows the process's threads (and those it
//! creates); watch them for `--discover` and infer each one's period, wait and clock
//! ([`tickscope_explain::infer`]); choose the threads (`--tid`, else every periodic one);
//! narrow the trace to their waits; then join each armed expiry with the wake-up that
//! answered it ([`tickscope_explain::wakeups`]) and fold the wake-ups into a run's windows
//! ([`tickscope_engine::run::Observed`]), handing every event to the sinks as a run does. It
//! ends on Ctrl-C, after `-D`, or when the target exits — the summary and the files are
//! written in every case. Nothing is changed in the target.

use super::attach_proc as target;
use super::signals::stoppable;
use super::sinks::sinks;
use crate::cli::{AttachArgs, RunArgs};
use crate::console;
use crate::exit::Failure;
use crate::options::{parse_duration, run_plan};
use crate::session_args::{outcome, say};
use clap::{Args, FromArgMatches};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};
use tickscope_engine::run::{Applied, AppliedThread, Observed, RunConfig, RunEvent};
use tickscope_engine::sample::RawSample;
use tickscope_engine::time::{read_clock, ClockId, Nanos, NS_PER_MS, NS_PER_SEC};
use tickscope_engine::wait::MethodKind;
use tickscope_explain::infer::{clock_name, infer, Pattern, Wait};
use tickscope_explain::tracefs::{attach_events, InstanceSpec, TraceInstance};
use tickscope_explain::wakeups::{Seen, Tracker, WakeUp, TS_RESOLUTION_NS};
use tickscope_explain::Event;
use tickscope_report::sink::RunSink;
use tickscope_report::target::{Target, TargetThread};
use tickscope_report::RunDocument;
use tickscope_session::{Plan, Session};

/// How often the trace is read.
const READ_EVERY: Duration = Duration::from_millis(20);
/// Per-CPU trace buffer, KiB: the target's timer and wait events only.
const BUFFER_KB: u32 = 4096;
/// At most this many wake-ups are kept per thread while finding the periodic ones.
const DISCOVER_CAP: usize = 100_000;

/// `tickscope run`'s options at their defaults, with attach's outputs: the sinks are built
/// from them exactly as for a run.
fn run_args(a: &mut AttachArgs) -> Result<RunArgs, Failure> {
    let cmd = RunArgs::augment_args(clap::Command::new("attach"));
    let matches = cmd
        .try_get_matches_from(["attach"])
        .map_err(|e| Failure::Runtime(format!("internal: default options: {e}")))?;
    let mut r = RunArgs::from_arg_matches(&matches)
        .map_err(|e| Failure::Runtime(format!("internal: default options: {e}")))?;
    r.json = a.json.take();
    r.quiet = a.quiet;
    r.redact = a.redact;
    std::mem::swap(&mut r.exports, &mut a.exports);
    std::mem::swap(&mut r.explain, &mut a.explain);
    Ok(r)
}

/// The trace's text, read as it comes and decoded.
struct Reader {
    buf: Vec<u8>,
}

impl Reader {
    /// The events the trace holds now.
    fn read(&mut self, trace: &mut TraceInstance) -> Result<Vec<Event>, Failure> {
        trace
            .read_available(&mut self.buf)
            .map_err(|e| Failure::Runtime(format!("reading the trace: {e}")))?;
        let Some(end) = self.buf.iter().rposition(|&b| b == b'\n') else {
            return Ok(Vec::new());
        };
        let text = String::from_utf8_lossy(&self.buf[..=end]).into_owned();
        self.buf.drain(..=end);
        Ok(text
            .lines()
            .filter_map(tickscope_explain::parse_line)
            .collect())
    }
}

/// One line describing a thread's pattern.
fn describe(pid: i32, p: &Pattern) -> String {
    let period = tickscope_engine::units::ns_i(p.period_ns);
    let what = match p.periodic {
        true => format!("periodic, every {period}"),
        false => format!(
            "not periodic ({} timer wake-ups, {:.0}% of intervals regular)",
            p.wake_ups,
            100.0 * p.regular
        ),
    };
    format!(
        "thread {} ({}): {what}, {} on {}",
        p.tid,
        target::thread_comm(pid, p.tid),
        p.wait.describe(),
        clock_name(p.clock)
    )
}

/// The method tickscope names the wait with.
fn method_of(w: Wait) -> Option<MethodKind> {
    let name = w.method_name()?;
    MethodKind::ALL.iter().copied().find(|m| m.name() == name)
}

/// The threads to measure: those named with `--tid` (refused when one woke from no timer
/// or waits in a way tickscope cannot name), else every periodic one with a known wait.
fn choose(
    pid: i32,
    comm: &str,
    tids: &[i32],
    patterns: &[Pattern],
    discover: &str,
) -> Result<Vec<Pattern>, Failure> {
    if !tids.is_empty() {
        let mut chosen = Vec::new();
        for t in tids {
            let p = patterns.iter().find(|p| p.tid == *t).ok_or_else(|| {
                Failure::Runtime(format!(
                    "thread {t} of process {pid} ({comm}) woke from no timer in the {discover} \
                     watched: nothing to measure (a longer --discover finds slower loops)"
                ))
            })?;
            if method_of(p.wait).is_none() {
                return Err(Failure::Runtime(format!(
                    "thread {t} waits with a {}: attach measures clock_nanosleep, nanosleep, \
                     timerfd, POSIX-timer, itimer, poll, select and epoll waits",
                    p.wait.describe()
                )));
            }
            chosen.push(p.clone());
        }
        return Ok(chosen);
    }
    let chosen: Vec<Pattern> = patterns
        .iter()
        .filter(|p| p.periodic && method_of(p.wait).is_some())
        .cloned()
        .collect();
    if chosen.is_empty() {
        return Err(Failure::Runtime(format!(
            "no periodic thread found in process {pid} ({comm}) in the {discover} watched \
             ({} threads woke from a timer); a longer --discover finds slower loops, --tid \
             measures a thread anyway",
            patterns.len()
        )));
    }
    Ok(chosen)
}

/// The settings in force in the target's threads, as a run reports its own.
fn applied(chosen: &[Pattern], method: MethodKind, clock: ClockId) -> Applied {
    let first = chosen[0].tid;
    let waits: BTreeSet<String> = chosen.iter().map(|p| p.wait.describe()).collect();
    Applied {
        policy: target::policy(first),
        policy_note: None,
        mlock: false,
        mlock_note: None,
        pm_qos_us: None,
        pm_qos_note: None,
        timer_slack_ns: target::timer_slack(first).unwrap_or(0),
        timer_slack_note: None,
        method,
        interface: waits.into_iter().collect::<Vec<_>>().join(", "),
        granularity_ns: 1,
        method_note: None,
        clock,
        threads: chosen
            .iter()
            .enumerate()
            .map(|(thread, p)| AppliedThread {
                thread,
                tid: p.tid,
                cpu: None,
            })
            .collect(),
        housekeeping: None,
    }
}

fn clock_id(clock: u64) -> ClockId {
    match clock_name(clock) {
        "realtime" => ClockId::Realtime,
        "boottime" => ClockId::Boottime,
        "tai" => ClockId::Tai,
        _ => ClockId::Monotonic,
    }
}

/// Watches the followed threads for `for_ns` and returns each one's timer wake-ups.
fn discover(
    pid: i32,
    trace: &mut TraceInstance,
    reader: &mut Reader,
    tracker: &mut Tracker,
    for_ns: Nanos,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<BTreeMap<i32, Vec<WakeUp>>, Failure> {
    let started = Instant::now();
    let mut found: BTreeMap<i32, Vec<WakeUp>> = BTreeMap::new();
    loop {
        let done = started.elapsed().as_nanos() as Nanos >= for_ns
            || stop.load(Ordering::Relaxed)
            || !target::alive(pid);
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

/// Runs `tickscope attach`.
///
/// # Errors
/// [`Failure::Usage`] for bad flags, a process or thread that does not exist, missing
/// privileges (named with the fix) or an output that cannot be written;
/// [`Failure::Runtime`] when no thread can be measured or a file cannot be written;
/// [`Failure::Interrupted`] when stopped before measuring.
pub fn execute(mut args: AttachArgs) -> Result<(), Failure> {
    let pid = args.pid;
    if pid <= 0 {
        return Err(Failure::Usage(format!(
            "--pid {pid} is not a process id (a positive number)"
        )));
    }
    let comm =
        target::comm(pid).ok_or_else(|| Failure::Usage(format!("--pid {pid}: no such process")))?;
    let present = target::threads(pid);
    for t in &args.tid {
        if !present.contains(t) {
            let list: Vec<String> = present.iter().map(|t| t.to_string()).collect();
            return Err(Failure::Usage(format!(
                "--tid {t} is not a thread of process {pid} ({comm}); its threads: {}",
                list.join(" ")
            )));
        }
    }
    let duration_ns = match &args.duration {
        Some(d) => Some(parse_duration(d, "-D", NS_PER_SEC).map_err(Failure::Usage)?),
        None => None,
    };
    let discover_ns = parse_duration(&args.discover, "--discover", NS_PER_SEC)
        .map_err(Failure::Usage)?
        .min(600 * NS_PER_SEC);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Failure::Usage(
            "attach reads another program's wake-ups from kernel trace events (tracefs), \
             which needs root: run it with sudo (tickscope run measures its own threads \
             without root)"
                .into(),
        ));
    }
    let run_args = run_args(&mut args)?;
    keep_off(&present);
    let stop = stoppable();
    let sinks: Vec<Box<dyn RunSink>> = match args.list {
        true => Vec::new(),
        false => sinks(&run_args, false, &stop, true)?,
    };
    let spec = |events| InstanceSpec {
        buffer_kb: BUFFER_KB,
        cpus: Vec::new(),
        events,
    };
    let (mut trace, _) = TraceInstance::create_named(&spec(Vec::new()), Some("attach"))
        .map_err(|e| Failure::Usage(format!("attach: {e}")))?;
    trace
        .follow(&present)
        .and_then(|_| trace.start(&spec(attach_events(&[]))))
        .map_err(|e| Failure::Usage(format!("attach: {e}")))?;
    let mut reader = Reader { buf: Vec::new() };
    let mut tracker = Tracker::new(target::clock_offsets(), None);
    let found = discover(
        pid,
        &mut trace,
        &mut reader,
        &mut tracker,
        discover_ns,
        &stop,
    )?;
    if stop.load(Ordering::Relaxed) {
        return Err(Failure::Interrupted(
            "interrupted while finding the periodic threads".into(),
        ));
    }
    if !target::alive(pid) {
        return Err(Failure::Runtime(format!(
            "process {pid} ({comm}) exited while its threads were being watched"
        )));
    }
    let patterns: Vec<Pattern> = found.iter().filter_map(|(t, w)| infer(*t, w)).collect();
    let shown = !args.quiet || args.list;
    if shown {
        console::line(format!(
            "attached to process {pid} ({comm}), {} threads; woken by a timer in the first {}:",
            present.len(),
            args.discover
        ));
        for p in &patterns {
            console::line(format!("  {}", describe(pid, p)));
        }
    }
    let chosen = choose(pid, &comm, &args.tid, &patterns, &args.discover)?;
    if args.list {
        return Ok(());
    }
    measure(MeasureInput {
        pid,
        comm,
        chosen,
        duration_ns,
        redact: run_args.redact,
        trace,
        reader,
        tracker,
        sinks,
        stop: &stop,
    })
}

/// Moves every thread of tickscope (and those it starts later, which inherit the mask) to
/// the CPUs the target's threads `present` may not use, so that the observer never runs on
/// the observed CPUs (the housekeeping rule of `run`, docs/attach.md); when the target may
/// run everywhere, says that they share its CPUs.
fn keep_off(present: &[i32]) {
    let target_cpus = target::cpus_of(present);
    let free: Vec<usize> = tickscope_engine::setup::allowed_cpus()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !target_cpus.contains(c))
        .collect();
    let placement = match free.is_empty() {
        true => Err("the target may run on every CPU tickscope may use".to_string()),
        false => Ok(free),
    };
    match tickscope_session::Placement::new(placement) {
        Ok(p) => {
            if let Some(failed) = p.after_start(&[]) {
                eprintln!("tickscope: {failed}");
            }
            eprintln!("tickscope: {}", p.describe());
        }
        Err(e) => eprintln!("tickscope: cannot read tickscope's CPU affinity ({e})"),
    }
}

/// What the measurement needs from the preparation.
struct MeasureInput<'a> {
    pid: i32,
    comm: String,
    chosen: Vec<Pattern>,
    duration_ns: Option<Nanos>,
    redact: bool,
    trace: TraceInstance,
    reader: Reader,
    tracker: Tracker,
    sinks: Vec<Box<dyn RunSink>>,
    stop: &'a std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Adds the `target` section to every document (first among the sinks, so that every other
/// one sees it); the observation fills in its notes as it goes.
struct TargetSink(Rc<RefCell<Target>>);

impl RunSink for TargetSink {
    fn annotate(&mut self, doc: &mut RunDocument) {
        doc.target = Some(self.0.borrow().clone());
    }
}

/// The measurement: one session ([`tickscope_session::Session::run_with`]) whose one run
/// is the observation of the chosen threads.
fn measure(m: MeasureInput<'_>) -> Result<(), Failure> {
    let MeasureInput {
        pid,
        comm,
        chosen,
        duration_ns,
        redact,
        mut trace,
        mut reader,
        mut tracker,
        mut sinks,
        stop,
    } = m;
    let method = method_of(chosen[0].wait).expect("chosen threads have a method");
    let clock = clock_id(chosen[0].clock);
    let mut nrs: Vec<i64> = chosen.iter().flat_map(|p| p.syscalls.clone()).collect();
    nrs.sort_unstable();
    nrs.dedup();
    let defaults = RunArgs::from_arg_matches(
        &RunArgs::augment_args(clap::Command::new("attach"))
            .try_get_matches_from(["attach"])
            .map_err(|e| Failure::Runtime(format!("internal: {e}")))?,
    )
    .map_err(|e| Failure::Runtime(format!("internal: {e}")))?;
    let plan = run_plan(&defaults).map_err(Failure::Runtime)?;
    let config = RunConfig {
        method,
        clock,
        period_ns: chosen[0].period_ns.max(1),
        loops: None,
        duration_ns,
        cpus: vec![None; chosen.len()],
        mlock: false,
        timer_slack_ns: None,
        pm_qos_us: None,
        pm_qos_required: false,
        ..plan.config
    };
    let target = Rc::new(RefCell::new(Target {
        pid,
        comm: comm.clone(),
        threads: chosen
            .iter()
            .map(|p| TargetThread {
                tid: p.tid,
                comm: target::thread_comm(pid, p.tid),
                period_ns: p.period_ns,
                wait: p.wait.describe(),
                clock: clock_name(p.clock).into(),
                regular: p.regular,
                periodic: p.periodic,
            })
            .collect(),
        woke_point: "sys_exit".into(),
        woke_resolution_ns: TS_RESOLUTION_NS,
        wake_ups_ignored: 0,
        notes: Vec::new(),
    }));
    sinks.insert(0, Box::new(TargetSink(Rc::clone(&target))));
    let plan = Plan {
        config,
        methods: vec![method],
        rounds: 1,
    };
    let mut session = Session::new(plan, tickscope_system::system::detect(), &say);
    session.keep_windows = true;
    session.command_line = Some(std::env::args_os().collect());
    session.redact = redact;
    let applied = applied(&chosen, method, clock);
    let mut runner = |cfg: &RunConfig,
                      stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
                      observer: &mut dyn FnMut(RunEvent<'_>)| {
        Ok(observe(
            Observation {
                pid,
                chosen: &chosen,
                nrs: &nrs,
                applied: applied.clone(),
                trace: &mut trace,
                reader: &mut reader,
                tracker: &mut tracker,
                target: &target,
            },
            cfg,
            stop,
            observer,
        ))
    };
    let result = session.run_with(sinks, stop, &mut runner);
    if target
        .borrow()
        .notes
        .iter()
        .any(|n| n.ends_with("exited; detached"))
    {
        eprintln!("tickscope: process {pid} ({comm}) exited; detached");
    }
    outcome(result)
}

/// What one observation reads and where it reports.
struct Observation<'a> {
    pid: i32,
    chosen: &'a [Pattern],
    nrs: &'a [i64],
    applied: Applied,
    trace: &'a mut TraceInstance,
    reader: &'a mut Reader,
    tracker: &'a mut Tracker,
    target: &'a Rc<RefCell<Target>>,
}

/// The run: narrows the trace to the chosen threads' waits, then reads it every
/// [`READ_EVERY`], each wake-up into its window, until `stop`, `-D` or the target's exit.
/// A failure to read the trace ends the run with it as the run's error.
fn observe(
    o: Observation<'_>,
    cfg: &RunConfig,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    observer: &mut dyn FnMut(RunEvent<'_>),
) -> tickscope_engine::run::RunOutcome {
    let Observation {
        pid,
        chosen,
        nrs,
        applied,
        trace,
        reader,
        tracker,
        target: doc_target,
    } = o;
    observer(RunEvent::Started(&applied));
    tracker.set_wait_syscalls(nrs.to_vec());
    let mut error = trace
        .start(&InstanceSpec {
            buffer_kb: BUFFER_KB,
            cpus: Vec::new(),
            events: attach_events(nrs),
        })
        .err()
        .map(|e| format!("attach: {e}"));
    let t0 = read_clock(libc::CLOCK_MONOTONIC);
    let started_at = SystemTime::now();
    let end = cfg.duration_ns.map(|d| t0 + d);
    let longest = chosen.iter().map(|p| p.period_ns).max().unwrap_or(0);
    let margin = 2 * longest + 50 * NS_PER_MS;
    let index: HashMap<i32, usize> = chosen.iter().enumerate().map(|(i, p)| (p.tid, i)).collect();
    let mut observed = Observed::new(
        cfg.period_ns,
        cfg.window_ns,
        t0,
        (cfg.keep_windows, cfg.window_histograms),
    );
    for p in chosen {
        observed.add_thread(p.period_ns.max(1));
    }
    let cpu_before: Vec<Option<Nanos>> = chosen.iter().map(|p| target::cpu_time(p.tid)).collect();
    let mut batch: Vec<Vec<RawSample>> = vec![Vec::new(); chosen.len()];
    let mut ignored = 0u64;
    let mut notes: Vec<String> = Vec::new();
    let mut unmeasured: BTreeSet<i32> = BTreeSet::new();
    while error.is_none() {
        let now = read_clock(libc::CLOCK_MONOTONIC);
        let stopping = stop.load(Ordering::Relaxed);
        let gone = !target::alive(pid);
        let timed_out = end.is_some_and(|e| now >= e + margin);
        let events = match reader.read(trace) {
            Ok(ev) => ev,
            Err(Failure::Runtime(m)) | Err(Failure::Usage(m)) => {
                error = Some(m);
                Vec::new()
            }
            Err(_) => Vec::new(),
        };
        for e in events {
            match tracker.push(&e) {
                Seen::WakeUp(w) => match index.get(&w.tid) {
                    Some(&i) if w.expiry >= t0 && end.is_none_or(|e| w.expiry < e) => {
                        let s = observed.record(i, w.expiry, w.woke, u64::from(w.passed));
                        batch[i].push(s);
                    }
                    Some(_) => ignored += 1,
                    None => {
                        ignored += 1;
                        if unmeasured.insert(w.tid) {
                            notes.push(format!(
                                "thread {} ({}) woke from a timer but is not measured \
                                 (threads are chosen before the measurement starts)",
                                w.tid,
                                target::thread_comm(pid, w.tid)
                            ));
                        }
                    }
                },
                Seen::Exit(t) if index.contains_key(&t) => notes.push(format!(
                    "thread {t} exited after {:.1} s",
                    (e.ts - t0) as f64 / NS_PER_SEC as f64
                )),
                _ => {}
            }
        }
        if cfg.stream_samples {
            for (i, b) in batch.iter_mut().enumerate() {
                if !b.is_empty() {
                    observer(RunEvent::Samples {
                        thread: i,
                        samples: b,
                    });
                }
            }
        }
        batch.iter_mut().for_each(Vec::clear);
        observed.close_before(now - margin, observer);
        if gone {
            notes.push(format!("process {pid} exited; detached"));
        }
        if stopping || gone || timed_out {
            break;
        }
        std::thread::sleep(READ_EVERY);
    }
    trace.freeze();
    let cpu: Vec<Nanos> = chosen
        .iter()
        .zip(&cpu_before)
        .map(|(p, b)| match (b, target::cpu_time(p.tid)) {
            (Some(b), Some(a)) => a - b,
            _ => 0,
        })
        .collect();
    {
        let mut t = doc_target.borrow_mut();
        t.wake_ups_ignored = ignored;
        t.notes = notes;
    }
    let mut outcome = observed.finish(
        applied,
        &cpu,
        (started_at, SystemTime::now()),
        stop.load(Ordering::Relaxed),
        observer,
    );
    outcome.error = error;
    outcome
}
