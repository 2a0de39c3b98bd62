//! Interrupts: which device IRQs may fire on which CPU, and the workqueue CPU mask.
//!
//! Sources: `/proc/interrupts` (counts per CPU and the action name),
//! `/proc/irq/N/smp_affinity_list` and `effective_affinity_list`
//! (Documentation/core-api/irq/irq-affinity.rst), `/proc/irq/default_smp_affinity`,
//! `/sys/devices/virtual/workqueue/cpumask` (Documentation/core-api/workqueue.rst, the
//! mask unbound workqueues run on); `/sys/kernel/debug/irq/irqs/N` (CONFIG_GENERIC_IRQ_DEBUGFS,
//! root) for whether an IRQ's affinity is kernel-managed (`IRQD_AFFINITY_MANAGED`: the
//! per-queue vectors of multi-queue devices, which `smp_affinity` cannot move —
//! kernel/irq/debugfs.c, kernel/irq/manage.c `irq_set_affinity` returns `EIO`).

use super::{cpu_list, cpu_mask, Fact, Root};
use serde::{Deserialize, Serialize};

/// One numbered (device) interrupt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Irq {
    /// The IRQ number.
    pub number: u32,
    /// The action names from `/proc/interrupts` (e.g. `virtio3-tx`), or empty.
    pub name: String,
    /// The CPUs it may be routed to (`smp_affinity_list`); `None` when unreadable.
    pub affinity: Option<Vec<usize>>,
    /// The CPUs it is actually routed to (`effective_affinity_list`), where the kernel says.
    pub effective: Option<Vec<usize>>,
    /// Count per CPU column of `/proc/interrupts` since boot.
    pub counts: Vec<u64>,
    /// Whether the kernel manages its affinity (it cannot be moved by writing
    /// `smp_affinity`; `isolcpus=managed_irq` keeps it off isolated CPUs); `None` when the
    /// IRQ debugfs is not readable.
    #[serde(default)]
    pub managed: Option<bool>,
}

impl Irq {
    /// The CPUs this IRQ can fire on: the effective affinity where known, else the affinity.
    pub fn can_fire_on(&self) -> Option<&[usize]> {
        self.effective.as_deref().or(self.affinity.as_deref())
    }

    /// Whether its action name is that of a per-queue vector of a driver that allocates its
    /// vectors with kernel-managed affinity (`pci_alloc_irq_vectors_affinity` with
    /// `PCI_IRQ_AFFINITY`, Documentation/PCI/msi-howto.rst): an NVMe I/O queue (`nvme0q1`;
    /// `q0`, the admin queue, is not managed — drivers/nvme/host/pci.c), a virtio-blk request
    /// queue (`virtio1-req.0`, drivers/block/virtio_blk.c) or a virtio-scsi request queue
    /// (`virtio2-request`, drivers/scsi/virtio_scsi.c). Procfs has no flag for a managed IRQ
    /// and tickscope never writes `smp_affinity` to find out, so without the IRQ debugfs this
    /// name is the only hint: "probably managed", not a certainty.
    pub fn queue_vector_by_name(&self) -> bool {
        self.name.split_whitespace().any(|action| {
            let nvme_io_queue = action
                .strip_prefix("nvme")
                .and_then(|r| r.split_once('q'))
                .is_some_and(|(ctrl, q)| {
                    !ctrl.is_empty()
                        && ctrl.chars().all(|c| c.is_ascii_digit())
                        && q.parse::<u32>().is_ok_and(|n| n > 0)
                });
            let virtio_queue = action
                .strip_prefix("virtio")
                .and_then(|r| r.split_once('-'))
                .is_some_and(|(dev, vq)| {
                    dev.chars().all(|c| c.is_ascii_digit())
                        && (vq.starts_with("req.") || vq.starts_with("request"))
                });
            nvme_io_queue || virtio_queue
        })
    }
}

/// Interrupt facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IrqFacts {
    /// Numbered IRQs found in `/proc/interrupts` and `/proc/irq`.
    pub irqs: Fact<Vec<Irq>>,
    /// The CPU column header of `/proc/interrupts` (`CPU0 CPU1` → `[0, 1]`).
    pub columns: Vec<usize>,
    /// `/proc/irq/default_smp_affinity`.
    pub default_affinity: Fact<Vec<usize>>,
    /// The CPUs unbound workqueues may run on.
    pub workqueue_cpumask: Fact<Vec<usize>>,
}

/// Reads the interrupt facts under `root`.
pub fn read(root: &Root) -> IrqFacts {
    let table = root.fact("/proc/interrupts");
    let columns: Vec<usize> = table
        .value()
        .and_then(|t| t.lines().next())
        .map(|h| {
            h.split_whitespace()
                .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let irqs = table.map(|text| parse(root, &text, columns.len()));
    IrqFacts {
        irqs,
        columns,
        default_affinity: root
            .fact("/proc/irq/default_smp_affinity")
            .and_then(|s| cpu_mask(&s)),
        workqueue_cpumask: root
            .fact("/sys/devices/virtual/workqueue/cpumask")
            .and_then(|s| cpu_mask(&s)),
    }
}

fn parse(root: &Root, text: &str, ncols: usize) -> Vec<Irq> {
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let Ok(number) = label.trim().parse::<u32>() else {
            continue; // NMI, LOC, … are per-CPU architecture interrupts
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let counts: Vec<u64> = words
            .iter()
            .take(ncols)
            .map_while(|w| w.parse().ok())
            .collect();
        // After the counts: chip, hwirq/type, then the action names.
        let name = words
            .iter()
            .skip(counts.len() + 2)
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let dir = format!("/proc/irq/{number}");
        let list = |f: &str| {
            root.fact(&format!("{dir}/{f}"))
                .and_then(|s| cpu_list(&s))
                .value()
                .cloned()
        };
        let managed = root
            .fact(&format!("/sys/kernel/debug/irq/irqs/{number}"))
            .value()
            .map(|state| state.contains("IRQD_AFFINITY_MANAGED"));
        out.push(Irq {
            number,
            name,
            affinity: list("smp_affinity_list"),
            effective: list("effective_affinity_list"),
            counts,
            managed,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_counts() {
        let t =
            "           CPU0       CPU1\n 26:          0         14  IO-APIC   4-edge      ttyS0\n\
                 LOC:    3835846    4078952   Local timer interrupts\n";
        let irqs = parse(&Root::at("/nonexistent"), t, 2);
        assert_eq!(irqs.len(), 1);
        assert_eq!(irqs[0].number, 26);
        assert_eq!(irqs[0].counts, vec![0, 14]);
        assert_eq!(irqs[0].name, "ttyS0");
        assert!(irqs[0].affinity.is_none());
    }

    #[test]
    fn queue_vectors_by_name() {
        let named = |name: &str| Irq {
            number: 1,
            name: name.into(),
            affinity: None,
            effective: None,
            counts: vec![],
            managed: None,
        };
        for yes in [
            "nvme0q1",
            "nvme12q7",
            "virtio1-req.0",
            "virtio2-request",
            "virtio2-request.3",
        ] {
            assert!(named(yes).queue_vector_by_name(), "{yes}");
        }
        for no in [
            "nvme0q0",
            "nvme0",
            "virtio1-config",
            "virtio2-input.0",
            "virtio3-tx",
            "ttyS0",
            "ACPI:Ged",
            "",
        ] {
            assert!(!named(no).queue_vector_by_name(), "{no}");
        }
    }
}
