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

use super::signals::stoppable;
use super::sinks::sinks;
use crate::cli::{AttachArgs, RunArgs};
use crate::console;
use crate::exit::Failure;
use crate::options::{parse_duration, run_plan};
use crate::session_args::{outcome, say};
use clap::{Args, FromArgMatches};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::run::{Applied, AppliedThread, RunConfig};
use tickscope_engine::time::{ClockId, Nanos, NS_PER_SEC};
use tickscope_engine::wait::MethodKind;
use tickscope_explain::infer::{clock_name, infer, Pattern, Wait};
use tickscope_explain::tracefs::{attach_events, TraceInstance};
use tickscope_explain::wakeups::{ClockOffsets, Tracker, TS_RESOLUTION_NS};
use tickscope_report::sink::RunSink;
use tickscope_report::target::Target;
use tickscope_session::attach::{
    discover, instance_spec, target_thread, Observation, TargetSink, TraceReader,
};
use tickscope_session::{Companion, Plan, Session};
use tickscope_system::system::SystemInfo;
use tickscope_system::target;

/// `tickscope run`'s options at their defaults.
fn default_run_args() -> Result<RunArgs, Failure> {
    let cmd = RunArgs::augment_args(clap::Command::new("attach"));
    let matches = cmd
        .try_get_matches_from(["attach"])
        .map_err(|e| Failure::Runtime(format!("internal: default options: {e}")))?;
    RunArgs::from_arg_matches(&matches)
        .map_err(|e| Failure::Runtime(format!("internal: default options: {e}")))
}

/// `tickscope run`'s options at their defaults, with attach's outputs: the sinks are built
/// from them exactly as for a run.
fn run_args(a: &mut AttachArgs) -> Result<RunArgs, Failure> {
    let mut r = default_run_args()?;
    r.json = a.json.take();
    r.quiet = a.quiet;
    r.redact = a.redact;
    std::mem::swap(&mut r.exports, &mut a.exports);
    std::mem::swap(&mut r.explain, &mut a.explain);
    Ok(r)
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
                     timerfd, POSIX-timer, itimer, poll, select, epoll and futex waits",
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

/// The settings in force in the target's threads (process `pid`), as a run reports its own:
/// the first thread's policy, method and clock (each thread's in the note when they
/// differ), whether the
/// process holds memory locked, the CPU latency limit in force on the machine (whoever holds
/// it), the first thread's timer slack (and which threads the kernel gives none: the
/// real-time ones) and each thread's CPU when its affinity is one CPU.
fn applied(pid: i32, chosen: &[Pattern], method: MethodKind, clock: ClockId) -> Applied {
    let first = chosen[0].tid;
    let waits: BTreeSet<String> = chosen.iter().map(|p| p.wait.describe()).collect();
    let policies: Vec<_> = chosen.iter().map(|p| target::policy(p.tid)).collect();
    let policy_note = policies.iter().any(|p| *p != policies[0]).then(|| {
        let each: Vec<String> = policies
            .iter()
            .enumerate()
            .map(|(i, p)| format!("T{i} {}", tickscope_report::terminal::policy(p)))
            .collect();
        format!("the threads differ: {}", each.join(", "))
    });
    // The kernel gives real-time threads no timer slack (as `run` says of its own).
    let realtime: Vec<String> = policies
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_realtime())
        .map(|(i, _)| format!("T{i}"))
        .collect();
    let timer_slack_note = match realtime.len() {
        0 => None,
        n if n == policies.len() => {
            Some("real-time threads get no timer slack from the kernel".to_string())
        }
        _ => Some(format!(
            "the kernel gives the real-time threads ({}) no timer slack",
            realtime.join(", ")
        )),
    };
    // Each thread is measured with its own wait and clock; the header's single method and
    // clock are the first thread's, so the note names every thread's when they differ.
    let waits_of: Vec<_> = chosen.iter().map(|p| (p.wait, p.clock)).collect();
    let method_note = waits_of.iter().any(|w| *w != waits_of[0]).then(|| {
        let each: Vec<String> = chosen
            .iter()
            .enumerate()
            .map(|(i, p)| format!("T{i} {} on {}", p.wait.describe(), clock_name(p.clock)))
            .collect();
        format!(
            "the header's method and clock are T0's; the threads differ: {}",
            each.join(", ")
        )
    });
    let locked = target::locked_kib(pid).unwrap_or(0);
    let pm_qos_us = target::cpu_latency_limit_us();
    Applied {
        policy: policies[0],
        policy_note,
        mlock: locked > 0,
        mlock_note: (locked > 0).then(|| format!("the target holds {locked} KiB locked")),
        pm_qos_us,
        pm_qos_note: pm_qos_us.map(|_| {
            "the machine's limit, read from the device: the target's request or another \
             process's"
                .to_string()
        }),
        timer_slack_ns: target::timer_slack(first).unwrap_or(0),
        timer_slack_note,
        method,
        interface: waits.into_iter().collect::<Vec<_>>().join(", "),
        granularity_ns: 1,
        method_note,
        clock,
        threads: chosen
            .iter()
            .enumerate()
            .map(|(thread, p)| AppliedThread {
                thread,
                tid: p.tid,
                cpu: target::only_cpu(p.tid),
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

/// What to watch and for how long: `tickscope attach`'s flags, or `monitor --attach`'s.
pub(crate) struct Watch {
    /// The process.
    pub pid: i32,
    /// The threads named (empty: every periodic one, and those found later).
    pub tid: Vec<i32>,
    /// `-D`, as given.
    pub duration: Option<String>,
    /// `--discover`, as given.
    pub discover: String,
    /// `--list`: list the threads and stop.
    pub list: bool,
    /// `-q`: no thread list (unless `--list`).
    pub quiet: bool,
}

impl Watch {
    fn of(a: &AttachArgs) -> Watch {
        Watch {
            pid: a.pid,
            tid: a.tid.clone(),
            duration: a.duration.clone(),
            discover: a.discover.clone(),
            list: a.list,
            quiet: a.quiet,
        }
    }
}

/// The flags, checked: the target exists, the threads named are its own, the durations
/// parse, and tickscope runs as root.
pub(crate) struct Checked {
    pid: i32,
    comm: String,
    /// The target's threads when attach started.
    pub present: Vec<i32>,
    duration_ns: Option<Nanos>,
    discover_ns: Nanos,
}

/// Checks `args` (see [`Checked`]).
///
/// # Errors
/// [`Failure::Usage`] naming the flag or the privilege that is missing.
pub(crate) fn check(args: &Watch) -> Result<Checked, Failure> {
    let pid = args.pid;
    if pid <= 0 {
        return Err(Failure::Usage(format!(
            "--pid {pid} is not a process id (a positive number)"
        )));
    }
    let comm =
        target::comm(pid).ok_or_else(|| Failure::Usage(format!("--pid {pid}: no such process")))?;
    let present = target::threads(pid);
    if let Some(t) = args.tid.iter().find(|t| !present.contains(t)) {
        let list: Vec<String> = present.iter().map(|t| t.to_string()).collect();
        return Err(Failure::Usage(format!(
            "--tid {t} is not a thread of process {pid} ({comm}); its threads: {}",
            list.join(" ")
        )));
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
    Ok(Checked {
        pid,
        comm,
        present,
        duration_ns,
        discover_ns,
    })
}

/// A private trace instance following the process's threads, with every system call of
/// theirs while the waits are being found.
fn follow(present: &[i32]) -> Result<TraceInstance, Failure> {
    let (mut trace, _) = TraceInstance::create_named(&instance_spec(Vec::new()), Some("attach"))
        .map_err(|e| Failure::Usage(format!("attach: {e}")))?;
    trace
        .follow(present)
        .and_then(|_| trace.start(&instance_spec(attach_events(&[]))))
        .map_err(|e| Failure::Usage(format!("attach: {e}")))?;
    Ok(trace)
}

/// Watches the target for `--discover`, infers each thread's pattern and prints the list
/// (unless `-q` without `--list`).
fn find(
    c: &Checked,
    args: &Watch,
    (trace, reader, tracker): (&mut TraceInstance, &mut TraceReader, &mut Tracker),
    stop: &AtomicBool,
) -> Result<Vec<Pattern>, Failure> {
    let (pid, comm) = (c.pid, &c.comm);
    let found =
        discover(pid, trace, reader, tracker, c.discover_ns, stop).map_err(Failure::Runtime)?;
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
    if !args.quiet || args.list {
        console::line(format!(
            "attached to process {pid} ({comm}), {} threads; woken by a timer in the first {}:",
            c.present.len(),
            args.discover
        ));
        for p in &patterns {
            console::line(format!("  {}", describe(pid, p)));
        }
    }
    Ok(patterns)
}

/// Runs `tickscope attach`.
///
/// # Errors
/// [`Failure::Usage`] for bad flags, a process or thread that does not exist, missing
/// privileges (named with the fix) or an output that cannot be written;
/// [`Failure::Runtime`] when no thread can be measured or a file cannot be written;
/// [`Failure::Interrupted`] when stopped before measuring.
pub fn execute(mut args: AttachArgs) -> Result<(), Failure> {
    let watch = Watch::of(&args);
    let c = check(&watch)?;
    let run_args = run_args(&mut args)?;
    keep_off(&c.present);
    let stop = stoppable();
    let sinks: Vec<Box<dyn RunSink>> = match args.list {
        true => Vec::new(),
        false => sinks(&run_args, false, &stop, true)?,
    };
    observe(&watch, &c, (sinks, run_args.redact), &stop, None)
}

/// What `monitor --attach` adds to the observation once the threads are chosen and the
/// run's configuration is known: sinks (put before the terminal) and companions.
pub(crate) type Extra<'a> = Box<
    dyn FnOnce(
            &RunConfig,
            &SystemInfo,
            Rc<RefCell<Target>>,
        ) -> Result<(Vec<Box<dyn RunSink>>, Vec<Box<dyn Companion>>), Failure>
        + 'a,
>;

/// Follows process `c`, finds its periodic threads, chooses and measures them into
/// `sinks` (see the module text); `extra` adds `monitor --attach`'s metrics.
///
/// # Errors
/// As [`execute`].
pub(crate) fn observe(
    args: &Watch,
    c: &Checked,
    (sinks, redact): (Vec<Box<dyn RunSink>>, bool),
    stop: &Arc<AtomicBool>,
    extra: Option<Extra<'_>>,
) -> Result<(), Failure> {
    let mut trace = follow(&c.present)?;
    let mut reader = TraceReader::default();
    let mut tracker = Tracker::new(ClockOffsets::now(), None);
    let patterns = find(c, args, (&mut trace, &mut reader, &mut tracker), stop)?;
    let (pid, comm) = (c.pid, c.comm.clone());
    let chosen = choose(pid, &comm, &args.tid, &patterns, &args.discover)?;
    if args.list {
        return Ok(());
    }
    let method = method_of(chosen[0].wait)
        .ok_or_else(|| Failure::Runtime("internal: a chosen thread without a method".into()))?;
    let observation = Observation {
        pid,
        follow_new: args.tid.is_empty(),
        applied: applied(pid, &chosen, method, clock_id(chosen[0].clock)),
        target: Rc::new(RefCell::new(Target {
            pid,
            comm,
            threads: chosen.iter().map(|p| target_thread(pid, p)).collect(),
            woke_point: "sys_exit".into(),
            woke_resolution_ns: TS_RESOLUTION_NS,
            wake_ups_ignored: 0,
            notes: Vec::new(),
        })),
        chosen,
        trace: &mut trace,
        reader: &mut reader,
        tracker: &mut tracker,
    };
    measure(observation, c, (redact, sinks), stop, extra)
}

/// Moves every thread of tickscope (and those it starts later, which inherit the mask) to
/// the CPUs the target's threads `present` may not use, so that the observer never runs on
/// the observed CPUs (the housekeeping rule of `run`, docs/attach.md); when the target may
/// run everywhere, says that they share its CPUs. Returns those CPUs, when there are.
pub(crate) fn keep_off(present: &[i32]) -> Option<Vec<usize>> {
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
    let cpus = placement.as_ref().ok().cloned();
    match tickscope_session::Placement::new(placement) {
        Ok(p) => {
            if let Some(failed) = p.after_start(&[]) {
                eprintln!("tickscope: {failed}");
            }
            eprintln!("tickscope: {}", p.describe());
        }
        Err(e) => eprintln!("tickscope: cannot read tickscope's CPU affinity ({e})"),
    }
    cpus
}

/// A run's configuration for the observation: the first chosen thread's wait, clock and
/// period, `-D`, and `tickscope run`'s defaults for the rest.
fn config(
    chosen: &[Pattern],
    method: MethodKind,
    duration_ns: Option<Nanos>,
) -> Result<RunConfig, Failure> {
    let plan = run_plan(&default_run_args()?).map_err(Failure::Runtime)?;
    Ok(RunConfig {
        method,
        clock: clock_id(chosen[0].clock),
        period_ns: chosen[0].period_ns.max(1),
        loops: None,
        duration_ns,
        cpus: vec![None; chosen.len()],
        mlock: false,
        timer_slack_ns: None,
        pm_qos_us: None,
        pm_qos_required: false,
        ..plan.config
    })
}

/// The measurement: one session ([`tickscope_session::Session::run_with`]) whose one run
/// is the observation of the chosen threads.
fn measure(
    mut o: Observation<'_>,
    c: &Checked,
    (redact, mut sinks): (bool, Vec<Box<dyn RunSink>>),
    stop: &Arc<AtomicBool>,
    extra: Option<Extra<'_>>,
) -> Result<(), Failure> {
    let method = o.applied.method;
    sinks.insert(0, Box::new(TargetSink(Rc::clone(&o.target))));
    let plan = Plan {
        config: config(&o.chosen, method, c.duration_ns)?,
        methods: vec![method],
        rounds: 1,
    };
    let system = tickscope_system::system::detect();
    let mut companions = Vec::new();
    // monitor keeps nothing per window, so that memory does not grow with uptime.
    let keep_windows = extra.is_none();
    if let Some(extra) = extra {
        let (more, with) = extra(&plan.config, &system, Rc::clone(&o.target))?;
        let at = sinks.len().saturating_sub(1);
        for (k, s) in more.into_iter().enumerate() {
            sinks.insert(at + k, s);
        }
        companions = with;
    }
    let mut session = Session::new(plan, system, &say);
    session.companions = companions;
    session.keep_windows = keep_windows;
    session.command_line = Some(std::env::args_os().collect());
    session.redact = redact;
    let target = Rc::clone(&o.target);
    let result = session.run_with(sinks, stop, &mut |cfg, stop, observer| {
        Ok(o.run(cfg, stop, observer))
    });
    if target
        .borrow()
        .notes
        .iter()
        .any(|n| n.ends_with("exited; detached"))
    {
        eprintln!("tickscope: process {} ({}) exited; detached", c.pid, c.comm);
    }
    outcome(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_explain::infer::Wait;

    fn pattern(tid: i32, wait: Wait, clock: u64) -> Pattern {
        Pattern {
            tid,
            wake_ups: 100,
            period_ns: 1_000_000,
            regular: 1.0,
            periodic: true,
            wait,
            clock,
            syscalls: vec![230],
        }
    }

    /// The header has one method and one clock; when the measured threads wait differently
    /// the note names each (before 2026-11-28 afternoon the first thread's stood for all).
    #[test]
    fn threads_that_wait_differently_are_each_named_in_the_method_note() {
        let pid = std::process::id() as i32;
        let (abs, rel) = (
            pattern(pid, Wait::NanosleepAbs, libc::CLOCK_MONOTONIC as u64),
            pattern(pid, Wait::Nanosleep, libc::CLOCK_REALTIME as u64),
        );
        let same = applied(
            pid,
            &[abs.clone(), abs.clone()],
            MethodKind::ALL[0],
            ClockId::Monotonic,
        );
        assert_eq!(same.method_note, None);
        let differ = applied(pid, &[abs, rel], MethodKind::ALL[0], ClockId::Monotonic);
        assert_eq!(
            differ.method_note.as_deref(),
            Some(
                "the header's method and clock are T0's; the threads differ: \
                 T0 clock_nanosleep(TIMER_ABSTIME) on monotonic, T1 nanosleep on realtime"
            )
        );
    }
}
