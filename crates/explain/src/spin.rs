//! A late wake-up of a thread that spins to its expiry: `--method busy` (it reads the clock
//! until the expiry, no timer), and `hybrid` late after its sleep's timer had already woken
//! it. No timer interrupt stands between the expiry and the thread, so the timer's segments
//! (S0–S2) are empty: a spinning thread is late only because its own code did not run from
//! the expiry to its clock read. What ran instead is on its CPU's trace:
//!
//! * **Switched out** (a `sched_switch` with `prev_pid` = the thread): another task held the
//!   CPU until the thread was switched back in — S3 ("wake → on CPU": here, off the CPU from
//!   the expiry or the switch out, whichever is later), and S5 from the switch back to the
//!   clock read. A thread switched out *runnable* and passed over for a task of a lower
//!   class or for idle was throttled: the scheduler never does that to a runnable RT task
//!   unless its run queue is throttled (`sched_rt_runtime_us`,
//!   Documentation/scheduler/sched-rt-group.rst; `pick_next_task()`, kernel/sched/core.c,
//!   takes classes in order), nor idles a CPU with a runnable fair task queued unless its
//!   group is throttled (`cpu.cfs_quota_us`, Documentation/scheduler/sched-bwc.rst) →
//!   `rt throttled` / `cpu quota`, named after the refill timer when it ran on the CPU.
//!   Otherwise the tasks that ran are named (`other thread`), interrupts and softirqs in
//!   between net of them (osnoise's accounting, as [`crate::attribution`]). A thread
//!   switched out *blocked* waited on its own: its page fault where one is recorded, else
//!   `cannot tell` — never the tasks that used the CPU meanwhile.
//! * **Never switched out**: interrupts and softirqs on its CPU held it (`irq`, `softirq`);
//!   the time left, with the thread current and nothing traced on its CPU, is the thread
//!   running its own code — a thread spinning in user mode cannot stop itself, and user mode
//!   runs with interrupts enabled — so on a virtual machine the vCPU was not running: the
//!   host held it (`hypervisor`, the rule the issue sets for a late interrupt to a vCPU in
//!   user mode), and on bare metal `cannot tell` (an SMI or an NMI is not traced).
//!
//! The thread's state at the expiry must be seen, never assumed: switched out (the switch is
//! in the events), or current (an event on its CPU in its context at or before the expiry,
//! with no switch out after it). Without either the breakdown is left to the timer's model,
//! whose residual is `cannot tell` for a spinning method ([`crate::attribution::NO_TIMER`]).
//! On this project's kernel a tracefs instance never records the idle task's switch out,
//! so a thread that comes back to an idle CPU shows no switch in: its return is then placed
//! between the last event of another context and its first own event (or its clock read),
//! the stretch in between the residual, flagged `no_switch_in`.

use crate::attribution::{
    add, clip_details, cpu_marks, follow, handler_thread, main_cause, own_fault, possible,
    Breakdown, Cause, Detail, LateSample, Segment, Setting, Span, BANDWIDTH_TIMERS,
    IDLE_WHILE_RUNNABLE, REMOTE_UNTHROTTLE, SEGMENTS, US, USER_EXIT_NS,
};
use crate::events::{Event, Kind, Name, Nanos};
use std::collections::HashMap;

/// How far before the expiry a spinning thread's events are looked at, ns: far enough to see
/// its state at the expiry on a busy CPU, whose scheduler tick records an event in the
/// running task's context at least every 10 ms (HZ ≥ 100), twice over.
pub const LOOKBACK_NS: Nanos = 25_000_000;

/// The flag every breakdown made by this model carries.
pub const FLAG: &str = "spin";

/// How a spinning thread's delay is named when no evidence names it.
pub const UNNAMED: &str = "the spinning thread's delay: nothing traced names it";

/// The breakdown of `sample`, a wake-up of a thread that spins to its expiry, from the
/// events of every CPU in time order (from [`LOOKBACK_NS`] before the expiry); `None` when
/// they show neither the thread's CPU nor its state at the expiry.
pub(crate) fn attribute(
    sample: &LateSample,
    setting: &Setting,
    events: &[Event],
) -> Option<Breakdown> {
    let tid = sample.tid;
    let (expiry, woke) = (sample.expiry, sample.woke);
    let upto = |e: &&Event| e.ts <= woke + US;
    let moves = |e: &Event, f: fn(&Kind) -> Option<i32>| f(&e.kind) == Some(tid);
    let about = |e: &Event| e.pid == tid || moves(e, switched_out) || moves(e, switched_in);
    let cpu = events.iter().rev().filter(upto).find(|e| about(e))?.cpu;
    let on: Vec<usize> = (0..events.len())
        .filter(|&i| events[i].cpu == cpu && events[i].ts <= woke + US)
        .collect();
    let last_of = |f: fn(&Kind) -> Option<i32>| {
        on.iter()
            .rev()
            .copied()
            .find(|&i| f(&events[i].kind) == Some(tid))
    };
    let (out, si) = (last_of(switched_out), last_of(switched_in));
    let mut flags = vec![FLAG.to_string()];
    // (from, to) off the CPU, then the stretch back (the residual), then S5 from `back` on.
    let (off, unseen, back) = match (out, si) {
        // Switched out, no switch back recorded: back from an idle CPU (see the module doc).
        (Some(o), s) if s.is_none_or(|s| s < o) && back_before(events, &on, o, tid, expiry) => {
            (None, 0, expiry)
        }
        (Some(o), s) if s.is_none_or(|s| s < o) => {
            let first_own = on
                .iter()
                .copied()
                .find(|&i| i > o && events[i].pid == tid)
                .map_or(woke, |i| events[i].ts.min(woke));
            let last_other = on
                .iter()
                .rev()
                .copied()
                .find(|&i| i > o && events[i].ts < first_own && events[i].pid != tid)
                .map_or(events[o].ts, |i| events[i].ts);
            flags.push("no_switch_in".into());
            let from = events[o].ts.max(expiry);
            let lo = last_other.clamp(from, woke);
            (
                Some((Some(o), from, lo)),
                first_own.max(lo) - lo,
                first_own.max(lo),
            )
        }
        // Switched back in after the expiry: off the CPU until then.
        (o, Some(s)) if events[s].ts > expiry => {
            let from = o.map_or(expiry, |o| events[o].ts.max(expiry));
            let back = events[s].ts.min(woke);
            (Some((o, from, back)), 0, back)
        }
        // On the CPU since before the expiry (switched in then, or seen current then).
        (_, Some(_)) => (None, 0, expiry),
        (_, None) => {
            let current = on
                .iter()
                .any(|&i| events[i].pid == tid && events[i].ts <= expiry + US);
            if !current {
                return None;
            }
            (None, 0, expiry)
        }
    };
    let comm = events
        .iter()
        .rev()
        .find(|e| e.pid == tid)
        .map_or_else(|| Name::from(tid.to_string().as_str()), |e| e.comm.clone());
    let mut segments: Vec<Segment> = SEGMENTS
        .iter()
        .map(|id| Segment {
            id: id.to_string(),
            ns: 0,
            details: Vec::new(),
        })
        .collect();
    // RT or fair: from a switch that moved the thread (none: no throttle is named).
    let prio = prios(events, &on);
    let rt = prio.get(&tid).map(|p| *p < 100);
    // Up to the switch out (or to the clock read when it stayed): the thread current.
    let ran_to = off.map_or(woke, |o| o.1);
    let h = held(events, &on, &prio, tid, (expiry, ran_to));
    let mut d = h.details.clone();
    own_time(
        &mut d,
        h.running,
        setting,
        events,
        tid,
        (expiry, ran_to),
        &comm,
    );
    segments[3].ns = off.map_or(woke, |o| o.2) - expiry;
    if let Some((o, from, to)) = off {
        let h = held(events, &on, &prio, tid, (from, to));
        let off_ns = to - from;
        let state = o.and_then(|o| match &events[o].kind {
            Kind::SchedSwitch { prev_state, .. } => Some(prev_state.clone()),
            _ => None,
        });
        let runnable = state.as_ref().is_some_and(|s| s.starts_with('R'));
        let mut throttle = None;
        if let (Some(o), true) = (o, runnable) {
            throttle = match rt {
                // Passed over for a lower class or idle (a task of higher priority may run
                // after the refill: its time is its own).
                Some(true) if 2 * (h.idle + h.lower) >= off_ns => Some(("rt_throttled", true)),
                // Passed over for idle: the group's runtime was spent.
                Some(false) if h.idle > 0 && 2 * (h.idle + h.lower) >= off_ns => {
                    Some(("cfs_throttled", false))
                }
                _ => None,
            }
            .map(|(kind, rt)| Detail {
                kind: kind.into(),
                name: refill_on(events, &on, events[o].ts, to + US, rt).unwrap_or_else(|| match h
                    .lower
                {
                    0 => IDLE_WHILE_RUNNABLE.to_string(),
                    _ => LOWER_CLASS.to_string(),
                }),
                pid: None,
                ns: h.idle + h.lower,
            })
            .filter(|t| possible(t, setting, &mut flags));
        }
        // Switched out blocked (not runnable), it waited on its own — a page fault waiting
        // for the disk, say: the tasks that ran meanwhile used a CPU it did not want.
        let blocked = state.as_ref().is_some_and(|s| !s.starts_with('R'));
        if let (true, Some(state)) = (blocked, &state) {
            let from_fault = o.map_or(from, |o| events[o].ts) - setting.period.max(0);
            d.push(
                own_fault(events, tid, from_fault, to, off_ns).unwrap_or_else(|| Detail {
                    kind: "cannot_tell".into(),
                    name: format!(
                        "{comm} blocked (state {state}): what it waited for is not traced"
                    ),
                    pid: None,
                    ns: off_ns,
                }),
            );
        }
        for x in h.details {
            // The tasks that ran because of the throttle, or while the thread was blocked,
            // are not the cause.
            let passed = throttle.is_some() && x.pid.is_some_and(|p| h.lower_pids.contains(&p));
            let meanwhile = blocked && x.pid.is_some();
            if !(passed || meanwhile) {
                add(&mut d, &x.kind, &x.name, x.pid, x.ns);
            }
        }
        if let Some(t) = throttle {
            d.push(t);
        }
        segments[5].ns = woke - back;
        segments[5].details = clip_details(
            held(events, &on, &prio, tid, (back, woke)).details,
            segments[5].ns,
        );
    }
    segments[3].details = clip_details(d, segments[3].ns);
    let lost = events.iter().any(|e| {
        e.cpu == cpu
            && matches!(e.kind, Kind::Lost { since, .. }
                if e.ts >= expiry - US && since.unwrap_or(e.ts) <= woke + US)
    });
    if lost {
        flags.push("lost_events".into());
    }
    let cause = name(main_cause(&segments, unseen, lost));
    let spans = [
        (3, segments[3].ns),
        (usize::MAX, unseen),
        (5, segments[5].ns),
    ]
    .into_iter()
    .filter(|(_, ns)| *ns > 0)
    .scan(0, |at, (k, ns)| {
        let from = *at;
        *at += ns;
        Some(Span {
            id: SEGMENTS.get(k).copied().unwrap_or("residual").to_string(),
            from_ns: from,
            to_ns: from + ns,
        })
    })
    .collect();
    Some(Breakdown {
        sample: *sample,
        cpu: Some(cpu),
        latency_ns: sample.latency(),
        segments,
        residual_ns: unseen,
        cause,
        flags,
        spans,
        marks: cpu_marks(events, cpu, tid, expiry, woke),
        steal_ns: None,
    })
}

/// How a throttle is named when a task of a lower class ran and no refill was seen.
const LOWER_CLASS: &str = "a lower scheduling class chosen while the thread was runnable";

/// The time thread `tid` (`comm`) was current in `[a, b]` with nothing traced on its CPU
/// (`running`, ns): a page fault of its own there, else — from [`USER_EXIT_NS`] on, below
/// which the interrupt's return and a switch take it — not its own doing (it spins in user
/// mode, where interrupts are enabled): the host on a virtual machine, `cannot tell` on
/// bare metal.
fn own_time(
    d: &mut Vec<Detail>,
    running: Nanos,
    setting: &Setting,
    events: &[Event],
    tid: i32,
    (a, b): (Nanos, Nanos),
    comm: &Name,
) {
    if running <= 0 {
        return;
    }
    if let Some(f) = own_fault(events, tid, a, b, running) {
        d.push(f);
    } else if running >= USER_EXIT_NS {
        let (kind, name) = match setting.virtualized {
            true => (
                "hypervisor",
                format!(
                    "vCPU running {comm}, which spins in user mode; nothing traced in the guest: \
                     held outside it"
                ),
            ),
            false => (
                "cannot_tell",
                format!("CPU running {comm}, which spins in user mode; nothing traced"),
            ),
        };
        add(d, kind, &name, None, running);
    }
}

/// A spinning thread's cause: what the evidence names stays; the kernel's own path, the
/// return to user and a residual — names of the timer's model for time nothing traced
/// explains — are `cannot tell` ([`UNNAMED`]).
pub(crate) fn name(c: Cause) -> Cause {
    // "switch held" is the timer model's name for a `cannot_tell` detail in S3, here the
    // thread current with nothing traced on bare metal.
    let held = c.category == "cannot tell" && c.detail.as_deref() == Some("switch held");
    match c.category.as_str() {
        _ if held => Cause {
            category: "cannot tell".into(),
            detail: Some(UNNAMED.into()),
        },
        "kernel path" | "return to user" | "interrupt delivery" | "unexplained" => Cause {
            category: "cannot tell".into(),
            detail: Some(UNNAMED.into()),
        },
        _ => c,
    }
}

/// Whether the thread, switched out at `on`'s event `o`, was back on the CPU by the expiry:
/// an event in its context after the switch, at or before the expiry.
fn back_before(events: &[Event], on: &[usize], o: usize, tid: i32, expiry: Nanos) -> bool {
    on.iter()
        .any(|&i| i > o && events[i].pid == tid && events[i].ts <= expiry + US)
}

fn switched_out(k: &Kind) -> Option<i32> {
    match k {
        Kind::SchedSwitch { prev_pid, .. } => Some(*prev_pid),
        _ => None,
    }
}

fn switched_in(k: &Kind) -> Option<i32> {
    match k {
        Kind::SchedSwitch { next_pid, .. } => Some(*next_pid),
        _ => None,
    }
}

/// The kernel priority (0–99 RT, 100–139 fair) of every task a switch on the CPU's events
/// `on` moved, the latest known.
fn prios(events: &[Event], on: &[usize]) -> HashMap<i32, i32> {
    crate::events::priorities(on.iter().map(|&i| &events[i]))
}

/// The refill that ended a throttle on the CPU in `[from, to]`: the bandwidth timer's
/// callback (for an RT thread RT bandwidth's or the deadline server's, which runs starved
/// fair tasks over RT ones, Documentation/scheduler/sched-deadline.rst; CFS bandwidth's
/// for a fair one), or for a fair thread the
/// `call_function_single` IPI of a remote unthrottle (`__cfsb_csd_unthrottle()`,
/// kernel/sched/fair.c).
fn refill_on(events: &[Event], on: &[usize], from: Nanos, to: Nanos, rt: bool) -> Option<String> {
    on.iter()
        .map(|&i| &events[i])
        .filter(|e| e.ts >= from && e.ts <= to)
        .find_map(|e| match &e.kind {
            Kind::HrtimerExpireEntry { function, .. }
                if BANDWIDTH_TIMERS.contains(&function.as_str())
                    && function.starts_with("sched_cfs") != rt =>
            {
                Some(function.to_string())
            }
            Kind::VectorEntry { name } if !rt && name == "call_function_single" => {
                Some(REMOTE_UNTHROTTLE.to_string())
            }
            _ => None,
        })
}

/// What held the CPU in `[a, b]` (net, as [`crate::attribution`] accounts S3).
#[derive(Default)]
struct Held {
    /// IRQs, softirqs and other tasks, by name.
    details: Vec<Detail>,
    /// Time the thread itself was current with nothing traced, ns.
    running: Nanos,
    /// Time the CPU was idle, ns.
    idle: Nanos,
    /// Time tasks of a lower class than an RT thread's (fair ones), or for a fair thread
    /// other fair tasks, ran, ns; and which.
    lower: Nanos,
    lower_pids: Vec<i32>,
}

/// Accounts `[a, b]` on the CPU whose events (indices into `events`, in time order) are
/// `on`, the tasks' priorities `prio` ([`prios`]), following the current task from the
/// events' own context (a switch the trace did not record — the idle task's, on this
/// project's kernel — shows at the next event).
fn held(
    events: &[Event],
    on: &[usize],
    prio: &HashMap<i32, i32>,
    tid: i32,
    (a, b): (Nanos, Nanos),
) -> Held {
    let mut h = Held::default();
    if b <= a {
        return h;
    }
    let mine = prio.get(&tid).is_some_and(|p| *p < 100);
    let mut stack: Vec<(&'static str, Name)> = Vec::new();
    let mut task: Option<(i32, Name)> = None;
    let mut last: Option<Nanos> = None;
    let account =
        |h: &mut Held, stack: &[(&str, Name)], task: &Option<(i32, Name)>, x: Nanos, y: Nanos| {
            let ns = y.min(b) - x.max(a);
            if ns <= 0 {
                return;
            }
            match (stack.last(), task) {
                (Some((k, n)), _) => add(&mut h.details, k, n, None, ns),
                (None, None) => {}
                (None, Some((0, _))) => h.idle += ns,
                (None, Some((p, _))) if *p == tid => h.running += ns,
                (None, Some((p, n))) => {
                    let q = prio.get(p);
                    if q.is_none_or(|q| *q >= 100) && (mine || q.is_some()) {
                        h.lower += ns;
                        if !h.lower_pids.contains(p) {
                            h.lower_pids.push(*p);
                        }
                    }
                    let kind = handler_thread(n).unwrap_or("blocking_thread");
                    add(&mut h.details, kind, n, Some(*p), ns);
                }
            }
        };
    for e in on.iter().map(|&i| &events[i]) {
        if e.ts > b {
            break;
        }
        if let Some(l) = last {
            account(&mut h, &stack, &task, l, e.ts);
        }
        last = Some(e.ts);
        if e.pid >= 0 && task.as_ref().is_none_or(|t| t.0 != e.pid) {
            stack.clear();
            task = Some((e.pid, e.comm.clone()));
        }
        follow(&mut stack, &mut task, e);
    }
    if let Some(l) = last {
        account(&mut h, &stack, &task, l, b);
    }
    h
}
