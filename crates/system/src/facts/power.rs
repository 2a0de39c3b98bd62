//! Power management: idle states, PM QoS, frequency scaling.
//!
//! Sources: `/sys/devices/system/cpu/cpuidle/current_driver`, `current_governor`, and per CPU
//! `cpuN/cpuidle/stateK/{name,latency,residency,disable}` (Documentation/admin-guide/pm/cpuidle.rst:
//! `latency` is the exit latency in µs); `cpuN/power/pm_qos_resume_latency_us`
//! (Documentation/ABI/testing/sysfs-devices-power: `0` no constraint, `n/a` no idle state
//! allowed); the holders of `/dev/cpu_dma_latency` from `/proc/PID/fd` links
//! (Documentation/power/pm_qos_interface.rst); `cpuN/cpufreq/scaling_{driver,governor,min_freq,max_freq}`
//! (Documentation/admin-guide/pm/cpufreq.rst).

use super::{Fact, Root};
use serde::{Deserialize, Serialize};

/// The PM QoS device whose open file descriptors hold a CPU latency request.
pub const PM_QOS_DEVICE: &str = "/dev/cpu_dma_latency";

/// One idle state of one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleState {
    /// `stateK`'s index K.
    pub index: u32,
    /// Name (`POLL`, `C1`, `haltpoll idle`, …).
    pub name: String,
    /// Exit latency, µs.
    pub latency_us: Option<u64>,
    /// Target residency, µs.
    pub residency_us: Option<u64>,
    /// Whether the state is disabled for this CPU.
    pub disabled: Option<bool>,
}

/// Per-CPU power facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuPower {
    /// CPU number.
    pub cpu: usize,
    /// Idle states (empty without cpuidle).
    pub idle_states: Vec<IdleState>,
    /// `pm_qos_resume_latency_us`: `0` no constraint, `n/a` no idle state.
    pub resume_latency: Fact<String>,
    /// cpufreq driver, governor, min and max kHz; unknown without cpufreq.
    pub cpufreq: Fact<CpuFreq>,
}

/// Frequency scaling of one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFreq {
    /// `scaling_driver`.
    pub driver: String,
    /// `scaling_governor`.
    pub governor: String,
    /// `scaling_min_freq`, kHz.
    pub min_khz: Option<u64>,
    /// `scaling_max_freq`, kHz.
    pub max_khz: Option<u64>,
}

/// A process holding `/dev/cpu_dma_latency` open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Command name.
    pub comm: String,
}

/// Power facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerFacts {
    /// The cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`, `none`).
    pub idle_driver: Fact<String>,
    /// The cpuidle governor (`menu`, `teo`, `ladder`, `haltpoll`).
    pub idle_governor: Fact<String>,
    /// Per online CPU.
    pub cpus: Vec<CpuPower>,
    /// Who holds `/dev/cpu_dma_latency` open.
    pub pm_qos_holders: Vec<Holder>,
    /// Processes whose fd directory could not be read (another user's, without root).
    pub pm_qos_unreadable: usize,
}

/// Reads the power facts under `root` for the CPUs in `/sys/devices/system/cpu/cpuN`.
pub fn read(root: &Root) -> PowerFacts {
    let cpus = root
        .list("/sys/devices/system/cpu")
        .into_iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse::<usize>().ok())
        .map(|cpu| cpu_power(root, cpu))
        .collect();
    let (pm_qos_holders, pm_qos_unreadable) = holders(root);
    PowerFacts {
        idle_driver: root.fact("/sys/devices/system/cpu/cpuidle/current_driver"),
        idle_governor: root.fact("/sys/devices/system/cpu/cpuidle/current_governor"),
        cpus,
        pm_qos_holders,
        pm_qos_unreadable,
    }
}

fn cpu_power(root: &Root, cpu: usize) -> CpuPower {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}");
    let idle_states = root
        .list(&format!("{base}/cpuidle"))
        .into_iter()
        .filter_map(|n| n.strip_prefix("state")?.parse::<u32>().ok())
        .map(|index| {
            let d = format!("{base}/cpuidle/state{index}");
            IdleState {
                index,
                name: root
                    .fact(&format!("{d}/name"))
                    .value()
                    .cloned()
                    .unwrap_or_default(),
                latency_us: root.parsed(&format!("{d}/latency")).value().copied(),
                residency_us: root.parsed(&format!("{d}/residency")).value().copied(),
                disabled: root
                    .parsed::<u8>(&format!("{d}/disable"))
                    .value()
                    .map(|&v| v != 0),
            }
        })
        .collect();
    let f = format!("{base}/cpufreq");
    let cpufreq = root
        .fact(&format!("{f}/scaling_driver"))
        .map(|driver| CpuFreq {
            driver,
            governor: root
                .fact(&format!("{f}/scaling_governor"))
                .value()
                .cloned()
                .unwrap_or_default(),
            min_khz: root
                .parsed(&format!("{f}/scaling_min_freq"))
                .value()
                .copied(),
            max_khz: root
                .parsed(&format!("{f}/scaling_max_freq"))
                .value()
                .copied(),
        });
    CpuPower {
        cpu,
        idle_states,
        resume_latency: root.fact(&format!("{base}/power/pm_qos_resume_latency_us")),
        cpufreq,
    }
}

/// Processes with an fd linking to [`PM_QOS_DEVICE`], and how many fd directories were
/// unreadable.
fn holders(root: &Root) -> (Vec<Holder>, usize) {
    let mut out = Vec::new();
    let mut unreadable = 0;
    for name in root.list("/proc") {
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let dir = root.path(&format!("/proc/{pid}/fd"));
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    unreadable += 1;
                }
                continue;
            }
        };
        let holds = entries
            .filter_map(|e| e.ok())
            .any(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.as_os_str() == PM_QOS_DEVICE));
        if holds {
            let comm = root
                .fact(&format!("/proc/{pid}/comm"))
                .value()
                .cloned()
                .unwrap_or_default();
            out.push(Holder { pid, comm });
        }
    }
    (out, unreadable)
}
