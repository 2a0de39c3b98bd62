//! Device interrupts that can fire on the measured CPUs and that can be moved off them by
//! writing `smp_affinity_list` (Documentation/core-api/irq/irq-affinity.rst). The
//! kernel-managed ones, which cannot, are reported apart by [`super::irq_managed`]: their
//! fix is a boot parameter, not a write.

use super::super::{Check, Context, Finding, Severity};
use super::cpus;
use crate::facts::irq::Irq;
use crate::facts::Facts;

/// `irq.affinity`.
pub struct IrqAffinity;

impl Check for IrqAffinity {
    fn id(&self) -> &'static str {
        "irq.affinity"
    }
    fn about(&self) -> &'static str {
        "Device interrupts that can fire on the measured CPUs and can be moved off them."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(
            self.id(),
            "Movable device interrupts on the measured CPUs",
            Severity::Ok,
        )
        .expected("no movable device IRQ can fire on a measured CPU")
        .cite("Documentation/core-api/irq/irq-affinity.rst");
        let irqs = match base.need(&facts.irq.irqs) {
            Ok(i) => i,
            Err(f) => return vec![f.effect("unknown which interrupts can delay a wake-up")],
        };
        let (mut hits, unreadable) = on_measured(irqs, &facts.irq.columns, ctx);
        let src = "/proc/interrupts, /proc/irq/*/effective_affinity_list, smp_affinity_list";
        // The kernel-managed ones (certain, or probable by name) belong to irq.managed.
        let managed = hits.iter().filter(|h| is_managed(h.0)).count();
        hits.retain(|h| !is_managed(h.0));
        let managed_note = match managed {
            0 => String::new(),
            n => format!("; {n} kernel-managed, in irq.managed"),
        };
        if hits.is_empty() {
            let extra = if unreadable > 0 {
                format!(" ({unreadable} IRQs' affinity unreadable)")
            } else {
                String::new()
            };
            return vec![base
                .found(
                    format!("none of {} IRQs{extra}{managed_note}", irqs.len()),
                    src,
                )
                .effect("no movable device interrupt handler runs on the measured CPUs")];
        }
        hits.sort_by_key(|h| std::cmp::Reverse(h.1));
        let numbers = hits
            .iter()
            .map(|h| h.0.number.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        let mut fix = match (ctx.split(), ctx.others().is_empty()) {
            (None, _) => {
                "a single CPU takes every interrupt: measure on a machine with two or more"
                    .to_string()
            }
            (Some((h_set, m)), all_measured) => {
                let h = cpus(&h_set);
                let narrow = match all_measured {
                    true => format!(
                        "measure {} only (--cpus {}) and move the IRQs to {}: ",
                        super::named(&m),
                        cpus(&m),
                        super::named(&h_set)
                    ),
                    false => String::new(),
                };
                format!("{narrow}for N in {numbers}; do echo {h} > /proc/irq/$N/smp_affinity_list; done (or boot with irqaffinity={h})")
            }
        };
        if hits.iter().any(|h| h.0.managed.is_none()) {
            fix.push_str("; a write that fails with EIO is a kernel-managed IRQ (the IRQ debugfs that would say is unreadable): see irq.managed");
        }
        vec![base
            .severity(Severity::Medium)
            .found(
                format!(
                    "{} movable IRQ{} can fire on CPUs {}: {}{}{managed_note}",
                    hits.len(),
                    if hits.len() == 1 { "" } else { "s" },
                    cpus(&ctx.cpus),
                    listed(&hits),
                    more(hits.len())
                ),
                src,
            )
            .effect("each handler and the softirq it raises delays a wake-up on that CPU by a few to tens of µs")
            .fix(fix)]
    }
}

/// Whether `irq` is kernel-managed: its IRQ debugfs state says so, or (that state unreadable)
/// its name is a managed driver's queue vector ([`Irq::queue_vector_by_name`]).
pub(crate) fn is_managed(irq: &Irq) -> bool {
    irq.managed.unwrap_or_else(|| irq.queue_vector_by_name())
}

/// The IRQs that can fire on a measured CPU, with their count there since boot; and how many
/// IRQs' affinity was unreadable.
pub(crate) fn on_measured<'a>(
    irqs: &'a [Irq],
    columns: &[usize],
    ctx: &Context,
) -> (Vec<(&'a Irq, u64)>, usize) {
    let mut hits = Vec::new();
    let mut unreadable = 0;
    for irq in irqs {
        match irq.can_fire_on() {
            Some(set) if ctx.touches(set) => {
                let n: u64 = ctx
                    .cpus
                    .iter()
                    .filter_map(|&c| {
                        columns
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
    (hits, unreadable)
}

/// The first six IRQs: `36 virtio1-req.0 (979744 on measured CPUs)`.
pub(crate) fn listed(hits: &[(&Irq, u64)]) -> String {
    hits.iter()
        .take(6)
        .map(|(i, n)| {
            let name = if i.name.is_empty() {
                String::new()
            } else {
                format!(" {}", i.name)
            };
            format!("{}{name} ({n} on measured CPUs)", i.number)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `, and N more` beyond six.
pub(crate) fn more(n: usize) -> String {
    if n > 6 {
        format!(", and {} more", n - 6)
    } else {
        String::new()
    }
}
