//! One file per check; each is registered by one line in [`super::CHECKS`].

pub mod agents;
pub mod clock_read;
pub mod clocksource;
pub mod cpufreq;
pub mod cpuidle;
pub mod debug_options;
pub mod efi_runtime;
pub mod explain;
pub mod haltpoll;
pub mod hrtimers;
pub mod hypervisor;
pub mod irq_managed;
pub mod irqs;
pub mod isolation;
pub mod kthreads;
pub mod latency_tracers;
pub mod limits;
pub mod pm_qos;
pub mod preempt;
pub mod privileges;
pub mod rt_throttling;
pub mod smt;
pub mod steal;
pub mod swap;
pub mod thp;
pub mod tick;
pub mod timer_migration;
pub mod watchdog;
pub mod workqueue;

use tickscope_engine::setup::format_cpu_list;

/// `CPU 1` or `CPUs 0-3,5`, for a sentence.
pub(crate) fn named(set: &[usize]) -> String {
    match set.len() {
        1 => format!("CPU {}", cpus(set)),
        _ => format!("CPUs {}", cpus(set)),
    }
}

/// `0-3,5` for a set of CPUs, `none` for the empty set.
pub(crate) fn cpus(set: &[usize]) -> String {
    if set.is_empty() {
        "none".into()
    } else {
        format_cpu_list(set)
    }
}
