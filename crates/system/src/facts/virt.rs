//! Virtualization: the hypervisor, cpuidle-haltpoll, and steal time.
//!
//! Sources: the `hypervisor` flag of `/proc/cpuinfo` and, on a live x86 system, CPUID leaf
//! 0x40000000 (the vendor signature); `/sys/hypervisor/type` (Xen); DMI
//! `/sys/class/dmi/id/{sys_vendor,product_name}`; `/sys/module/haltpoll/parameters/guest_halt_poll_ns`
//! (Documentation/virt/guest-halt-polling.rst); steal from the 8th value of the `cpuN` lines
//! of `/proc/stat`, in USER_HZ ticks (Documentation/filesystems/proc.rst; USER_HZ is 100 on
//! every architecture Linux exports it for, see `sysconf(_SC_CLK_TCK)`).

use super::{Fact, Root};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Virtualization facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VirtFacts {
    /// The hypervisor (`KVM`, `Xen`, `VMware`, …), or `none` on bare metal.
    pub hypervisor: Fact<String>,
    /// `guest_halt_poll_ns` of cpuidle-haltpoll, where the module is present.
    pub haltpoll_poll_ns: Fact<u64>,
    /// Steal time per CPU over the sample interval, % of the CPU (0..100).
    pub steal_percent: Fact<BTreeMap<usize, f64>>,
    /// Steal time since boot per CPU, USER_HZ ticks (10 ms each at USER_HZ 100).
    pub steal_ticks: Fact<BTreeMap<usize, u64>>,
}

/// USER_HZ, the unit of `/proc/stat`.
pub const USER_HZ: f64 = 100.0;

/// Reads the virtualization facts under `root`, sampling steal over `sample`.
pub fn read(root: &Root, sample: Duration) -> VirtFacts {
    let first = root.fact("/proc/stat").and_then(|s| steal(&s));
    let steal_percent = if sample.is_zero() {
        Fact::unknown("no sampling interval", "/proc/stat")
    } else {
        std::thread::sleep(sample);
        let second = root.fact("/proc/stat").and_then(|s| steal(&s));
        match (first.value(), second) {
            (Some(a), Fact::Known { value: b, source }) => {
                let secs = sample.as_secs_f64();
                let rates = b
                    .iter()
                    .map(|(cpu, t1)| {
                        let t0 = a.get(cpu).copied().unwrap_or(*t1);
                        (*cpu, t1.saturating_sub(t0) as f64 / USER_HZ / secs * 100.0)
                    })
                    .collect();
                Fact::known(
                    rates,
                    format!("{source} (two readings {} ms apart)", sample.as_millis()),
                )
            }
            (_, Fact::Unknown { reason, source }) => Fact::unknown(reason, source),
            (None, _) => Fact::unknown(
                first.reason().unwrap_or("unreadable").to_string(),
                "/proc/stat",
            ),
        }
    };
    VirtFacts {
        hypervisor: hypervisor(root),
        haltpoll_poll_ns: root.parsed("/sys/module/haltpoll/parameters/guest_halt_poll_ns"),
        steal_percent,
        steal_ticks: first,
    }
}

/// Steal ticks per CPU from `/proc/stat` text.
///
/// # Errors
/// When no `cpuN` line has a steal column.
pub fn steal(text: &str) -> Result<BTreeMap<usize, u64>, String> {
    let map: BTreeMap<usize, u64> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let cpu = w.next()?.strip_prefix("cpu")?.parse().ok()?;
            let steal = w.nth(7)?.parse().ok()?;
            Some((cpu, steal))
        })
        .collect();
    if map.is_empty() {
        Err("no per-CPU steal column".into())
    } else {
        Ok(map)
    }
}

fn hypervisor(root: &Root) -> Fact<String> {
    if let Some(t) = root.fact("/sys/hypervisor/type").value() {
        return Fact::known(t.clone(), "/sys/hypervisor/type");
    }
    let cpuinfo = match root.read("/proc/cpuinfo") {
        Ok(s) => s,
        Err(r) => return Fact::unknown(r, "/proc/cpuinfo"),
    };
    let flagged = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    if !flagged {
        return Fact::known("none".into(), "/proc/cpuinfo (no hypervisor flag)");
    }
    if root.is_live() {
        if let Some(v) = crate::system::cpuid_hypervisor() {
            return Fact::known(v, "CPUID leaf 0x40000000");
        }
    }
    for f in [
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
    ] {
        if let Some(v) = root.fact(f).value() {
            return Fact::known(v.clone(), f);
        }
    }
    Fact::known(
        "unknown hypervisor".into(),
        "/proc/cpuinfo (hypervisor flag)",
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn steal_column() {
        let t = "cpu  1 2 3 4 5 6 7 99 0 0\ncpu0 1 2 3 4 5 6 7 40 0 0\ncpu1 1 2 3 4 5 6 7 59 0 0\n";
        let m = super::steal(t).unwrap();
        assert_eq!(m.get(&0), Some(&40));
        assert_eq!(m.get(&1), Some(&59));
        assert!(super::steal("intr 1 2").is_err());
    }
}
