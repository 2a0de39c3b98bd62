//! Device interrupts that can fire on the measured CPUs (Documentation/core-api/irq/irq-affinity.rst).

use super::super::{Check, Context, Finding, Severity};
#[allow(unused_imports)]
use super::cpus;
use crate::facts::Facts;

/// `irq.affinity`.
pub struct IrqAffinity;

impl Check for IrqAffinity {
    fn id(&self) -> &'static str {
        "irq.affinity"
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(
            self.id(),
            "Device interrupts on the measured CPUs",
            Severity::Ok,
        )
        .expected("no device IRQ can fire on a measured CPU")
        .cite("Documentation/core-api/irq/irq-affinity.rst");
        let irqs = match base.need(&facts.irq.irqs) {
            Ok(i) => i,
            Err(f) => return vec![f.effect("unknown which interrupts can delay a wake-up")],
        };
        let mut hits = Vec::new();
        let mut unreadable = 0;
        for irq in irqs {
            match irq.can_fire_on() {
                Some(set) if ctx.touches(set) => {
                    let n: u64 = ctx
                        .cpus
                        .iter()
                        .filter_map(|&c| {
                            facts
                                .irq
                                .columns
                                .iter()
                                .position(|&col| col == c)
                                .and_then(|i| irq.counts.get(i))
                        })
                        .sum();
                    hits.push((irq, n));
                }
                Some(_) => {}
                None => unreadable += 1,
            }
        }
        let src = "/proc/interrupts, /proc/irq/*/effective_affinity_list, smp_affinity_list";
        if hits.is_empty() {
            let extra = if unreadable > 0 {
                format!(" ({unreadable} IRQs' affinity unreadable)")
            } else {
                String::new()
            };
            return vec![base
                .found(format!("none of {} IRQs{extra}", irqs.len()), src)
                .effect("no device interrupt handler runs on the measured CPUs")];
        }
        hits.sort_by_key(|h| std::cmp::Reverse(h.1));
        let list: Vec<String> = hits
            .iter()
            .take(6)
            .map(|(i, n)| {
                let name = if i.name.is_empty() {
                    String::new()
                } else {
                    format!(" {}", i.name)
                };
                format!("{}{name} ({n} on measured CPUs)", i.number)
            })
            .collect();
        let more = if hits.len() > 6 {
            format!(", and {} more", hits.len() - 6)
        } else {
            String::new()
        };
        // Kernel-managed IRQs (multi-queue devices' vectors) cannot be moved by writing
        // smp_affinity: they are reported apart, with the boot parameter that keeps them off.
        let (managed, movable): (Vec<_>, Vec<_>) =
            hits.iter().partition(|h| h.0.managed == Some(true));
        let unknown_managed = hits.iter().any(|h| h.0.managed.is_none());
        let numbers = |v: &[&(&crate::facts::irq::Irq, u64)]| {
            v.iter()
                .map(|h| h.0.number.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let others = ctx.others();
        let mut fixes = Vec::new();
        if !movable.is_empty() {
            fixes.push(if others.is_empty() {
                "measure fewer CPUs (--cpus) and move the IRQs to the others: 'echo <other CPUs> > /proc/irq/N/smp_affinity_list' for each, or boot with irqaffinity=<other CPUs>".to_string()
            } else {
                format!("for N in {}; do echo {} > /proc/irq/$N/smp_affinity_list; done (or boot with irqaffinity={})",
                    numbers(&movable), cpus(&others), cpus(&others))
            });
        }
        if !managed.is_empty() || unknown_managed {
            fixes.push(format!(
                "a kernel-managed IRQ cannot be moved (the write fails with EIO){}: boot with isolcpus=managed_irq,domain,{} to keep it off the measured CPUs (Documentation/admin-guide/kernel-parameters.txt, isolcpus)",
                if managed.is_empty() { "; if any is" } else { "" },
                cpus(&ctx.cpus)
            ));
        }
        let managed_text = match (managed.is_empty(), unknown_managed) {
            (false, _) => format!("; kernel-managed: {}", numbers(&managed)),
            (true, true) => "; whether any is kernel-managed is unknown (that needs the IRQ debugfs: CONFIG_GENERIC_IRQ_DEBUGFS, and root)".to_string(),
            (true, false) => "; none is kernel-managed".to_string(),
        };
        vec![base.severity(Severity::Medium)
            .found(format!("{} IRQs can fire on CPUs {}: {}{more}{managed_text}", hits.len(), cpus(&ctx.cpus), list.join(", ")), format!("{src}, /sys/kernel/debug/irq/irqs/N"))
            .effect("each handler and the softirq it raises delays a wake-up on that CPU by a few to tens of µs")
            .fix(fixes.join("; "))]
    }
}
