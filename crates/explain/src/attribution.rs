//! One late wake-up broken into segments and causes, from the trace events around it.
//!
//! The model is rtla's timerlat auto-analysis (`torvalds/linux
//! tools/tracing/rtla/src/timerlat_aa.c`: timer IRQ delay, "exit from idle", IRQ and softirq
//! interference, the "blocking thread" current at the timer IRQ, "thread interference" from
//! threads chosen before the measured one) and the net accounting of nested interruptions of
//! osnoise (`kernel/trace/trace_osnoise.c`, `cond_move_irq_delta_start()`): an IRQ inside a
//! softirq is subtracted from the softirq, both from the thread they interrupt. Unlike rtla it
//! works from generic events every kernel has (no `timerlat` tracer), for the user's own
//! wait, and its segments sum exactly, with an explicit residual, to the measured latency.
//!
//! Boundaries (ns on CLOCK_MONOTONIC): expiry → `hrtimer_start.expires` (S0 timer slack) →
//! `local_timer_entry` (S1 interrupt delivery) → `hrtimer_expire_entry.now` (S2 hrtimer
//! queue) → switch-in `sched_switch(next_pid = tid)` (S3 wake → on CPU) → the thread's
//! `sys_exit` (S4 kernel exit) → the user's clock read (S5 return to user). Every boundary is
//! clamped into `[previous, woke]`, so no segment is negative; a boundary whose event is
//! missing makes the span around it the residual, flagged — never guessed.

use crate::events::{Event, Kind, Name, Nanos};
use serde::{Deserialize, Serialize};

/// A late wake-up to explain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LateSample {
    /// Measuring thread index.
    pub thread: usize,
    /// Its kernel thread id.
    pub tid: i32,
    /// Wake-up number within the thread.
    pub seq: u64,
    /// The expiry waited for, ns (CLOCK_MONOTONIC).
    pub expiry: Nanos,
    /// When the thread read the clock on waking, ns.
    pub woke: Nanos,
}

impl LateSample {
    /// Wake-up latency, ns.
    pub fn latency(&self) -> Nanos {
        self.woke - self.expiry
    }
}

/// What the attribution needs to know besides the events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The period, ns (bounds the search for the thread's `hrtimer_start`).
    pub period: Nanos,
    /// Whether the machine is a virtual machine (a late interrupt to a halted CPU is then the
    /// hypervisor's).
    pub virtualized: bool,
    /// System call numbers of the method's wait (`sys_exit` of these marks "running again");
    /// empty: any of the thread's.
    pub wait_syscalls: Vec<i64>,
    /// hrtimer callbacks of the method (`hrtimer_wakeup`, `timerfd_tmrproc`, …), used when
    /// no `hrtimer_start` of the thread was seen.
    pub timer_functions: Vec<String>,
    /// Whether the capture traces the wait's return (`sys_exit`). Without it (the BPF
    /// backend for a run's own threads: `BpfCapture::trace_returns`) the kernel exit (S4)
    /// is folded into the return to user (S5), which then runs from the switch-in to the
    /// clock read, and the steal time is the thread's next reading after the switch-in
    /// ([`Kind::Steal`], recorded when it next arms its timer).
    pub returns_traced: bool,
    /// Whether a CPU quota applies to the late thread's cpu cgroup (see
    /// [`crate::cpu_quota::applies`]; the collector reads it only where the events suggest a
    /// CFS throttle, [`crate::model::attribute_reading_quota`]): `Some(false)`
    /// rules `cpu quota` out (the kernel throttles no fair thread without a quota,
    /// Documentation/scheduler/sched-bwc.rst); `None` (unknown: recorded fixtures, a thread
    /// gone) leaves it to the events.
    pub cpu_quota: Option<bool>,
    /// Whether the method spins the whole period (`busy`): no timer wakes the thread, so a
    /// late wake-up is broken down by the spinning thread's model ([`crate::spin`]); where
    /// the events do not show the thread's state at the expiry it is `cannot tell`
    /// ([`NO_TIMER`], flag `no_timer`), not `unexplained (events missing)`: no event is
    /// missing, the model of a timer's wake-up does not apply.
    pub spins: bool,
    /// Whether the method's timer ends its sleep before the expiry, the rest spun (`hybrid`,
    /// by its margin, up to a whole period): the thread's timer start for a wake-up is then
    /// looked for up to a period before its expiry, not only half a period around it, and a
    /// wake-up whose timer fired before the expiry was late while spinning: read by the
    /// spinning thread's model, as for [`Setting::spins`].
    pub timer_before_expiry: bool,
}

/// The detail of `cannot tell` for a thread that spins to its expiry ([`Setting::spins`]).
pub const NO_TIMER: &str = "the method spins: no timer to follow";

/// Segment ids in order.
pub const SEGMENTS: [&str; 6] = [
    "timer_slack",
    "interrupt_delivery",
    "hrtimer_queue",
    "wake_to_cpu",
    "kernel_exit",
    "return_to_user",
];

/// One named contribution inside a segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detail {
    /// `hypervisor` (name: the evidence, e.g. "vCPU running X; interrupt held outside the
    /// guest", or in S3 "vCPU running X in user mode, which the woken thread outranks: the
    /// switch held outside the guest" or "vCPU in its timer interrupt after the callback,
    /// nothing traced: the timer write exits to the host"), `exit_from_idle`, `cannot_tell`
    /// (bare metal, a running task and no evidence),
    /// `irq`, `softirq`, `blocking_thread`, `higher_priority_thread`, `other_callback` (S2,
    /// or S3: a callback the same interrupt ran after the thread's, where its exit is
    /// recorded — the tracefs path),
    /// `rt_throttled` and `cfs_throttled` (name: the bandwidth timer that ended it, or for a
    /// CFS group refilled from another CPU the `call_function_single` IPI that brought it, or
    /// "CPU idle while the thread was runnable" when the CPU idled with the throttled thread
    /// off it; in S3 or, for `cfs_throttled` on Linux ≥ 6.18, in S5); `cpu_busy` only in documents
    /// written before delivery was named from evidence. A `hypervisor` detail's name ends
    /// with the IPIs that reached the CPU during the held delivery, if any. `page_fault` (name:
    /// "user mode" or "kernel"): a fault of the measured thread's own, in S5 on its way back
    /// to user mode, or in S1 when it armed its timer only after the expiry. `switch_path`
    /// (S3: the interrupt's return and the switch in the context of a task interrupted in
    /// user mode that the woken thread outranks, under 10 µs; counts for no thread).
    ///
    /// The spinning thread's model ([`crate::spin`], flag `spin`) names in S3 the tasks that
    /// ran (`blocking_thread`, or `irq`/`softirq` for a threaded handler), `rt_throttled` /
    /// `cfs_throttled` (name: the refill timer, "CPU idle while the thread was runnable" or
    /// "a lower scheduling class chosen while the thread was runnable"), `page_fault`,
    /// `cannot_tell` ("X blocked (state S): what it waited for is not traced"), and for the
    /// time it was current with nothing traced, from 10 µs, `hypervisor` ("vCPU running X,
    /// which spins in user mode; nothing traced in the guest: held outside it") on a VM or
    /// `cannot_tell` ("CPU running X, which spins in user mode; nothing traced") on bare
    /// metal.
    pub kind: String,
    /// IRQ handler, softirq vector, command name, or idle state.
    pub name: String,
    /// Task id for threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// Net time, ns (≥ 0).
    pub ns: Nanos,
}

/// One segment of a breakdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// One of [`SEGMENTS`].
    pub id: String,
    /// Length, ns (≥ 0).
    pub ns: Nanos,
    /// What filled it, largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Detail>,
}

/// Why a wake-up was late, in one category and an optional detail.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Cause {
    /// `hypervisor`, `exit from idle`, `cannot tell`, `hrtimer queue`, `other thread`,
    /// `irq`, `softirq`, `kernel path`, `rt throttled`, `cpu quota`, `page fault`, `timer
    /// slack`, `return to user`, `events lost`, `unexplained` (`cpu busy` in older documents).
    pub category: String,
    /// The thread's command name, IRQ or vector, when there is one; for `hypervisor`,
    /// `IPI delivery` when IPIs reached the CPU while its interrupt was held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.detail {
            Some(d) => write!(f, "{} ({d})", self.category),
            None => f.write_str(&self.category),
        }
    }
}

/// One late wake-up explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breakdown {
    /// The wake-up.
    pub sample: LateSample,
    /// CPU the timer fired on, if seen.
    pub cpu: Option<u32>,
    /// Measured latency, ns.
    pub latency_ns: Nanos,
    /// The six segments, in order ([`SEGMENTS`]).
    pub segments: Vec<Segment>,
    /// latency − Σ segments, ns (≥ 0): spans whose events were not seen.
    pub residual_ns: Nanos,
    /// The main cause.
    pub cause: Cause,
    /// `no_timer_start`, `no_expire_entry`, `no_local_timer`, `no_switch_in`, `no_sys_exit`,
    /// `lost_events`, `interrupted_task_stale`, `trace_behind` (attributed before the trace
    /// had reached the wake-up), `trace_silent` (no event at all on the CPU in the residual),
    /// `no_cpu_quota` (the events looked like a CPU-quota throttle, but no quota applies to
    /// the thread's group: [`Setting::cpu_quota`]), `spin` (made by the spinning thread's
    /// model, [`crate::spin`]), `no_timer` (the method spins and the events do not show the
    /// thread's state at the expiry: [`Setting::spins`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The segments and the residual laid out in time, from the expiry (0) to the wake-up
    /// (the latency): in order, adjacent, none empty, their lengths summing to the latency
    /// (see [`spans`]). Empty in documents written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<Span>,
    /// What else ran on the CPU between expiry and wake-up (IRQ handlers and vectors,
    /// softirqs, other threads), in time order, at most [`MAX_MARKS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<Mark>,
    /// Steal time on the CPU during the wait, ns, as the BPF backend read it at the wait's
    /// return ([`Kind::Steal`]: from the arming of the thread's timer to its return); absent
    /// where it was not read (the tracefs backend, a kernel without paravirt steal
    /// accounting) — never 0 for "unknown".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ns: Option<Nanos>,
}

/// One segment (or the residual) placed in time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// One of [`SEGMENTS`], or `residual`: a stretch between two seen boundaries with a
    /// boundary missing in between.
    pub id: String,
    /// Start, ns after the expiry (≥ 0).
    pub from_ns: Nanos,
    /// End, ns after the expiry (> `from_ns`, ≤ the latency).
    pub to_ns: Nanos,
}

/// Something that held the CPU between expiry and wake-up, placed in time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// `irq` (an IRQ handler or an x86 vector such as `local_timer`), `softirq`, or
    /// `thread` (a task other than the measured thread and idle).
    pub kind: String,
    /// Handler, vector, softirq or command name.
    pub name: String,
    /// Task id for threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// Start, ns after the expiry (clipped to ≥ 0; µs resolution, as event times).
    pub from_ns: Nanos,
    /// End, ns after the expiry (clipped to ≤ the latency).
    pub to_ns: Nanos,
}

/// Marks kept per breakdown (the first ones in time).
pub const MAX_MARKS: usize = 64;

/// The segments and residual of boundaries `bounds` (clamped, see [`attribute_timer`]) as spans
/// relative to `expiry`: a known boundary followed by the next one gives that segment; a gap
/// of unknown boundaries gives `residual`. Empty spans are left out.
pub fn spans(bounds: &[Option<Nanos>; 7], expiry: Nanos) -> Vec<Span> {
    let mut out = Vec::new();
    let mut last: Option<(usize, Nanos)> = None;
    for (k, b) in bounds.iter().enumerate() {
        let Some(v) = *b else { continue };
        if let Some((j, p)) = last {
            if v > p {
                out.push(Span {
                    id: if k == j + 1 { SEGMENTS[j] } else { "residual" }.to_string(),
                    from_ns: p - expiry,
                    to_ns: v - expiry,
                });
            }
        }
        last = Some((k, v));
    }
    out
}

/// Tolerance for µs-truncated text timestamps compared with ns fields.
pub(crate) const US: Nanos = 1_000;

/// Breaks `sample` into segments from `events` (every traced CPU, in time order), by the
/// timer's model: the wake-up of a thread that waits on a timer. A thread that spins to its
/// expiry is read by [`crate::spin`]; [`crate::model::attribute`] picks the model.
pub fn attribute_timer(sample: &LateSample, setting: &Setting, events: &[Event]) -> Breakdown {
    let mut flags = Vec::new();
    let tid = sample.tid;
    let (expiry, woke) = (sample.expiry, sample.woke);
    let start = find_start(sample, setting, events);
    let entry = match start {
        // The next expiry of the same pointer that is not before the armed (soft) expiry
        // (the sleeper lives on the thread's stack, so the address recurs across periods).
        Some((i, timer, _, soft)) => events[i..]
            .iter()
            .position(|e| {
                matches!(e.kind, Kind::HrtimerExpireEntry { timer: t, now, .. } if t == timer && now >= soft - US)
            })
            .map(|k| i + k),
        None => {
            flags.push("no_timer_start".to_string());
            events.iter().position(|e| match &e.kind {
                Kind::HrtimerExpireEntry { function, now, .. } => {
                    *now >= expiry
                        && *now <= woke
                        && setting.timer_functions.iter().any(|f| f == function)
                }
                _ => false,
            })
        }
    };
    if entry.is_none() {
        flags.push("no_expire_entry".to_string());
    }
    let cpu = entry.map(|i| events[i].cpu);
    let now = entry.and_then(|i| match events[i].kind {
        Kind::HrtimerExpireEntry { now, .. } => Some(now),
        _ => None,
    });
    let lte = entry.and_then(|i| {
        let lower = start.map(|s| s.0).unwrap_or(0);
        (lower..i).rev().find(|&k| {
            let e = &events[k];
            e.cpu == events[i].cpu
                && matches!(&e.kind, Kind::VectorEntry { name } if name == "local_timer")
        })
    });
    if entry.is_some() && lte.is_none() {
        flags.push("no_local_timer".to_string());
    }
    let from = entry.unwrap_or(0);
    let on_cpu = |e: &Event| Some(e.cpu) == cpu;
    let switch_in = entry.and_then(|i| {
        events[i..]
            .iter()
            .position(|e| {
                on_cpu(e) && matches!(e.kind, Kind::SchedSwitch { next_pid, .. } if next_pid == tid)
            })
            .map(|k| i + k)
    });
    // The wait's return for this expiry comes after it: without the callback (`entry`) to
    // search from, an earlier return of the thread's (the previous period's) must not be
    // taken for it — that made the whole latency "return to user" with no event inside.
    let sys_exit = events[from..]
        .iter()
        .position(|e| {
            e.pid == tid
                && e.ts >= expiry - US
                && e.ts <= woke
                && matches!(e.kind, Kind::SysExit { nr } if setting.wait_syscalls.is_empty() || setting.wait_syscalls.contains(&nr))
        })
        .map(|k| from + k);
    let switch_in = switch_in.filter(|&s| sys_exit.is_none_or(|x| s <= x));
    // Where the thread is back: its wait's return, or where that is not traced, its
    // switch-in (S4 then 0, S5 from there).
    let back = match setting.returns_traced {
        true => sys_exit,
        false => switch_in,
    };
    let steal = match setting.returns_traced {
        true => sys_exit.and_then(|x| steal_at_return(events, x)),
        false => switch_in.and_then(|si| steal_after(events, si, woke + setting.period.max(0))),
    };
    if entry.is_some() && switch_in.is_none() {
        flags.push("no_switch_in".to_string());
    }
    if sys_exit.is_none() && setting.returns_traced {
        flags.push("no_sys_exit".to_string());
    }
    if back.is_none() && !setting.returns_traced && entry.is_none() {
        flags.push("no_switch_in".to_string());
    }
    // A loss spans from the CPU's last event before it (`since`) to the marker's own time.
    // It matters from LOSS_BEFORE_EXPIRY_NS before the expiry on, or from the thread's
    // arming of its timer when that came later: every boundary and detail comes from the
    // arming record itself and from there to the wake-up — the timer interrupt's own record
    // names the task it interrupted (S1, S3), and a hard interrupt handler open during the
    // delay (S1) was entered shortly before it. A loss that ended before that is before
    // everything used: under an IPI flood (the oracle's IPI plant) the CPU's ring wraps
    // within a period, and a loss between the arming and the expiry made "events lost" of
    // wake-ups whose every used record had arrived. Without the arming seen, from one
    // period before the expiry.
    let used_from = match start {
        Some((i, ..)) => (events[i].ts + 1).max(expiry - LOSS_BEFORE_EXPIRY_NS),
        None => expiry - setting.period.max(0) - 2 * US,
    };
    let lost = events.iter().any(|e| match e.kind {
        Kind::Lost { since, .. } => {
            cpu.is_none_or(|c| c == e.cpu)
                && e.ts >= used_from
                && since.unwrap_or(e.ts) <= woke + US
        }
        _ => false,
    });
    if lost {
        flags.push("lost_events".to_string());
    }

    // Boundaries b0..b6; a missing switch-in leaves S4 at 0 (S3 runs to the sys_exit).
    // With timer slack the timer may fire anywhere from its soft to its hard expiry: S0
    // ends where it fired, within that range.
    let fired = lte.map(|i| events[i].ts).or(now);
    let expires = start.map(|s| {
        let hard = s.2.max(expiry);
        match fired {
            Some(f) => f.clamp(s.3.max(expiry).min(hard), hard),
            None => hard,
        }
    });
    let b4 = match (switch_in, sys_exit) {
        (Some(s), _) => Some(events[s].ts),
        (None, Some(x)) => Some(events[x].ts),
        (None, None) => None,
    };
    let raw = [
        Some(expiry),
        expires,
        lte.map(|i| events[i].ts).or(now),
        now,
        b4,
        back.map(|i| events[i].ts),
        Some(woke),
    ];
    let (bounds, residual) = clamp_boundaries(&raw, expiry, woke);
    let mut segments: Vec<Segment> = SEGMENTS
        .iter()
        .enumerate()
        .map(|(k, id)| Segment {
            id: id.to_string(),
            ns: match (bounds[k], bounds[k + 1]) {
                (Some(a), Some(b)) => b - a,
                _ => 0,
            },
            details: Vec::new(),
        })
        .collect();

    // S1: what the CPU was doing when the timer should have fired.
    if let (Some(c), Some(i)) = (cpu, lte.or(entry)) {
        segments[1].details = delivery_details(
            events,
            c,
            i,
            tid,
            setting,
            segments[1].ns,
            steal,
            &mut flags,
        );
    }
    // S1 when the thread armed its timer only after the expiry: it was not waiting, and a
    // page fault of its own before the arming is what held it (its code paged out, e.g.).
    if let Some((i, ..)) = start {
        let armed = events[i].ts;
        let held = (armed - expiry).min(segments[1].ns);
        if held > 0 && 2 * held >= segments[1].ns {
            if let Some(d) = own_fault(events, tid, expiry - setting.period, armed, held) {
                segments[1].details.insert(0, d);
            }
        }
    }
    // S2: other callbacks run first in the same interrupt.
    if let (Some(l), Some(i)) = (lte, entry) {
        let mut d = Vec::new();
        let mut open: Option<(u64, Name, Nanos)> = None;
        for e in &events[l..i] {
            match &e.kind {
                Kind::HrtimerExpireEntry {
                    timer,
                    function,
                    now,
                    ..
                } if e.cpu == events[i].cpu => open = Some((*timer, function.clone(), *now)),
                Kind::HrtimerExpireExit { timer } if e.cpu == events[i].cpu => {
                    if let Some((t, f, n)) = open.take().filter(|o| o.0 == *timer) {
                        let _ = t;
                        add(&mut d, "other_callback", &f, None, (e.ts - n).max(0));
                    }
                }
                _ => {}
            }
        }
        // PREEMPT_RT: a soft hrtimer (a fair thread's sleep) expires in the timer softirq's
        // thread (`ktimers/N`, else `ksoftirqd/N`), not in the interrupt that raised it
        // (`kernel/time/hrtimer.c`, `HRTIMER_MODE_SOFT`; `kernel/softirq.c`): S2 then holds
        // that thread's wake-up and whatever ran before it, named after the thread.
        if let Some(kind) = handler_thread(&events[i].comm) {
            let rest = segments[2].ns - d.iter().map(|x: &Detail| x.ns).sum::<Nanos>();
            if rest > 0 {
                add(&mut d, kind, &events[i].comm, Some(events[i].pid), rest);
            }
        }
        segments[2].details = clip_details(d, segments[2].ns);
    }
    // S3: who held the CPU between the callback and the switch-in.
    if let (Some(c), Some(i), Some(b3), Some(end)) = (cpu, entry, bounds[3], bounds[4]) {
        segments[3].details = cpu_details(events, c, i, lte, b3, end, tid, None);
        own_interrupt_tail(&mut segments[3].details, setting, steal);
        if let Some(si) = switch_in {
            let t = throttled(events, c, i, si, b3, end, segments[3].ns)
                .or_else(|| unthrottled_at_refill(events, c, i, si, b3, end, segments[3].ns))
                .filter(|t| possible(&t.0, setting, &mut flags));
            if let Some(t) = t {
                // Who ran while the thread was passed over ran because of the throttling:
                // the throttling is the cause, those tasks are not.
                let passed: Vec<Option<i32>> = t.1.iter().map(|p| Some(*p)).collect();
                segments[3].details.retain(|d| !passed.contains(&d.pid));
                segments[3].details.insert(0, t.0);
            }
            held_in_user_mode(
                events,
                c,
                i,
                si,
                tid,
                setting,
                steal,
                &mut segments[3].details,
            );
        }
    }
    // S4: who took the CPU back between the switch-in and the return from the wait (a
    // thread of higher priority woken by the same interrupt, which runs first).
    if let (Some(c), Some(si), Some(b4), Some(end)) = (cpu, switch_in, bounds[4], bounds[5]) {
        if end > b4 {
            let me = match &events[si].kind {
                Kind::SchedSwitch { next_comm, .. } => next_comm.clone(),
                _ => Name::default(),
            };
            segments[4].details = cpu_details(events, c, si, None, b4, end, tid, Some((tid, me)));
        }
    }
    // S5: who took the CPU on the way back to user mode. Under PREEMPT_NONE a thread woken
    // while ours was in the kernel preempts it only there, after `sys_exit` (the kernel's
    // exit-to-user work calls schedule(), `kernel/entry/common.c`).
    if let (Some(c), Some(x), Some(b5), Some(end)) = (cpu, back, bounds[5], bounds[6]) {
        if end > b5 {
            let me = match &events[x].kind {
                Kind::SchedSwitch { next_comm, .. } => next_comm.clone(),
                _ => events[x].comm.clone(),
            };
            segments[5].details = cpu_details(events, c, x, None, b5, end, tid, Some((tid, me)));
            if let Some(t) = throttled_on_exit(events, c, x, tid, b5, end, segments[5].ns)
                .filter(|t| possible(&t.0, setting, &mut flags))
            {
                let passed: Vec<Option<i32>> = t.1.iter().map(|p| Some(*p)).collect();
                segments[5].details.retain(|d| !passed.contains(&d.pid));
                segments[5].details.insert(0, t.0);
            }
            // A page fault of the thread's own on its way back to user mode (its code paged
            // out): from the fault to the clock read, waiting for the page included.
            let first = events[x..]
                .iter()
                .take_while(|e| e.ts <= end)
                .find(|e| e.pid == tid && e.ts >= b5 && matches!(e.kind, Kind::PageFault { .. }));
            if let Some(f) = first {
                let held = end - f.ts;
                if 2 * held >= segments[5].ns {
                    if let Some(d) = own_fault(events, tid, f.ts, end, held) {
                        segments[5].details.insert(0, d);
                    }
                }
            }
        }
    }
    let mut cause = main_cause(&segments, residual, lost);
    if cause.category == "unexplained" {
        let at = back.or(start.map(|s| s.0)).map(|i| events[i].cpu);
        if let Some(c) = cpu.or(at) {
            if let Some((gap, from, to)) =
                trace_silent(events, c, &bounds, expiry, sample.latency())
            {
                flags.push("trace_silent".to_string());
                let unrecorded = unrecorded_switch_out(events, c, from, to);
                cause = match steal.filter(|&st| st > 0 && STEAL_SHARE * st >= gap) {
                    Some(st) => Cause {
                        category: "hypervisor".into(),
                        detail: Some(format!("steal {} µs", us(st))),
                    },
                    None => Cause {
                        category: "cannot tell".into(),
                        detail: Some(match unrecorded {
                            Some((pid, comm)) => format!(
                                "{TRACE_SILENT} after the switch to {comm} ({pid}), \
                                 whose switch out went unrecorded"
                            ),
                            None => TRACE_SILENT.into(),
                        }),
                    },
                };
            }
        }
    }
    // A thread that spins to its expiry after a sleep that ended before it (`hybrid`, its
    // timer's callback run before the expiry) was late while spinning: no timer event lies
    // in the delay either.
    // (Back on the CPU before the expiry: woken in time but held after, it was late in
    // the timer's model, S3.)
    let in_spin = setting.timer_before_expiry
        && now.is_some_and(|n| n < expiry)
        && b4.is_some_and(|t| t < expiry);
    if (setting.spins && start.is_none()) || in_spin {
        flags.push("no_timer".to_string());
        cause = spin_cause(cause);
    }
    let marks = match cpu {
        Some(c) => cpu_marks(events, c, tid, expiry, woke),
        None => Vec::new(),
    };
    Breakdown {
        sample: *sample,
        cpu,
        latency_ns: sample.latency(),
        segments,
        residual_ns: residual,
        cause,
        flags,
        spans: spans(&bounds, expiry),
        marks,
        steal_ns: steal,
    }
}

/// How a breakdown names a residual in which the CPU's trace recorded nothing at all.
const TRACE_SILENT: &str = "trace silent";

/// A silent residual is the host's when the steal time read at the wake-up is at least
/// 1/`STEAL_SHARE` of it: steal is time the vCPU was runnable and the host ran something
/// else, the one thing that stops a guest CPU's trace without a trace of its own. The
/// reading covers the whole wait (from the arming of its timer), so steal before the expiry
/// counts too; half the silent span keeps a little steal during a long sleep from naming
/// the host for a gap it did not make.
const STEAL_SHARE: Nanos = 2;

/// ns → whole µs, rounded.
fn us(ns: Nanos) -> Nanos {
    (ns + US / 2) / US
}

/// The steal time read at the wait's return `events[x]` (BPF backend: [`Kind::Steal`] right
/// after that `sys_exit`, same thread and time), ns; `None` where it was not read (the text
/// path, a kernel without paravirt steal accounting, the thread's first wait on a CPU).
fn steal_at_return(events: &[Event], x: usize) -> Option<Nanos> {
    let at = &events[x];
    events[x + 1..]
        .iter()
        .take_while(|e| e.ts <= at.ts)
        .find_map(|e| match e.kind {
            Kind::Steal { ns } if e.pid == at.pid && e.cpu == at.cpu => Some(ns),
            _ => None,
        })
}

/// Where the wait's return is not traced: the first steal reading of the thread switched in
/// at `events[si]`, on its CPU, up to `until` (ns) — taken when it next armed its timer,
/// after its clock read ([`Kind::Steal`]); `None` without one.
fn steal_after(events: &[Event], si: usize, until: Nanos) -> Option<Nanos> {
    let (cpu, tid) = match &events[si].kind {
        Kind::SchedSwitch { next_pid, .. } => (events[si].cpu, *next_pid),
        _ => return None,
    };
    events[si + 1..]
        .iter()
        .take_while(|e| e.ts <= until)
        .find_map(|e| match e.kind {
            Kind::Steal { ns } if e.pid == tid && e.cpu == cpu => Some(ns),
            _ => None,
        })
}

/// The length (ns) and ends of the longest stretch of the largest residual span of `bounds`
/// in which `cpu` recorded no event, when it is at least half of the latency, else `None`: the
/// events are not missing one by one, the trace of that CPU is silent for most of the
/// wake-up — as when the vCPU did not run, or its events were not recorded (seen on this VM
/// about once a second for 0.1–1.5 ms, in tickscope's window and in the oracle's own trace
/// instance alike; under load for up to 2.5 ms, the stretch ending in the wake-up's
/// aftermath — the tasks its interrupt woke — inside the residual). What held the thread
/// cannot be told; the cause says so ("cannot tell (trace silent)", flag `trace_silent`)
/// rather than calling it missing events of an otherwise recorded stretch — unless the steal
/// time read at the wake-up covers it ([`STEAL_SHARE`]): then the host held the vCPU,
/// "hypervisor (steal X µs)".
fn trace_silent(
    events: &[Event],
    cpu: u32,
    bounds: &[Option<Nanos>; 7],
    expiry: Nanos,
    latency: Nanos,
) -> Option<(Nanos, Nanos, Nanos)> {
    let gap = spans(bounds, expiry)
        .into_iter()
        .filter(|s| s.id == "residual")
        .max_by_key(|s| s.to_ns - s.from_ns)?;
    let (a, b) = (expiry + gap.from_ns, expiry + gap.to_ns);
    // Events within 1 µs of the span's ends are its boundaries' own.
    let (mut silent, mut ends) = (0, (a, a));
    let mut since = a;
    for e in events
        .iter()
        .filter(|e| e.cpu == cpu && e.ts > a + US && e.ts < b - US)
    {
        if e.ts - since > silent {
            (silent, ends) = (e.ts - since, (since, e.ts));
        }
        since = since.max(e.ts);
    }
    if b - since > silent {
        (silent, ends) = (b - since, (since, b));
    }
    (2 * silent >= latency).then_some((silent, ends.0, ends.1))
}

/// The task (pid, name) whose switch out `cpu`'s trace did not record across the silent
/// stretch `[from, to]`: the last switch at or before `from` put it on the CPU, and the
/// first event at or after `to` is another task's without a switch out of it in between
/// (a `sched_switch` is emitted at every change of the running task, `__schedule()` in
/// kernel/sched/core.c). Its context's events were not recorded — not a stall of the vCPU,
/// which ends in a recorded timer interrupt and switch. On this VM the sandbox's own agent
/// threads (of PID 1) are such tasks for perf, BPF and ftrace's scheduler events
/// alike (counted in the oracle's own trace instance: switches into them, none out).
/// `None` when the switch out was recorded, the task is idle, or either end is missing.
fn unrecorded_switch_out(
    events: &[Event],
    cpu: u32,
    from: Nanos,
    to: Nanos,
) -> Option<(i32, Name)> {
    let on_cpu = |e: &&Event| e.cpu == cpu;
    let (pid, comm) = events
        .iter()
        .filter(on_cpu)
        .take_while(|e| e.ts <= from + US)
        .filter_map(|e| match &e.kind {
            Kind::SchedSwitch {
                next_pid,
                next_comm,
                ..
            } => Some((*next_pid, next_comm.clone())),
            _ => None,
        })
        .last()?;
    let after = events.iter().filter(on_cpu).find(|e| e.ts >= to - US)?;
    let switched_out = matches!(after.kind, Kind::SchedSwitch { prev_pid, .. } if prev_pid == pid);
    (pid != 0 && after.pid != pid && !switched_out).then_some((pid, comm))
}

/// What ran on `cpu` in `[from, to]` other than the measured thread and idle, as marks
/// relative to `from`: nested contexts are shown innermost (an IRQ inside a softirq splits
/// the softirq's mark), adjacent pieces of the same context merged.
pub(crate) fn cpu_marks(events: &[Event], cpu: u32, tid: i32, from: Nanos, to: Nanos) -> Vec<Mark> {
    let mut stack: Vec<(&str, Name)> = Vec::new();
    let mut task: Option<(i32, Name)> = None;
    let mut out: Vec<Mark> = Vec::new();
    let mut last: Option<Nanos> = None;
    let mut emit = |stack: &[(&str, Name)], task: &Option<(i32, Name)>, a: Nanos, b: Nanos| {
        let (a, b) = (a.max(from), b.min(to));
        if b <= a {
            return;
        }
        let (kind, name, pid) = match (stack.last(), task) {
            (Some((k, n)), _) => (*k, n.to_string(), None),
            (None, Some((p, n))) if *p != 0 && *p != tid => ("thread", n.to_string(), Some(*p)),
            _ => return,
        };
        if let Some(m) = out.last_mut() {
            if m.kind == kind && m.name == name && m.pid == pid && m.to_ns == a - from {
                m.to_ns = b - from;
                return;
            }
        }
        if out.len() < MAX_MARKS {
            out.push(Mark {
                kind: kind.into(),
                name,
                pid,
                from_ns: a - from,
                to_ns: b - from,
            });
        }
    };
    for e in events.iter().filter(|e| e.cpu == cpu) {
        if e.ts > to {
            break;
        }
        if task.is_none() {
            task = Some((e.pid, e.comm.clone()));
        }
        if let Some(l) = last {
            emit(&stack, &task, l, e.ts);
        }
        last = Some(e.ts);
        follow(&mut stack, &mut task, e);
    }
    if let Some(l) = last {
        emit(&stack, &task, l, to);
    }
    out
}

/// What a CPU runs after event `e` on it: the stack of interrupt contexts (`irq` for IRQ
/// handlers and vectors, `softirq`, innermost last) and the task under them.
pub(crate) fn follow(
    stack: &mut Vec<(&'static str, Name)>,
    task: &mut Option<(i32, Name)>,
    e: &Event,
) {
    match &e.kind {
        Kind::IrqEntry { name, .. } | Kind::VectorEntry { name } => {
            stack.push(("irq", name.clone()))
        }
        Kind::SoftirqEntry { action } => stack.push(("softirq", action.clone())),
        Kind::IrqExit { .. } | Kind::VectorExit { .. } | Kind::SoftirqExit { .. } => {
            stack.pop();
        }
        Kind::SchedSwitch {
            next_pid,
            next_comm,
            ..
        } => {
            stack.clear();
            *task = Some((*next_pid, next_comm.clone()));
        }
        _ => {}
    }
}

/// The thread's `hrtimer_start` for this expiry: (index, timer, hard expiry, soft expiry).
/// The soft expiry is what must not be after the wake-up: with timer slack the timer fires
/// between the two.
fn find_start(
    sample: &LateSample,
    setting: &Setting,
    events: &[Event],
) -> Option<(usize, u64, Nanos, Nanos)> {
    let half = (setting.period / 2).max(1);
    // How far before the expiry the timer may be: a margin of up to a period for a method
    // that spins the rest (the previous period's start is a whole period and a margin
    // before, out of reach).
    // And how far after: a method whose sleep ends before the expiry never arms its timer
    // past it (a later start is the next period's sleep, a margin after this expiry).
    let (before, after) = match setting.timer_before_expiry {
        true => (setting.period.max(1) - 1, US),
        false => (half, half),
    };
    let mut best: Option<(usize, u64, Nanos, Nanos)> = None;
    for (i, e) in events.iter().enumerate() {
        if e.pid != sample.tid || e.ts > sample.woke + US {
            continue;
        }
        if let Kind::HrtimerStart {
            timer,
            expires,
            softexpires,
            ..
        } = e.kind
        {
            let soft = softexpires.unwrap_or(expires).min(expires);
            if soft < sample.expiry - before || soft > sample.expiry + after || soft > sample.woke {
                continue;
            }
            let closer = best.is_none_or(|(_, _, _, b)| {
                (soft - sample.expiry).abs() <= (b - sample.expiry).abs()
            });
            if closer {
                best = Some((i, timer, expires, soft));
            }
        }
    }
    best
}

/// Clamps known boundaries into `[previous, woke]`; the span between two known boundaries
/// that are not adjacent (a missing one between them) becomes residual.
fn clamp_boundaries(
    raw: &[Option<Nanos>; 7],
    expiry: Nanos,
    woke: Nanos,
) -> ([Option<Nanos>; 7], Nanos) {
    let mut out = [None; 7];
    let mut prev = expiry;
    for (k, b) in raw.iter().enumerate() {
        out[k] = b.map(|v| {
            let v = v.clamp(prev, woke.max(prev));
            prev = v;
            v
        });
    }
    let mut residual = 0;
    let mut last: Option<(usize, Nanos)> = None;
    for (k, b) in out.iter().enumerate() {
        if let Some(v) = b {
            if let Some((j, p)) = last {
                if k > j + 1 {
                    residual += v - p;
                }
            }
            last = Some((k, *v));
        }
    }
    (out, residual)
}

pub(crate) fn add(d: &mut Vec<Detail>, kind: &str, name: &str, pid: Option<i32>, ns: Nanos) {
    if ns <= 0 {
        return;
    }
    match d
        .iter_mut()
        .find(|x| x.kind == kind && x.name == name && x.pid == pid)
    {
        Some(x) => x.ns += ns,
        None => d.push(Detail {
            kind: kind.into(),
            name: name.into(),
            pid,
            ns,
        }),
    }
}

/// Sorts details largest first and scales them down if µs rounding made them exceed the
/// segment.
pub(crate) fn clip_details(mut d: Vec<Detail>, total: Nanos) -> Vec<Detail> {
    d.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.name.cmp(&b.name)));
    let sum: Nanos = d.iter().map(|x| x.ns).sum();
    if sum > total && sum > 0 {
        for x in &mut d {
            x.ns = (x.ns as i128 * total as i128 / sum as i128) as Nanos;
        }
    }
    d
}

/// S1's detail, named only from evidence. A halted CPU (idle, or the measured thread asleep)
/// on a VM is the hypervisor ("vCPU idle": not "halted", since a guest's idle may poll —
/// the haltpoll driver's state 0, drivers/cpuidle/cpuidle-haltpoll.c — and on a VM the idle
/// states are not recorded at all, see `BpfCapture::stop_recording`), on bare metal exit
/// from idle, with its C-state when recorded. A hard interrupt handler open on
/// the CPU during the delay held the timer interrupt (handlers run with interrupts off): it
/// is named. Otherwise a task was running with interrupts enabled as far as the trace shows
/// (user mode always is; this kernel has no `preemptirq` events to show interrupts-off
/// sections), so on a VM the interrupt was held outside the guest ("hypervisor: vCPU running
/// X") and on bare metal the trace cannot tell — never "the task did it": a task in user
/// mode cannot delay an interrupt. On a VM, busy or idle, the detail lists the IPIs that
/// entered the CPU during the delay, or whose handler was running as it began
/// ([`ipis_during`]): an idle vCPU woken by one ran guest
/// code while the timer interrupt stayed held, the same evidence as a running one's. A
/// hypervisor detail ends with the steal time read at the wake-up when there is one
/// (`; steal X µs`, see [`Kind::Steal`]).
#[allow(clippy::too_many_arguments)]
fn delivery_details(
    events: &[Event],
    cpu: u32,
    irq: usize,
    tid: i32,
    setting: &Setting,
    ns: Nanos,
    steal: Option<Nanos>,
    flags: &mut Vec<String>,
) -> Vec<Detail> {
    let stolen = steal.map_or(String::new(), |st| format!("; steal {} µs", us(st)));
    let at = &events[irq];
    let idle_state = events[..irq].iter().rev().find_map(|e| match e.kind {
        Kind::CpuIdle { state } if e.cpu == cpu => Some(state),
        _ => None,
    });
    let current = (at.pid, at.comm.clone());
    if current.0 == tid {
        flags.push("interrupted_task_stale".into());
    }
    let halted = current.0 == 0 || current.0 == tid || matches!(idle_state, Some(Some(_)));
    let state = match idle_state {
        Some(Some(s)) => format!("C{s}"),
        _ => "idle".into(),
    };
    let mut d = Vec::new();
    let held = (!halted)
        .then(|| hard_irq_before(events, cpu, irq, at.ts - ns))
        .flatten();
    match (halted, held, setting.virtualized) {
        (true, _, true) => {
            let ipis = ipis_during(events, cpu, irq, at.ts - ns);
            add(
                &mut d,
                "hypervisor",
                &match idle_state {
                    Some(Some(_)) => format!("vCPU idle ({state}){ipis}{stolen}"),
                    _ => format!("vCPU idle{ipis}{stolen}"),
                },
                None,
                ns,
            )
        }
        (true, _, false) => add(&mut d, "exit_from_idle", &state, None, ns),
        (false, Some((name, t)), _) if 2 * t >= ns => add(&mut d, "irq", &name, None, ns),
        (false, _, true) => add(
            &mut d,
            "hypervisor",
            &format!(
                "vCPU running {}; interrupt held outside the guest{}{stolen}",
                current.1,
                ipis_during(events, cpu, irq, at.ts - ns)
            ),
            Some(current.0),
            ns,
        ),
        (false, _, false) => add(
            &mut d,
            "cannot_tell",
            &format!(
                "CPU running {}; no interrupt or interrupts-off section seen",
                current.1
            ),
            Some(current.0),
            ns,
        ),
    }
    d
}

/// What the hypervisor detail adds when inter-processor interrupts reached the CPU during
/// the held delivery, the vCPU running a task or idle: [`IPI_DELIVERY`] and the count per
/// vector, e.g. `; IPIs received meanwhile: call_function_single 1`. Empty when none did.
/// An IPI whose handler was still running when the delay began (its entry the CPU's last
/// event before `from`) counts too, and the detail says so (`…, one in its handler as the delay
/// began`): the guest was taking that IPI at the expiry. On this project's guest such a
/// handler took 3.5–5 µs where the plant's others take 0.3 µs, and the timer interrupt
/// followed 11–16 µs after its exit with nothing traced, only inside the IPI plant's bursts
/// (8 of the 11 plain `hypervisor` misses of the plant's run of 2026-11-28 12:40, `bench/
/// oracle.sh --quick --only ipi --keep`; the other 3 were stalls of 0.7–1.7 ms with no IPI
/// near) — before, only an entry inside the delay counted.
///
/// On a KVM guest each IPI to a running vCPU is injected by the host (a VM exit and entry
/// unless the CPU posts interrupts); its handler in the guest takes under the trace's 1 µs.
/// The oracle's IPI plant (`bench/oracle.sh --only ipi`) measures how much longer the
/// delivery delay is with an IPI inside it — time the guest never sees, so the category
/// stays `hypervisor`, and the IPIs are the evidence of what the host was doing
/// (docs/explain.md, "Interrupts held by the host: the IPI plant").
fn ipis_during(events: &[Event], cpu: u32, before: usize, from: Nanos) -> String {
    // Counts `name` when it is an IPI's vector; whether it was.
    fn count<'a>(seen: &mut Vec<(&'a str, u32)>, name: &'a Name) -> bool {
        if !IPI_VECTORS.contains(&name.as_str()) {
            return false;
        }
        match seen.iter_mut().find(|(n, _)| *n == name.as_str()) {
            Some(x) => x.1 += 1,
            None => seen.push((name.as_str(), 1)),
        }
        true
    }
    let mut seen: Vec<(&str, u32)> = Vec::new();
    let mut open_at_start = false;
    for e in events[..before].iter().rev().filter(|e| e.cpu == cpu) {
        if e.ts < from {
            // The CPU's last event before the delay an IPI's entry: its handler was still
            // running as the delay began (its exit, if recorded, is inside).
            if let Kind::VectorEntry { name } = &e.kind {
                open_at_start = count(&mut seen, name);
            }
            break;
        }
        if let Kind::VectorEntry { name } = &e.kind {
            count(&mut seen, name);
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    seen.sort();
    let list: Vec<String> = seen.iter().map(|(n, k)| format!("{n} {k}")).collect();
    let open = match open_at_start {
        true => ", one in its handler as the delay began",
        false => "",
    };
    format!("; {IPI_DELIVERY}: {}{open}", list.join(", "))
}

/// The x86 IPI vectors (`arch/x86/include/asm/trace/irq_vectors.h`): function calls
/// (`smp_call_function*`, membarrier, TLB shootdowns, remote wake-ups) and rescheduling.
const IPI_VECTORS: [&str; 3] = ["call_function", "call_function_single", "reschedule"];

/// The words by which a hypervisor detail says IPIs reached the CPU during the held delivery;
/// the main cause is then `hypervisor (IPI delivery)`.
const IPI_DELIVERY: &str = "IPIs received meanwhile";

/// The hard interrupt handler (IRQ or vector) that was running on `cpu` for the longest time
/// within `[from, events[before].ts)`, and that time, ns.
fn hard_irq_before(
    events: &[Event],
    cpu: u32,
    before: usize,
    from: Nanos,
) -> Option<(Name, Nanos)> {
    let end = events[before].ts;
    let mut open: Vec<(Name, Nanos)> = Vec::new();
    let mut best: Option<(Name, Nanos)> = None;
    for e in events[..before].iter().filter(|e| e.cpu == cpu) {
        match &e.kind {
            Kind::IrqEntry { name, .. } | Kind::VectorEntry { name } => {
                open.push((name.clone(), e.ts))
            }
            Kind::IrqExit { .. } | Kind::VectorExit { .. } => {
                if let Some((name, a)) = open.pop() {
                    let t = e.ts.min(end) - a.max(from);
                    if t > 0 && best.as_ref().is_none_or(|b| t > b.1) {
                        best = Some((name, t));
                    }
                }
            }
            Kind::SchedSwitch { .. } => open.clear(),
            _ => {}
        }
    }
    for (name, a) in open {
        let t = end - a.max(from);
        if t > 0 && best.as_ref().is_none_or(|b| t > b.1) {
            best = Some((name, t));
        }
    }
    best
}

/// Whether a throttling detail is possible for the late thread: a CFS throttle only where a
/// CPU quota applies to its group or that is unknown ([`Setting::cpu_quota`]). The events
/// alone cannot rule it out: the IPI of a remote unthrottle is also a remote wake-up's. A
/// throttle the events suggested and the group rules out is flagged `no_cpu_quota`.
pub(crate) fn possible(d: &Detail, setting: &Setting, flags: &mut Vec<String>) -> bool {
    let ruled_out = d.kind == "cfs_throttled" && setting.cpu_quota == Some(false);
    if ruled_out && !flags.iter().any(|f| f == "no_cpu_quota") {
        flags.push("no_cpu_quota".into());
    }
    !ruled_out
}

/// hrtimer callbacks that end a bandwidth throttling: RT bandwidth (`sched_rt_period_timer`,
/// `kernel/sched/rt.c`), CFS bandwidth (`sched_cfs_period_timer`, `sched_cfs_slack_timer`,
/// `kernel/sched/fair.c`), and the deadline server that runs fair tasks over starving RT
/// ones (`dl_task_timer`, `dl_server_timer`, `kernel/sched/deadline.c`, Linux ≥ 6.12).
pub(crate) const BANDWIDTH_TIMERS: [&str; 5] = [
    "sched_rt_period_timer",
    "sched_cfs_period_timer",
    "sched_cfs_slack_timer",
    "dl_task_timer",
    "dl_server_timer",
];

/// Bandwidth throttling in S3 (`[b3, end]`, `ns` long), from evidence only, with the tasks
/// that ran in its place. The measured thread was runnable from its callback (`entry`) to
/// its switch-in (`si`, whose `next_prio` is its priority), and the scheduler passed it
/// over:
/// * an RT thread (prio < 100), while the CPU went idle or the scheduler switched to a task
///   of a lower class (prio ≥ 100) after the wake-up — which it never does for a runnable
///   RT task unless its run queue is throttled (`sched_rt_runtime_us`,
///   Documentation/scheduler/sched-rt-group.rst) or the deadline server runs fair tasks
///   (Documentation/scheduler/sched-deadline.rst, "dl_server") → `rt_throttled`;
/// * a fair thread, while the CPU stayed idle and a CFS bandwidth timer ran before it was
///   switched in (its group's `cpu.cfs_quota_us` spent until the period timer refilled it,
///   Documentation/scheduler/sched-bwc.rst) → `cfs_throttled`. On a busy CPU a woken fair
///   thread that waits is not evidence of a quota (a task in the kernel keeps the CPU under
///   PREEMPT_NONE, a period timer may fire meanwhile): that case is
///   [`throttled_on_exit`]'s, where the throttle shows itself.
///
/// For an RT thread, the fair task that was current at the wake-up (its priority from the
/// CPU's last switch before it) and kept running counts as passed over too, once a task of a
/// lower class was chosen after the wake-up: only a running RT task's accounting throttles
/// an RT run queue (`update_curr_rt()` → `sched_rt_runtime_exceeded()`, kernel/sched/rt.c),
/// none ran in between, so the queue throttled at that switch was throttled at the wake-up
/// already (else the wake-up would have preempted the fair task). Without that switch a fair
/// task that keeps the CPU is only a task in the kernel under PREEMPT_NONE (the `kernel`
/// plant) and is not counted here — unless the switch-in follows the RT period timer's
/// refill on the CPU at once ([`unthrottled_at_refill`]).
///
/// Passed-over time must fill at least half of S3. The detail names the bandwidth timer
/// seen between the wake-up and the switch-in, if any.
fn throttled(
    events: &[Event],
    cpu: u32,
    entry: usize,
    si: usize,
    b3: Nanos,
    end: Nanos,
    ns: Nanos,
) -> Option<(Detail, Vec<i32>)> {
    let my_prio = match events[si].kind {
        Kind::SchedSwitch { next_prio, .. } if si > entry => next_prio,
        _ => return None,
    };
    let rt = my_prio < 100;
    let timer = events[entry + 1..si].iter().find_map(|e| match &e.kind {
        Kind::HrtimerExpireEntry { function, .. }
            if BANDWIDTH_TIMERS.contains(&function.as_str()) =>
        {
            Some(function.to_string())
        }
        _ => None,
    });
    // (pid, prio, chosen after the wake-up); the current task's priority from the CPU's last
    // switch before the wake-up, when it is in the events.
    let current_prio = events[..entry]
        .iter()
        .rev()
        .filter(|e| e.cpu == cpu)
        .find_map(|e| match e.kind {
            Kind::SchedSwitch {
                next_pid,
                next_prio,
                ..
            } => Some((next_pid == events[entry].pid).then_some(next_prio)),
            _ => None,
        })
        .flatten();
    let mut task = (events[entry].pid, current_prio, false);
    let (mut idle, mut lower, mut blocking, mut last) = (0, 0, 0, b3);
    let mut rt_ran = false;
    let mut pids = Vec::new();
    let mut account = |task: &(i32, Option<i32>, bool), a: Nanos, b: Nanos| {
        let lo = a.clamp(b3, end.max(b3));
        let t = b.clamp(lo, end.max(lo)) - lo;
        if t <= 0 {
            return;
        }
        if task.0 == 0 {
            idle += t;
        } else if rt && task.1.is_some_and(|p| p >= 100) {
            if task.2 {
                lower += t;
            } else {
                blocking += t;
            }
        }
    };
    for e in events[entry + 1..si].iter().filter(|e| e.cpu == cpu) {
        account(&task, last, e.ts);
        last = e.ts.max(last);
        if let Kind::SchedSwitch {
            next_pid,
            next_prio,
            ..
        } = e.kind
        {
            task = (next_pid, Some(next_prio), true);
            if rt && next_pid != 0 && next_prio >= 100 && !pids.contains(&next_pid) {
                pids.push(next_pid);
            }
            rt_ran |= next_pid != 0 && next_prio < 100;
        }
    }
    account(&task, last, end);
    let blocked = lower > 0 && !rt_ran && blocking > 0;
    if blocked && !pids.contains(&events[entry].pid) {
        pids.push(events[entry].pid);
    }
    let passed = idle + lower + if blocked { blocking } else { 0 };
    if ns <= 0 || 2 * passed < ns {
        return None;
    }
    let (kind, ok) = if rt {
        ("rt_throttled", lower > 0 || timer.is_some())
    } else {
        ("cfs_throttled", timer.is_some())
    };
    if !ok {
        return None;
    }
    let name = timer.unwrap_or_else(|| "a lower scheduling class chosen".into());
    Some((
        Detail {
            kind: kind.into(),
            name,
            pid: None,
            ns: passed.min(ns),
        },
        pids,
    ))
}

/// Longest time, ns, from a bandwidth refill on the CPU to the switch-in it causes: the
/// unthrottle enqueues the run queue and asks for a reschedule, taken at that interrupt's
/// return (recorded on this machine: 28–32 µs from `sched_cfs_period_timer`, 10–30 µs from
/// `sched_rt_period_timer`, to the switch-in).
const REFILL_TO_SWITCH_NS: Nanos = 100 * US;

/// A thread woken into a throttled run queue on a busy CPU and held until the refill (S3,
/// `[b3, end]`, `ns` long): a throttled queue stays off the CPU's, so the wake-up is not
/// acted on until the unthrottle enqueues it.
/// * A fair thread in a throttled CFS group (`unthrottle_cfs_rq()`, `kernel/sched/fair.c`;
///   Documentation/scheduler/sched-bwc.rst): the refill is a CFS bandwidth timer's callback
///   on the CPU, or a `call_function_single` IPI (the remote unthrottle,
///   `__cfsb_csd_unthrottle()`) → `cfs_throttled`.
/// * An RT thread on a throttled RT run queue (`sched_rt_runtime_us`,
///   Documentation/scheduler/sched-rt-group.rst): the refill is the RT period timer's callback
///   on the CPU (`sched_rt_period_timer()` → `do_sched_rt_period_timer()`, kernel/sched/rt.c,
///   which unthrottles the queue and reschedules its CPU) → `rt_throttled`. This is the case
///   [`throttled`] leaves: the fair task current at the wake-up kept the CPU until the refill
///   and no other switch proved the throttle (recorded by the oracle's rt-throttle plant
///   under load: rustc kept CPU 1 for 14.7 ms through three ticks, the switch to the FIFO
///   thread 28 µs after `sched_rt_period_timer`). A remote refill (a reschedule IPI) is not
///   taken: any wake-up aimed at the CPU sends one.
///
/// Evidence, all required: the refill between the wake-up (`entry`) and the switch-in
/// (`si`); the switch to the thread is the next switch on the CPU after it, within
/// [`REFILL_TO_SWITCH_NS`] — a thread merely waiting for a task in the kernel under
/// PREEMPT_NONE is switched in whenever that task gives up the CPU, not at the refill (the
/// RT period timer runs once per `sched_rt_period_us`, 1 s by default, so a release that
/// falls within 100 µs after it by chance is rare); the class it is switched in as matches
/// the timer's; the wait until the refill fills at least half of S3.
///
/// The tasks that ran meanwhile (the one current at the wake-up included) ran because of the
/// throttle. The detail names the timer or the IPI.
fn unthrottled_at_refill(
    events: &[Event],
    cpu: u32,
    entry: usize,
    si: usize,
    b3: Nanos,
    end: Nanos,
    ns: Nanos,
) -> Option<(Detail, Vec<i32>)> {
    let rt = match events[si].kind {
        Kind::SchedSwitch { next_prio, .. } if si > entry => next_prio < 100,
        _ => return None,
    };
    let mut refill: Option<(Nanos, String)> = None;
    let mut pids: Vec<i32> = Some(events[entry].pid)
        .filter(|&p| p != 0)
        .into_iter()
        .collect();
    for e in events[entry + 1..si].iter().filter(|e| e.cpu == cpu) {
        match &e.kind {
            Kind::HrtimerExpireEntry { function, .. }
                if (rt && function.as_str() == RT_TIMER)
                    || (!rt && CFS_TIMERS.contains(&function.as_str())) =>
            {
                refill = Some((e.ts, function.to_string()))
            }
            Kind::VectorEntry { name } if !rt && name == "call_function_single" => {
                refill = Some((e.ts, REMOTE_UNTHROTTLE.into()))
            }
            Kind::SchedSwitch { next_pid, .. } => {
                refill = None;
                if *next_pid != 0 && !pids.contains(next_pid) {
                    pids.push(*next_pid);
                }
            }
            _ => {}
        }
    }
    let (at, name) = refill?;
    let held = at.clamp(b3, end.max(b3)) - b3;
    if events[si].ts - at > REFILL_TO_SWITCH_NS || ns <= 0 || 2 * held < ns {
        return None;
    }
    let d = Detail {
        kind: if rt { "rt_throttled" } else { "cfs_throttled" }.into(),
        name,
        pid: None,
        ns: held.min(ns),
    };
    Some((d, pids))
}

/// The RT bandwidth's period timer callback (kernel/sched/rt.c `sched_rt_period_timer()`).
const RT_TIMER: &str = "sched_rt_period_timer";

/// CFS bandwidth timers: the period timer refills a group's quota and unthrottles its run
/// queues; the slack timer hands back unused runtime (`kernel/sched/fair.c`,
/// `sched_cfs_period_timer()`, `sched_cfs_slack_timer()`).
const CFS_TIMERS: [&str; 2] = ["sched_cfs_period_timer", "sched_cfs_slack_timer"];

/// How long before the expiry a loss of events still makes a breakdown "events lost", ns:
/// the stretch in which what S1 uses begins (an interrupt handler open during the delay was
/// entered in it; a handler running 100 µs with interrupts off is a fault of its own).
const LOSS_BEFORE_EXPIRY_NS: Nanos = 100_000;

/// Below this, the time a task interrupted in user mode keeps the CPU after the waking
/// interrupt is left to it: the interrupt's return and the switch take a few µs of its
/// context. Seen on this project's KVM guest (the oracle's spinner plant, 2026-11-26): of
/// the late wake-ups a user-mode spinner "held" after the interrupt, 42 for 1.7–9.3 µs and
/// 7 for 10.5–34 µs — a continuum, so the bound keeps the short ones the guest's own.
pub(crate) const USER_EXIT_NS: Nanos = 10_000;

/// S3 when the timer interrupt that woke the thread (`events[entry]`) came while a task ran
/// in user mode, and the thread outranks that task: the thread's wake-up set the task's
/// need-resched flag inside the interrupt, and a return from an interrupt to user mode
/// switches at once when it is set (`exit_to_user_mode_loop()`, kernel/entry/common.c;
/// preemption of a lower priority or a fair task by an RT task, `wakeup_preempt()`,
/// kernel/sched/core.c and rt.c). So the time that task is seen "running" after the
/// interrupt (its `blocking_thread` detail, the switch `events[si]` straight from it to the
/// thread) was not its own: the vCPU was held outside the guest. Whether the interrupt came
/// in user mode is recorded by the BPF path only (`HrtimerExpireEntry::user`, from the
/// task's saved registers); the RT priority of the thread and the task's priority come from
/// that switch (`next_prio` < 100 and below `prev_prio`). In the kernel (a system call under
/// PREEMPT_NONE), the task keeps the CPU until it returns or reschedules: that stays the
/// task's. The detail is renamed in place (and put first when it is now the largest): on a
/// VM `hypervisor`, "vCPU running X in user mode, which the woken thread outranks: the
/// switch held outside the guest", then the IPIs that reached the CPU meanwhile (as in S1;
/// the cause is then `hypervisor (IPI delivery)`) and the steal time read at the wake-up, if
/// any; on bare metal `cannot_tell` (firmware, an SMI: nothing the trace shows).
#[allow(clippy::too_many_arguments)]
fn held_in_user_mode(
    events: &[Event],
    cpu: u32,
    entry: usize,
    si: usize,
    tid: i32,
    setting: &Setting,
    steal: Option<Nanos>,
    details: &mut Vec<Detail>,
) {
    let at = &events[entry];
    if !matches!(
        at.kind,
        Kind::HrtimerExpireEntry {
            user: Some(true),
            ..
        }
    ) || at.pid == 0
        || at.pid == tid
    {
        return;
    }
    let Kind::SchedSwitch {
        prev_pid,
        prev_prio: Some(prev_prio),
        next_pid,
        next_prio,
        ..
    } = events[si].kind
    else {
        return;
    };
    let outranked = next_prio < 100 && next_prio < prev_prio;
    if prev_pid != at.pid || next_pid != tid || !outranked || si <= entry {
        return;
    }
    // The task held the CPU from the interrupt to that switch, no other in between.
    if events[entry + 1..si]
        .iter()
        .any(|e| e.cpu == cpu && matches!(e.kind, Kind::SchedSwitch { .. }))
    {
        return;
    }
    // Throttled (RT or CFS, named first in S3): the thread was not runnable for the
    // scheduler, and the task ran by right.
    if details.iter().any(|d| d.kind.ends_with("_throttled")) {
        return;
    }
    let Some(k) = details
        .iter()
        .position(|d| d.kind == "blocking_thread" && d.pid == Some(at.pid))
    else {
        return;
    };
    if details[k].ns < USER_EXIT_NS {
        // Too short to say the host held it, but not the task's doing either: the
        // interrupt's return and the switch ran in its context (another interrupt can
        // enter that path, which runs with interrupts enabled before it schedules).
        let d = &mut details[k];
        d.kind = "switch_path".into();
        d.name = format!(
            "interrupt return and switch, in the context of {} (in user mode, outranked by the woken thread)",
            at.comm
        );
        return;
    }
    let mut d = details.remove(k);
    if setting.virtualized {
        let stolen = steal.map_or(String::new(), |st| format!("; steal {} µs", us(st)));
        d.kind = "hypervisor".into();
        d.name = format!(
            "vCPU running {} in user mode, which the woken thread outranks: the switch held outside the guest{}{stolen}",
            at.comm,
            ipis_during(events, cpu, si, at.ts)
        );
    } else {
        d.kind = "cannot_tell".into();
        d.name = format!(
            "CPU running {} in user mode, which the woken thread outranks: nothing traced held the switch",
            at.comm
        );
    }
    let pos = details
        .iter()
        .position(|x| x.ns < d.ns)
        .unwrap_or(details.len());
    details.insert(pos, d);
}

/// A fair thread throttled on its way back to user mode (S5, `[b5, end]`, `ns` long), with
/// the tasks that ran in its place. Since Linux 6.18 a throttled CFS group's tasks are taken
/// off the CPU when they next return to user mode (task work, `throttle_cfs_rq_work()` in
/// `kernel/sched/fair.c`; the task-based throttle series of Valentin Schneider and Aaron Lu,
/// 2025): the thread returns from its wait (`sys_exit`), the throttle's task work dequeues
/// it and `task_work_run()`'s `cond_resched()` switches it out still runnable — printed
/// `R+` — and it runs again only once the quota is refilled (seen so on this machine's
/// 6.18 kernel). Evidence, all of it required:
/// * the first switch on the CPU after the wait's `sys_exit` (`from`) takes the thread off
///   in state `R+`;
/// * before it is switched in again, either the refill reached the CPU — a CFS bandwidth
///   timer ran there, or (the group's period timer runs on another CPU) a
///   `call_function_single` IPI arrived (`unthrottle_cfs_rq_async()` →
///   `__cfsb_csd_unthrottle()`) — or the CPU went idle (a switch to pid 0) while the thread
///   was off it: the scheduler never idles a CPU with a runnable task queued, so a thread
///   switched out runnable and then passed over for idle had been dequeued, which for a fair
///   task at that point is the throttle's task work (on a calm machine this is all there is
///   to see: an idle CPU polling in `cpuidle-haltpoll` runs the remote unthrottle from its
///   idle loop without an IPI, `flush_smp_call_function_queue()` in `do_idle()`,
///   `kernel/sched/idle.c`);
/// * it is switched back in as a fair task (`next_prio` ≥ 100);
/// * the time off the CPU fills at least half of S5.
///
/// The detail names the timer, the IPI, or the idle CPU.
fn throttled_on_exit(
    events: &[Event],
    cpu: u32,
    from: usize,
    tid: i32,
    b5: Nanos,
    end: Nanos,
    ns: Nanos,
) -> Option<(Detail, Vec<i32>)> {
    let mut out: Option<Nanos> = None;
    let mut refill: Option<String> = None;
    let mut idle = false;
    let mut pids = Vec::new();
    for e in events[from + 1..].iter().filter(|e| e.cpu == cpu) {
        if e.ts > end + US {
            break;
        }
        match (&e.kind, out) {
            (
                Kind::SchedSwitch {
                    prev_pid,
                    prev_state,
                    next_pid,
                    ..
                },
                None,
            ) => {
                if *prev_pid != tid || prev_state != "R+" {
                    return None;
                }
                out = Some(e.ts);
                match *next_pid {
                    0 => idle = true,
                    p => pids.push(p),
                }
            }
            (Kind::HrtimerExpireEntry { function, .. }, Some(_))
                if CFS_TIMERS.contains(&function.as_str()) =>
            {
                refill = Some(function.to_string())
            }
            (Kind::VectorEntry { name }, Some(_))
                if name == "call_function_single" && refill.is_none() =>
            {
                refill = Some(REMOTE_UNTHROTTLE.into())
            }
            (
                Kind::SchedSwitch {
                    next_pid,
                    next_prio,
                    ..
                },
                Some(at),
            ) if *next_pid == tid => {
                if *next_prio < 100 {
                    return None;
                }
                let name = refill.or_else(|| idle.then(|| IDLE_WHILE_RUNNABLE.to_string()))?;
                let lo = at.clamp(b5, end);
                let passed = e.ts.clamp(lo, end) - lo;
                if ns <= 0 || 2 * passed < ns {
                    return None;
                }
                let d = Detail {
                    kind: "cfs_throttled".into(),
                    name,
                    pid: None,
                    ns: passed.min(ns),
                };
                return Some((d, pids));
            }
            (Kind::SchedSwitch { next_pid: 0, .. }, Some(_)) => idle = true,
            (Kind::SchedSwitch { next_pid, .. }, Some(_)) if !pids.contains(next_pid) => {
                pids.push(*next_pid)
            }
            _ => {}
        }
    }
    None
}

/// The first page fault thread `tid` took in `[from, to]` (`exceptions:page_fault_user`,
/// `page_fault_kernel`), as a `page_fault` detail of `ns` named by where it was taken
/// ("user mode" or "kernel"); `None` without one. A fault's end is not traced: `ns` is the
/// span the caller shows it held the thread (a major fault waits for its page in state `D`,
/// "Understanding the Linux Virtual Memory Manager", Gorman 2004, ch. 4.6).
pub(crate) fn own_fault(
    events: &[Event],
    tid: i32,
    from: Nanos,
    to: Nanos,
    ns: Nanos,
) -> Option<Detail> {
    events.iter().find_map(|e| match e.kind {
        Kind::PageFault { user, .. } if e.pid == tid && e.ts >= from && e.ts <= to => {
            Some(Detail {
                kind: "page_fault".into(),
                name: if user { "user mode" } else { "kernel" }.into(),
                pid: Some(tid),
                ns,
            })
        }
        _ => None,
    })
}

/// How [`throttled_on_exit`] names a refill that reached the CPU by IPI.
pub(crate) const REMOTE_UNTHROTTLE: &str = "call_function_single (period timer on another CPU)";
/// How [`throttled_on_exit`] names a throttle shown by the CPU idling while the thread was
/// runnable (no refill event seen on the CPU).
pub(crate) const IDLE_WHILE_RUNNABLE: &str = "CPU idle while the thread was runnable";

/// Whether a kernel thread runs interrupt work under PREEMPT_RT (or `threadirqs`), and as
/// what: `irq/N-name` is a threaded IRQ handler (`kernel/irq/manage.c`, `setup_irq_thread()`);
/// `ksoftirqd/N` runs softirqs (`kernel/softirq.c`); `ktimers/N` runs the timer softirqs on
/// PREEMPT_RT (`kernel/softirq.c`, `timersd`, Linux 6.x).
pub(crate) fn handler_thread(comm: &str) -> Option<&'static str> {
    if comm.starts_with("irq/") {
        Some("irq")
    } else if comm.starts_with("ksoftirqd/") || comm.starts_with("ktimers/") {
        Some("softirq")
    } else {
        None
    }
}

/// What ran on `cpu` in `[b3, end]`, net (osnoise's accounting): nested IRQs are taken out of
/// the softirq and the thread they interrupt. A softirq or IRQ handler that the timer
/// interrupt itself interrupted (entered before it on that CPU, since the last switch, not
/// yet left) runs on after it and is counted as such, not as the task underneath.
#[allow(clippy::too_many_arguments)]
fn cpu_details(
    events: &[Event],
    cpu: u32,
    entry: usize,
    lte: Option<usize>,
    b3: Nanos,
    end: Nanos,
    tid: i32,
    start_task: Option<(i32, Name)>,
) -> Vec<Detail> {
    #[derive(Clone)]
    enum Ctx {
        OwnIrq,
        // Another hrtimer callback run by our own timer interrupt after the thread's (the
        // tick's, say), until its exit. Its time is counted as `callback_open` and becomes
        // `other_callback` at its exit; without one (the BPF path records no callback exits)
        // the stretch up to the interrupt's exit holds the callback and the interrupt's own
        // tail in unknown shares, and is dropped: the kernel's path, as before.
        Callback(Name),
        Irq(Name),
        Softirq(Name),
    }
    // What the timer interrupted is still running when it returns: a softirq (or an IRQ
    // handler) entered before the interrupt and not left holds the CPU first.
    let before = lte.unwrap_or(entry);
    let since = events[..before]
        .iter()
        .rposition(|e| e.cpu == cpu && matches!(e.kind, Kind::SchedSwitch { .. }))
        .map_or(0, |k| k + 1);
    let mut stack: Vec<Ctx> = Vec::new();
    if start_task.is_none() {
        for e in events[since..before].iter().filter(|e| e.cpu == cpu) {
            match &e.kind {
                Kind::IrqEntry { name, .. } | Kind::VectorEntry { name } => {
                    stack.push(Ctx::Irq(name.clone()))
                }
                Kind::SoftirqEntry { action } => stack.push(Ctx::Softirq(action.clone())),
                Kind::IrqExit { .. } | Kind::VectorExit { .. } | Kind::SoftirqExit { .. } => {
                    stack.pop();
                }
                _ => {}
            }
        }
    }
    // Still inside our own timer interrupt unless it has exited before the callback.
    let own_open = lte.is_some_and(|l| {
        !events[l..entry].iter().any(|e| {
            e.cpu == cpu && matches!(&e.kind, Kind::VectorExit { name } if name == "local_timer")
        })
    });
    if own_open {
        stack.push(Ctx::OwnIrq);
    }
    let mut task = start_task.unwrap_or_else(|| (events[entry].pid, events[entry].comm.clone()));
    let mut first_task = true;
    let mut d = Vec::new();
    let mut last = b3;
    let account = |d: &mut Vec<Detail>,
                   stack: &[Ctx],
                   task: &(i32, Name),
                   first: bool,
                   ns: Nanos| {
        match stack.last() {
            Some(Ctx::OwnIrq) => add(d, "own_timer_irq", "local_timer", None, ns),
            Some(Ctx::Callback(n)) => add(d, "callback_open", n, None, ns),
            Some(Ctx::Irq(n)) => add(d, "irq", n, None, ns),
            Some(Ctx::Softirq(n)) => add(d, "softirq", n, None, ns),
            None if task.0 == 0 => add(d, "idle", "<idle>", Some(0), ns),
            None if task.0 == tid => add(d, "own_thread", &task.1, Some(tid), ns),
            None => match handler_thread(&task.1) {
                Some(kind) => add(d, kind, &task.1, Some(task.0), ns),
                None if first => add(d, "blocking_thread", &task.1, Some(task.0), ns),
                None => add(d, "higher_priority_thread", &task.1, Some(task.0), ns),
            },
        }
    };
    for e in events[entry + 1..].iter().filter(|e| e.cpu == cpu) {
        if e.ts > end {
            break;
        }
        let t = e.ts.clamp(last, end);
        account(&mut d, &stack, &task, first_task, t - last);
        last = t;
        match &e.kind {
            Kind::IrqEntry { name, .. } => stack.push(Ctx::Irq(name.clone())),
            Kind::VectorEntry { name } => stack.push(Ctx::Irq(name.clone())),
            Kind::SoftirqEntry { action } => stack.push(Ctx::Softirq(action.clone())),
            Kind::HrtimerExpireEntry { function, .. }
                if matches!(stack.last(), Some(Ctx::OwnIrq | Ctx::Callback(_))) =>
            {
                if matches!(stack.last(), Some(Ctx::Callback(_))) {
                    stack.pop();
                }
                stack.push(Ctx::Callback(function.clone()));
            }
            Kind::HrtimerExpireExit { .. } if matches!(stack.last(), Some(Ctx::Callback(_))) => {
                if let Some(Ctx::Callback(n)) = stack.pop() {
                    if let Some(k) = d
                        .iter()
                        .position(|x| x.kind == "callback_open" && x.name == n)
                    {
                        let open = d.remove(k);
                        add(&mut d, "other_callback", &n, None, open.ns);
                    }
                }
            }
            Kind::IrqExit { .. } | Kind::VectorExit { .. } | Kind::SoftirqExit { .. } => {
                // A callback still open at the interrupt's exit: its time is set apart as
                // unended (dropped below), never merged with a later one's of the same name.
                while let Some(Ctx::Callback(n)) = stack.last().cloned() {
                    stack.pop();
                    if let Some(x) = d
                        .iter_mut()
                        .find(|x| x.kind == "callback_open" && x.name == n)
                    {
                        x.kind = "callback_unended".into();
                    }
                }
                stack.pop();
            }
            Kind::SchedSwitch {
                next_pid,
                next_comm,
                ..
            } => {
                stack.clear();
                if task.0 != 0 && task.0 != tid {
                    first_task = false;
                }
                task = (*next_pid, next_comm.clone());
            }
            _ => {}
        }
    }
    account(&mut d, &stack, &task, first_task, end - last);
    let total = end - b3;
    let mut d = clip_details(d, total);
    d.retain(|x| {
        !matches!(
            x.kind.as_str(),
            "own_thread" | "idle" | "callback_open" | "callback_unended"
        )
    });
    d
}

/// The shortest tail of the thread's own timer interrupt (see [`own_interrupt_tail`]) named
/// the host's, ns: the guest's own work there (the wake-up, the timer write's exit when the
/// host answers at once) is short — the whole interrupt took ~2 µs in a calm run of the
/// oracle's IPI plant (docs/explain.md, "Interrupts held by the host"); the same order as
/// [`USER_EXIT_NS`] keeps the short ones the guest's.
const OWN_TAIL_NS: Nanos = 5_000;

/// S3's time in the thread's own timer interrupt after its callback began, with no other
/// callback and nothing else traced there (`own_timer_irq` from [`cpu_details`]). What the
/// interrupt still does then is the wake-up itself and reprogramming the clock event device
/// for the next expiry (`hrtimer_interrupt()`, kernel/time/hrtimer.c); on a KVM guest that
/// write (the TSC-deadline MSR, or the APIC timer) exits to the host, which emulates it
/// (Documentation/virt/kvm/x86/timekeeping.rst; arch/x86/kvm/lapic.c). On this project's
/// guest that stretch measured 5.3 µs at least and 10.2 µs at the median over 6259 late
/// wake-ups (2026-11-26, a loaded host), and it was the largest part of the wake-up-to-CPU
/// segment that had been named "kernel path".
/// So on a VM, from [`OWN_TAIL_NS`] on, it is named the host's, as `hypervisor` "vCPU in its
/// timer interrupt after the callback, nothing traced: the timer write exits to the host",
/// with the steal time read at the wake-up if any; shorter, or on bare metal, it stays the
/// kernel's own path (the detail is dropped, as before).
fn own_interrupt_tail(details: &mut Vec<Detail>, setting: &Setting, steal: Option<Nanos>) {
    let Some(k) = details.iter().position(|d| d.kind == "own_timer_irq") else {
        return;
    };
    if !setting.virtualized || details[k].ns < OWN_TAIL_NS {
        details.remove(k);
        return;
    }
    let stolen = steal.map_or(String::new(), |st| format!("; steal {} µs", us(st)));
    details[k].kind = "hypervisor".into();
    details[k].name = format!(
        "vCPU in its timer interrupt after the callback, nothing traced: the timer write exits to the host{stolen}"
    );
}

/// The name tickscope's own threads get in a breakdown.
pub const OWN_THREAD: &str = "tickscope (own thread)";

/// Names every thread of tickscope's own process other than the measured one (`own(pid)`
/// true) as [`OWN_THREAD`] in the details and marks of `b`, and names the main cause again
/// as the timer's model names it: a measurement disturbed by its own tool says so rather
/// than blaming a command name. Returns whether any was named
/// ([`crate::model::label_own_threads`] names a spinning thread's cause again on top).
pub fn label_own_threads(b: &mut Breakdown, mut own: impl FnMut(i32) -> bool) -> bool {
    let tid = b.sample.tid;
    let mut is_own = |pid: Option<i32>| pid.is_some_and(|p| p != 0 && p != tid && own(p));
    let mut changed = false;
    for seg in &mut b.segments {
        for d in &mut seg.details {
            if is_own(d.pid) {
                d.name = OWN_THREAD.into();
                changed = true;
            }
        }
    }
    for m in &mut b.marks {
        if is_own(m.pid) {
            m.name = OWN_THREAD.into();
        }
    }
    if changed {
        let lost = b.flags.iter().any(|f| f == "lost_events");
        b.cause = main_cause(&b.segments, b.residual_ns, lost);
        if b.flags.iter().any(|f| f == "no_timer") {
            b.cause = spin_cause(b.cause.clone());
        }
    }
    changed
}

/// A spinning thread's cause when no timer of its was found ([`Setting::spins`]): what the
/// events named stays; a residual the timer's model leaves (`unexplained`) is `cannot tell`.
fn spin_cause(c: Cause) -> Cause {
    match c.category == "unexplained" {
        true => cause("cannot tell", Some(NO_TIMER.into())),
        false => c,
    }
}

/// The main cause: the largest segment (or the residual), named by its largest detail.
///
/// A segment of the kernel's own path (S3, S4: "kernel path"; S5: "return to user") is
/// named so only for the time that nothing traced inside it explains. When that time is
/// shorter than another segment that names a cause from its evidence (e.g. an interrupt
/// delivery held by the host, 18 µs, against a wake-to-CPU segment of 19 µs of which 7 µs
/// were another thread and an IPI handler), the larger named contribution is the main cause:
/// the unexplained remainder does not outweigh what the evidence shows.
pub(crate) fn main_cause(segments: &[Segment], residual: Nanos, lost: bool) -> Cause {
    let mut c = main_segment_cause(segments, residual, lost);
    // The host's time is one cause wherever it fell (the interrupt's delivery, its own tail,
    // a switch held): "IPI delivery" when IPIs reached the CPU during any of its stretches.
    // Until 2026-11-28 afternoon only the largest stretch was asked, but the interrupt's own
    // tail, often the largest under an IPI flood, has nothing traced in it by definition: the
    // IPI plant's misses were such wake-ups (83 of its 382 in a loud run), and over ten kept
    // runs of every plant the wider rule names 109 more wake-ups inside the ipi plant's
    // bursts, 1 inside the pagefault plant's (whose page-outs send IPIs) and 1 outside every
    // burst (docs/explain.md, "Interrupts held by the host: the IPI plant").
    if c.category == "hypervisor" {
        let mut host = segments
            .iter()
            .flat_map(|s| s.details.iter())
            .filter(|d| d.kind == "hypervisor")
            .peekable();
        if host.peek().is_some() {
            c.detail = host
                .any(|d| d.name.contains(IPI_DELIVERY))
                .then(|| "IPI delivery".to_string());
        }
    }
    c
}

fn main_segment_cause(segments: &[Segment], residual: Nanos, lost: bool) -> Cause {
    if lost {
        return cause("events lost", None);
    }
    let (k, seg) = segments
        .iter()
        .enumerate()
        .max_by_key(|(k, s)| (s.ns, std::cmp::Reverse(*k)))
        .expect("six segments");
    if residual > seg.ns {
        return cause("unexplained", Some("events missing".into()));
    }
    let (main, named) = name_segment(k, seg);
    if named {
        return main;
    }
    let unexplained = seg.ns - seg.details.iter().map(|d| d.ns).sum::<Nanos>();
    let mut others: Vec<(usize, &Segment)> = segments
        .iter()
        .enumerate()
        .filter(|(j, s)| *j != k && s.ns > unexplained.max(residual))
        .collect();
    others.sort_by_key(|(j, s)| (std::cmp::Reverse(s.ns), *j));
    others
        .into_iter()
        .map(|(j, s)| name_segment(j, s))
        .find(|(_, named)| *named)
        .map_or(main, |(c, _)| c)
}

fn cause(c: &str, d: Option<String>) -> Cause {
    Cause {
        category: c.into(),
        detail: d,
    }
}

/// Segment `k`'s cause, and whether evidence named it (false: only "kernel path", "return to
/// user" or a bare "interrupt delivery", the time nothing traced explains).
fn name_segment(k: usize, seg: &Segment) -> (Cause, bool) {
    let top = seg.details.first();
    match k {
        0 => (cause("timer slack", None), true),
        1 => match top.map(|d| d.kind.as_str()) {
            Some("hypervisor") => (
                cause(
                    "hypervisor",
                    top.filter(|d| d.name.contains(IPI_DELIVERY))
                        .map(|_| "IPI delivery".to_string()),
                ),
                true,
            ),
            Some("exit_from_idle") => (cause("exit from idle", top.map(|d| d.name.clone())), true),
            Some("irq") => (cause("irq", top.map(|d| d.name.clone())), true),
            Some("cannot_tell") => (
                cause("cannot tell", Some("interrupt delivery".into())),
                true,
            ),
            Some("page_fault") => (cause("page fault", top.map(|d| d.name.clone())), true),
            Some("cpu_busy") => (cause("cpu busy", top.map(|d| d.name.clone())), true),
            _ => (cause("interrupt delivery", None), false),
        },
        2 => (cause("hrtimer queue", top.map(|d| d.name.clone())), true),
        _ => {
            // The class (threads, IRQs, softirqs) that filled at least half of the segment,
            // named by its largest member; else the kernel's own path (S3, S4) or the
            // return to user mode (S5).
            let class = |k: &str| match k {
                k if k.ends_with("thread") => "other thread",
                "irq" => "irq",
                "softirq" => "softirq",
                _ => "",
            };
            let mut found = None;
            for c in ["other thread", "irq", "softirq"] {
                let sum: Nanos = seg
                    .details
                    .iter()
                    .filter(|d| class(&d.kind) == c)
                    .map(|d| d.ns)
                    .sum();
                if seg.ns > 0 && 2 * sum >= seg.ns {
                    let largest = seg.details.iter().find(|d| class(&d.kind) == c);
                    found = Some(cause(c, largest.map(|d| d.name.clone())));
                    break;
                }
            }
            match top.map(|d| d.kind.as_str()) {
                Some("rt_throttled") => (cause("rt throttled", top.map(|d| d.name.clone())), true),
                Some("cfs_throttled") => (cause("cpu quota", top.map(|d| d.name.clone())), true),
                Some("page_fault") => (cause("page fault", top.map(|d| d.name.clone())), true),
                // S3: a callback the thread's own timer interrupt ran after the thread's
                // kept it from the CPU, as those run before it do in S2.
                Some("other_callback") if top.is_some_and(|d| 2 * d.ns >= seg.ns) => {
                    (cause("hrtimer queue", top.map(|d| d.name.clone())), true)
                }
                // A task in user mode outranked since the wake-up (S3): see
                // held_in_user_mode.
                Some("hypervisor") if top.is_some_and(|d| 2 * d.ns >= seg.ns) => (
                    cause(
                        "hypervisor",
                        top.filter(|d| d.name.contains(IPI_DELIVERY))
                            .map(|_| "IPI delivery".to_string()),
                    ),
                    true,
                ),
                Some("cannot_tell") if top.is_some_and(|d| 2 * d.ns >= seg.ns) => {
                    (cause("cannot tell", Some("switch held".into())), true)
                }
                _ => match found {
                    Some(c) => (c, true),
                    None if k == 5 => (cause("return to user", None), false),
                    None => (cause("kernel path", None), false),
                },
            }
        }
    }
}
