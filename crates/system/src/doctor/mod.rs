//! `tickscope doctor`: what on this machine limits wake-up latency, and the fix.
//!
//! [`crate::facts`] reads the machine; each check here (one file in [`checks`], one
//! [`Check`] each, registered by one line in [`CHECKS`]) turns facts into [`Finding`]s with
//! a severity in the format of the kernel's real-time checklist
//! (Documentation/core-api/real-time/kernel-configuration.rst,
//! <https://docs.kernel.org/core-api/real-time/kernel-configuration.html>). [`measure`] turns
//! the knobs tickscope can set for itself and measures whether they help.
//!
//! Rendering is the `tickscope-report` crate's job (`tickscope_report::doctor`).

pub mod check;
pub mod checks;
pub mod finding;
pub mod inspection;
pub mod measure;

pub use check::{Check, Context};
pub use finding::{by_importance, doc, fix_first, worst, Citation, Finding, Severity};

use crate::facts::{Facts, Root};
use std::time::Duration;

/// Every check, in the order they are reported.
pub static CHECKS: &[&dyn Check] = &[
    &checks::preempt::Preempt,
    &checks::hrtimers::HighResTimers,
    &checks::debug_options::DebugOptions,
    &checks::latency_tracers::LatencyTracers,
    &checks::tick::Tick,
    &checks::isolation::Isolation,
    &checks::irqs::IrqAffinity,
    &checks::irq_managed::IrqManaged,
    &checks::agents::Agents,
    &checks::workqueue::Workqueue,
    &checks::kthreads::PerCpuKthreads,
    &checks::rt_throttling::RtThrottling,
    &checks::timer_migration::TimerMigration,
    &checks::cpuidle::Cpuidle,
    &checks::pm_qos::PmQos,
    &checks::cpufreq::Cpufreq,
    &checks::thp::Thp,
    &checks::swap::Swap,
    &checks::limits::Limits,
    &checks::clocksource::Clocksource,
    &checks::clock_read::ClockRead,
    &checks::smt::Smt,
    &checks::watchdog::Watchdog,
    &checks::hypervisor::Hypervisor,
    &checks::haltpoll::Haltpoll,
    &checks::efi_runtime::EfiRuntime,
    &checks::steal::Steal,
    &checks::privileges::Privileges,
    &checks::explain::Explain,
];

/// Runs every check.
pub fn run_checks(facts: &Facts, ctx: &Context) -> Vec<Finding> {
    CHECKS.iter().flat_map(|c| c.check(facts, ctx)).collect()
}

/// The measured CPUs: `requested` if given, else (on the `live` system) every CPU this
/// process may run on, or the online CPUs; and the online CPUs from `facts` (falling back to
/// the measured ones).
///
/// # Errors
/// When a requested CPU is not online.
pub fn context(
    facts: &Facts,
    requested: Option<Vec<usize>>,
    live: bool,
) -> Result<Context, String> {
    let online = facts.kernel.online.value().cloned();
    let allowed = || {
        live.then(tickscope_engine::setup::allowed_cpus)
            .and_then(Result::ok)
            .filter(|v| !v.is_empty())
    };
    let cpus = match requested {
        Some(c) => c,
        None => allowed()
            .or_else(|| online.clone())
            .unwrap_or_else(|| vec![0]),
    };
    let mut cpus = cpus;
    cpus.sort_unstable();
    cpus.dedup();
    let online = online.unwrap_or_else(|| cpus.clone());
    if let Some(bad) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(format!(
            "CPU {bad} is not online (online: {})",
            tickscope_engine::setup::format_cpu_list(&online)
        ));
    }
    Ok(Context { cpus, online })
}

/// The findings that bear on a run measuring `cpus` on this machine (every check but the
/// steal-time sample, which would take time), ready to embed in a run's result.
pub fn findings_for_run(cpus: &[usize]) -> Vec<Finding> {
    let facts = Facts::gather(&Root::live(), Duration::ZERO);
    let requested = (!cpus.is_empty()).then(|| cpus.to_vec());
    let Ok(ctx) = context(&facts, requested, true) else {
        return Vec::new();
    };
    CHECKS
        .iter()
        .filter(|c| c.bears_on_run())
        .flat_map(|c| c.check(&facts, &ctx))
        .collect()
}
