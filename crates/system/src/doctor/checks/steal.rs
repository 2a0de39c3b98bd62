//! Steal time: how long the host ran something else while the measured vCPUs wanted to run (Documentation/filesystems/proc.rst, /proc/stat 'steal').

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `virt.steal`.
pub struct Steal;

impl Check for Steal {
    fn id(&self) -> &'static str {
        "virt.steal"
    }
    fn about(&self) -> &'static str {
        "Steal time: how long the host ran something else while the measured CPUs wanted to run."
    }
    fn bears_on_run(&self) -> bool {
        false
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let v = &facts.virt;
        let base = Finding::new(self.id(), "Steal time", Severity::Ok)
            .expected("0 % steal on the measured CPUs")
            .cite("Documentation/filesystems/proc.rst");
        let rates = match base.need(&v.steal_percent) {
            Ok(r) => r,
            Err(f) => {
                return vec![f
                    .severity(Severity::Unknown)
                    .effect("unknown; the steal since boot is in /proc/stat")]
            }
        };
        let parts: Vec<String> = ctx
            .cpus
            .iter()
            .filter_map(|c| rates.get(c).map(|r| format!("cpu{c} {r:.1} %")))
            .collect();
        let worst = ctx
            .cpus
            .iter()
            .filter_map(|c| rates.get(c))
            .fold(0.0f64, |a, &b| a.max(b));
        let f = base.found(
            format!("{} (USER_HZ ticks: 10 ms granularity)", parts.join(", ")),
            v.steal_percent.source(),
        );
        vec![if worst <= 0.0 {
            f.effect("the host did not take the measured vCPUs away during the sample")
        } else {
            f.severity(Severity::Medium)
                .effect("while stolen, a vCPU runs nothing: a wake-up due then is late by up to the stolen slice (ms)")
                .fix("on the host: give the guest dedicated CPUs (no overcommit), pin and isolate its vCPU threads")
                .cite("Documentation/core-api/real-time/hardware.rst")
        }]
    }
}
