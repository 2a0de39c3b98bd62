//! CPU frequency scaling (Documentation/admin-guide/pm/cpufreq.rst; kernel-configuration.rst rates CPU_FREQ_DEFAULT_GOV_PERFORMANCE as high).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `power.cpufreq`.
pub struct Cpufreq;

impl Check for Cpufreq {
    fn id(&self) -> &'static str {
        "power.cpufreq"
    }
    fn about(&self) -> &'static str {
        "CPU frequency scaling: driver and governor of the measured CPUs."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "CPU frequency scaling", Severity::Ok)
            .expected("governor 'performance' with min = max on the measured CPUs, or no OS frequency scaling")
            .cite("Documentation/admin-guide/pm/cpufreq.rst");
        let measured: Vec<_> = facts
            .power
            .cpus
            .iter()
            .filter(|c| ctx.cpus.contains(&c.cpu))
            .collect();
        let known: Vec<_> = measured
            .iter()
            .filter_map(|c| c.cpufreq.value().map(|f| (c.cpu, f)))
            .collect();
        let src =
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_{driver,governor,min_freq,max_freq}";
        if known.is_empty() {
            return vec![base
                .severity(Severity::Info)
                .found("no cpufreq on the measured CPUs", src)
                .effect("the OS does not scale the frequency; firmware or the hypervisor may")];
        }
        let slow: Vec<String> = known
            .iter()
            .filter(|(_, f)| f.governor != "performance")
            .map(|(c, f)| format!("cpu{c} {}", f.governor))
            .collect();
        let (c0, f0) = known[0];
        let found = format!(
            "cpu{c0}: driver {}, governor {}, {}-{} kHz",
            f0.driver,
            f0.governor,
            f0.min_khz.map_or("?".into(), |v| v.to_string()),
            f0.max_khz.map_or("?".into(), |v| v.to_string())
        );
        let f = base.found(found, src);
        vec![if slow.is_empty() {
            f.effect("the measured CPUs run at full speed")
        } else {
            f.severity(Severity::High)
                .effect(format!("{} : a CPU woken at low frequency runs the wake-up path slowly and may stall on a frequency change", slow.join(", ")))
                .fix("cpupower frequency-set -g performance (or: for g in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; do echo performance > $g; done)")
        }]
    }
}
