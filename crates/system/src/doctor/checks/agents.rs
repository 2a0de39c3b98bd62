//! Running agents known to disturb a measurement: irqbalance moves interrupts, tuned retunes, telegraf's intel_powerstat reads MSRs (<https://github.com/influxdata/telegraf/issues/13828>).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `irq.agents`.
pub struct Agents;

impl Check for Agents {
    fn id(&self) -> &'static str {
        "irq.agents"
    }
    fn about(&self) -> &'static str {
        "Running agents known to disturb a measurement (irqbalance, tuned, telegraf)."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let s = &facts.sched;
        let base = Finding::new(
            self.id(),
            "Agents that move IRQs or sample hardware",
            Severity::Ok,
        )
        .expected(
            "no irqbalance, tuned or telegraf running (or configured to spare the measured CPUs)",
        )
        .cite("Documentation/core-api/irq/irq-affinity.rst");
        let src = "/proc/*/stat";
        if s.agents.is_empty() {
            let note = if s.unreadable_tasks > 0 {
                format!(" ({} processes unreadable)", s.unreadable_tasks)
            } else {
                String::new()
            };
            return vec![base
                .found(format!("none running{note}"), src)
                .effect("nothing rewrites IRQ affinity during a run")];
        }
        let names: Vec<String> = s
            .agents
            .iter()
            .map(|t| format!("{} (pid {})", t.comm, t.pid))
            .collect();
        vec![base.severity(Severity::Medium)
            .found(names.join(", "), src)
            .effect("irqbalance may route an interrupt onto a measured CPU mid-run; monitoring agents add periodic work and MSR reads")
            .fix(format!("systemctl stop irqbalance (or set IRQBALANCE_BANNED_CPULIST={} in /etc/default/irqbalance); stop or reconfigure the other agents for the measurement", super::cpus(&ctx.cpus)))]
    }
}
