//! Kernel-managed device interrupts on the measured CPUs: the per-queue vectors of
//! multi-queue devices (NVMe, virtio-blk, virtio-scsi), whose affinity the kernel spreads over
//! the CPUs and keeps — writing `smp_affinity` fails with `EIO` (kernel/irq/manage.c,
//! `irq_can_set_affinity_usr`). Only the boot parameter `isolcpus=managed_irq,<CPUs>` keeps
//! them off isolated CPUs (Documentation/admin-guide/kernel-parameters.txt, "isolcpus=").
//!
//! Managed is read from the IRQ debugfs state (`IRQD_AFFINITY_MANAGED`,
//! CONFIG_GENERIC_IRQ_DEBUGFS, root); where that is unreadable, an IRQ named like a managed
//! driver's queue vector is reported as probably managed
//! ([`crate::facts::irq::Irq::queue_vector_by_name`]). Nothing is written to `/proc/irq`.

use super::super::{Check, Context, Finding, Severity};
use super::cpus;
use super::irqs::{is_managed, listed, more, on_measured};
use crate::facts::Facts;

/// `irq.managed`.
pub struct IrqManaged;

impl Check for IrqManaged {
    fn id(&self) -> &'static str {
        "irq.managed"
    }
    fn about(&self) -> &'static str {
        "Kernel-managed device interrupts (per-queue vectors) on the measured CPUs."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(
            self.id(),
            "Kernel-managed interrupts on the measured CPUs",
            Severity::Ok,
        )
        .expected("no kernel-managed IRQ (a multi-queue device's queue vector) on a measured CPU")
        .cite("Documentation/admin-guide/kernel-parameters.txt");
        let irqs = match base.need(&facts.irq.irqs) {
            Ok(i) => i,
            Err(f) => return vec![f.effect("unknown which interrupts can delay a wake-up")],
        };
        let (mut hits, _) = on_measured(irqs, &facts.irq.columns, ctx);
        hits.retain(|h| is_managed(h.0));
        hits.sort_by_key(|h| std::cmp::Reverse(h.1));
        let debugfs_readable = irqs.iter().any(|i| i.managed.is_some());
        let src = format!(
            "/sys/kernel/debug/irq/irqs/N (IRQD_AFFINITY_MANAGED){}, /proc/interrupts (names), /proc/irq/*/effective_affinity_list",
            if debugfs_readable { "" } else { ": unreadable" }
        );
        let how = if debugfs_readable {
            "per the IRQ debugfs"
        } else {
            "probably, by name: queue vectors of drivers with managed affinity; the IRQ debugfs that would say for certain needs CONFIG_GENERIC_IRQ_DEBUGFS and root"
        };
        if hits.is_empty() {
            return vec![base
                .found(
                    format!(
                        "none on CPUs {}{}",
                        cpus(&ctx.cpus),
                        if debugfs_readable {
                            ""
                        } else {
                            " by name (the IRQ debugfs is unreadable)"
                        }
                    ),
                    src,
                )
                .effect("no queue vector that cannot be moved runs on the measured CPUs")];
        }
        let k = &facts.kernel;
        let managed_irq_flag = k.cmdline.value().is_some_and(|c| {
            c.split_whitespace()
                .any(|w| w.starts_with("isolcpus=") && w.contains("managed_irq"))
        });
        let covered = managed_irq_flag && ctx.cpus.iter().all(|c| k.isolcpus.contains(c));
        let note = if covered {
            " (isolcpus=managed_irq is set, but every CPU of these vectors' masks is isolated, so the kernel had to use one)"
        } else {
            ""
        };
        vec![base
            .severity(Severity::Medium)
            .found(
                format!(
                    "{} kernel-managed IRQ{} can fire on CPUs {} ({how}): {}{}{note}",
                    hits.len(),
                    if hits.len() == 1 { "" } else { "s" },
                    cpus(&ctx.cpus),
                    listed(&hits),
                    more(hits.len())
                ),
                src,
            )
            .effect("each completion of I/O submitted on the measured CPUs raises its handler there, and the block softirq after it: a few to tens of µs per wake-up it hits")
            .fix(match ctx.split() {
                Some((h, m)) => format!(
                    "writing /proc/irq/N/smp_affinity_list fails with EIO for these; measure {} and boot with isolcpus=managed_irq,domain,{} to keep their handlers off them while housekeeping {} is in each vector's mask, and submit I/O from {}",
                    super::named(&m), cpus(&m), super::named(&h), super::named(&h)
                ),
                None => "nothing on a single CPU: every vector's handler runs there".to_string(),
            })]
    }
}
