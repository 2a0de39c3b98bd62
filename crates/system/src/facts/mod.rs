//! Facts about the machine that bound wake-up latency, read from `/proc` and `/sys`.
//!
//! Every reader takes a [`Root`] — `/` on a live system, a fixture tree in tests — and
//! returns typed facts. What cannot be read becomes [`Fact::Unknown`] with the reason
//! (`needs root`, `absent`, `unexpected content …`); no reader panics on a missing or
//! malformed source. The `tickscope doctor` checks ([`crate::doctor`]) turn these facts into
//! findings; [`tickscope_engine::setup::privileges`] uses the same readers to explain a refused setting.
//!
//! One file per concern: [`kernel`] (preemption model, high-resolution timers, HZ, NO_HZ,
//! isolation boot parameters), [`irq`], [`sched`], [`power`], [`memory`], [`time`], [`virt`],
//! [`privileges`]. File formats are those of the kernel's `Documentation/filesystems/proc.rst`
//! and `Documentation/ABI/` (<https://docs.kernel.org/filesystems/proc.html>).

pub mod cpu_set;
pub mod irq;
pub mod kernel;
pub mod kernel_config;
pub mod memory;
pub mod power;
pub mod privileges;
pub mod sched;
pub mod time;
pub mod virt;

pub use cpu_set::{cpu_list, cpu_mask};
use serde::{Deserialize, Serialize};
pub use tickscope_engine::probe::{why, Fact, Root};

/// Everything `tickscope doctor` reads, gathered once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// Kernel build and boot parameters.
    pub kernel: kernel::KernelFacts,
    /// Interrupts and their affinity.
    pub irq: irq::IrqFacts,
    /// Scheduler settings and kernel threads.
    pub sched: sched::SchedFacts,
    /// Idle states, PM QoS, frequency scaling.
    pub power: power::PowerFacts,
    /// THP, swap, memory-lock limit.
    pub memory: memory::MemoryFacts,
    /// Clocksource, SMT topology, lockup detector.
    pub time: time::TimeFacts,
    /// Hypervisor, haltpoll, steal time.
    pub virt: virt::VirtFacts,
    /// What this process may set.
    pub privileges: privileges::PrivilegeFacts,
}

impl Facts {
    /// Reads every fact under `root`; steal time is sampled over `steal_sample` (zero: a
    /// single reading, rate unknown). Never fails: unreadable facts are [`Fact::Unknown`].
    /// On the running system with a non-zero `steal_sample` (the full doctor, which may take
    /// time) the cost of a clock read is measured too ([`time::measure_monotonic_read`], within 50 ms).
    pub fn gather(root: &Root, steal_sample: std::time::Duration) -> Self {
        let mut time = time::read(root);
        if root.is_live() && !steal_sample.is_zero() {
            time.monotonic_read = time::measure_monotonic_read();
        }
        Facts {
            kernel: kernel::read(root),
            irq: irq::read(root),
            sched: sched::read(root),
            power: power::read(root),
            memory: memory::read(root),
            time,
            virt: virt::read(root, steal_sample),
            privileges: privileges::read(root),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_lists() {
        assert_eq!(cpu_mask("3").unwrap(), vec![0, 1]);
        assert_eq!(cpu_mask("00000000,00000100").unwrap(), vec![8]);
        assert!(cpu_mask("xyz").is_err());
        assert_eq!(cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert_eq!(cpu_list("\n").unwrap(), Vec::<usize>::new());
        assert!(cpu_list("a-b").is_err());
    }

    #[test]
    fn unreadable_is_unknown_with_reason() {
        let root = Root::at("/nonexistent-tickscope-root");
        let f = root.fact("/proc/cmdline");
        assert_eq!(f.reason(), Some("absent"));
        assert_eq!(f.source(), "/proc/cmdline");
        let n: Fact<i64> = root.parsed("/proc/sys/kernel/sched_rt_runtime_us");
        assert!(n.value().is_none());
    }
}
