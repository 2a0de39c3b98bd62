//! Attribution on synthetic event streams, one per cause, and a property test.

use proptest::prelude::*;
use tickscope_explain::events::{parse_line, Event, Kind, Nanos};
use tickscope_explain::{attribute, LateSample, Name, Setting};

const TID: i32 = 500;
const CPU: u32 = 1;
const PERIOD: Nanos = 1_000_000;
const EXPIRY: Nanos = 10_000_000_000;
const PTR: u64 = 0xabc;

/// Builds a stream on one CPU.
struct B(Vec<Event>);

impl B {
    fn new() -> Self {
        B(Vec::new())
    }
    fn ev(mut self, ts: Nanos, pid: i32, comm: &str, kind: Kind) -> Self {
        self.0.push(Event {
            ts,
            cpu: CPU,
            pid,
            comm: comm.into(),
            kind,
        });
        self
    }
    /// The thread arms its timer for `EXPIRY + slack` one period before.
    fn armed(self, slack: Nanos) -> Self {
        self.ev(
            EXPIRY - PERIOD,
            TID,
            "tickscope-0",
            Kind::HrtimerStart {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                expires: EXPIRY + slack,
                softexpires: None,
            },
        )
    }
    /// The thread armed its timer and left the CPU to `task` of kernel priority `prio`, a
    /// period before the expiry.
    fn armed_then(self, task: (i32, &str), prio: i32) -> Self {
        self.armed(0)
            .switch_prio(EXPIRY - PERIOD + 2_000, (TID, "tickscope-0"), task, prio)
    }
    fn idle(self, ts: Nanos, state: Option<u32>) -> Self {
        self.ev(ts, 0, "<idle>", Kind::CpuIdle { state })
    }
    fn switch(self, ts: Nanos, prev: (i32, &str), next: (i32, &str)) -> Self {
        self.ev(
            ts,
            prev.0,
            prev.1,
            Kind::SchedSwitch {
                prev_pid: prev.0,
                prev_comm: prev.1.into(),
                prev_state: "R".into(),
                prev_prio: None,
                next_pid: next.0,
                next_comm: next.1.into(),
                next_prio: 9,
            },
        )
    }
    /// As [`B::switch`], with the incoming task's kernel priority (< 100 RT, ≥ 100 fair).
    fn switch_prio(self, ts: Nanos, prev: (i32, &str), next: (i32, &str), prio: i32) -> Self {
        self.ev(
            ts,
            prev.0,
            prev.1,
            Kind::SchedSwitch {
                prev_pid: prev.0,
                prev_comm: prev.1.into(),
                prev_state: "R".into(),
                prev_prio: None,
                next_pid: next.0,
                next_comm: next.1.into(),
                next_prio: prio,
            },
        )
    }
    /// A bandwidth timer's callback on CPU 0 at `ts`.
    fn bandwidth_timer(mut self, ts: Nanos, function: &str) -> Self {
        self.0.push(Event {
            ts,
            cpu: 0,
            pid: 0,
            comm: "<idle>".into(),
            kind: Kind::HrtimerExpireEntry {
                timer: 0xdef,
                function: function.into(),
                now: ts,
                user: None,
            },
        });
        self
    }
    /// A `call_function_single` IPI at `ts` in `current`'s context (entry and exit at once:
    /// its handler takes under the trace's 1 µs).
    fn ipi(self, ts: Nanos, current: (i32, &str)) -> Self {
        let name = "call_function_single";
        self.ev(
            ts,
            current.0,
            current.1,
            Kind::VectorEntry { name: name.into() },
        )
        .ev(
            ts,
            current.0,
            current.1,
            Kind::VectorExit { name: name.into() },
        )
    }
    /// The timer interrupt at `irq`, our callback at `now`, exit 1 µs later, out of the IRQ.
    fn fired(self, irq: Nanos, now: Nanos, current: (i32, &str)) -> Self {
        self.fired_in(irq, now, current, None)
    }
    /// As [`B::fired`], with what the interrupt interrupted (`Some(true)`: user mode).
    fn fired_in(self, irq: Nanos, now: Nanos, current: (i32, &str), user: Option<bool>) -> Self {
        self.ev(
            irq,
            current.0,
            current.1,
            Kind::VectorEntry {
                name: "local_timer".into(),
            },
        )
        .ev(
            now,
            current.0,
            current.1,
            Kind::HrtimerExpireEntry {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                now,
                user,
            },
        )
        .ev(
            now + 1_000,
            current.0,
            current.1,
            Kind::HrtimerExpireExit { timer: PTR },
        )
        .ev(
            now + 2_000,
            current.0,
            current.1,
            Kind::VectorExit {
                name: "local_timer".into(),
            },
        )
    }
    /// `hybrid`: the thread armed its sleep's timer to `margin` before the expiry, then left
    /// the CPU to the idle task.
    fn slept_to_margin(self, margin: Nanos) -> Self {
        self.ev(
            EXPIRY - PERIOD + 50_000,
            TID,
            "tickscope-0",
            Kind::HrtimerStart {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                expires: EXPIRY - margin,
                softexpires: Some(EXPIRY - margin),
            },
        )
        .switch(
            EXPIRY - PERIOD + 52_000,
            (TID, "tickscope-0"),
            (0, "<idle>"),
        )
    }
    /// A reschedule IPI of 1 µs taken by the thread at `ts`.
    fn reschedule(self, ts: Nanos) -> Self {
        let name = || Name::from("reschedule");
        self.ev(ts, TID, "tickscope-0", Kind::VectorEntry { name: name() })
            .ev(
                ts + 1_000,
                TID,
                "tickscope-0",
                Kind::VectorExit { name: name() },
            )
    }
    fn sys_exit(self, ts: Nanos) -> Self {
        self.ev(ts, TID, "tickscope-0", Kind::SysExit { nr: 230 })
    }
    /// The steal time the BPF backend read at the wait's return at `ts` (right after it).
    fn steal(self, ts: Nanos, ns: Nanos) -> Self {
        self.ev(ts, TID, "tickscope-0", Kind::Steal { ns })
    }
    fn events(mut self) -> Vec<Event> {
        self.0.sort_by_key(|e| e.ts);
        self.0
    }
}

fn setting(virtualized: bool) -> Setting {
    Setting {
        period: PERIOD,
        virtualized,
        wait_syscalls: vec![230],
        timer_functions: vec!["hrtimer_wakeup".into()],
        returns_traced: true,
        cpu_quota: None,
        spins: false,
        timer_before_expiry: false,
    }
}

fn sample(woke: Nanos) -> LateSample {
    LateSample {
        thread: 0,
        tid: TID,
        seq: 7,
        expiry: EXPIRY,
        woke,
    }
}

fn seg(b: &tickscope_explain::Breakdown, id: &str) -> Nanos {
    b.segments.iter().find(|s| s.id == id).unwrap().ns
}

fn check_sum(b: &tickscope_explain::Breakdown) {
    let sum: Nanos = b.segments.iter().map(|s| s.ns).sum();
    assert_eq!(sum + b.residual_ns, b.latency_ns, "{b:#?}");
    assert!(b.segments.iter().all(|s| s.ns >= 0) && b.residual_ns >= 0);
    check_spans(b);
}

/// The spans run from 0 to the latency without gaps or overlaps, each as long as its
/// segment (the residual's as long as the residual), and the marks lie inside.
fn check_spans(b: &tickscope_explain::Breakdown) {
    if b.latency_ns <= 0 {
        return;
    }
    assert_eq!(b.spans.first().map(|s| s.from_ns), Some(0), "{b:#?}");
    assert_eq!(
        b.spans.last().map(|s| s.to_ns),
        Some(b.latency_ns),
        "{b:#?}"
    );
    for w in b.spans.windows(2) {
        assert_eq!(w[0].to_ns, w[1].from_ns, "{b:#?}");
    }
    for s in &b.spans {
        assert!(s.to_ns > s.from_ns, "{b:#?}");
    }
    let order = |id: &str| {
        tickscope_explain::attribution::SEGMENTS
            .iter()
            .position(|s| *s == id)
    };
    let ids: Vec<usize> = b.spans.iter().filter_map(|s| order(&s.id)).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "segments in order: {b:#?}"
    );
    for seg in &b.segments {
        let width: Nanos = b
            .spans
            .iter()
            .filter(|s| s.id == seg.id)
            .map(|s| s.to_ns - s.from_ns)
            .sum();
        assert_eq!(width, seg.ns, "{}: {b:#?}", seg.id);
    }
    let residual: Nanos = b
        .spans
        .iter()
        .filter(|s| s.id == "residual")
        .map(|s| s.to_ns - s.from_ns)
        .sum();
    assert_eq!(residual, b.residual_ns, "{b:#?}");
    for m in &b.marks {
        assert!(
            0 <= m.from_ns && m.from_ns < m.to_ns && m.to_ns <= b.latency_ns,
            "{m:?}"
        );
    }
    assert!(
        b.marks.windows(2).all(|w| w[0].to_ns <= w[1].from_ns),
        "{b:#?}"
    );
}

#[test]
fn halted_vcpu_is_the_hypervisor_and_bare_metal_is_exit_from_idle() {
    let ev = B::new()
        .armed(0)
        .switch(EXPIRY - PERIOD + 2_000, (TID, "tickscope-0"), (0, "<idle>"))
        .idle(EXPIRY - PERIOD + 3_000, Some(1))
        .fired(EXPIRY + 600_000, EXPIRY + 601_000, (0, "<idle>"))
        .idle(EXPIRY + 603_000, None)
        .switch(EXPIRY + 605_000, (0, "<idle>"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 607_000)
        .events();
    let b = attribute(&sample(EXPIRY + 609_500), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "hypervisor");
    assert_eq!(seg(&b, "interrupt_delivery"), 600_000);
    assert_eq!(seg(&b, "hrtimer_queue"), 1_000);
    assert_eq!(seg(&b, "wake_to_cpu"), 4_000);
    assert_eq!(seg(&b, "kernel_exit"), 2_000);
    assert_eq!(seg(&b, "return_to_user"), 2_500);
    assert_eq!(b.residual_ns, 0);
    assert!(b.flags.is_empty(), "{:?}", b.flags);
    // "idle", not "halted": a guest's idle state 0 may poll (haltpoll).
    assert_eq!(b.segments[1].details[0].name, "vCPU idle (C1)");
    let b = attribute(&sample(EXPIRY + 609_500), &setting(false), &ev);
    assert_eq!(b.cause.category, "exit from idle");
    assert_eq!(b.cause.detail.as_deref(), Some("C1"));
    // Without idle records (BPF on a VM does not record them) the idle task at the
    // interrupt is the evidence, and no state is named.
    let no_idle: Vec<_> = ev
        .into_iter()
        .filter(|e| !matches!(e.kind, Kind::CpuIdle { .. }))
        .collect();
    let b = attribute(&sample(EXPIRY + 609_500), &setting(true), &no_idle);
    assert_eq!(b.cause.category, "hypervisor");
    assert_eq!(b.segments[1].details[0].name, "vCPU idle");
}

#[test]
fn timer_slack_is_its_own_segment() {
    let ev = B::new()
        .armed(50_000)
        .fired(EXPIRY + 50_000, EXPIRY + 50_500, (0, "<idle>"))
        .switch(EXPIRY + 52_000, (0, "<idle>"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 53_000)
        .events();
    let b = attribute(&sample(EXPIRY + 54_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(seg(&b, "timer_slack"), 50_000);
    assert_eq!(b.cause.category, "timer slack");
}

#[test]
fn the_blocking_thread_and_higher_priority_threads_are_named() {
    // spinner (FIFO 99) runs at expiry and keeps the CPU 2 ms; then a kworker is chosen
    // before us for 0.1 ms.
    let ev = B::new()
        .armed(0)
        .switch(EXPIRY - 500_000, (TID, "tickscope-0"), (77, "spin99"))
        .fired(EXPIRY + 1_000, EXPIRY + 2_000, (77, "spin99"))
        .switch(EXPIRY + 2_000_000, (77, "spin99"), (88, "kworker/1:0"))
        .switch(
            EXPIRY + 2_100_000,
            (88, "kworker/1:0"),
            (TID, "tickscope-0"),
        )
        .sys_exit(EXPIRY + 2_102_000)
        .events();
    let b = attribute(&sample(EXPIRY + 2_103_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("spin99"));
    let s3 = &b.segments[3];
    assert_eq!(s3.details[0].kind, "blocking_thread");
    assert_eq!(s3.details[0].pid, Some(77));
    let hp = s3
        .details
        .iter()
        .find(|d| d.kind == "higher_priority_thread")
        .unwrap();
    assert_eq!((hp.name.as_str(), hp.ns), ("kworker/1:0", 100_000));
    // The timeline marks both threads where they ran, and the timer interrupt.
    let marks: Vec<(&str, &str, Nanos, Nanos)> = b
        .marks
        .iter()
        .map(|m| (m.kind.as_str(), m.name.as_str(), m.from_ns, m.to_ns))
        .collect();
    assert_eq!(
        marks,
        vec![
            ("thread", "spin99", 0, 1_000),
            ("irq", "local_timer", 1_000, 4_000),
            ("thread", "spin99", 4_000, 2_000_000),
            ("thread", "kworker/1:0", 2_000_000, 2_100_000),
        ]
    );
}

#[test]
fn tickscope_own_threads_are_labelled_as_such() {
    // The collector (pid 600, same process) blocks the CPU; the kworker is someone else's.
    let ev = B::new()
        .armed(0)
        .switch(EXPIRY - 500_000, (TID, "tickscope-0"), (600, "tickscope"))
        .fired(EXPIRY + 1_000, EXPIRY + 2_000, (600, "tickscope"))
        .switch(EXPIRY + 400_000, (600, "tickscope"), (88, "kworker/1:0"))
        .switch(EXPIRY + 450_000, (88, "kworker/1:0"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 452_000)
        .events();
    let mut b = attribute(&sample(EXPIRY + 453_000), &setting(true), &ev);
    assert_eq!(b.cause.detail.as_deref(), Some("tickscope"));
    tickscope_explain::model::label_own_threads(&mut b, |pid| pid == 600 || pid == TID);
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("tickscope (own thread)"));
    let names: Vec<&str> = b.segments[3]
        .details
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, vec!["tickscope (own thread)", "kworker/1:0"]);
    assert!(b.marks.iter().any(|m| m.name == "tickscope (own thread)"));
    assert!(b.marks.iter().any(|m| m.name == "kworker/1:0"));
}

#[test]
fn a_late_interrupt_to_a_running_task_is_never_blamed_on_it() {
    // bash runs (user mode, interrupts enabled) when the timer should fire; the interrupt
    // arrives 300 µs late. Nothing in the trace shows interrupts off on the CPU: on a VM the
    // host held it, on bare metal the trace cannot tell.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 300_000, EXPIRY + 300_500, (42, "bash"))
        .switch(EXPIRY + 302_000, (42, "bash"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 303_000)
        .events();
    let b = attribute(&sample(EXPIRY + 304_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "hypervisor");
    let d = &b.segments[1].details[0];
    assert_eq!(d.kind, "hypervisor");
    assert_eq!(
        d.name,
        "vCPU running bash; interrupt held outside the guest"
    );
    let b = attribute(&sample(EXPIRY + 304_000), &setting(false), &ev);
    assert_eq!(b.cause.category, "cannot tell");
    assert_eq!(b.segments[1].details[0].kind, "cannot_tell");
}

/// A fair task spinning in user mode when the timer interrupt wakes a FIFO thread, and still
/// "running" 70 µs after it: seen by the oracle's spinner plant on a loud host. The return
/// from that interrupt to user mode switches at once: the task cannot have held it.
fn spinner_outranked(user: Option<bool>, next_prio: i32) -> Vec<Event> {
    spinner_outranked_until(user, next_prio, EXPIRY + 85_000)
}

/// As [`spinner_outranked`], the switch to the thread at `switch_at`.
fn spinner_outranked_until(user: Option<bool>, next_prio: i32, switch_at: i64) -> Vec<Event> {
    B::new()
        .armed(0)
        .switch_prio(EXPIRY - 500_000, (TID, "tickscope-0"), (42, "spin"), 120)
        .fired_in(EXPIRY + 10_000, EXPIRY + 11_000, (42, "spin"), user)
        .ev(
            switch_at,
            42,
            "spin",
            Kind::SchedSwitch {
                prev_pid: 42,
                prev_comm: "spin".into(),
                prev_state: "R".into(),
                prev_prio: Some(120),
                next_pid: TID,
                next_comm: "tickscope-0".into(),
                next_prio,
            },
        )
        .sys_exit(switch_at + 1_000)
        .events()
}

/// The same task "running" 6 µs after the interrupt — too short to say the host held the
/// switch (`USER_EXIT_NS`), but still not the task's doing: the interrupt's return and the
/// switch ran in its context. Seen in the oracle's IPI plant on a loud host (2026-11-26
/// 23:15): its SCHED_FIFO 1 helper, spinning in user mode, was named for 8.3 µs holds in
/// which an IPI entered the return path.
#[test]
fn a_short_hold_by_an_outranked_task_in_user_mode_is_the_switch_path_not_the_task() {
    let b = attribute(
        &sample(EXPIRY + 20_000),
        &setting(true),
        &spinner_outranked_until(Some(true), 9, EXPIRY + 19_000),
    );
    check_sum(&b);
    assert_ne!(b.cause.category, "other thread", "{:?}", b.cause);
    let s3 = &b.segments[3];
    assert!(
        !s3.details.iter().any(|d| d.kind.ends_with("thread")),
        "{:?}",
        s3.details
    );
    let d = s3.details.iter().find(|d| d.kind == "switch_path").unwrap();
    assert_eq!((d.pid, d.ns), (Some(42), 6_000));
    assert_eq!(
        d.name,
        "interrupt return and switch, in the context of spin (in user mode, outranked by the woken thread)"
    );
    // In the kernel (a system call under PREEMPT_NONE) the task keeps the CPU: its own.
    let b = attribute(
        &sample(EXPIRY + 20_000),
        &setting(true),
        &spinner_outranked_until(Some(false), 9, EXPIRY + 19_000),
    );
    assert!(b.segments[3]
        .details
        .iter()
        .any(|d| d.kind == "blocking_thread" && d.pid == Some(42)));
}

#[test]
fn a_task_in_user_mode_outranked_by_the_woken_thread_never_holds_the_switch() {
    let b = attribute(
        &sample(EXPIRY + 87_000),
        &setting(true),
        &spinner_outranked(Some(true), 9),
    );
    check_sum(&b);
    assert_eq!(b.cause.category, "hypervisor");
    let d = &b.segments[3].details[0];
    assert_eq!((d.kind.as_str(), d.pid), ("hypervisor", Some(42)));
    assert_eq!(
        d.name,
        "vCPU running spin in user mode, which the woken thread outranks: the switch held outside the guest"
    );
    assert!(!b.segments[3]
        .details
        .iter()
        .any(|d| d.kind == "blocking_thread"));
    // Bare metal: nothing traced held it either, and the task did not.
    let b = attribute(
        &sample(EXPIRY + 87_000),
        &setting(false),
        &spinner_outranked(Some(true), 9),
    );
    assert_eq!(b.cause.category, "cannot tell");
    assert_eq!(b.segments[3].details[0].kind, "cannot_tell");
}

/// An RT thread throttled while a fair task ran in user mode, released by the RT period
/// timer: the task ran by right (the thread was not runnable for the scheduler), so the
/// user-mode rule stays out and the cause is the throttling.
#[test]
fn a_throttled_rt_thread_is_rt_throttled_even_when_the_task_was_in_user_mode() {
    let ev = B::new()
        .armed_then((31, "rustc"), 120)
        .fired_in(EXPIRY + 13_000, EXPIRY + 14_000, (31, "rustc"), Some(true))
        .ev(
            EXPIRY + 4_722_000,
            31,
            "rustc",
            Kind::HrtimerExpireEntry {
                timer: 0xb0b,
                function: "sched_rt_period_timer".into(),
                now: EXPIRY + 4_722_000,
                user: Some(true),
            },
        )
        .ev(
            EXPIRY + 4_750_000,
            31,
            "rustc",
            Kind::SchedSwitch {
                prev_pid: 31,
                prev_comm: "rustc".into(),
                prev_state: "R".into(),
                prev_prio: Some(120),
                next_pid: TID,
                next_comm: "tickscope-0".into(),
                next_prio: 9,
            },
        )
        .sys_exit(EXPIRY + 4_762_000)
        .events();
    let b = attribute(&sample(EXPIRY + 4_763_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "rt throttled", "{b:#?}");
    assert!(!b.segments[3].details.iter().any(|d| d.kind == "hypervisor"));
}

#[test]
fn a_task_in_the_kernel_or_not_outranked_keeps_the_blame() {
    // Interrupted inside a system call (PREEMPT_NONE: it runs to its end), not recorded (the
    // text path), or a fair thread woken (the scheduler may let the task run on): the task.
    for (user, prio) in [
        (Some(false), 9),
        (None, 9),
        (Some(true), 120),
        (Some(true), 121),
    ] {
        let b = attribute(
            &sample(EXPIRY + 87_000),
            &setting(true),
            &spinner_outranked(user, prio),
        );
        check_sum(&b);
        assert_eq!(b.cause.category, "other thread", "{user:?} {prio}");
        assert_eq!(b.cause.detail.as_deref(), Some("spin"));
        assert_eq!(b.segments[3].details[0].kind, "blocking_thread");
    }
}

/// The steal time read at the wake-up (BPF backend) is the hypervisor detail's evidence; the
/// cause stays `hypervisor`, its detail unchanged (so that causes still group).
#[test]
fn steal_read_at_the_wake_up_is_the_hypervisor_details_evidence() {
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 300_000, EXPIRY + 300_500, (42, "bash"))
        .switch(EXPIRY + 302_000, (42, "bash"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 303_000)
        .steal(EXPIRY + 303_000, 281_600)
        .events();
    let b = attribute(&sample(EXPIRY + 304_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "hypervisor");
    assert_eq!(b.cause.detail, None);
    assert_eq!(b.steal_ns, Some(281_600));
    assert_eq!(
        b.segments[1].details[0].name,
        "vCPU running bash; interrupt held outside the guest; steal 282 µs"
    );
    // A halted vCPU's held interrupt says the same; a steal of 0 is stated, not left out.
    let ev = B::new()
        .armed(0)
        .idle(EXPIRY - 500_000, Some(1))
        .fired(EXPIRY + 200_000, EXPIRY + 200_500, (0, "<idle>"))
        .switch(EXPIRY + 202_000, (0, "<idle>"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 203_000)
        .steal(EXPIRY + 203_000, 0)
        .events();
    let b = attribute(&sample(EXPIRY + 204_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "hypervisor", "{b:#?}");
    assert!(
        b.segments[1].details[0].name.ends_with("; steal 0 µs"),
        "{b:#?}"
    );
}

/// A residual in which the CPU's trace is silent: with the steal read at the wake-up at least
/// half of it, the host held the vCPU — "hypervisor (steal X µs)"; with less, none, or a
/// reading of another thread's, "cannot tell (trace silent)" stays.
#[test]
fn steal_covering_a_silent_residual_names_the_host() {
    let silent = |steal: Option<(i32, Nanos)>| {
        let mut b = cc1_after_the_arming().sys_exit(EXPIRY + 1_000_000);
        if let Some((pid, ns)) = steal {
            b = b.ev(EXPIRY + 1_000_000, pid, "x", Kind::Steal { ns });
        }
        let ev = b.events();
        attribute(&sample(EXPIRY + 1_010_000), &setting(true), &ev)
    };
    assert_eq!(silent(None).steal_ns, None, "not read is not 0");
    let b = silent(Some((TID, 640_000)));
    check_sum(&b);
    assert_eq!(b.cause.category, "hypervisor", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("steal 640 µs"));
    assert!(b.flags.iter().any(|f| f == "trace_silent"));
    // Exactly half the silent millisecond is enough; less is not.
    assert_eq!(silent(Some((TID, 500_000))).cause.category, "hypervisor");
    for b in [
        silent(Some((TID, 499_000))),
        silent(Some((TID, 0))),
        silent(None),
        silent(Some((77, 900_000))),
    ] {
        assert_eq!(b.cause.category, "cannot tell", "{b:#?}");
        assert_eq!(b.cause.detail.as_deref(), Some(UNRECORDED_CC1));
    }
}

/// The thread returned from its previous wait, armed this one and left the CPU to cc1 (77):
/// the start of every silent-residual case.
fn cc1_after_the_arming() -> B {
    B::new().sys_exit(EXPIRY - PERIOD - 2_000).armed(0).switch(
        EXPIRY - PERIOD + 2_000,
        (TID, "tickscope-0"),
        (77, "cc1"),
    )
}

/// The detail of a silent residual that began with cc1 (77) switched in and ended with
/// another task's event and no switch out of cc1 recorded.
const UNRECORDED_CC1: &str =
    "trace silent after the switch to cc1 (77), whose switch out went unrecorded";

/// A silent stretch whose end is recorded in the same task's context (the timer interrupt
/// that ends a stall of the vCPU arrives in cc1, which is then switched out) is plain
/// "trace silent"; one that ends in another task's context with no switch out of the task
/// the trace last saw switched in names that task: its events were not recorded (on this VM
/// the sandbox agent's threads, switched in and never out in any trace).
#[test]
fn a_silent_stretch_names_the_task_whose_switch_out_went_unrecorded() {
    let run = |b: B| attribute(&sample(EXPIRY + 1_010_000), &setting(true), &b.events());
    let b = run(cc1_after_the_arming().sys_exit(EXPIRY + 1_000_000));
    assert_eq!(b.cause.category, "cannot tell", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some(UNRECORDED_CC1));
    // The stall ends in cc1's context (its timer interrupt) and cc1 is switched out: the
    // trace saw the CPU come back; what held it cannot be told, and no task is named.
    let b = run(cc1_after_the_arming()
        .ev(
            EXPIRY + 990_000,
            77,
            "cc1",
            Kind::VectorEntry {
                name: "local_timer".into(),
            },
        )
        .switch(EXPIRY + 995_000, (77, "cc1"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 1_000_000));
    assert_eq!(b.cause.category, "cannot tell", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("trace silent"));
}

#[test]
fn an_irq_handler_open_during_the_delay_is_named() {
    // A disk IRQ handler (interrupts off) runs from before the expiry to just before the
    // timer interrupt.
    let ev = B::new()
        .armed(0)
        .ev(
            EXPIRY - 10_000,
            42,
            "bash",
            Kind::IrqEntry {
                irq: 24,
                name: "nvme0q1".into(),
            },
        )
        .ev(EXPIRY + 299_000, 42, "bash", Kind::IrqExit { irq: 24 })
        .fired(EXPIRY + 300_000, EXPIRY + 300_500, (42, "bash"))
        .switch(EXPIRY + 302_000, (42, "bash"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 303_000)
        .events();
    let b = attribute(&sample(EXPIRY + 304_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "irq");
    assert_eq!(b.cause.detail.as_deref(), Some("nvme0q1"));
}

#[test]
fn a_higher_priority_thread_woken_by_the_same_interrupt_is_named() {
    // Both timers fire in one interrupt; we are switched in first, then spin99 (FIFO 99)
    // takes the CPU before our wait returns: the delay is in S4, and it is spin99's.
    let ev = B::new()
        .armed(0)
        .switch(EXPIRY - PERIOD + 2_000, (TID, "tickscope-0"), (0, "<idle>"))
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .switch(EXPIRY + 9_000, (0, "<idle>"), (TID, "tickscope-0"))
        .switch(EXPIRY + 10_000, (TID, "tickscope-0"), (77, "spin99"))
        .switch(EXPIRY + 510_000, (77, "spin99"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 512_000)
        .events();
    let b = attribute(&sample(EXPIRY + 513_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("spin99"));
    assert_eq!(b.segments[4].details[0].name, "spin99");
    assert_eq!(b.segments[4].details[0].ns, 500_000);
}

#[test]
fn nested_irq_in_softirq_is_counted_net() {
    // After the callback: NET_RX softirq 0 → 400 µs with an IRQ of 100 µs inside it.
    let t = EXPIRY + 10_000;
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .ev(
            t,
            0,
            "<idle>",
            Kind::SoftirqEntry {
                action: "NET_RX".into(),
            },
        )
        .ev(
            t + 100_000,
            0,
            "<idle>",
            Kind::IrqEntry {
                irq: 36,
                name: "virtio1".into(),
            },
        )
        .ev(t + 200_000, 0, "<idle>", Kind::IrqExit { irq: 36 })
        .ev(
            t + 400_000,
            0,
            "<idle>",
            Kind::SoftirqExit {
                action: "NET_RX".into(),
            },
        )
        .switch(t + 401_000, (0, "<idle>"), (TID, "tickscope-0"))
        .sys_exit(t + 402_000)
        .events();
    let b = attribute(&sample(t + 403_000), &setting(true), &ev);
    check_sum(&b);
    let s3 = &b.segments[3];
    let soft = s3.details.iter().find(|d| d.kind == "softirq").unwrap();
    let irq = s3.details.iter().find(|d| d.kind == "irq").unwrap();
    assert_eq!((soft.name.as_str(), soft.ns), ("NET_RX", 300_000));
    assert_eq!((irq.name.as_str(), irq.ns), ("virtio1", 100_000));
    assert_eq!(b.cause.category, "softirq");
    assert_eq!(b.cause.detail.as_deref(), Some("NET_RX"));
}

#[test]
fn a_missing_switch_in_uses_sys_exit_and_says_so() {
    // This machine's quirk: no idle → task sched_switch on one CPU.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 2_000, EXPIRY + 3_000, (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 200_000)
        .events();
    let b = attribute(&sample(EXPIRY + 201_000), &setting(true), &ev);
    check_sum(&b);
    assert!(b.flags.contains(&"no_switch_in".to_string()));
    assert_eq!(seg(&b, "wake_to_cpu"), 197_000);
    assert_eq!(seg(&b, "kernel_exit"), 0);
    assert_eq!(b.cause.category, "kernel path");
}

#[test]
fn a_reused_timer_pointer_pairs_each_start_with_the_next_expiry() {
    // The previous period used the same hrtimer_sleeper address (it lives on the stack).
    let ev = B::new()
        .ev(
            EXPIRY - 2 * PERIOD,
            TID,
            "tickscope-0",
            Kind::HrtimerStart {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                expires: EXPIRY - PERIOD,
                softexpires: None,
            },
        )
        .fired(
            EXPIRY - PERIOD + 1_000,
            EXPIRY - PERIOD + 1_500,
            (0, "<idle>"),
        )
        // (a late previous wake-up: its callback after this period's arming)
        .armed(0)
        .fired(EXPIRY + 800_000, EXPIRY + 800_500, (0, "<idle>"))
        .sys_exit(EXPIRY + 802_000)
        .events();
    let b = attribute(&sample(EXPIRY + 803_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(seg(&b, "interrupt_delivery"), 800_000);
    assert_eq!(b.cause.category, "hypervisor");
}

#[test]
fn lost_events_are_a_flag_never_a_guess() {
    let mut ev = B::new()
        .armed(0)
        .fired(EXPIRY + 800_000, EXPIRY + 800_500, (0, "<idle>"))
        .sys_exit(EXPIRY + 802_000)
        .events();
    ev.insert(
        2,
        Event {
            ts: EXPIRY + 100_000,
            cpu: CPU,
            pid: 0,
            comm: Default::default(),
            kind: Kind::Lost {
                count: 12,
                since: None,
            },
        },
    );
    let b = attribute(&sample(EXPIRY + 803_000), &setting(true), &ev);
    check_sum(&b);
    assert!(b.flags.contains(&"lost_events".to_string()));
    assert_eq!(b.cause.category, "events lost");
}

#[test]
fn no_events_at_all_leave_everything_in_the_residual() {
    let b = attribute(&sample(EXPIRY + 500_000), &setting(true), &[]);
    check_sum(&b);
    assert_eq!(b.residual_ns, 500_000);
    assert_eq!(b.cause.category, "unexplained");
    assert!(b.flags.contains(&"no_timer_start".to_string()));
}

#[test]
fn a_fixture_recorded_on_this_machine_attributes() {
    let text = include_str!("fixtures/late-wakeup.txt");
    let events: Vec<Event> = text.lines().filter_map(parse_line).collect();
    let meta = text
        .lines()
        .find_map(|l| l.strip_prefix("# sample "))
        .expect("sample line");
    let n: Vec<i64> = meta
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    let s = LateSample {
        thread: 0,
        tid: n[0] as i32,
        seq: 0,
        expiry: n[1],
        woke: n[2],
    };
    let b = attribute(&s, &setting(true), &events);
    check_sum(&b);
    assert!(!b.flags.contains(&"no_timer_start".to_string()), "{b:#?}");
    assert!(!b.flags.contains(&"no_expire_entry".to_string()), "{b:#?}");
    assert_ne!(b.cause.category, "unexplained", "{b:#?}");
}

proptest! {
    #[test]
    fn segments_and_residual_sum_to_the_latency(
        slack in 0i64..100_000,
        irq in -5_000i64..3_000_000,
        queue in -2_000i64..50_000,
        wake in -2_000i64..3_000_000,
        exit in -2_000i64..50_000,
        ret in -2_000i64..50_000,
        drop_mask in 0u8..32,
    ) {
        let t1 = EXPIRY + slack;
        let t2 = t1 + irq;
        let t3 = t2 + queue;
        let t4 = t3 + wake;
        let t5 = t4 + exit;
        let woke = (t5 + ret).max(EXPIRY + 1);
        let mut b = B::new().armed(slack);
        if drop_mask & 1 == 0 { b = b.ev(t2, 0, "<idle>", Kind::VectorEntry { name: "local_timer".into() }); }
        if drop_mask & 2 == 0 {
            b = b.ev(t3, 0, "<idle>", Kind::HrtimerExpireEntry { timer: PTR, function: "hrtimer_wakeup".into(), now: t3, user: None });
        }
        if drop_mask & 4 == 0 { b = b.switch(t4, (0, "<idle>"), (TID, "tickscope-0")); }
        if drop_mask & 8 == 0 { b = b.sys_exit(t5); }
        if drop_mask & 16 == 0 { b = b.ev(t4 - 1, 9, "x", Kind::IrqEntry { irq: 1, name: "a".into() }); }
        let br = attribute(&sample(woke), &setting(true), &b.events());
        let sum: Nanos = br.segments.iter().map(|s| s.ns).sum();
        prop_assert_eq!(sum + br.residual_ns, br.latency_ns);
        prop_assert!(br.segments.iter().all(|s| s.ns >= 0 && s.details.iter().all(|d| d.ns >= 0 && d.ns <= s.ns)));
        prop_assert!(br.residual_ns >= 0);
        check_spans(&br);
    }
}

/// PREEMPT_RT's shape, synthetic (modelled on an RT kernel's trace: interrupt work runs in
/// kernel threads, locks sleep): a threaded IRQ handler, `ktimers`, `ksoftirqd` and a
/// sleeping lock's owner, each holding the CPU between the wake-up and the switch-in (or
/// after it), are named as what they do.
#[test]
fn preempt_rt_threads_are_named_as_interrupt_work() {
    let cases: [(&str, i32, &str, Option<&str>); 4] = [
        ("irq/24-nvme0q1", 31, "irq", Some("irq/24-nvme0q1")),
        ("ktimers/1", 22, "softirq", Some("ktimers/1")),
        ("ksoftirqd/1", 23, "softirq", Some("ksoftirqd/1")),
        ("kworker/1:2", 24, "other thread", Some("kworker/1:2")),
    ];
    for (comm, pid, category, detail) in cases {
        // The handler thread (FIFO 50 on RT) is current at the expiry and keeps the CPU
        // 400 µs after our callback ran in the hard timer interrupt.
        let ev = B::new()
            .armed(0)
            .switch(EXPIRY - 300_000, (TID, "tickscope-0"), (pid, comm))
            .fired(EXPIRY + 3_000, EXPIRY + 4_000, (pid, comm))
            .switch(EXPIRY + 404_000, (pid, comm), (TID, "tickscope-0"))
            .sys_exit(EXPIRY + 406_000)
            .events();
        let b = attribute(&sample(EXPIRY + 407_000), &setting(true), &ev);
        check_sum(&b);
        assert_eq!(b.cause.category, category, "{comm}: {b:#?}");
        assert_eq!(b.cause.detail.as_deref(), detail, "{comm}");
    }
    // A sleeping lock (rtmutex): we run, block on the lock in the kernel (state D), its
    // owner runs 300 µs, releases it, and we return from the wait: the owner is named.
    let ev = B::new()
        .armed(0)
        .switch(EXPIRY - PERIOD + 2_000, (TID, "tickscope-0"), (0, "<idle>"))
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .switch(EXPIRY + 9_000, (0, "<idle>"), (TID, "tickscope-0"))
        .ev(
            EXPIRY + 10_000,
            TID,
            "tickscope-0",
            Kind::SchedSwitch {
                prev_pid: TID,
                prev_comm: "tickscope-0".into(),
                prev_state: "D".into(),
                prev_prio: None,
                next_pid: 61,
                next_comm: "lockholder".into(),
                next_prio: 120,
            },
        )
        .switch(EXPIRY + 310_000, (61, "lockholder"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 312_000)
        .events();
    let b = attribute(&sample(EXPIRY + 313_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("lockholder"));
}

/// A relative sleep with 400 µs of timer slack: the kernel may fire the timer anywhere from
/// the soft expiry to the hard one, and here fired it 375 µs after the expiry (before the
/// hard expiry): the wait is timer slack, found although the hard expiry is after the
/// wake-up.
#[test]
fn slack_fired_before_the_hard_expiry_is_timer_slack() {
    let ev = B::new()
        .ev(
            EXPIRY - 570_000,
            TID,
            "tickscope-0",
            Kind::HrtimerStart {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                expires: EXPIRY + 400_000,
                softexpires: Some(EXPIRY),
            },
        )
        .switch(EXPIRY - 568_000, (TID, "tickscope-0"), (0, "<idle>"))
        .fired(EXPIRY + 372_000, EXPIRY + 373_000, (0, "<idle>"))
        .switch(EXPIRY + 376_000, (0, "<idle>"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 377_000)
        .events();
    let b = attribute(&sample(EXPIRY + 378_000), &setting(true), &ev);
    check_sum(&b);
    assert!(b.flags.is_empty(), "{:?}", b.flags);
    assert_eq!(b.cause.category, "timer slack");
    assert_eq!(seg(&b, "timer_slack"), 372_000);
}

#[test]
fn an_rt_thread_passed_over_for_a_fair_task_is_rt_throttled() {
    // FIFO thread woken at +6 µs on an idle CPU; the scheduler picks cc1 (fair, prio 120)
    // instead, until the RT period timer refills the budget and the thread runs.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .switch_prio(EXPIRY + 10_000, (0, "<idle>"), (31, "cc1"), 120)
        .bandwidth_timer(EXPIRY + 795_000, "sched_rt_period_timer")
        .switch_prio(EXPIRY + 800_000, (31, "cc1"), (TID, "tickscope-0"), 9)
        .sys_exit(EXPIRY + 802_000)
        .events();
    let b = attribute(&sample(EXPIRY + 803_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "rt throttled");
    assert_eq!(b.cause.detail.as_deref(), Some("sched_rt_period_timer"));
    let s3 = &b.segments[3];
    assert_eq!(s3.details[0].kind, "rt_throttled");
    assert!(
        s3.details.iter().all(|d| d.pid != Some(31)),
        "cc1 ran because of the throttling, it is not the cause: {:?}",
        s3.details
    );
}

#[test]
fn a_fair_thread_left_on_an_idle_cpu_until_the_quota_refills_is_cpu_quota() {
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .bandwidth_timer(EXPIRY + 700_000, "sched_cfs_period_timer")
        .switch_prio(EXPIRY + 705_000, (0, "<idle>"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 707_000)
        .events();
    let b = attribute(&sample(EXPIRY + 708_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "cpu quota");
    assert_eq!(b.cause.detail.as_deref(), Some("sched_cfs_period_timer"));
}

#[test]
fn throttling_needs_its_evidence() {
    // A fair task already running in the kernel at the wake-up keeps the CPU until it
    // schedules (PREEMPT_NONE): it is the blocking thread, not a throttling.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (42, "dd"))
        .switch_prio(EXPIRY + 500_000, (42, "dd"), (TID, "tickscope-0"), 9)
        .sys_exit(EXPIRY + 502_000)
        .events();
    let b = attribute(&sample(EXPIRY + 503_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("dd"));
    // A fair thread on a CPU that stays idle, with no bandwidth timer seen: not named a quota.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .switch_prio(EXPIRY + 705_000, (0, "<idle>"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 707_000)
        .events();
    let b = attribute(&sample(EXPIRY + 708_000), &setting(true), &ev);
    assert_ne!(b.cause.category, "cpu quota");
    assert_ne!(b.cause.category, "rt throttled");
}

/// The group's CFS period timer firing on the measured CPU (in `current`'s context).
fn cfs_period_timer(b: B, ts: Nanos, current: (i32, &str)) -> B {
    b.ev(
        ts,
        current.0,
        current.1,
        Kind::HrtimerExpireEntry {
            timer: 0xfee,
            function: "sched_cfs_period_timer".into(),
            now: ts,
            user: None,
        },
    )
}

#[test]
fn a_fair_thread_throttled_on_its_way_back_to_user_mode_is_cpu_quota() {
    // Linux 6.18 (recorded shape): the thread returns from its wait, is switched out while
    // runnable ("R+") by the throttle's task work, rustc runs, and the group's period timer
    // on this CPU refills the quota — the next switch is back to the thread.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (31, "rustc"))
        .switch_prio(EXPIRY + 20_000, (31, "rustc"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 24_000)
        .ev(
            EXPIRY + 27_000,
            TID,
            "tickscope-0",
            Kind::SchedSwitch {
                prev_pid: TID,
                prev_comm: "tickscope-0".into(),
                prev_state: "R+".into(),
                prev_prio: None,
                next_pid: 32,
                next_comm: "cc1".into(),
                next_prio: 120,
            },
        )
        .switch_prio(EXPIRY + 4_000_000, (32, "cc1"), (31, "rustc"), 120);
    let ev = cfs_period_timer(ev, EXPIRY + 9_000_000, (31, "rustc"))
        .switch_prio(EXPIRY + 9_030_000, (31, "rustc"), (TID, "tickscope-0"), 120)
        .events();
    let b = attribute(&sample(EXPIRY + 9_035_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "cpu quota", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("sched_cfs_period_timer"));
    let s5 = &b.segments[5];
    assert_eq!(s5.details[0].kind, "cfs_throttled");
    assert!(
        s5.details
            .iter()
            .all(|d| d.pid != Some(31) && d.pid != Some(32)),
        "rustc and cc1 ran because of the throttling: {:?}",
        s5.details
    );
}

#[test]
fn a_fair_thread_waiting_on_a_busy_cpu_across_a_period_timer_is_not_a_quota() {
    // Recorded shape (loaded machine, quota group): woken while rustc runs in the kernel,
    // a period timer fires 280 µs later, rustc schedules 1.6 ms after that and the thread
    // runs. It was never switched out throttled; rustc held the CPU (PREEMPT_NONE).
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 12_000, EXPIRY + 13_000, (31, "rustc"));
    let ev = cfs_period_timer(ev, EXPIRY + 286_000, (31, "rustc"))
        .switch_prio(EXPIRY + 1_872_000, (31, "rustc"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 1_874_000)
        .events();
    let b = attribute(&sample(EXPIRY + 1_880_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("rustc"));
}

/// The thread leaves the CPU in `state` right after its wait's `sys_exit` (at +11 µs).
fn returned_then_switched_out(state: &str) -> B {
    B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (31, "rustc"))
        .switch(EXPIRY + 9_000, (31, "rustc"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 11_000)
        .ev(
            EXPIRY + 12_000,
            TID,
            "tickscope-0",
            Kind::SchedSwitch {
                prev_pid: TID,
                prev_comm: "tickscope-0".into(),
                prev_state: state.into(),
                prev_prio: None,
                next_pid: 31,
                next_comm: "rustc".into(),
                next_prio: 120,
            },
        )
}

/// Runnable behind `rustc` from its return; a call_function_single IPI at +2.9 ms, then the
/// thread is switched in at +3 ms: the shape of a remote unthrottle.
fn unthrottled_by_ipi() -> Vec<Event> {
    returned_then_switched_out("R+")
        .ev(
            EXPIRY + 2_900_000,
            31,
            "rustc",
            Kind::VectorEntry {
                name: "call_function_single".into(),
            },
        )
        .switch_prio(EXPIRY + 3_000_000, (31, "rustc"), (TID, "tickscope-0"), 120)
        .events()
}

#[test]
fn a_throttle_whose_period_timer_runs_elsewhere_is_named_by_its_ipi() {
    // The group's period timer runs on CPU 0 (not traced): the refill reaches this CPU as a
    // call_function_single IPI (the remote unthrottle), then the thread runs.
    let ev = unthrottled_by_ipi();
    let b = attribute(&sample(EXPIRY + 3_001_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "cpu quota", "{b:#?}");
    assert_eq!(
        b.cause.detail.as_deref(),
        Some("call_function_single (period timer on another CPU)")
    );
}

/// Where no CPU quota applies to the thread's group, no shape of the events makes it a
/// `cpu quota`: the IPI a remote unthrottle sends is also the one a remote wake-up sends,
/// and a runnable fair thread passed over for an idle CPU is then not a throttle either.
/// The breakdown says the group ruled it out (`no_cpu_quota`); unknown leaves it to the
/// events, and a quota keeps it.
#[test]
fn no_cpu_quota_where_the_threads_group_has_none() {
    let ipi = unthrottled_by_ipi();
    let idle = returned_then_idle()
        .switch_prio(EXPIRY + 4_000_000, (0, "<idle>"), (TID, "tickscope-0"), 120)
        .events();
    for (ev, woke) in [(&ipi, EXPIRY + 3_001_000), (&idle, EXPIRY + 4_001_000)] {
        for (quota, named) in [(None, true), (Some(true), true), (Some(false), false)] {
            let st = Setting {
                cpu_quota: quota,
                ..setting(true)
            };
            let b = attribute(&sample(woke), &st, ev);
            check_sum(&b);
            assert_eq!(b.cause.category == "cpu quota", named, "{quota:?}: {b:#?}");
            let throttle = b
                .segments
                .iter()
                .flat_map(|s| &s.details)
                .any(|d| d.kind == "cfs_throttled");
            assert_eq!(throttle, named, "{quota:?}");
            let flagged = b.flags.iter().any(|f| f == "no_cpu_quota");
            assert_eq!(flagged, !named, "{quota:?}: {:?}", b.flags);
        }
    }
}

/// The thread leaves the CPU runnable ("R+") right after its wait's `sys_exit` (at +11 µs)
/// and the CPU goes idle: the calm-machine shape of a throttle at the return to user mode.
fn returned_then_idle() -> B {
    B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .switch_prio(EXPIRY + 9_000, (0, "<idle>"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 11_000)
        .ev(
            EXPIRY + 12_000,
            TID,
            "tickscope-0",
            Kind::SchedSwitch {
                prev_pid: TID,
                prev_comm: "tickscope-0".into(),
                prev_state: "R+".into(),
                prev_prio: None,
                next_pid: 0,
                next_comm: "swapper/1".into(),
                next_prio: 120,
            },
        )
}

#[test]
fn a_throttled_thread_passed_over_for_an_idle_cpu_is_cpu_quota() {
    // Calm machine: no refill event reaches the CPU (the remote unthrottle runs from the
    // polling idle loop without an IPI); the CPU idles while the thread is runnable, which
    // only a dequeue (the throttle's task work) explains.
    let ev = returned_then_idle()
        .switch_prio(EXPIRY + 4_000_000, (0, "<idle>"), (TID, "tickscope-0"), 120)
        .events();
    let b = attribute(&sample(EXPIRY + 4_001_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "cpu quota", "{b:#?}");
    assert_eq!(
        b.cause.detail.as_deref(),
        Some("CPU idle while the thread was runnable")
    );
    assert_eq!(b.segments[5].details[0].kind, "cfs_throttled");
    // Another task ran first, then the CPU idled: the same evidence.
    let ev = returned_then_switched_out("R+")
        .switch_prio(EXPIRY + 900_000, (31, "rustc"), (0, "swapper/1"), 120)
        .switch_prio(EXPIRY + 4_000_000, (0, "<idle>"), (TID, "tickscope-0"), 120)
        .events();
    let b = attribute(&sample(EXPIRY + 4_001_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "cpu quota", "{b:#?}");
    assert!(b.segments[5].details.iter().all(|d| d.pid != Some(31)));
    // Back as an RT task: not a CFS quota.
    let ev = returned_then_idle()
        .switch_prio(EXPIRY + 4_000_000, (0, "<idle>"), (TID, "tickscope-0"), 9)
        .events();
    let b = attribute(&sample(EXPIRY + 4_001_000), &setting(true), &ev);
    assert_ne!(b.cause.category, "cpu quota", "{b:#?}");
    // Idle only briefly, the rest of the delay spent elsewhere: less than half of S5.
    let ev = returned_then_idle()
        .switch_prio(EXPIRY + 30_000, (0, "<idle>"), (TID, "tickscope-0"), 120)
        .events();
    let b = attribute(&sample(EXPIRY + 400_000), &setting(true), &ev);
    assert_ne!(b.cause.category, "cpu quota", "{b:#?}");
}

#[test]
fn a_quota_needs_both_the_throttle_and_the_refill() {
    // Preempted on the way back to user mode ("R": an ordinary schedule() there), a period
    // timer, then the thread: no throttle signature, rustc is what the events show.
    let ev = cfs_period_timer(
        returned_then_switched_out("R"),
        EXPIRY + 1_000_000,
        (31, "rustc"),
    )
    .switch_prio(EXPIRY + 1_010_000, (31, "rustc"), (TID, "tickscope-0"), 120)
    .events();
    let b = attribute(&sample(EXPIRY + 1_011_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread", "{b:#?}");
    // Switched out "R+" but back with no refill seen on the CPU: not named a quota.
    let ev = returned_then_switched_out("R+")
        .switch_prio(EXPIRY + 1_010_000, (31, "rustc"), (TID, "tickscope-0"), 120)
        .events();
    let b = attribute(&sample(EXPIRY + 1_011_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "other thread", "{b:#?}");
    // The S3 case: woken on a busy CPU, a period timer, then another task, then the thread.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (31, "rustc"));
    let ev = cfs_period_timer(ev, EXPIRY + 1_000_000, (31, "rustc"))
        .switch_prio(EXPIRY + 1_010_000, (31, "rustc"), (32, "cc1"), 120)
        .switch_prio(EXPIRY + 3_000_000, (32, "cc1"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 3_002_000)
        .events();
    let b = attribute(&sample(EXPIRY + 3_003_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread", "{b:#?}");
}

/// The wake-up at `woke` attributed on a VM: its cause must be `hypervisor`; its detail and
/// the held delivery's (S1's) first detail.
fn held_by_the_host(ev: &[Event], woke: Nanos) -> (Option<String>, String) {
    let b = attribute(&sample(woke), &setting(true), ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "hypervisor", "{b:#?}");
    (
        b.cause.detail.clone(),
        b.segments[1].details[0].name.clone(),
    )
}

#[test]
fn ipis_inside_a_held_delivery_are_its_evidence() {
    // The timer interrupt comes 31 µs after the expiry with nothing in the guest holding it:
    // the host held it (hypervisor). A call_function_single IPI (handler < 1 µs) at each of
    // `ipis` while `current` has the CPU; inside the delay it is what the host was injecting.
    let held = |ipis: &[Nanos], current: (i32, &str)| {
        let ev = ipis
            .iter()
            .fold(B::new().armed(0), |b, &t| b.ipi(t, current))
            .fired(EXPIRY + 31_000, EXPIRY + 31_500, current)
            .switch(EXPIRY + 33_000, current, (TID, "tickscope-0"))
            .sys_exit(EXPIRY + 34_000)
            .events();
        held_by_the_host(&ev, EXPIRY + 35_000)
    };
    // A user-mode helper runs; an IPI 14 µs after the expiry is counted, one 20 µs before
    // it is not.
    let (detail, evidence) = held(&[EXPIRY - 20_000, EXPIRY + 14_000], (42, "plant-ipi-help"));
    assert_eq!(detail.as_deref(), Some("IPI delivery"));
    assert_eq!(
        evidence,
        "vCPU running plant-ipi-help; interrupt held outside the guest; \
         IPIs received meanwhile: call_function_single 1"
    );
    // Without an IPI inside the delay (one before the expiry does not count): plain.
    let (detail, evidence) = held(&[EXPIRY - 20_000], (42, "plant-ipi-help"));
    assert_eq!(detail, None);
    assert_eq!(
        evidence,
        "vCPU running plant-ipi-help; interrupt held outside the guest"
    );
    // An idle vCPU woken by the IPI while the timer interrupt stays held: the same evidence.
    let (detail, evidence) = held(&[EXPIRY - 20_000, EXPIRY + 14_000], (0, "<idle>"));
    assert_eq!(detail.as_deref(), Some("IPI delivery"));
    assert_eq!(
        evidence,
        "vCPU idle; IPIs received meanwhile: call_function_single 1"
    );
    let (detail, evidence) = held(&[EXPIRY - 20_000], (0, "<idle>"));
    assert_eq!(detail, None);
    assert_eq!(evidence, "vCPU idle");
}

/// An IPI whose handler began 2.6 µs before the expiry and ended 0.9 µs after it (3.5 µs,
/// where the plant's others take 0.3), then 12 µs of nothing until the timer interrupt: the
/// shape of 8 of the IPI plant's 11 plain `hypervisor` misses (2026-11-28 12:40). The guest
/// was taking that IPI as the delay began: it is the delivery's evidence. A handler that
/// ended before the expiry, or an entry followed by another event, is not.
#[test]
fn an_ipi_in_its_handler_as_the_delay_began_is_evidence_too() {
    let help = (42, "plant-ipi-help");
    let name = || -> tickscope_explain::Name { "call_function_single".into() };
    let held = |entry: Nanos, exit: Nanos, between: bool| {
        let mut b = B::new()
            .armed(0)
            .ev(entry, help.0, help.1, Kind::VectorEntry { name: name() });
        if between {
            b = b.ev(entry + 100, help.0, help.1, Kind::SysExit { nr: 0 });
        }
        let ev = b
            .ev(exit, help.0, help.1, Kind::VectorExit { name: name() })
            .fired(EXPIRY + 12_900, EXPIRY + 13_000, help)
            .switch(EXPIRY + 23_700, help, (TID, "tickscope-0"))
            .sys_exit(EXPIRY + 24_000)
            .events();
        held_by_the_host(&ev, EXPIRY + 31_000)
    };
    let (detail, evidence) = held(EXPIRY - 2_600, EXPIRY + 900, false);
    assert_eq!(detail.as_deref(), Some("IPI delivery"));
    assert_eq!(
        evidence,
        "vCPU running plant-ipi-help; interrupt held outside the guest; \
         IPIs received meanwhile: call_function_single 1, one in its handler as the delay began"
    );
    let (detail, _) = held(EXPIRY - 2_600, EXPIRY - 2_300, false);
    assert_eq!(detail, None);
    let (detail, _) = held(EXPIRY - 2_600, EXPIRY + 900, true);
    assert_eq!(detail, None);
}

#[test]
fn a_softirq_the_timer_interrupted_is_named_when_it_runs_on() {
    // NET_RX (in cc1's context) starts before the expiry; the timer interrupt lands inside
    // it, and the softirq runs on for 300 µs after the callback before we get the CPU.
    let ev = B::new()
        .armed(0)
        .ev(
            EXPIRY - 20_000,
            31,
            "cc1",
            Kind::SoftirqEntry {
                action: "NET_RX".into(),
            },
        )
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (31, "cc1"))
        .ev(
            EXPIRY + 310_000,
            31,
            "cc1",
            Kind::SoftirqExit {
                action: "NET_RX".into(),
            },
        )
        .switch(EXPIRY + 312_000, (31, "cc1"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 313_000)
        .events();
    let b = attribute(&sample(EXPIRY + 314_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "softirq");
    assert_eq!(b.cause.detail.as_deref(), Some("NET_RX"));
}

#[test]
fn a_thread_that_preempts_on_the_way_back_to_user_mode_is_named() {
    // PREEMPT_NONE: spin99 is woken while we return from the wait in the kernel; it takes
    // the CPU after our sys_exit, in the exit-to-user work, before our clock read.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
        .switch(EXPIRY + 9_000, (0, "<idle>"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 11_000)
        .switch(EXPIRY + 12_000, (TID, "tickscope-0"), (77, "spin99"))
        .switch(EXPIRY + 512_000, (77, "spin99"), (TID, "tickscope-0"))
        .events();
    let b = attribute(&sample(EXPIRY + 513_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("spin99"));
    assert_eq!(b.segments[5].details[0].name, "spin99");
}

/// Under an IPI flood (the oracle's ipi plant, BPF path) a window's records can reach back
/// less than a period: a loss that ended before the thread armed its timer, or after it but
/// more than 100 µs before the expiry, is before every event the breakdown uses, and the
/// wake-up keeps its cause; one that ends closer to the expiry is "events lost".
#[test]
fn a_loss_before_the_arming_leaves_the_breakdown_whole() {
    let lost = |ts: Nanos| Event {
        ts,
        cpu: CPU,
        pid: -1,
        comm: Default::default(),
        kind: Kind::Lost {
            count: 40,
            since: Some(ts - 200_000),
        },
    };
    let ev = |at: Nanos| {
        let mut v = B::new()
            .armed(0)
            .fired(EXPIRY + 300_000, EXPIRY + 300_500, (42, "bash"))
            .switch(EXPIRY + 302_000, (42, "bash"), (TID, "tickscope-0"))
            .sys_exit(EXPIRY + 303_000)
            .events();
        v.insert(0, lost(at));
        v.sort_by_key(|e| e.ts);
        v
    };
    // The loss ends at the arming's own record (its first after the gap), well before it,
    // and after it but 101 µs and more before the expiry.
    for at in [
        EXPIRY - PERIOD,
        EXPIRY - PERIOD - 100_000,
        EXPIRY - PERIOD + 50_000,
        EXPIRY - 101_000,
    ] {
        let b = attribute(&sample(EXPIRY + 304_000), &setting(true), &ev(at));
        check_sum(&b);
        assert_eq!(b.cause.category, "hypervisor", "{b:#?}");
        assert!(!b.flags.iter().any(|f| f == "lost_events"));
    }
    for at in [EXPIRY - 99_000, EXPIRY + 100_000] {
        let b = attribute(&sample(EXPIRY + 304_000), &setting(true), &ev(at));
        assert_eq!(b.cause.category, "events lost", "{b:#?}");
    }
}

#[test]
fn a_wake_up_inside_a_loss_is_events_lost_not_unexplained() {
    // The ring buffer lost everything from 2 ms before the expiry to 5 ms after it: the
    // marker comes after the wake-up, but the loss it reports began before it.
    let ev = vec![Event {
        ts: EXPIRY + 5_000_000,
        cpu: CPU,
        pid: -1,
        comm: Default::default(),
        kind: Kind::Lost {
            count: 900,
            since: Some(EXPIRY - 2_000_000),
        },
    }];
    let b = attribute(&sample(EXPIRY + 300_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "events lost");
    assert!(b.flags.iter().any(|f| f == "lost_events"));
}

/// A page fault of the measured thread's own at `ts`.
fn fault(b: B, ts: Nanos, user: bool) -> B {
    b.ev(
        ts,
        TID,
        "tickscope-0",
        Kind::PageFault {
            address: 0x55b0_476c_1e68,
            user,
        },
    )
}

#[test]
fn a_fault_of_the_thread_on_its_way_back_to_user_mode_is_a_page_fault() {
    // Recorded shape (the pageout plant): the wait returns, the thread's code was paged out,
    // it faults, waits for the page in state D (the CPU idles) and reads its clock 400 µs on.
    let ev = fault(
        B::new()
            .armed(0)
            .fired(EXPIRY + 5_000, EXPIRY + 6_000, (0, "<idle>"))
            .switch_prio(EXPIRY + 9_000, (0, "<idle>"), (TID, "tickscope-0"), 9)
            .sys_exit(EXPIRY + 11_000),
        EXPIRY + 13_000,
        true,
    )
    .ev(
        EXPIRY + 20_000,
        TID,
        "tickscope-0",
        Kind::SchedSwitch {
            prev_pid: TID,
            prev_comm: "tickscope-0".into(),
            prev_state: "D".into(),
            prev_prio: None,
            next_pid: 0,
            next_comm: "swapper/1".into(),
            next_prio: 120,
        },
    )
    .switch_prio(EXPIRY + 400_000, (0, "<idle>"), (TID, "tickscope-0"), 9)
    .events();
    let b = attribute(&sample(EXPIRY + 410_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "page fault", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("user mode"));
    // The same wake-up without the fault event: not a page fault.
    let ev: Vec<Event> = ev
        .into_iter()
        .filter(|e| !matches!(e.kind, Kind::PageFault { .. }))
        .collect();
    let b = attribute(&sample(EXPIRY + 410_000), &setting(true), &ev);
    assert_ne!(b.cause.category, "page fault", "{b:#?}");
}

#[test]
fn a_thread_that_faulted_before_arming_its_timer_is_a_page_fault() {
    // The thread faulted on its own code after the previous wake-up and armed its timer only
    // 300 µs after the expiry: it was not waiting, the interrupt was not late.
    let arm = |b: B| {
        b.ev(
            EXPIRY + 300_000,
            TID,
            "tickscope-0",
            Kind::HrtimerStart {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                expires: EXPIRY,
                softexpires: None,
            },
        )
    };
    let ev = arm(fault(B::new(), EXPIRY - 200_000, true))
        .fired(EXPIRY + 302_000, EXPIRY + 303_000, (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 305_000)
        .events();
    let b = attribute(&sample(EXPIRY + 306_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "page fault", "{b:#?}");
    // Armed late with no fault seen: not named a page fault.
    let ev = arm(B::new())
        .fired(EXPIRY + 302_000, EXPIRY + 303_000, (TID, "tickscope-0"))
        .sys_exit(EXPIRY + 305_000)
        .events();
    let b = attribute(&sample(EXPIRY + 306_000), &setting(true), &ev);
    assert_ne!(b.cause.category, "page fault", "{b:#?}");
}

#[test]
fn a_fair_thread_woken_into_a_throttled_group_is_cpu_quota_at_the_refill() {
    // Recorded shape (loaded machine, quota group): woken while lto runs in user mode, the
    // thread is not switched in — its group's run queue is throttled — until the period
    // timer on this CPU refills the quota; the switch to it follows 30 µs later.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 12_000, EXPIRY + 13_000, (31, "lto"));
    let ev = cfs_period_timer(ev, EXPIRY + 3_500_000, (31, "lto"))
        .switch_prio(EXPIRY + 3_530_000, (31, "lto"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 3_532_000)
        .events();
    let b = attribute(&sample(EXPIRY + 3_540_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "cpu quota", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("sched_cfs_period_timer"));
    assert!(b.segments[3].details.iter().all(|d| d.pid != Some(31)));
    // Switched in long after the period timer (lto gave the CPU up on its own): not a quota.
    let ev = B::new()
        .armed(0)
        .fired(EXPIRY + 12_000, EXPIRY + 13_000, (31, "lto"));
    let ev = cfs_period_timer(ev, EXPIRY + 3_500_000, (31, "lto"))
        .switch_prio(EXPIRY + 3_700_000, (31, "lto"), (TID, "tickscope-0"), 120)
        .sys_exit(EXPIRY + 3_702_000)
        .events();
    let b = attribute(&sample(EXPIRY + 3_710_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "other thread", "{b:#?}");
}

/// The timer's callback and the switch-in were not recorded (events missing), the thread
/// returned from its wait 1 ms after the expiry: the previous period's return from the wait
/// must not be taken for this one's (it made the whole latency "return to user", S5, with no
/// event inside). The time before the return is the residual: "cannot tell (trace silent)"
/// when the CPU recorded nothing for at least half of it, "unexplained" when it did.
#[test]
fn a_wake_up_without_its_callback_is_never_all_return_to_user() {
    let ev = cc1_after_the_arming().sys_exit(EXPIRY + 1_000_000).events();
    let b = attribute(&sample(EXPIRY + 1_010_000), &setting(true), &ev);
    check_sum(&b);
    assert!(b.flags.iter().any(|f| f == "no_expire_entry"), "{b:#?}");
    assert_eq!(seg(&b, "return_to_user"), 10_000, "{b:#?}");
    assert_eq!(b.residual_ns, 1_000_000);
    // Nothing at all on the CPU in that millisecond: the trace is silent, and what held the
    // thread cannot be told.
    assert_eq!(b.cause.category, "cannot tell");
    assert_eq!(b.cause.detail.as_deref(), Some(UNRECORDED_CC1));
    assert!(b.flags.iter().any(|f| f == "trace_silent"));
    // An interrupt recorded on the CPU inside it: the trace ran, the wake-up's own events are
    // missing — unexplained.
    let ev = cc1_after_the_arming()
        .ev(
            EXPIRY + 500_000,
            77,
            "cc1",
            Kind::VectorEntry {
                name: "reschedule".into(),
            },
        )
        .ev(
            EXPIRY + 501_000,
            77,
            "cc1",
            Kind::VectorExit {
                name: "reschedule".into(),
            },
        )
        .sys_exit(EXPIRY + 1_000_000)
        .events();
    let b = attribute(&sample(EXPIRY + 1_010_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "unexplained", "{b:#?}");
    assert!(!b.flags.iter().any(|f| f == "trace_silent"));
    // Recorded only at the end — the tasks the late interrupt woke, as the oracle's quota
    // run saw under load (2.5 ms with nothing on the CPU, then another process's timer
    // re-armed and a switch, 40 µs before the return): silent for most of the wake-up.
    let ev = cc1_after_the_arming()
        .ev(
            EXPIRY + 960_000,
            78,
            "ref",
            Kind::VectorEntry {
                name: "reschedule".into(),
            },
        )
        .sys_exit(EXPIRY + 1_000_000)
        .events();
    let b = attribute(&sample(EXPIRY + 1_010_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "cannot tell", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some(UNRECORDED_CC1));
    assert!(b.flags.iter().any(|f| f == "trace_silent"));
}

/// Under an IPI flood on a VM (recorded by the oracle's IPI plant, BPF path) the host held
/// the timer interrupt 18 µs (an IPI received meanwhile), and the wake-to-CPU segment is
/// 19 µs: 12 µs of it our own timer interrupt still running after its callback, 5 µs the
/// interrupted user-mode thread's exit path, 0.4 µs an IPI handler. The kernel time nothing
/// names does not outweigh the held delivery, and the interrupt's own tail is the host's
/// too (its timer write): the main cause is the host, "IPI delivery" since IPIs came during
/// one of its stretches. With the delivery shorter than that tail the host is still the
/// cause, and still "IPI delivery" (until 2026-11-28 afternoon only the largest stretch, the
/// tail, in which nothing is ever traced, was asked: plain `hypervisor`).
#[test]
fn unexplained_kernel_time_does_not_outweigh_a_named_larger_segment() {
    let run = |delivery: Nanos| {
        let vector = |b: B, name: &str, ts: Nanos, to: Nanos| {
            b.ev(
                ts,
                42,
                "plant-ipi-help",
                Kind::VectorEntry { name: name.into() },
            )
            .ev(
                to,
                42,
                "plant-ipi-help",
                Kind::VectorExit { name: name.into() },
            )
        };
        let irq = EXPIRY + delivery;
        let ev = B::new().armed_then((42, "plant-ipi-help"), 9).ev(
            irq + 400,
            42,
            "plant-ipi-help",
            Kind::HrtimerExpireEntry {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                now: irq + 400,
                user: None,
            },
        );
        let ev = vector(ev, "call_function_single", EXPIRY + 5_000, EXPIRY + 5_400);
        let ev = vector(ev, "local_timer", irq, irq + 12_300);
        let ev = vector(ev, "call_function_single", irq + 17_500, irq + 17_900)
            .switch(irq + 19_300, (42, "plant-ipi-help"), (TID, "tickscope-0"))
            .sys_exit(irq + 20_700)
            .events();
        attribute(&sample(irq + 23_000), &setting(true), &ev)
    };
    let b = run(18_000);
    check_sum(&b);
    assert!(
        seg(&b, "wake_to_cpu") > seg(&b, "interrupt_delivery"),
        "{b:#?}"
    );
    assert_eq!(b.cause.category, "hypervisor", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("IPI delivery"));
    let b = run(10_000);
    check_sum(&b);
    assert_eq!(b.cause.category, "hypervisor", "{b:#?}");
    assert!(
        seg(&b, "wake_to_cpu") > seg(&b, "interrupt_delivery"),
        "{b:#?}"
    );
    assert_eq!(b.cause.detail.as_deref(), Some("IPI delivery"));
}

/// An RT thread woken while a fair task (rustc, prio 120) runs: the task keeps the CPU
/// 3.2 ms, then the scheduler picks another fair task (lto) for 1.3 ms before the RT thread
/// (recorded by the oracle's rt-throttle plant, load 7). The switch to a lower class proves
/// the RT run queue throttled, and no RT task ran to throttle it after the wake-up: rustc's
/// time was passed-over time too, and the cause is `rt throttled`. Without the switch to
/// another fair task the same 3.2 ms is rustc's (a fair task in the kernel under
/// PREEMPT_NONE), and an RT task run in between (migration/1) also keeps it rustc's.
#[test]
fn a_fair_task_kept_running_over_a_throttled_rt_thread_is_passed_over_time() {
    let base = || {
        B::new().armed_then((31, "rustc"), 120).fired(
            EXPIRY + 12_000,
            EXPIRY + 13_000,
            (31, "rustc"),
        )
    };
    let ev = base()
        .switch_prio(EXPIRY + 3_220_000, (31, "rustc"), (32, "lto"), 120)
        .switch_prio(EXPIRY + 4_560_000, (32, "lto"), (TID, "tickscope-0"), 9)
        .sys_exit(EXPIRY + 4_565_000)
        .events();
    let b = attribute(&sample(EXPIRY + 4_570_000), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "rt throttled", "{b:#?}");
    let s3 = &b.segments[3];
    assert!(
        s3.details
            .iter()
            .all(|d| d.pid != Some(31) && d.pid != Some(32)),
        "{:?}",
        s3.details
    );
    let ev = base()
        .switch_prio(EXPIRY + 4_560_000, (31, "rustc"), (TID, "tickscope-0"), 9)
        .sys_exit(EXPIRY + 4_565_000)
        .events();
    let b = attribute(&sample(EXPIRY + 4_570_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("rustc"));
    let ev = base()
        .switch_prio(EXPIRY + 3_220_000, (31, "rustc"), (3, "migration/1"), 0)
        .switch_prio(EXPIRY + 3_230_000, (3, "migration/1"), (32, "lto"), 120)
        .switch_prio(EXPIRY + 4_560_000, (32, "lto"), (TID, "tickscope-0"), 9)
        .sys_exit(EXPIRY + 4_565_000)
        .events();
    let b = attribute(&sample(EXPIRY + 4_570_000), &setting(true), &ev);
    assert_eq!(b.cause.category, "other thread", "{b:#?}");
}

/// Recorded by the oracle's rt-throttle plant under load: the FIFO thread is woken while
/// rustc (fair) runs; rustc keeps CPU 1 through three ticks for 14.7 ms — no switch proves
/// the throttle — until the RT period timer fires on the CPU and the switch to the thread
/// follows 28 µs later: the refill released it, `rt throttled`, rustc passed-over time. The
/// same wait released 200 µs after the timer, or with no RT timer at all, stays rustc's (a
/// fair task in the kernel under PREEMPT_NONE); a CFS timer does not release an RT thread.
#[test]
fn an_rt_thread_released_by_the_rt_period_timer_is_rt_throttled() {
    let run = |timer: Option<(Nanos, &str)>, switch_at: Nanos| {
        let mut b = B::new().armed_then((31, "rustc"), 120).fired(
            EXPIRY + 13_000,
            EXPIRY + 14_000,
            (31, "rustc"),
        );
        for tick in [3_732_000, 7_734_000, 11_737_000] {
            b = b.ev(
                EXPIRY + tick,
                31,
                "rustc",
                Kind::HrtimerExpireEntry {
                    timer: 0x71c,
                    function: "tick_nohz_handler".into(),
                    now: EXPIRY + tick,
                    user: None,
                },
            );
        }
        if let Some((at, function)) = timer {
            b = b.ev(
                at,
                31,
                "rustc",
                Kind::HrtimerExpireEntry {
                    timer: 0xb0b,
                    function: function.into(),
                    now: at,
                    user: None,
                },
            );
        }
        let ev = b
            .switch_prio(switch_at, (31, "rustc"), (TID, "tickscope-0"), 9)
            .sys_exit(switch_at + 12_000)
            .events();
        attribute(&sample(switch_at + 13_000), &setting(true), &ev)
    };
    let b = run(
        Some((EXPIRY + 14_722_000, "sched_rt_period_timer")),
        EXPIRY + 14_750_000,
    );
    check_sum(&b);
    assert_eq!(b.cause.category, "rt throttled", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("sched_rt_period_timer"));
    assert!(b.segments[3].details.iter().all(|d| d.pid != Some(31)));
    for b in [
        run(
            Some((EXPIRY + 14_522_000, "sched_rt_period_timer")),
            EXPIRY + 14_750_000,
        ),
        run(None, EXPIRY + 14_750_000),
        run(
            Some((EXPIRY + 14_722_000, "sched_cfs_period_timer")),
            EXPIRY + 14_750_000,
        ),
    ] {
        assert_eq!(b.cause.category, "other thread", "{b:#?}");
        assert_eq!(b.cause.detail.as_deref(), Some("rustc"));
    }
}

/// PREEMPT_RT: a fair thread's sleep is a soft hrtimer, expired by the timer softirq's thread
/// `ktimers/1` rather than in the interrupt. The interrupt comes 3 µs after the expiry, an RT
/// thread (irq/24-nvme0q1) holds the CPU 200 µs, then ktimers/1 runs the callback: S2 holds
/// the wait for the softirq thread and names it.
#[test]
fn preempt_rt_soft_timer_expired_in_ktimers_is_named() {
    let ev = B::new()
        .armed_then((31, "irq/24-nvme0q1"), 49)
        .ev(
            EXPIRY + 3_000,
            31,
            "irq/24-nvme0q1",
            Kind::VectorEntry {
                name: "local_timer".into(),
            },
        )
        .ev(
            EXPIRY + 4_000,
            31,
            "irq/24-nvme0q1",
            Kind::VectorExit {
                name: "local_timer".into(),
            },
        )
        .switch_prio(
            EXPIRY + 203_000,
            (31, "irq/24-nvme0q1"),
            (22, "ktimers/1"),
            98,
        )
        .ev(
            EXPIRY + 205_000,
            22,
            "ktimers/1",
            Kind::HrtimerExpireEntry {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                now: EXPIRY + 205_000,
                user: None,
            },
        )
        .switch_prio(
            EXPIRY + 210_000,
            (22, "ktimers/1"),
            (TID, "tickscope-0"),
            120,
        )
        .sys_exit(EXPIRY + 212_000)
        .events();
    let b = attribute(&sample(EXPIRY + 213_000), &setting(false), &ev);
    check_sum(&b);
    assert_eq!(seg(&b, "hrtimer_queue"), 202_000, "{b:#?}");
    assert_eq!(b.cause.category, "hrtimer queue", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("ktimers/1"));
}

/// The thread's own timer interrupt on an idle vCPU: its callback at `now`, then another
/// callback (`tick`: its entry at that offset from `now`, and its exit if recorded — the
/// BPF path records none), the interrupt's exit `tail` after `now`, the switch 2 µs later.
fn own_interrupt(delay: Nanos, tail: Nanos, tick: Option<(Nanos, Option<Nanos>)>) -> Vec<Event> {
    let now = EXPIRY + delay;
    let mut b = B::new()
        .armed(0)
        .switch(EXPIRY - PERIOD + 2_000, (TID, "tickscope-0"), (0, "<idle>"))
        .ev(
            now,
            0,
            "<idle>",
            Kind::VectorEntry {
                name: "local_timer".into(),
            },
        )
        .ev(
            now,
            0,
            "<idle>",
            Kind::HrtimerExpireEntry {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                now,
                user: Some(false),
            },
        );
    if let Some((t, exit)) = tick {
        b = b.ev(
            now + t,
            0,
            "<idle>",
            Kind::HrtimerExpireEntry {
                timer: 0xabc,
                function: "tick_nohz_handler".into(),
                now,
                user: Some(false),
            },
        );
        if let Some(x) = exit {
            b = b.ev(
                now + x,
                0,
                "<idle>",
                Kind::HrtimerExpireExit { timer: 0xabc },
            );
        }
    }
    b.ev(
        now + tail,
        0,
        "<idle>",
        Kind::VectorExit {
            name: "local_timer".into(),
        },
    )
    .switch(now + tail + 2_000, (0, "<idle>"), (TID, "tickscope-0"))
    .sys_exit(now + tail + 3_000)
    .events()
}

#[test]
fn a_long_own_interrupt_after_the_callback_is_the_host_on_a_vm_and_kernel_path_on_bare_metal() {
    let ev = own_interrupt(10_000, 12_000, None);
    let woke = EXPIRY + 10_000 + 12_000 + 4_000;
    let b = attribute(&sample(woke), &setting(true), &ev);
    check_sum(&b);
    assert_eq!(seg(&b, "wake_to_cpu"), 14_000);
    assert_eq!(b.cause.category, "hypervisor");
    let d = &b.segments[3].details[0];
    assert_eq!((d.kind.as_str(), d.ns), ("hypervisor", 12_000));
    assert_eq!(
        d.name,
        "vCPU in its timer interrupt after the callback, nothing traced: the timer write exits to the host"
    );
    // Bare metal: the kernel's own path, no detail.
    let b = attribute(&sample(woke), &setting(false), &ev);
    assert_eq!(b.cause.category, "kernel path");
    assert!(
        b.segments[3].details.is_empty(),
        "{:?}",
        b.segments[3].details
    );
}

#[test]
fn a_callback_after_the_threads_in_the_same_interrupt_is_that_callbacks_time() {
    // The tick's callback from 5 µs to 12 µs (its exit recorded: the tracefs path): its 7 µs
    // are the hrtimer queue's, the 5 µs before it the interrupt's own (the host's on a VM).
    let ev = own_interrupt(10_000, 12_000, Some((5_000, Some(12_000))));
    let woke = EXPIRY + 10_000 + 12_000 + 4_000;
    for virtualized in [true, false] {
        let b = attribute(&sample(woke), &setting(virtualized), &ev);
        check_sum(&b);
        assert_eq!(b.cause.category, "hrtimer queue");
        assert_eq!(b.cause.detail.as_deref(), Some("tick_nohz_handler"));
        let d = &b.segments[3].details;
        assert_eq!((d[0].kind.as_str(), d[0].ns), ("other_callback", 7_000));
        assert_eq!(
            d.iter().any(|x| x.kind == "hypervisor" && x.ns == 5_000),
            virtualized
        );
    }
    // Without its exit (the BPF path) the 7 µs hold the callback and the interrupt's tail in
    // unknown shares: neither the callback's nor the host's — the kernel's path, which then
    // leaves 9 µs unexplained in S3: on a VM less than the delivery the host held (10 µs),
    // which names the wake-up; on bare metal more than the exit from idle.
    let ev = own_interrupt(10_000, 12_000, Some((5_000, None)));
    for virtualized in [true, false] {
        let b = attribute(&sample(woke), &setting(virtualized), &ev);
        check_sum(&b);
        let want = if virtualized {
            "hypervisor"
        } else {
            "kernel path"
        };
        assert_eq!(b.cause.category, want, "{b:#?}");
        let d = &b.segments[3].details;
        assert!(!d.iter().any(|x| x.kind == "other_callback"), "{d:?}");
        assert_eq!(
            d.iter().any(|x| x.kind == "hypervisor" && x.ns == 5_000),
            virtualized
        );
    }
}

/// Where the wait's return is not traced (BPF, a run's own threads), S4 is 0 and S5 runs from
/// the switch-in to the clock read: a thread of higher priority that takes the CPU back
/// before the thread's clock read is still named, no flag says the return is missing, and
/// the steal time is the thread's first reading after its switch-in (recorded when it next
/// arms its timer, after the clock read).
#[test]
fn without_the_waits_return_s5_runs_from_the_switch_in() {
    let me = (TID, "tickscope-0");
    let hi = (77, "hi-prio");
    let events = B::new()
        .armed_then((0, "<idle>"), 120)
        .fired(EXPIRY + 1_000, EXPIRY + 2_000, (0, "<idle>"))
        .switch(EXPIRY + 10_000, (0, "<idle>"), me)
        .switch_prio(EXPIRY + 12_000, me, hi, 5)
        .switch(EXPIRY + 112_000, hi, me)
        .steal(EXPIRY + 130_000, 4_000)
        .events();
    let untraced = Setting {
        returns_traced: false,
        ..setting(true)
    };
    let b = attribute(&sample(EXPIRY + 120_000), &untraced, &events);
    assert_eq!(b.segments[4].ns, 0, "no kernel exit segment");
    assert_eq!(b.segments[5].ns, 110_000, "switch-in to the clock read");
    assert_eq!(b.cause.category, "other thread");
    assert_eq!(b.cause.detail.as_deref(), Some("hi-prio"));
    assert!(!b.flags.iter().any(|f| f == "no_sys_exit"), "{:?}", b.flags);
    assert_eq!(b.steal_ns, Some(4_000));
    // The same events with the return said to be traced: it is missing, and flagged.
    let b = attribute(&sample(EXPIRY + 120_000), &setting(true), &events);
    assert!(b.flags.iter().any(|f| f == "no_sys_exit"));
    assert_eq!(b.steal_ns, None);
}

/// A thread that spins to its expiry (`busy`) arms no timer: a late wake-up has no timer
/// start, expiry or switch-in of the timer's model, though no event is missing — a thread
/// that waits on a timer gets `unexplained (events missing)` for the same events. The
/// spinning thread's model (crates/explain/src/spin.rs) reads what held it: here RT
/// throttling's shape, switched out runnable just before the expiry, the CPU idle (an IPI
/// taken meanwhile), back 40 ms later.
#[test]
fn a_spinning_thread_switched_out_runnable_to_an_idle_cpu_was_throttled() {
    let ev = B::new()
        .switch(EXPIRY - 10_000, (TID, "tickscope-0"), (0, "<idle>"))
        .ev(
            EXPIRY + 500_000,
            0,
            "<idle>",
            Kind::VectorEntry {
                name: "reschedule".into(),
            },
        )
        .ev(
            EXPIRY + 501_000,
            0,
            "<idle>",
            Kind::VectorExit {
                name: "reschedule".into(),
            },
        )
        .switch(EXPIRY + 40_000_000, (0, "<idle>"), (TID, "tickscope-0"))
        .events();
    let woke = sample(EXPIRY + 40_010_000);
    let waits = attribute(&woke, &setting(true), &ev);
    check_sum(&waits);
    assert_eq!(waits.cause.category, "unexplained", "{waits:#?}");
    let b = attribute(&woke, &spinning(true), &ev);
    check_sum(&b);
    assert_spin(&b, "rt throttled", Some(IDLE_WHILE_RUNNABLE));
    assert_eq!(seg(&b, "wake_to_cpu"), 40_000_000);
    assert_eq!(seg(&b, "return_to_user"), 10_000);
    // Tickscope's own threads named afterwards: the cause is named again, the same way.
    let mut relabelled = b.clone();
    relabelled.segments[5]
        .details
        .push(tickscope_explain::attribution::Detail {
            kind: "thread".into(),
            name: "x".into(),
            pid: Some(TID + 1),
            ns: 1,
        });
    tickscope_explain::model::label_own_threads(&mut relabelled, |p| p == TID + 1);
    assert_eq!(relabelled.cause, b.cause);
}

/// The setting of a run whose method spins to its expiry (`busy`).
fn spinning(virtualized: bool) -> Setting {
    Setting {
        spins: true,
        returns_traced: false,
        ..setting(virtualized)
    }
}

/// `b` was made by the spinning thread's model (flag `spin`) and names `category` with
/// `detail`.
fn assert_spin(b: &tickscope_explain::Breakdown, category: &str, detail: Option<&str>) {
    assert_eq!(b.cause.category, category, "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), detail, "{b:#?}");
    assert!(b.flags.iter().any(|f| f == "spin"), "{b:#?}");
    assert_eq!(b.cpu, Some(CPU));
    check_sum(b);
}

/// How the spinning model names a throttle seen only as the CPU idling.
const IDLE_WHILE_RUNNABLE: &str = "CPU idle while the thread was runnable";

/// The scheduler tick taken by the current task (`who`) at `ts`, 2 µs long: what shows a
/// spinning thread current on its CPU.
fn tick(b: B, ts: Nanos, who: (i32, &str)) -> B {
    b.ev(
        ts,
        who.0,
        who.1,
        Kind::VectorEntry {
            name: "local_timer".into(),
        },
    )
    .ev(
        ts + 2_000,
        who.0,
        who.1,
        Kind::VectorExit {
            name: "local_timer".into(),
        },
    )
}

/// The thread, of kernel priority `prio`, switched out runnable (preempted, `R+`) to the idle
/// task at `ts`.
fn switched_out(b: B, ts: Nanos, prio: i32) -> B {
    b.ev(
        ts,
        TID,
        "tickscope-0",
        Kind::SchedSwitch {
            prev_pid: TID,
            prev_comm: "tickscope-0".into(),
            prev_state: "R+".into(),
            prev_prio: Some(prio),
            next_pid: 0,
            next_comm: "<idle>".into(),
            next_prio: 120,
        },
    )
}

/// A callback run on the measured CPU at `ts` in the context of `who`.
fn callback(b: B, ts: Nanos, who: (i32, &str), function: &str) -> B {
    b.ev(
        ts,
        who.0,
        who.1,
        Kind::HrtimerExpireEntry {
            timer: 0x99,
            function: function.into(),
            now: ts,
            user: None,
        },
    )
}

/// Preempted by a thread of higher priority a little before its expiry, back 300 µs after
/// it: that thread is named, the stretch from the switch back to the clock read is S5.
#[test]
fn a_spinning_thread_preempted_by_a_higher_priority_thread_names_it() {
    let me = (TID, "tickscope-0");
    let ev = tick(B::new(), EXPIRY - 3_000_000, me)
        .switch_prio(EXPIRY - 200_000, me, (77, "plant-fifo"), 0)
        .switch_prio(EXPIRY + 300_000, (77, "plant-fifo"), me, 9)
        .events();
    let b = attribute(&sample(EXPIRY + 305_000), &spinning(true), &ev);
    assert_spin(&b, "other thread", Some("plant-fifo"));
    assert_eq!(seg(&b, "wake_to_cpu"), 300_000);
    assert_eq!(seg(&b, "return_to_user"), 5_000);
    assert!(b.flags.iter().all(|f| f != "no_timer"), "{b:#?}");
}

/// RT throttling as the BPF path records it: switched out runnable, the CPU idle, the RT
/// period timer's refill, the switch back — named after the refill. And as a tracefs
/// instance on this project's kernel records it, without the idle task's switch out: the
/// thread is back somewhere between the refill and its clock read (the residual, flag
/// `no_switch_in`), and the cause is the same.
#[test]
fn a_spinning_rt_thread_passed_over_for_idle_is_rt_throttled_until_the_refill() {
    let me = (TID, "tickscope-0");
    let base = || {
        let b = switched_out(tick(B::new(), EXPIRY - 3_000_000, me), EXPIRY - 100_000, 9);
        let b = tick(b, EXPIRY + 40_000_000, (0, "<idle>"));
        callback(
            b,
            EXPIRY + 40_001_000,
            (0, "<idle>"),
            "sched_rt_period_timer",
        )
    };
    let woke = sample(EXPIRY + 40_050_000);
    let bpf = base()
        .switch(EXPIRY + 40_030_000, (0, "<idle>"), me)
        .events();
    let b = attribute(&woke, &spinning(true), &bpf);
    assert_spin(&b, "rt throttled", Some("sched_rt_period_timer"));
    assert_eq!(seg(&b, "wake_to_cpu"), 40_030_000);
    assert_eq!(b.residual_ns, 0);
    let text = base().events();
    let b = attribute(&woke, &spinning(true), &text);
    assert_spin(&b, "rt throttled", Some("sched_rt_period_timer"));
    assert!(b.flags.iter().any(|f| f == "no_switch_in"), "{b:#?}");
    // Back after the refill interrupt's exit (its last event), by the clock read.
    assert_eq!(seg(&b, "wake_to_cpu"), 40_002_000);
    assert_eq!(b.residual_ns, 48_000);
}

/// A fair thread that spins, switched out runnable while its CPU idles: its group's CPU
/// quota was spent — unless no quota applies to it, and then the events name nothing.
#[test]
fn a_spinning_fair_thread_passed_over_for_idle_is_cpu_quota_where_a_quota_applies() {
    let me = (TID, "tickscope-0");
    let b = switched_out(tick(B::new(), EXPIRY - 3_000_000, me), EXPIRY - 50_000, 120);
    let ev = callback(
        b,
        EXPIRY + 5_000_000,
        (0, "<idle>"),
        "sched_cfs_period_timer",
    )
    .switch_prio(EXPIRY + 5_020_000, (0, "<idle>"), me, 120)
    .events();
    let woke = sample(EXPIRY + 5_030_000);
    let b = attribute(&woke, &spinning(true), &ev);
    assert_spin(&b, "cpu quota", Some("sched_cfs_period_timer"));
    let no_quota = Setting {
        cpu_quota: Some(false),
        ..spinning(true)
    };
    let b = attribute(&woke, &no_quota, &ev);
    assert_spin(&b, "cannot tell", Some(tickscope_explain::spin::UNNAMED));
    assert!(b.flags.iter().any(|f| f == "no_cpu_quota"), "{b:#?}");
}

/// Never switched out, nothing traced on its CPU from the expiry to its clock read: a
/// thread spinning in user mode cannot stop itself and user mode takes interrupts, so on a
/// virtual machine the vCPU was held outside the guest; on bare metal nothing says what.
/// A softirq over most of the delay is named instead.
#[test]
fn a_spinning_thread_that_kept_its_cpu_was_held_by_the_host_or_an_interrupt() {
    let me = (TID, "tickscope-0");
    let quiet = tick(B::new(), EXPIRY - 2_000_000, me).events();
    let woke = sample(EXPIRY + 200_000);
    let b = attribute(&woke, &spinning(true), &quiet);
    assert_spin(&b, "hypervisor", None);
    assert_eq!(seg(&b, "wake_to_cpu"), 200_000);
    let b = attribute(&woke, &spinning(false), &quiet);
    assert_spin(&b, "cannot tell", Some(tickscope_explain::spin::UNNAMED));
    let net = tick(B::new(), EXPIRY - 2_000_000, me)
        .ev(
            EXPIRY - 10_000,
            TID,
            "tickscope-0",
            Kind::SoftirqEntry {
                action: "NET_RX".into(),
            },
        )
        .ev(
            EXPIRY + 150_000,
            TID,
            "tickscope-0",
            Kind::SoftirqExit {
                action: "NET_RX".into(),
            },
        )
        .events();
    let b = attribute(&woke, &spinning(true), &net);
    assert_spin(&b, "softirq", Some("NET_RX"));
}

/// Switched out blocked (`D`: waiting on its own, not runnable), the spinning thread is
/// not held by the task that ran meanwhile: its own page fault where one is recorded, else
/// `cannot tell`.
#[test]
fn a_spinning_thread_that_blocked_is_not_held_by_who_ran_meanwhile() {
    let me = (TID, "tickscope-0");
    let blocked = |fault: bool| {
        let mut b = tick(B::new(), EXPIRY - 3_000_000, me).ev(
            EXPIRY - 20_000,
            TID,
            "tickscope-0",
            Kind::SchedSwitch {
                prev_pid: TID,
                prev_comm: "tickscope-0".into(),
                prev_state: "D".into(),
                prev_prio: Some(9),
                next_pid: 31,
                next_comm: "rustc".into(),
                next_prio: 120,
            },
        );
        if fault {
            b = b.ev(
                EXPIRY - 25_000,
                TID,
                "tickscope-0",
                Kind::PageFault {
                    user: true,
                    address: 0x1000,
                },
            );
        }
        b.switch_prio(EXPIRY + 400_000, (31, "rustc"), me, 9)
            .events()
    };
    let woke = sample(EXPIRY + 405_000);
    let b = attribute(&woke, &spinning(true), &blocked(true));
    assert_spin(&b, "page fault", Some("user mode"));
    let b = attribute(&woke, &spinning(true), &blocked(false));
    assert_spin(&b, "cannot tell", Some(tickscope_explain::spin::UNNAMED));
    assert!(
        b.segments[3].details.iter().all(|d| d.pid != Some(31)),
        "{b:#?}"
    );
}

/// Without the thread's state at the expiry in the events (nothing of it before), the
/// spinning model says nothing: `cannot tell` for the method's reason, as before it existed.
#[test]
fn a_spinning_thread_whose_state_at_the_expiry_is_unseen_is_cannot_tell() {
    let me = (TID, "tickscope-0");
    let ev = tick(B::new(), EXPIRY + 100_000, me).events();
    let b = attribute(&sample(EXPIRY + 150_000), &spinning(true), &ev);
    check_sum(&b);
    assert_no_timer(&b);
}

/// A `hybrid` thread whose sleep ended in time, before the expiry, and that was then late
/// while spinning: no timer event lies in the delay (never `unexplained (events missing)`,
/// as it was with a 700 µs margin); the spinning thread's model reads it — on the CPU since
/// its switch in, three 1 µs IPIs and otherwise nothing traced for 21 µs: the host on a
/// virtual machine, `cannot tell` on bare metal.
#[test]
fn a_hybrid_thread_late_in_its_spin_is_read_as_a_spinning_one() {
    let ev = B::new()
        .slept_to_margin(700_000)
        .fired(EXPIRY - 699_000, EXPIRY - 698_000, (0, "<idle>"))
        .switch(EXPIRY - 695_000, (0, "<idle>"), (TID, "tickscope-0"))
        .sys_exit(EXPIRY - 690_000)
        // Interrupts all through the delay: the trace ran (not silent), no timer event in it.
        .reschedule(EXPIRY + 5_000)
        .reschedule(EXPIRY + 11_000)
        .reschedule(EXPIRY + 17_000)
        .events();
    let woke = sample(EXPIRY + 21_000);
    let hybrid = |virtualized| Setting {
        timer_before_expiry: true,
        ..setting(virtualized)
    };
    let b = attribute(&woke, &hybrid(true), &ev);
    assert_spin(&b, "hypervisor", None);
    let b = attribute(&woke, &hybrid(false), &ev);
    assert_spin(&b, "cannot tell", Some(tickscope_explain::spin::UNNAMED));
}

/// `hybrid`, woken in time but held after: its sleep's timer fired before the expiry, in
/// the context of a FIFO 99 thread that kept the CPU until after it (the oracle's
/// `hybrid-fifo-hi` plant, 2026-11-28: 4 such wake-ups read as spinning and `cannot tell`
/// "blocked (state S)"). It never spun: the timer's model names the thread that held it.
#[test]
fn a_hybrid_thread_woken_in_time_but_held_past_the_expiry_is_the_timers_model() {
    let me = (TID, "tickscope-0");
    let plant = (77, "plant-fifo");
    let ev = B::new()
        .slept_to_margin(200_000)
        .switch_prio(EXPIRY - 300_000, (0, "<idle>"), plant, 0)
        .fired_in(EXPIRY - 201_000, EXPIRY - 200_000, plant, Some(true))
        .switch_prio(EXPIRY + 215_000, plant, me, 9)
        .events();
    let b = attribute(&sample(EXPIRY + 218_000), &hybrid_bpf(), &ev);
    check_sum(&b);
    assert_eq!(b.cause.category, "other thread", "{b:#?}");
    assert_eq!(b.cause.detail.as_deref(), Some("plant-fifo"), "{b:#?}");
    assert!(b.flags.iter().all(|f| f != "spin"), "{b:#?}");
}

/// `hybrid`, preempted while spinning: the next period's sleep, armed just after the clock
/// read and a margin past this expiry, is not this wake-up's timer (it was taken for it, as
/// the nearest, and the delay named `timer slack` of 500 µs: the same plant, twice).
#[test]
fn a_hybrid_threads_next_sleep_is_not_taken_for_its_timer() {
    let me = (TID, "tickscope-0");
    let plant = (77, "plant-fifo");
    let ev = B::new()
        .slept_to_margin(500_000)
        .fired(EXPIRY - 494_000, EXPIRY - 493_000, (0, "<idle>"))
        .switch(EXPIRY - 488_000, (0, "<idle>"), me)
        .switch_prio(EXPIRY - 3_000, me, plant, 0)
        .switch_prio(EXPIRY + 504_000, plant, me, 9)
        .ev(
            EXPIRY + 506_000,
            TID,
            "tickscope-0",
            Kind::HrtimerStart {
                timer: PTR,
                function: "hrtimer_wakeup".into(),
                expires: EXPIRY + 500_000,
                softexpires: Some(EXPIRY + 500_000),
            },
        )
        .events();
    let b = attribute(&sample(EXPIRY + 505_000), &hybrid_bpf(), &ev);
    assert_spin(&b, "other thread", Some("plant-fifo"));
}

/// The setting of a `hybrid` run under BPF on a VM (the wait's return not traced).
fn hybrid_bpf() -> Setting {
    Setting {
        timer_before_expiry: true,
        returns_traced: false,
        ..setting(true)
    }
}

/// `b` is `cannot tell` because the thread spins ([`tickscope_explain::attribution::NO_TIMER`],
/// flag `no_timer`).
fn assert_no_timer(b: &tickscope_explain::Breakdown) {
    assert_eq!(b.cause.category, "cannot tell", "{b:#?}");
    assert_eq!(
        b.cause.detail.as_deref(),
        Some(tickscope_explain::attribution::NO_TIMER)
    );
    assert!(b.flags.iter().any(|f| f == "no_timer"), "{b:#?}");
}
