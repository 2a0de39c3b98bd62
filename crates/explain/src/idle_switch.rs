//! The idle task's switches out that a tracefs instance did not record, put back.
//!
//! On this project's kernel (6.18, a KVM guest) a tracefs instance never records the idle
//! task's switch out on CPU 1 (`sched_switch` with `prev_pid=0`; CPU 0's are recorded, with
//! or without `tracing_cpumask`; found 2026-11-28), while a BPF program on the same
//! tracepoint sees every one. Each model reads who held a CPU from its switches, so the text
//! path took a task switched in from idle for the idle task until its switch out, and its
//! own thread woken on an idle CPU as never switched in: with `--explain=tracefs` the
//! oracle's plants read fifo-hi `kernel path` 55 times of 351 (its burst counted as idle
//! time), rt-throttle `kernel path` 50 of 52 and quota `return to user` 102 of 108 (the
//! refill's switch to the thread unseen) (`EXPLAIN=tracefs bash bench/oracle.sh --quick`,
//! 2026-11-28 10:07; docs/explain.md, "The text path and the idle task's switches").
//!
//! The switch is put back where the events prove it: on a CPU whose last recorded switch
//! put the idle task on, an event in another task's context (a `sched_switch` taking that
//! task off, or any event whose `common_pid` is that task's: an interrupt's entry names the
//! task it interrupted) shows the idle task gone. It is placed just after the last event in
//! the idle task's context on that CPU, at that event's time: the idle task keeps no CPU on
//! which a task is runnable (`do_idle()` leaves its loop once `need_resched()`,
//! kernel/sched/idle.c), and what makes a task runnable on an idle CPU is that CPU's
//! interrupt — the last event before the switch — or a remote wake-up, whose reschedule
//! interrupt is recorded too unless the idle CPU was polling. The task's priority comes from
//! another switch of the same task in the events; without one nothing is put back (the
//! measured thread's from `/proc` was tried for a run's first wake-up and left out: the one
//! such wake-up replayed then lost 9.8 µs of a stall in the idle task's exit to the return
//! to user, a wrong cause where `unexplained` did not guess; docs/explain.md). Nor is
//! anything put back across a loss of events on that CPU: who holds it is then unknown
//! until its next switch.

use crate::events::{Event, Kind, Nanos};
use crate::name::Name;

/// The idle task's state letter at a switch out (it is always runnable), as the kernel
/// prints it.
const IDLE_STATE: Name = Name::from_static("R");

/// The idle task's kernel priority as `sched_switch` reports it (`MAX_PRIO - 20`,
/// include/linux/sched/prio.h).
const IDLE_PRIO: i32 = 120;

/// Puts back, per CPU, the idle task's switches out that `events` (in time order, one or more
/// CPUs) lack, each just after the last event in the idle task's context before it (see the
/// module's documentation). Returns when each one put back is placed, ns on the events'
/// clock, with its CPU; empty when nothing was missing (every BPF recording, and a text
/// recording of a kernel that records them). Events stay in order; nothing else changes.
pub fn fill_in(events: &mut Vec<Event>) -> Vec<(u32, Nanos)> {
    struct Cpu {
        cpu: u32,
        /// The task the last switch seen put on (`None` before the first).
        current: Option<i32>,
        /// While the idle task is current: the index of the last event in its context, and
        /// its command name (`swapper/N`) from the switch that put it on.
        idle_last: usize,
        idle_comm: Name,
    }
    let mut cpus: Vec<Cpu> = Vec::new();
    // (insert after this index, the switch) in index order.
    let mut put: Vec<(usize, Event)> = Vec::new();
    // Each task's priority, read once at the first switch to put back.
    let mut prios = None;
    for (i, e) in events.iter().enumerate() {
        // Events lost on a CPU may hide any switch: who holds it is unknown until the
        // next switch seen there.
        if matches!(e.kind, Kind::Lost { .. }) {
            if let Some(c) = cpus.iter_mut().find(|c| c.cpu == e.cpu) {
                c.current = None;
            }
            continue;
        }
        let at = match cpus.iter().position(|c| c.cpu == e.cpu) {
            Some(at) => at,
            None => {
                cpus.push(Cpu {
                    cpu: e.cpu,
                    current: None,
                    idle_last: i,
                    idle_comm: Name::default(),
                });
                cpus.len() - 1
            }
        };
        let st = &mut cpus[at];
        let holder = match &e.kind {
            Kind::SchedSwitch {
                prev_pid,
                prev_comm,
                ..
            } => (*prev_pid != 0).then(|| (*prev_pid, prev_comm.clone())),
            _ => (e.pid != 0).then(|| (e.pid, e.comm.clone())),
        };
        if let (Some(0), Some((pid, comm))) = (st.current, holder) {
            let prios = prios.get_or_insert_with(|| crate::events::priorities(events.iter()));
            if let Some(&prio) = prios.get(&pid) {
                let last = &events[st.idle_last];
                put.push((
                    st.idle_last,
                    Event {
                        ts: last.ts,
                        cpu: e.cpu,
                        pid: 0,
                        comm: last.comm.clone(),
                        kind: Kind::SchedSwitch {
                            prev_pid: 0,
                            prev_comm: st.idle_comm.clone(),
                            prev_state: IDLE_STATE,
                            prev_prio: Some(IDLE_PRIO),
                            next_pid: pid,
                            next_comm: comm,
                            next_prio: prio,
                        },
                    },
                ));
            }
            // Without a priority nothing is put back, but the idle task is gone all the same.
            st.current = Some(pid);
        }
        match &e.kind {
            Kind::SchedSwitch {
                next_pid,
                next_comm,
                ..
            } => {
                st.current = Some(*next_pid);
                if *next_pid == 0 {
                    st.idle_last = i;
                    st.idle_comm = next_comm.clone();
                }
            }
            _ if st.current == Some(0) && e.pid == 0 => st.idle_last = i,
            _ => {}
        }
    }
    if put.is_empty() {
        return Vec::new();
    }
    // Each list is in index order; several switches after one index keep their order.
    put.sort_by_key(|p| p.0);
    let placed = put.iter().map(|(_, e)| (e.cpu, e.ts)).collect();
    let mut out = Vec::with_capacity(events.len() + put.len());
    let mut put = put.into_iter().peekable();
    for (i, e) in events.drain(..).enumerate() {
        out.push(e);
        while let Some((_, s)) = put.next_if(|p| p.0 == i) {
            out.push(s);
        }
    }
    *events = out;
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: Nanos, cpu: u32, pid: i32, kind: Kind) -> Event {
        Event {
            ts,
            cpu,
            pid,
            comm: match pid {
                0 => "<idle>".into(),
                _ => format!("t{pid}").into(),
            },
            kind,
        }
    }

    fn switch(prev: i32, prev_prio: i32, next: i32, next_prio: i32) -> Kind {
        let comm = |p: i32| -> Name {
            match p {
                0 => "swapper/1".into(),
                _ => format!("t{p}").into(),
            }
        };
        Kind::SchedSwitch {
            prev_pid: prev,
            prev_comm: comm(prev),
            prev_state: "S".into(),
            prev_prio: Some(prev_prio),
            next_pid: next,
            next_comm: comm(next),
            next_prio,
        }
    }

    fn vector(entry: bool) -> Kind {
        match entry {
            true => Kind::VectorEntry {
                name: "local_timer".into(),
            },
            false => Kind::VectorExit {
                name: "local_timer".into(),
            },
        }
    }

    /// The fifo-hi plant's shape on the text path: the thread (7, FIFO 90) goes to sleep,
    /// the idle task runs, a timer interrupt wakes it and the plant (9, FIFO 99); the plant's
    /// switch in from idle is unrecorded, its switch out to the thread is.
    #[test]
    fn a_task_switched_out_with_no_switch_in_from_idle_gets_one_after_the_wake_up() {
        let mut events = vec![
            ev(100, 1, 7, switch(7, 9, 0, 120)),
            ev(1_000, 1, 0, vector(true)),
            ev(1_010, 1, 0, vector(false)),
            ev(1_530, 1, 9, switch(9, 0, 7, 9)),
        ];
        let placed = fill_in(&mut events);
        assert_eq!(placed, vec![(1, 1_010)]);
        assert_eq!(events.len(), 5);
        let e = &events[3];
        assert_eq!((e.ts, e.cpu, e.pid), (1_010, 1, 0));
        match &e.kind {
            Kind::SchedSwitch {
                prev_pid,
                prev_comm,
                prev_state,
                next_pid,
                next_comm,
                next_prio,
                ..
            } => {
                assert_eq!((*prev_pid, *next_pid, *next_prio), (0, 9, 0));
                assert_eq!(
                    (prev_comm.as_str(), next_comm.as_str()),
                    ("swapper/1", "t9")
                );
                assert_eq!(prev_state.as_str(), "R");
            }
            k => panic!("not a switch: {k:?}"),
        }
        assert!(events.windows(2).all(|w| w[0].ts <= w[1].ts));
    }

    /// The thread itself back from idle with its switch in unrecorded: its first event (the
    /// wait's return) shows it current; the switch goes after the last idle-context event
    /// (an IPI after the timer interrupt), not after the events of another CPU.
    #[test]
    fn an_event_in_a_tasks_context_on_an_idle_cpu_puts_its_switch_in_back() {
        let mut events = vec![
            ev(100, 1, 7, switch(7, 9, 0, 120)),
            ev(1_000, 1, 0, vector(true)),
            ev(1_010, 1, 0, vector(false)),
            ev(1_020, 0, 3, vector(true)),
            ev(1_030, 1, 0, vector(true)),
            ev(1_040, 1, 0, vector(false)),
            ev(1_045, 0, 3, vector(false)),
            ev(1_060, 1, 7, Kind::SysExit { nr: 230 }),
        ];
        assert_eq!(fill_in(&mut events), vec![(1, 1_040)]);
        assert!(matches!(
            events[6].kind,
            Kind::SchedSwitch {
                prev_pid: 0,
                next_pid: 7,
                next_prio: 9,
                ..
            }
        ));
        assert_eq!(events[7].cpu, 0);
    }

    /// Complete recordings (the BPF path's, a kernel that records idle's switches out),
    /// events before a CPU's first switch, a task whose priority no switch tells, and a
    /// CPU whose events were lost since its switch to idle are left as they are.
    #[test]
    fn complete_or_unprovable_recordings_are_left_alone() {
        let complete = vec![
            ev(100, 1, 7, switch(7, 9, 0, 120)),
            ev(1_000, 1, 0, vector(true)),
            ev(1_010, 1, 0, vector(false)),
            ev(1_011, 1, 0, switch(0, 120, 9, 0)),
            ev(1_530, 1, 9, switch(9, 0, 7, 9)),
        ];
        let mut events = complete.clone();
        assert!(fill_in(&mut events).is_empty());
        assert_eq!(events, complete);
        let before_any_switch = vec![
            ev(1_000, 1, 0, vector(true)),
            ev(1_060, 1, 7, Kind::SysExit { nr: 230 }),
        ];
        let mut events = before_any_switch.clone();
        assert!(fill_in(&mut events).is_empty());
        assert_eq!(events, before_any_switch);
        let unknown_priority = vec![
            ev(100, 1, 7, switch(7, 9, 0, 120)),
            ev(1_060, 1, 5, Kind::SysExit { nr: 230 }),
        ];
        let mut events = unknown_priority.clone();
        assert!(fill_in(&mut events).is_empty());
        assert_eq!(events, unknown_priority);
        // Events lost after the switch to idle: the switches they held are not guessed.
        let after_a_loss = vec![
            ev(100, 1, 7, switch(7, 9, 0, 120)),
            ev(
                1_000,
                1,
                0,
                Kind::Lost {
                    count: 12,
                    since: Some(100),
                },
            ),
            ev(1_530, 1, 9, switch(9, 0, 7, 9)),
        ];
        let mut events = after_a_loss.clone();
        assert!(fill_in(&mut events).is_empty());
        assert_eq!(events, after_a_loss);
    }
}
