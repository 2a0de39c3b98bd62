//! The tick: HZ and NO_HZ mode (Documentation/timers/no_hz.rst; kernel-configuration.rst rates NO_HZ/NO_HZ_FULL disabled for periodic loops as medium).

use super::super::{Check, Context, Finding, Severity};
use super::cpus;
use crate::facts::Facts;

/// `kernel.tick`.
pub struct Tick;

impl Check for Tick {
    fn id(&self) -> &'static str {
        "kernel.tick"
    }
    fn about(&self) -> &'static str {
        "HZ and the NO_HZ mode of the tick."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Scheduling-clock tick (HZ, NO_HZ)", Severity::Ok)
            .expected("NO_HZ_FULL with the measured CPUs in nohz_full=, or at least NO_HZ_IDLE")
            .cite("Documentation/timers/no_hz.rst");
        if let Err(f) = base.need(&facts.kernel.config) {
            return vec![f.effect("the tick interrupts a measured CPU HZ times a second")];
        }
        let k = &facts.kernel;
        let hz = k.config_value("HZ").unwrap_or("?");
        let mode = if k.config_y("NO_HZ_FULL") {
            "NO_HZ_FULL"
        } else if k.config_y("NO_HZ_IDLE") {
            "NO_HZ_IDLE"
        } else {
            "periodic (HZ_PERIODIC)"
        };
        let f = base.found(
            format!("HZ={hz}, {mode}, nohz_full={}", cpus(&k.nohz_full)),
            k.config.source(),
        );
        vec![if mode.starts_with("periodic") {
            f.severity(Severity::Medium)
                .effect(format!(
                    "every CPU takes a tick interrupt {hz} times a second, busy or idle"
                ))
                .fix("build with CONFIG_NO_HZ_IDLE=y or CONFIG_NO_HZ_FULL=y")
        } else if mode == "NO_HZ_FULL" && ctx.cpus.iter().all(|c| k.nohz_full.contains(c)) {
            f.effect("a measured CPU running one task takes no tick")
        } else {
            let fix = if mode == "NO_HZ_FULL" {
                format!("add the measured CPUs to 'nohz_full={} rcu_nocbs={}' on the kernel command line (keep one housekeeping CPU)", cpus(&ctx.cpus), cpus(&ctx.cpus))
            } else {
                match ctx.split() {
                    Some((h, m)) => format!("build with CONFIG_NO_HZ_FULL=y and boot with 'nohz_full={} rcu_nocbs={}' (CPU {} keeps the tick for housekeeping)", cpus(&m), cpus(&m), cpus(&h)),
                    None => "build with CONFIG_NO_HZ_FULL=y; on a single CPU the tick stays (nohz_full needs a housekeeping CPU)".to_string(),
                }
            };
            f.severity(Severity::Info)
                .effect(format!("a busy measured CPU takes the tick {hz} times a second (a few µs each); an idle one does not"))
                .fix(fix)
        }]
    }
}
