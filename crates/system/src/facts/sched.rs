//! The scheduler: RT throttling, timer migration, kernel threads bound to CPUs, and agents
//! known to disturb a measurement.
//!
//! Sources: `/proc/sys/kernel/sched_rt_runtime_us` and `sched_rt_period_us`, the cgroup v1
//! `cpu.rt_runtime_us` of this process's cgroup (Documentation/scheduler/sched-rt-group.rst);
//! `/proc/sys/kernel/timer_migration` (Documentation/admin-guide/sysctl/kernel.rst);
//! `/proc/PID/stat` (field 9 `flags`, `PF_KTHREAD` = 0x00200000, include/linux/sched.h) and
//! `/proc/PID/status` `Cpus_allowed_list` (Documentation/filesystems/proc.rst).

use super::{cpu_list, Fact, Root};
use serde::{Deserialize, Serialize};
pub use tickscope_engine::probe::{cgroup_rt_runtime_us, rt_period_us, rt_runtime_us};

/// `PF_KTHREAD` in `/proc/PID/stat` flags (include/linux/sched.h).
pub const PF_KTHREAD: u64 = 0x0020_0000;

/// Programs that move interrupts or sample hardware in ways known to disturb a measurement:
/// irqbalance (moves IRQs), tuned, telegraf (its intel_powerstat plugin raised cyclictest
/// latency: <https://github.com/influxdata/telegraf/issues/13828>).
pub const AGENTS: &[&str] = &["irqbalance", "tuned", "telegraf"];

/// A task seen in `/proc`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// Process id.
    pub pid: u32,
    /// Command name (`comm`).
    pub comm: String,
    /// CPUs it may run on; `None` when unreadable.
    pub cpus_allowed: Option<Vec<usize>>,
}

/// Scheduler facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedFacts {
    /// µs per period RT tasks may use; -1 = no throttling.
    pub rt_runtime_us: Fact<i64>,
    /// The RT throttling period, µs.
    pub rt_period_us: Fact<i64>,
    /// `cpu.rt_runtime_us` of this process's cgroup under RT group scheduling (cgroup v1),
    /// where the kernel exposes one.
    pub cgroup_rt_runtime_us: Fact<i64>,
    /// `kernel.timer_migration` (1: timers may move to a busy CPU's neighbour).
    pub timer_migration: Fact<i64>,
    /// Kernel threads (PF_KTHREAD) with their allowed CPUs.
    pub kthreads: Vec<Task>,
    /// Running [`AGENTS`].
    pub agents: Vec<Task>,
    /// Processes whose `stat` could not be read (they exited, or no permission).
    pub unreadable_tasks: usize,
}

/// Reads the scheduler facts under `root`.
pub fn read(root: &Root) -> SchedFacts {
    let (kthreads, agents, unreadable_tasks) = tasks(root);
    SchedFacts {
        rt_runtime_us: rt_runtime_us(root),
        rt_period_us: rt_period_us(root),
        cgroup_rt_runtime_us: cgroup_rt_runtime_us(root),
        timer_migration: root.parsed("/proc/sys/kernel/timer_migration"),
        kthreads,
        agents,
        unreadable_tasks,
    }
}

/// Command name and flags from a `/proc/PID/stat` line: `pid (comm) state ppid … flags …`.
pub fn parse_stat(line: &str) -> Option<(String, u64)> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let comm = line.get(open + 1..close)?.to_string();
    // After ")": state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) flags(9).
    let flags = line
        .get(close + 1..)?
        .split_whitespace()
        .nth(6)?
        .parse()
        .ok()?;
    Some((comm, flags))
}

fn tasks(root: &Root) -> (Vec<Task>, Vec<Task>, usize) {
    let mut kthreads = Vec::new();
    let mut agents = Vec::new();
    let mut unreadable = 0;
    for name in root.list("/proc") {
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Some((comm, flags)) = root
            .read(&format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| parse_stat(&s))
        else {
            unreadable += 1;
            continue;
        };
        let kthread = flags & PF_KTHREAD != 0;
        let agent = AGENTS.contains(&comm.as_str());
        if !kthread && !agent {
            continue;
        }
        let cpus_allowed = root
            .read(&format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .and_then(|v| cpu_list(v).ok())
            });
        let task = Task {
            pid,
            comm,
            cpus_allowed,
        };
        if kthread {
            kthreads.push(task);
        } else {
            agents.push(task);
        }
    }
    (kthreads, agents, unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_in_comm() {
        let l = "14 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0";
        assert_eq!(parse_stat(l), Some(("ksoftirqd/0".into(), 69_238_848)));
        const { assert!(69_238_848 & PF_KTHREAD != 0) };
        let l = "7 (a (b) c) R 1 7 7 0 -1 4194560 0";
        assert_eq!(parse_stat(l).map(|x| x.0), Some("a (b) c".into()));
        assert_eq!(parse_stat("garbage"), None);
    }
}
