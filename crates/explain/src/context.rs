//! What happened around the measured threads in one window, from `/proc` (no root needed).
//!
//! Sources (proc(5), The Linux man-pages project, <https://man7.org/linux/man-pages/man5/proc.5.html>
//! and `proc_pid_stat.5`, `proc_stat.5`, `proc_interrupts.5`, `proc_softirqs.5`; and
//! `Documentation/filesystems/proc.rst`):
//! * `/proc/stat` per-CPU `steal`, `irq`, `softirq` (8th, 6th, 7th numbers), in USER_HZ ticks
//!   (10 ms) — too coarse to explain one wake-up, enough to see a bad second;
//! * `/proc/interrupts` and `/proc/softirqs`: counts per source and CPU;
//! * `/proc/self/task/TID/status`: `voluntary_ctxt_switches`, `nonvoluntary_ctxt_switches`;
//! * `/proc/self/task/TID/sched`: `se.nr_migrations` (present with `CONFIG_SCHED_DEBUG`);
//! * `/proc/self/task/TID/stat`: `processor` (39th field), `rt_priority` (40th), `policy`
//!   (41st), `nice` (19th) — read back every window, so a `chrt -p` from another shell
//!   shows in the window where it happened.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counters of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskCounters {
    /// Voluntary context switches since the thread started.
    pub voluntary: u64,
    /// Involuntary context switches (preemptions).
    pub involuntary: u64,
    /// Migrations between CPUs, if the kernel reports them.
    pub migrations: Option<u64>,
    /// CPU it last ran on.
    pub cpu: Option<u32>,
    /// Policy name: `other`, `fifo`, `rr`, `batch`, `idle`, `deadline`.
    pub policy: String,
    /// RT priority (1–99) for fifo/rr, else 0.
    pub rt_priority: u32,
    /// Nice value.
    pub nice: i32,
}

/// One reading of the machine-wide counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Per CPU: (steal, irq, softirq) ticks.
    pub stat: BTreeMap<u32, [u64; 3]>,
    /// Per interrupt source: per-CPU counts.
    pub interrupts: BTreeMap<String, Vec<u64>>,
    /// Per softirq vector: per-CPU counts.
    pub softirqs: BTreeMap<String, Vec<u64>>,
}

/// One CPU's counters over a window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuDelta {
    /// CPU number.
    pub cpu: u32,
    /// Steal ticks (USER_HZ, 10 ms each).
    pub steal_ticks: u64,
    /// IRQ ticks.
    pub irq_ticks: u64,
    /// Softirq ticks.
    pub softirq_ticks: u64,
    /// Interrupts per source that moved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub interrupts: BTreeMap<String, u64>,
    /// Softirqs per vector that moved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub softirqs: BTreeMap<String, u64>,
}

/// One thread over a window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskDelta {
    /// Thread index.
    pub thread: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// Involuntary context switches in the window.
    pub involuntary: u64,
    /// Voluntary context switches in the window.
    pub voluntary: u64,
    /// Migrations in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<u64>,
    /// CPU it last ran on.
    pub cpu: Option<u32>,
    /// Policy read back at the end of the window.
    pub policy: String,
    /// RT priority read back.
    pub rt_priority: u32,
    /// Nice value read back.
    pub nice: i32,
}

/// The context of one window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowContext {
    /// Window index (as in the statistics).
    pub index: u64,
    /// Per measured CPU.
    pub cpus: Vec<CpuDelta>,
    /// Per measuring thread.
    pub threads: Vec<TaskDelta>,
}

fn numbers(s: &str) -> Vec<u64> {
    s.split_whitespace().map_while(|w| w.parse().ok()).collect()
}

/// Parses `/proc/stat`'s per-CPU lines into (steal, irq, softirq).
pub fn parse_stat(text: &str) -> BTreeMap<u32, [u64; 3]> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(' ')?;
            let cpu: u32 = name.strip_prefix("cpu")?.parse().ok()?;
            let n = numbers(rest);
            Some((cpu, [*n.get(7)?, *n.get(5)?, *n.get(6)?]))
        })
        .collect()
}

/// Parses `/proc/interrupts` or `/proc/softirqs`: a header of CPU names, then one row per
/// source, `LABEL: count… [description]`. Numbered IRQs are named `N:description`.
pub fn parse_per_cpu_table(text: &str) -> BTreeMap<String, Vec<u64>> {
    let mut lines = text.lines();
    let cpus = lines
        .next()
        .map(|h| h.split_whitespace().count())
        .unwrap_or(0);
    lines
        .filter_map(|l| {
            let (label, rest) = l.split_once(':')?;
            let label = label.trim();
            let counts: Vec<u64> = numbers(rest).into_iter().take(cpus).collect();
            if counts.is_empty() {
                return None;
            }
            let name = if label.bytes().all(|b| b.is_ascii_digit()) {
                let words: Vec<&str> = rest.split_whitespace().skip(counts.len()).collect();
                format!("{label}:{}", words.last().copied().unwrap_or(""))
            } else {
                label.to_string()
            };
            Some((name, counts))
        })
        .collect()
}

/// Parses a thread's `status`, `sched` and `stat` texts.
pub fn parse_task(status: &str, sched: Option<&str>, stat: &str) -> TaskCounters {
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
            .unwrap_or(0)
    };
    let migrations = sched.and_then(|s| {
        s.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "se.nr_migrations").then(|| v.trim().parse().ok())?
        })
    });
    // Fields after the parenthesised command name (which may hold spaces and ')').
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // f[0] is field 3 (state): field n is f[n - 3].
    let get = |n: usize| f.get(n - 3).and_then(|v| v.parse::<i64>().ok());
    let policy = match get(41) {
        Some(0) => "other",
        Some(1) => "fifo",
        Some(2) => "rr",
        Some(3) => "batch",
        Some(5) => "idle",
        Some(6) => "deadline",
        _ => "unknown",
    };
    TaskCounters {
        voluntary: field("voluntary_ctxt_switches:"),
        involuntary: field("nonvoluntary_ctxt_switches:"),
        migrations,
        cpu: get(39).and_then(|c| u32::try_from(c).ok()),
        policy: policy.into(),
        rt_priority: get(40).and_then(|c| u32::try_from(c).ok()).unwrap_or(0),
        nice: get(19).and_then(|c| i32::try_from(c).ok()).unwrap_or(0),
    }
}

/// Reads the machine-wide counters (missing files give empty tables).
pub fn read_snapshot() -> Snapshot {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    Snapshot {
        stat: parse_stat(&read("/proc/stat")),
        interrupts: parse_per_cpu_table(&read("/proc/interrupts")),
        softirqs: parse_per_cpu_table(&read("/proc/softirqs")),
    }
}

/// Reads one thread of this process; `None` once it has exited.
pub fn read_task(tid: i32) -> Option<TaskCounters> {
    let base = format!("/proc/self/task/{tid}");
    let status = std::fs::read_to_string(format!("{base}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("{base}/stat")).ok()?;
    let sched = std::fs::read_to_string(format!("{base}/sched")).ok();
    Some(parse_task(&status, sched.as_deref(), &stat))
}

/// The deltas of `cpus` between two snapshots (column k of a table is CPU k, as the kernel
/// prints online CPUs in order; this assumes no CPU went offline in between).
pub fn cpu_deltas(before: &Snapshot, after: &Snapshot, cpus: &[u32]) -> Vec<CpuDelta> {
    let moved = |b: &BTreeMap<String, Vec<u64>>, a: &BTreeMap<String, Vec<u64>>, cpu: u32| {
        a.iter()
            .filter_map(|(name, counts)| {
                let now = *counts.get(cpu as usize)?;
                let then = b
                    .get(name)
                    .and_then(|c| c.get(cpu as usize))
                    .copied()
                    .unwrap_or(now);
                let d = now.saturating_sub(then);
                (d > 0).then(|| (name.clone(), d))
            })
            .collect()
    };
    cpus.iter()
        .map(|&cpu| {
            let s0 = before.stat.get(&cpu).copied().unwrap_or_default();
            let s1 = after.stat.get(&cpu).copied().unwrap_or(s0);
            CpuDelta {
                cpu,
                steal_ticks: s1[0].saturating_sub(s0[0]),
                irq_ticks: s1[1].saturating_sub(s0[1]),
                softirq_ticks: s1[2].saturating_sub(s0[2]),
                interrupts: moved(&before.interrupts, &after.interrupts, cpu),
                softirqs: moved(&before.softirqs, &after.softirqs, cpu),
            }
        })
        .collect()
}

/// One thread's delta between two readings.
pub fn task_delta(
    thread: usize,
    tid: i32,
    before: &TaskCounters,
    after: &TaskCounters,
) -> TaskDelta {
    TaskDelta {
        thread,
        tid,
        involuntary: after.involuntary.saturating_sub(before.involuntary),
        voluntary: after.voluntary.saturating_sub(before.voluntary),
        migrations: after
            .migrations
            .zip(before.migrations)
            .map(|(a, b)| a.saturating_sub(b)),
        cpu: after.cpu,
        policy: after.policy.clone(),
        rt_priority: after.rt_priority,
        nice: after.nice,
    }
}

impl WindowContext {
    /// A compact description of what moved: steal, preemptions, migrations, the busiest
    /// interrupt and softirq sources (an abbreviated one with what it counts,
    /// [`interrupt_meaning`]), the policy if it is not `expected` — for the per-second line
    /// and the summary ("steal 3 ticks · T0 preempted 2× · CAL 40 function-call IPIs · NET_RX
    /// 12 network-receive softirqs").
    pub fn compact(&self, expected_policy: Option<&str>) -> String {
        let mut parts = Vec::new();
        let steal: u64 = self.cpus.iter().map(|c| c.steal_ticks).sum();
        if steal > 0 {
            parts.push(format!("steal {steal} ticks"));
        }
        for t in &self.threads {
            if t.involuntary > 0 {
                parts.push(format!("T{} preempted {}×", t.thread, t.involuntary));
            }
            if t.migrations.unwrap_or(0) > 0 {
                parts.push(format!(
                    "T{} migrated {}×",
                    t.thread,
                    t.migrations.unwrap_or(0)
                ));
            }
            let now = policy_text(&t.policy, t.rt_priority, t.nice);
            if expected_policy.is_some_and(|e| e != now) {
                parts.push(format!("T{} policy {now}", t.thread));
            }
        }
        let top = |m: &BTreeMap<String, u64>, skip: &[&str]| {
            m.iter()
                .filter(|(k, _)| !skip.contains(&k.as_str()))
                .max_by_key(|(_, v)| **v)
                .map(|(k, v)| match interrupt_meaning(k) {
                    Some(what) => format!("{k} {v} {what}"),
                    None => format!("{k} {v}"),
                })
        };
        for c in &self.cpus {
            parts.extend(top(&c.interrupts, &["LOC"]));
            parts.extend(top(&c.softirqs, &["TIMER", "SCHED", "RCU"]));
        }
        parts.join(" · ")
    }
}

/// What an abbreviated row of `/proc/interrupts` counts (`CAL` → `function-call IPIs`), or
/// a softirq vector of `/proc/softirqs` (`BLOCK` → `block-I/O softirqs`); `None` for a
/// numbered device interrupt, whose row already names its device.
///
/// Source: the rows `arch_show_interrupts()` prints in the kernel's
/// `arch/x86/kernel/irq.c` (x86) and `ipi_types` in `arch/arm64/kernel/smp.c` (arm64), and
/// `softirq_to_name` in `kernel/softirq.c`; see also `proc_interrupts(5)`,
/// `proc_softirqs(5)` and the kernel's `Documentation/filesystems/proc.rst`.
pub fn interrupt_meaning(name: &str) -> Option<&'static str> {
    Some(match name {
        "NMI" => "non-maskable interrupts",
        "LOC" => "local timer interrupts",
        "SPU" => "spurious interrupts",
        "PMI" => "performance-monitoring interrupts",
        "IWI" => "IRQ-work interrupts",
        "RTR" => "APIC ICR read retries",
        "RES" | "IPI0" => "rescheduling IPIs",
        "CAL" | "IPI1" => "function-call IPIs",
        "TLB" => "TLB shootdowns",
        "TRM" => "thermal-event interrupts",
        "THR" => "threshold APIC interrupts",
        "DFR" => "deferred-error APIC interrupts",
        "MCE" => "machine-check exceptions",
        "MCP" => "machine-check polls",
        "ERR" => "erroneous interrupts",
        "MIS" => "mis-routed IO-APIC interrupts",
        "PIN" => "posted-interrupt notifications",
        "NPI" => "nested posted-interrupt events",
        "PIW" => "posted-interrupt wake-ups",
        "HYP" => "hypervisor callback interrupts",
        "HRE" => "Hyper-V re-enlightenment interrupts",
        "HVS" => "Hyper-V stimer0 interrupts",
        "IPI2" => "CPU-stop IPIs",
        "IPI3" => "crash-stop IPIs",
        "IPI4" => "timer-broadcast IPIs",
        "IPI5" => "IRQ-work IPIs",
        "HI" => "high-priority tasklet softirqs",
        "TIMER" => "timer-wheel softirqs",
        "NET_TX" => "network-transmit softirqs",
        "NET_RX" => "network-receive softirqs",
        "BLOCK" => "block-I/O softirqs",
        "IRQ_POLL" => "IRQ-poll softirqs",
        "TASKLET" => "tasklet softirqs",
        "SCHED" => "scheduler (load-balancing) softirqs",
        "HRTIMER" => "high-resolution timer softirqs",
        "RCU" => "RCU callback softirqs",
        _ => return None,
    })
}

/// `fifo:90`, `other`, `other nice 5`.
pub fn policy_text(policy: &str, rt_priority: u32, nice: i32) -> String {
    match policy {
        "fifo" | "rr" => format!("{policy}:{rt_priority}"),
        p if nice != 0 => format!("{p} nice {nice}"),
        p => p.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_this_machines_files() {
        let stat = "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 10 0 20 30 0 1 2 3 0 0\ncpu1 10 0 20 30 0 4 5 1572 0 0\nintr 5";
        let s = parse_stat(stat);
        assert_eq!(s[&1], [1572, 4, 5]);
        assert_eq!(s[&0], [3, 1, 2]);
        let ints = "           CPU0       CPU1       \n  1:          9          0   IO-APIC   1-edge      i8042\n 36:        100        200   PCI-MSIX-0000:00:05.0   1-edge      virtio1-req.0\nLOC:     160567     141798   Local timer interrupts\nERR:          0\n";
        let t = parse_per_cpu_table(ints);
        assert_eq!(t["36:virtio1-req.0"], vec![100, 200]);
        assert_eq!(t["LOC"], vec![160567, 141798]);
        assert_eq!(t["ERR"], vec![0]);
        let soft = "                    CPU0       CPU1       \n          HI:          0          0\n       TIMER:     160567     141798\n";
        assert_eq!(parse_per_cpu_table(soft)["TIMER"], vec![160567, 141798]);
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        let sched = "tickscope-0 (77, #threads: 3)\nse.nr_migrations                             :                   23\n";
        let mut fields = vec!["0"; 50];
        fields[19 - 3] = "-5";
        fields[39 - 3] = "1";
        fields[40 - 3] = "90";
        fields[41 - 3] = "1";
        let stat = format!("77 (tick scope) x) {}", fields.join(" "));
        let t = parse_task(status, Some(sched), &stat);
        assert_eq!(
            (t.voluntary, t.involuntary, t.migrations),
            (12, 3, Some(23))
        );
        assert_eq!(
            (t.cpu, t.policy.as_str(), t.rt_priority, t.nice),
            (Some(1), "fifo", 90, -5)
        );
    }

    #[test]
    fn deltas_name_what_moved() {
        let mut a = Snapshot::default();
        a.stat.insert(1, [10, 0, 0]);
        a.interrupts.insert("LOC".into(), vec![5, 100]);
        a.softirqs.insert("NET_RX".into(), vec![0, 1]);
        let mut b = a.clone();
        b.stat.insert(1, [13, 1, 0]);
        b.interrupts.insert("LOC".into(), vec![5, 350]);
        b.softirqs.insert("NET_RX".into(), vec![0, 41]);
        let d = cpu_deltas(&a, &b, &[1]);
        assert_eq!(d[0].steal_ticks, 3);
        assert_eq!(d[0].interrupts["LOC"], 250);
        let w = WindowContext {
            index: 4,
            cpus: d,
            threads: vec![TaskDelta {
                policy: "fifo".into(),
                rt_priority: 1,
                involuntary: 2,
                ..Default::default()
            }],
        };
        assert_eq!(
            w.compact(Some("fifo:90")),
            "steal 3 ticks · T0 preempted 2× · T0 policy fifo:1 · NET_RX 40 network-receive \
             softirqs"
        );
    }

    #[test]
    fn abbreviated_interrupts_say_what_they_count() {
        assert_eq!(interrupt_meaning("CAL"), Some("function-call IPIs"));
        assert_eq!(interrupt_meaning("TLB"), Some("TLB shootdowns"));
        assert_eq!(interrupt_meaning("RES"), Some("rescheduling IPIs"));
        assert_eq!(interrupt_meaning("LOC"), Some("local timer interrupts"));
        assert_eq!(
            interrupt_meaning("36"),
            None,
            "a device's row names the device"
        );
        let mut a = Snapshot::default();
        a.interrupts.insert("CAL".into(), vec![0, 10]);
        a.interrupts.insert("36".into(), vec![0, 0]);
        let mut b = a.clone();
        b.interrupts.insert("CAL".into(), vec![0, 50]);
        let w = WindowContext {
            index: 0,
            cpus: cpu_deltas(&a, &b, &[1]),
            threads: Vec::new(),
        };
        assert_eq!(w.compact(None), "CAL 40 function-call IPIs");
    }

    #[test]
    fn reads_this_thread() {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
        let t = read_task(tid).expect("own thread readable");
        assert!(t.cpu.is_some());
        assert_ne!(t.policy, "unknown");
        assert!(!read_snapshot().stat.is_empty());
    }
}
