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

pub mod checks;
pub mod finding;
pub mod measure;

pub use finding::{by_importance, doc, fix_first, worst, Citation, Finding, Severity};

use crate::facts::{Facts, Root};
use std::time::Duration;

/// What the checks are asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The CPUs to be measured (sorted, non-empty).
    pub cpus: Vec<usize>,
    /// The online CPUs (sorted).
    pub online: Vec<usize>,
}

impl Context {
    /// The online CPUs not measured (housekeeping candidates).
    pub fn others(&self) -> Vec<usize> {
        self.online
            .iter()
            .copied()
            .filter(|c| !self.cpus.contains(c))
            .collect()
    }

    /// A concrete split for the fixes: (housekeeping CPUs, CPUs to measure). The CPUs not
    /// measured and the measured ones when some CPU is not measured; when every online CPU
    /// is measured, the first one for housekeeping and the rest to measure; `None` on a
    /// machine with a single CPU (nothing can be set apart).
    pub fn split(&self) -> Option<(Vec<usize>, Vec<usize>)> {
        let others = self.others();
        if !others.is_empty() {
            return Some((others, self.cpus.clone()));
        }
        match self.cpus.split_first() {
            Some((first, rest)) if !rest.is_empty() => Some((vec![*first], rest.to_vec())),
            _ => None,
        }
    }

    /// Whether `set` includes any measured CPU.
    pub fn touches(&self, set: &[usize]) -> bool {
        set.iter().any(|c| self.cpus.contains(c))
    }

    /// The measured CPUs in `set`.
    pub fn measured_in(&self, set: &[usize]) -> Vec<usize> {
        self.cpus
            .iter()
            .copied()
            .filter(|c| set.contains(c))
            .collect()
    }
}

/// One check: facts in, findings out (usually one).
pub trait Check: Sync {
    /// The id of its findings, `area.name`.
    fn id(&self) -> &'static str;
    /// Whether its findings bear on a measuring run (embedded with a run's result).
    fn bears_on_run(&self) -> bool {
        true
    }
    /// The findings for `facts` and `ctx`; an unreadable fact gives a
    /// [`Severity::Unknown`] finding with the reason, never a panic.
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding>;
}

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
