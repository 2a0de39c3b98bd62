//! The trace events `--explain` reads, decoded from the text of a tracefs `trace_pipe`.
//!
//! Line format (ftrace's default output, `kernel/trace/trace_output.c`,
//! `trace_print_context()`; The Linux kernel, <https://docs.kernel.org/trace/ftrace.html>
//! "The File System"): `COMM-PID [CPU] FLAGS SECS.USECS: EVENT: PAYLOAD`, where COMM may itself
//! contain `-` and spaces (the PID is after the last `-` before the `[CPU]` column). With
//! `trace_clock=mono` the timestamp is CLOCK_MONOTONIC printed at **µs resolution**; the
//! payload fields `expires` and `now` of the hrtimer events are exact **ns**. A ring-buffer
//! overrun shows as `CPU:N [LOST K EVENTS]`.
//!
//! Payload formats are those of the kernel's `TP_printk` in `include/trace/events/timer.h`,
//! `sched.h`, `irq.h`, `power.h`, `syscalls.h` and `arch/x86/include/asm/trace/irq_vectors.h`
//! (as printed by 6.18 on this machine).

use crate::name::Interner;
pub use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Nanoseconds on CLOCK_MONOTONIC (the engine's clock, and tracefs' `mono` clock).
pub type Nanos = i64;

/// One decoded event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// When it was recorded, ns on CLOCK_MONOTONIC (µs resolution from the text output).
    pub ts: Nanos,
    /// CPU it was recorded on.
    pub cpu: u32,
    /// The task current when it was recorded (0 = idle).
    pub pid: i32,
    /// That task's command name.
    pub comm: Name,
    /// What happened.
    pub kind: Kind,
}

/// What an event says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Kind {
    /// `timer:hrtimer_start`: a timer armed to fire at `expires`.
    HrtimerStart {
        /// The timer's address (hashed by the kernel in text output, but consistently).
        timer: u64,
        /// The callback (`hrtimer_wakeup`, `timerfd_tmrproc`, …).
        function: Name,
        /// Hard expiry, ns.
        expires: Nanos,
        /// Soft expiry, ns: the timer may fire from here to `expires` (timer slack); absent
        /// in recordings made before it was read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        softexpires: Option<Nanos>,
    },
    /// `timer:hrtimer_expire_entry`: the callback starts; `now` is the timer base's time, ns.
    HrtimerExpireEntry {
        /// The timer's address.
        timer: u64,
        /// The callback.
        function: Name,
        /// The base clock when the callback ran, ns.
        now: Nanos,
        /// What the interrupt that runs the callback interrupted: `Some(true)` a task in user
        /// mode, `Some(false)` a task in the kernel, `None` the idle task or not recorded
        /// (the BPF path reads it from the task's saved registers, `orig_ax` = -1 for a
        /// system vector taken in user mode, arch/x86/entry/entry_64.S; the text path has
        /// no such field).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<bool>,
    },
    /// `timer:hrtimer_expire_exit`: the callback returned.
    HrtimerExpireExit {
        /// The timer's address.
        timer: u64,
    },
    /// `irq_vectors:*_entry` (x86): an interrupt vector's handler starts; `local_timer` is the
    /// LAPIC timer.
    VectorEntry {
        /// The vector event's name without `_entry` (`local_timer`, `reschedule`, …).
        name: Name,
    },
    /// `irq_vectors:*_exit`.
    VectorExit {
        /// As in [`Kind::VectorEntry`].
        name: Name,
    },
    /// `irq:irq_handler_entry`.
    IrqEntry {
        /// IRQ number.
        irq: u32,
        /// Handler's name.
        name: Name,
    },
    /// `irq:irq_handler_exit`.
    IrqExit {
        /// IRQ number.
        irq: u32,
    },
    /// `irq:softirq_entry`.
    SoftirqEntry {
        /// Vector name (`TIMER`, `NET_RX`, `SCHED`, `RCU`, …).
        action: Name,
    },
    /// `irq:softirq_exit`.
    SoftirqExit {
        /// Vector name.
        action: Name,
    },
    /// `sched:sched_switch`.
    SchedSwitch {
        /// Task leaving the CPU.
        prev_pid: i32,
        /// Its command name.
        prev_comm: Name,
        /// Its state letter (`R` = still runnable, i.e. preempted).
        prev_state: Name,
        /// Its kernel priority (0–99 RT, lower is higher; 100–139 normal); `None` in
        /// recordings made before it was read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prev_prio: Option<i32>,
        /// Task entering.
        next_pid: i32,
        /// Its command name.
        next_comm: Name,
        /// Its kernel priority (0–99 RT, lower is higher; 100–139 normal).
        next_prio: i32,
    },
    /// `sched:sched_waking` / `sched_wakeup`.
    SchedWaking {
        /// Task woken.
        pid: i32,
        /// Its command name.
        comm: Name,
    },
    /// `power:cpu_idle`: `state` is the idle state entered, `None` when leaving idle.
    CpuIdle {
        /// Idle state index, or `None` for the exit (printed as 4294967295).
        state: Option<u32>,
    },
    /// `timer:hrtimer_cancel`: a timer taken off its queue before it fired (a wait that
    /// ended early: an event, a signal).
    HrtimerCancel {
        /// The timer's address.
        timer: u64,
    },
    /// `raw_syscalls:sys_enter`: a system call starts; `args` are its six register
    /// arguments as printed (hexadecimal in the text output).
    SysEnter {
        /// System call number.
        nr: i64,
        /// The raw arguments.
        args: [u64; 6],
    },
    /// `exceptions:page_fault_user` / `page_fault_kernel` (x86): the current task took a page
    /// fault at `address`, in user mode or in the kernel (`arch/x86/mm/fault.c`,
    /// `trace_page_fault_entries()`); the event marks the fault's start (there is no end event:
    /// a major fault that waits for its page shows as a switch-out in state `D`).
    PageFault {
        /// The faulting address.
        address: u64,
        /// A fault taken in user mode (`page_fault_user`) rather than in the kernel.
        user: bool,
    },
    /// `sched:sched_process_exit`: task `pid` exits.
    TaskExit {
        /// The exiting task (thread) id.
        pid: i32,
    },
    /// `raw_syscalls:sys_exit`: a system call returns to user space.
    SysExit {
        /// System call number.
        nr: i64,
    },
    /// Steal time (BPF backend only): at a watched thread's return from its wait, the
    /// paravirt steal time its CPU's run queue accounted since the thread armed the wait's
    /// timer, or since its previous wake-up when another thread arms it (`prev_steal_time_rq`,
    /// advanced by update_rq_clock_task(), kernel/sched/core.c; on KVM from the host's
    /// MSR_KVM_STEAL_TIME record, Documentation/virt/kvm/x86/msr.rst). Comes right after that
    /// `sys_exit`. Time the vCPU wanted to run and the host ran something else. The text path
    /// never has it: there steal is not available (never read as 0).
    Steal {
        /// Steal time, ns (≥ 0).
        ns: Nanos,
    },
    /// A `trace_marker` line.
    Marker {
        /// The text written.
        text: Name,
    },
    /// Events the ring buffer dropped on this CPU before this point (BPF backend: records
    /// overwritten in the kernel's per-CPU ring before a window carried them).
    Lost {
        /// How many.
        count: u64,
        /// Time of the CPU's last event before the loss, ns: the lost events lie between it
        /// and this marker's own time (the next event after the loss). Set by
        /// [`crate::window::EventWindow`]; absent when not known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<Nanos>,
    },
    /// An event `--explain` does not use.
    Other {
        /// Its name.
        name: Name,
    },
}

/// Decodes lines of `trace_pipe` into [`Event`]s, their names taken from a bounded
/// [`Interner`]: once a window's task, callback and handler names have been seen, decoding a
/// line allocates nothing.
#[derive(Debug, Default)]
pub struct LineParser {
    names: Interner,
}

impl LineParser {
    /// A parser with an empty name table of [`crate::name::NAMES_KEPT`] names.
    pub fn new() -> Self {
        LineParser::default()
    }

    /// The table of names seen (bounded: for a long run's checks).
    pub fn names(&self) -> &Interner {
        &self.names
    }

    /// Decodes one line; `None` for comments, blank lines and lines that do not have the
    /// default layout.
    pub fn parse(&mut self, line: &str) -> Option<Event> {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        if let Some(rest) = line.trim_start().strip_prefix("CPU:") {
            // "CPU:1 [LOST 123 EVENTS]"
            let (cpu, rest) = rest.split_once(' ')?;
            let count = rest
                .strip_prefix("[LOST ")?
                .split_once(' ')?
                .0
                .parse()
                .ok()?;
            return Some(Event {
                ts: 0,
                cpu: cpu.parse().ok()?,
                pid: -1,
                comm: Name::default(),
                kind: Kind::Lost { count, since: None },
            });
        }
        let open = find_cpu_column(line)?;
        let task = line[..open].trim();
        let (comm, pid) = task.rsplit_once('-')?;
        let pid: i32 = pid.parse().ok()?;
        let close = open + line[open..].find(']')?;
        let cpu: u32 = line[open + 1..close].trim().parse().ok()?;
        let mut rest = line[close + 1..].trim_start();
        // Optional flags column ("d.h1."), then "SECS.USECS:".
        let (first, after) = rest.split_once(' ')?;
        if !first.ends_with(':') {
            rest = after.trim_start();
        }
        let (ts_text, after) = rest.split_once(": ")?;
        let ts = parse_timestamp(ts_text.trim())?;
        let (name, payload) = match after.split_once(": ") {
            Some((n, p)) => (n.trim(), p),
            None => (after.trim().trim_end_matches(':'), ""),
        };
        let kind = decode(name, payload, &mut self.names)?;
        Some(Event {
            ts,
            cpu,
            pid,
            comm: if pid == 0 {
                IDLE
            } else {
                self.names.intern(comm)
            },
            kind,
        })
    }
}

/// The idle task's name as the text output prints it.
const IDLE: Name = Name::from_static("<idle>");

/// The kernel priority (0–99 RT, lower is higher; 100–139 fair; −1 deadline) of every task a
/// `sched_switch` in `events` moved, as the latest switch that reports it gives it (a task's
/// priority changes only by `sched_setscheduler(2)` or priority inheritance). One pass.
pub(crate) fn priorities<'a>(events: impl IntoIterator<Item = &'a Event>) -> HashMap<i32, i32> {
    let mut out = HashMap::new();
    for e in events {
        if let Kind::SchedSwitch {
            prev_pid,
            prev_prio,
            next_pid,
            next_prio,
            ..
        } = e.kind
        {
            if let Some(p) = prev_prio {
                out.insert(prev_pid, p);
            }
            out.insert(next_pid, next_prio);
        }
    }
    out
}

/// Decodes one line of `trace_pipe`; `None` for comments, blank lines and lines that do not
/// have the default layout. Each call starts a new name table (for tests and one-off
/// lines; a stream is read with one [`LineParser`]).
pub fn parse_line(line: &str) -> Option<Event> {
    LineParser::new().parse(line)
}

/// Position of the `[NNN]` CPU column: the first `[` followed by digits and `]` after the
/// task column.
fn find_cpu_column(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(off) = line[i..].find('[') {
        let at = i + off;
        let mut j = at + 1;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        if j > at + 1 && j < bytes.len() && bytes[j] == b']' && at > 0 {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// `SECS.USECS` → ns.
fn parse_timestamp(text: &str) -> Option<Nanos> {
    let (secs, frac) = text.split_once('.')?;
    let secs: i64 = secs.parse().ok()?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10i64.pow(9 - frac.len() as u32);
    Some(secs.checked_mul(1_000_000_000)? + frac.parse::<i64>().ok()? * scale)
}

/// The value of `key=` in a `key=value key2=value2` payload.
fn field<'a>(payload: &'a str, key: &str) -> Option<&'a str> {
    payload.split_whitespace().find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then_some(v)
    })
}

fn num<T: std::str::FromStr>(payload: &str, key: &str) -> Option<T> {
    field(payload, key)?.parse().ok()
}

fn hex(payload: &str, key: &str) -> Option<u64> {
    let v = field(payload, key)?;
    u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()
}

/// The value of `key=` in a sched_switch payload, where command names may hold spaces: the
/// text up to the next ` word=`.
fn spaced_field<'a>(payload: &'a str, key: &str, next: &str) -> Option<&'a str> {
    let start = find_key(payload, "", key)? + key.len() + 1;
    let rest = &payload[start..];
    let end = find_key(rest, " ", next).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Byte position of the first `{lead}{key}=` in `text` (as `text.find(&format!(…))`, without
/// building the pattern: keys are short ASCII constants; one longer than 30 bytes is not
/// found).
fn find_key(text: &str, lead: &str, key: &str) -> Option<usize> {
    let mut pat = [0u8; 32];
    let n = lead.len() + key.len() + 1;
    if n > pat.len() {
        return None;
    }
    pat[..lead.len()].copy_from_slice(lead.as_bytes());
    pat[lead.len()..n - 1].copy_from_slice(key.as_bytes());
    pat[n - 1] = b'=';
    text.as_bytes().windows(n).position(|w| w == &pat[..n])
}

/// Softirq payload `vec=9 [action=RCU]` → `RCU`.
fn softirq_action(payload: &str, names: &mut Interner) -> Name {
    names.intern(
        payload
            .split_once("action=")
            .map(|(_, a)| a.trim_end_matches(']'))
            .unwrap_or(payload),
    )
}

/// `NR 230 (1, 1, 7ffd…, 0, 0, 0)` → the six arguments (hexadecimal without `0x`).
fn syscall_args(payload: &str) -> Option<[u64; 6]> {
    let inner = payload.split_once('(')?.1.split_once(')')?.0;
    let mut args = [0u64; 6];
    let mut n = 0;
    for (slot, text) in args.iter_mut().zip(inner.split(',')) {
        *slot = u64::from_str_radix(text.trim(), 16).ok()?;
        n += 1;
    }
    (n == 6).then_some(args)
}

fn decode(name: &str, p: &str, names: &mut Interner) -> Option<Kind> {
    Some(match name {
        "hrtimer_start" => Kind::HrtimerStart {
            timer: hex(p, "hrtimer")?,
            function: names.intern(field(p, "function")?),
            expires: num(p, "expires")?,
            softexpires: num(p, "softexpires"),
        },
        "hrtimer_expire_entry" => Kind::HrtimerExpireEntry {
            timer: hex(p, "hrtimer")?,
            function: names.intern(field(p, "function")?),
            now: num(p, "now")?,
            user: None,
        },
        "hrtimer_expire_exit" => Kind::HrtimerExpireExit {
            timer: hex(p, "hrtimer")?,
        },
        "hrtimer_cancel" => Kind::HrtimerCancel {
            timer: hex(p, "hrtimer")?,
        },
        "sys_enter" => Kind::SysEnter {
            nr: p
                .strip_prefix("NR ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?,
            args: syscall_args(p)?,
        },
        "sched_process_exit" => Kind::TaskExit {
            pid: spaced_field(p, "pid", "prio")?.parse().ok()?,
        },
        "irq_handler_entry" => Kind::IrqEntry {
            irq: num(p, "irq")?,
            name: names.intern(field(p, "name").unwrap_or("")),
        },
        "irq_handler_exit" => Kind::IrqExit {
            irq: num(p, "irq")?,
        },
        "softirq_entry" => Kind::SoftirqEntry {
            action: softirq_action(p, names),
        },
        "softirq_exit" => Kind::SoftirqExit {
            action: softirq_action(p, names),
        },
        "sched_switch" => Kind::SchedSwitch {
            prev_comm: names.intern(spaced_field(p, "prev_comm", "prev_pid")?),
            prev_pid: spaced_field(p, "prev_pid", "prev_prio")?.parse().ok()?,
            prev_prio: spaced_field(p, "prev_prio", "prev_state")?
                .trim()
                .parse()
                .ok(),
            prev_state: names.intern(p.split_once("prev_state=")?.1.split(" ==>").next()?.trim()),
            next_comm: names.intern(spaced_field(p, "next_comm", "next_pid")?),
            next_pid: spaced_field(p, "next_pid", "next_prio")?.parse().ok()?,
            next_prio: spaced_field(p, "next_prio", "")?.trim().parse().ok()?,
        },
        "sched_waking" | "sched_wakeup" => Kind::SchedWaking {
            comm: names.intern(spaced_field(p, "comm", "pid")?),
            pid: spaced_field(p, "pid", "prio")?.parse().ok()?,
        },
        "cpu_idle" => Kind::CpuIdle {
            state: num::<u64>(p, "state")
                .map(|s| u32::try_from(s).ok().filter(|&s| s != u32::MAX))?,
        },
        "sys_exit" => Kind::SysExit {
            nr: p
                .strip_prefix("NR ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?,
        },
        "page_fault_user" | "page_fault_kernel" => Kind::PageFault {
            address: hex(p, "address")?,
            user: name == "page_fault_user",
        },
        // Marker texts are free text (often unique): not kept in the table.
        "tracing_mark_write" => Kind::Marker { text: p.into() },
        n if n.ends_with("_entry") && field(p, "vector").is_some() => Kind::VectorEntry {
            name: names.intern(n.trim_end_matches("_entry")),
        },
        n if n.ends_with("_exit") && field(p, "vector").is_some() => Kind::VectorExit {
            name: names.intern(n.trim_end_matches("_exit")),
        },
        n => Kind::Other {
            name: names.intern(n),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_event_kind_recorded_here() {
        let e = parse_line(" memfd:sealed-91-8954    [000] d..1.  6170.563860: hrtimer_start: hrtimer=0000000011383357 function=hrtimer_wakeup expires=6170613905961 softexpires=6170613855961 mode=ABS was_armed=0").unwrap();
        assert_eq!(
            (e.pid, e.cpu, e.comm.as_str()),
            (8954, 0, "memfd:sealed-91")
        );
        assert_eq!(e.ts, 6_170_563_860_000);
        assert_eq!(
            e.kind,
            Kind::HrtimerStart {
                timer: 0x11383357,
                function: "hrtimer_wakeup".into(),
                expires: 6170613905961,
                softexpires: Some(6170613855961),
            }
        );
        let e = parse_line("        rust-lld-3484    [000] d.h..  6170.564020: hrtimer_expire_entry: hrtimer=00000000cc854098 function=tick_nohz_handler now=6170564018732").unwrap();
        assert!(matches!(
            e.kind,
            Kind::HrtimerExpireEntry {
                now: 6170564018732,
                ..
            }
        ));
        let e = parse_line("        rust-lld-3483    [000] d..2.  6170.563817: sched_switch: prev_comm=rust lld prev_pid=3483 prev_prio=120 prev_state=R+ ==> next_comm=memfd:sealed-91 next_pid=8954 next_prio=120").unwrap();
        assert_eq!(
            e.kind,
            Kind::SchedSwitch {
                prev_pid: 3483,
                prev_comm: "rust lld".into(),
                prev_state: "R+".into(),
                prev_prio: Some(120),
                next_pid: 8954,
                next_comm: "memfd:sealed-91".into(),
                next_prio: 120
            }
        );
        let e = parse_line(
            "            bash-3512    [001] .Ns1.  6170.568046: softirq_entry: vec=9 [action=RCU]",
        )
        .unwrap();
        assert_eq!(
            e.kind,
            Kind::SoftirqEntry {
                action: "RCU".into()
            }
        );
        let e = parse_line(
            "            bash-3512    [001] d.h1.  6170.568026: local_timer_entry: vector=236",
        )
        .unwrap();
        assert_eq!(
            e.kind,
            Kind::VectorEntry {
                name: "local_timer".into()
            }
        );
        let e = parse_line("          <idle>-0       [000] d..1.  6170.739591: cpu_idle: state=4294967295 cpu_id=0").unwrap();
        assert_eq!((e.pid, e.kind), (0, Kind::CpuIdle { state: None }));
        let e = parse_line(
            "          <idle>-0       [000] d..1.  6170.739212: cpu_idle: state=1 cpu_id=0",
        )
        .unwrap();
        assert_eq!(e.kind, Kind::CpuIdle { state: Some(1) });
        let e =
            parse_line("            bash-3512    [001] .....  6170.567917: sys_exit: NR 230 = 0")
                .unwrap();
        assert_eq!(e.kind, Kind::SysExit { nr: 230 });
        // Recorded on this machine (`exceptions:page_fault_user`, Linux 6.18).
        let e = parse_line("     tickscope-0-12099   [001] d.... 32177.431069: page_fault_user: address=0x55b0476c1e68 ip=0x55b0488414de error_code=0x4").unwrap();
        assert_eq!(
            (e.pid, e.kind),
            (
                12099,
                Kind::PageFault {
                    address: 0x55b0476c1e68,
                    user: true
                }
            )
        );
        let e = parse_line("         timeout-3519    [001] d.h..  6170.569777: irq_handler_entry: irq=36 name=virtio1-req.0").unwrap();
        assert_eq!(
            e.kind,
            Kind::IrqEntry {
                irq: 36,
                name: "virtio1-req.0".into()
            }
        );
        let e = parse_line("CPU:1 [LOST 42 EVENTS]").unwrap();
        assert_eq!(
            (e.cpu, e.kind),
            (
                1,
                Kind::Lost {
                    count: 42,
                    since: None
                }
            )
        );
    }

    #[test]
    fn ignores_comments_and_garbage() {
        assert!(parse_line("# tracer: nop").is_none());
        assert!(parse_line("").is_none());
        assert!(parse_line("no layout here").is_none());
        assert!(parse_line("x-1 [000] d.... 12.3: hrtimer_start: hrtimer=zz").is_none());
    }
}
