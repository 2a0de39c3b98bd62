//! What the machine is: the facts that bound timer latency, read once at start.
//!
//! Sources: `uname(2)`; `/proc/cpuinfo`; `/sys/devices/system/clocksource` (kernel
//! Documentation/timers/timekeeping.rst); the preemption model from the `uname -v` banner,
//! `/sys/kernel/realtime`, `/sys/kernel/debug/sched/preempt` or the kernel log's
//! "Dynamic Preempt:" line; the hypervisor from CPUID leaf 0x40000000.

use serde::{Deserialize, Serialize};
use std::fs;

/// Facts about the machine a run happened on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemInfo {
    /// Host name (`uname -n`).
    pub hostname: String,
    /// Kernel release (`uname -r`), e.g. `6.18.44`.
    pub kernel_release: String,
    /// Kernel version banner (`uname -v`), e.g. `#1 SMP PREEMPT_DYNAMIC …`.
    pub kernel_version: String,
    /// Machine architecture (`uname -m`), e.g. `x86_64`.
    pub machine: String,
    /// CPU model name from `/proc/cpuinfo`, if present.
    pub cpu_model: Option<String>,
    /// Online CPUs.
    pub cpu_count: usize,
    /// Current clocksource (`tsc`, `kvm-clock`, `hpet`, …).
    pub clocksource: Option<String>,
    /// Preemption model: `none`, `voluntary`, `full`, `lazy`, `rt` — with how it was found,
    /// e.g. `none (PREEMPT_DYNAMIC, kernel log)`.
    pub preemption_model: Option<String>,
    /// The hypervisor, if any (`KVM`, `Xen`, `VMware`, `Hyper-V`, …), or `none`.
    pub virtualization: Option<String>,
    /// The timer slack new threads get, ns (usually 50 000).
    pub default_timer_slack_ns: u64,
    /// The cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`, `none`).
    pub cpuidle_driver: Option<String>,
    /// `/proc/sys/kernel/sched_rt_runtime_us` (-1: RT throttling off).
    pub rt_runtime_us: Option<i64>,
    /// `/proc/sys/kernel/sched_rt_period_us`.
    pub rt_period_us: Option<i64>,
    /// The kernel command line, for isolcpus=, nohz_full=, idle=, preempt= and the like.
    pub cmdline: Option<String>,
}

impl SystemInfo {
    /// Whether a hypervisor was found: [`SystemInfo::virtualization`] names one (not `none`,
    /// and not unknown: without that evidence the machine is taken for bare metal, where a
    /// late timer interrupt is never the host's).
    pub fn is_virtual(&self) -> bool {
        names_a_host(self.virtualization.as_deref())
    }
}

/// The hypervisor this machine runs under (`KVM`, `Xen`, …), `none` on bare metal, as
/// [`SystemInfo::virtualization`] reads it, without the other facts (cheap: one read of
/// `/proc/cpuinfo` and one CPUID instruction).
///
/// Sources: the `hypervisor` CPU flag (set by every x86 hypervisor, Intel SDM vol. 2,
/// CPUID leaf 1 ECX bit 31) and CPUID leaf 0x40000000's vendor signature; Xen's
/// `/sys/hypervisor/type`.
pub fn hypervisor() -> Option<String> {
    virtualization(&fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
}

/// Whether this machine runs under a hypervisor ([`hypervisor`] names one): the fact
/// `--explain` needs to name the host as a cause of a late interrupt, read the same way
/// for `tickscope run` and the library's explainer.
pub fn virtualized() -> bool {
    names_a_host(hypervisor().as_deref())
}

/// `none`, and no answer, are bare metal: without evidence of a host, a late timer
/// interrupt is never taken for the host's.
fn names_a_host(v: Option<&str>) -> bool {
    v.is_some_and(|v| v != "none")
}

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn uname() -> (String, String, String, String) {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut u) };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (
        field(&u.nodename),
        field(&u.release),
        field(&u.version),
        field(&u.machine),
    )
}

/// Reads the facts. Never fails: what cannot be read is `None`.
pub fn detect() -> SystemInfo {
    let (hostname, kernel_release, kernel_version, machine) = uname();
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let cpu_count = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_count = read_trim("/sys/devices/system/cpu/online")
        .and_then(|s| tickscope_engine::setup::parse_cpu_list(&s).ok())
        .map_or(cpu_count, |v| v.len());
    SystemInfo {
        hostname,
        preemption_model: preemption_model(&kernel_version),
        kernel_release,
        kernel_version,
        machine,
        cpu_model,
        cpu_count,
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        virtualization: virtualization(&cpuinfo),
        default_timer_slack_ns: read_trim("/proc/self/timerslack_ns")
            .and_then(|s| s.parse().ok())
            .unwrap_or(50_000),
        cpuidle_driver: read_trim("/sys/devices/system/cpu/cpuidle/current_driver"),
        rt_runtime_us: tickscope_engine::setup::privileges::rt_runtime_us(),
        rt_period_us: tickscope_engine::setup::privileges::rt_period_us(),
        cmdline: read_trim("/proc/cmdline"),
    }
}

/// A made-up machine, the same everywhere, for runs on virtual time
/// ([`tickscope_engine::run::Backend::Mock`]) whose whole output tests pin.
pub fn mock() -> SystemInfo {
    SystemInfo {
        hostname: "mock".into(),
        kernel_release: "0.0.0-mock".into(),
        kernel_version: "#1 SMP PREEMPT_DYNAMIC".into(),
        machine: "x86_64".into(),
        cpu_model: Some("virtual CPU".into()),
        cpu_count: 2,
        clocksource: Some("mock".into()),
        preemption_model: Some("none (mock)".into()),
        virtualization: None,
        default_timer_slack_ns: 50_000,
        cpuidle_driver: None,
        rt_runtime_us: Some(950_000),
        rt_period_us: Some(1_000_000),
        cmdline: None,
    }
}

fn preemption_model(banner: &str) -> Option<String> {
    if banner.contains("PREEMPT_RT") || read_trim("/sys/kernel/realtime").as_deref() == Some("1") {
        return Some("rt (PREEMPT_RT)".to_string());
    }
    if banner.contains("PREEMPT_DYNAMIC") {
        // The selected mode is shown in parentheses, e.g. "none voluntary (full) lazy".
        if let Some(s) = read_trim("/sys/kernel/debug/sched/preempt") {
            if let Some(mode) = s.split(['(', ')']).nth(1) {
                return Some(format!("{mode} (PREEMPT_DYNAMIC, debugfs)"));
            }
        }
        if let Some(mode) = kernel_log_line("Dynamic Preempt:") {
            return Some(format!("{mode} (PREEMPT_DYNAMIC, kernel log)"));
        }
        if let Some(mode) = read_trim("/proc/cmdline").and_then(|c| {
            c.split_whitespace()
                .find_map(|w| w.strip_prefix("preempt=").map(str::to_string))
        }) {
            return Some(format!(
                "{mode} (PREEMPT_DYNAMIC, preempt= on the command line)"
            ));
        }
        return Some("dynamic (PREEMPT_DYNAMIC; mode not readable)".to_string());
    }
    if banner.contains("PREEMPT_LAZY") {
        return Some("lazy".to_string());
    }
    if banner.contains("PREEMPT") {
        return Some("full (PREEMPT)".to_string());
    }
    Some("none or voluntary (no PREEMPT in the kernel banner)".to_string())
}

/// The rest of the first kernel-log line containing `marker` (needs CAP_SYSLOG or
/// `dmesg_restrict=0`).
fn kernel_log_line(marker: &str) -> Option<String> {
    kernel_log()?.lines().find_map(|l| {
        l.split_once(marker)
            .map(|(_, rest)| rest.trim().to_string())
    })
}

/// The kernel log ring buffer as text (`klogctl(2)`; needs CAP_SYSLOG or `dmesg_restrict=0`).
pub(crate) fn kernel_log() -> Option<String> {
    const SYSLOG_ACTION_READ_ALL: libc::c_int = 3;
    const SYSLOG_ACTION_SIZE_BUFFER: libc::c_int = 10;
    // SAFETY: SIZE_BUFFER takes no buffer.
    let size = unsafe { libc::klogctl(SYSLOG_ACTION_SIZE_BUFFER, std::ptr::null_mut(), 0) };
    if size <= 0 {
        return None;
    }
    let mut buf = vec![0u8; size as usize];
    // SAFETY: `buf` is writable for `size` bytes.
    let n = unsafe { libc::klogctl(SYSLOG_ACTION_READ_ALL, buf.as_mut_ptr().cast(), size) };
    if n <= 0 {
        return None;
    }
    Some(String::from_utf8_lossy(&buf[..n as usize]).into_owned())
}

fn virtualization(cpuinfo: &str) -> Option<String> {
    if let Some(t) = read_trim("/sys/hypervisor/type") {
        return Some(t);
    }
    let flagged = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    if !flagged {
        return Some("none".to_string());
    }
    Some(cpuid_hypervisor().unwrap_or_else(|| "unknown hypervisor".to_string()))
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn cpuid_hypervisor() -> Option<String> {
    // CPUID leaf 0x40000000 is the hypervisor vendor leaf, present when the "hypervisor"
    // flag is set. `__cpuid` is safe from Rust 1.94 on, `unsafe` before (rust-version).
    // SAFETY: every x86_64 CPU has the CPUID instruction, which reads no memory.
    #[allow(unused_unsafe)]
    let r = unsafe { std::arch::x86_64::__cpuid(0x4000_0000) };
    let mut id = Vec::with_capacity(12);
    for reg in [r.ebx, r.ecx, r.edx] {
        id.extend_from_slice(&reg.to_le_bytes());
    }
    let id = String::from_utf8_lossy(&id).trim_matches('\0').to_string();
    Some(
        match id.as_str() {
            "KVMKVMKVM" => "KVM",
            "Microsoft Hv" => "Hyper-V",
            "VMwareVMware" => "VMware",
            "XenVMMXenVMM" => "Xen",
            "TCGTCGTCGTCG" => "QEMU (TCG)",
            " lrpepyh  vr" => "Parallels",
            "ACRNACRNACRN" => "ACRN",
            _ => return (!id.is_empty()).then_some(id),
        }
        .to_string(),
    )
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn cpuid_hypervisor() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn detects_the_basics() {
        let s = super::detect();
        assert!(!s.kernel_release.is_empty());
        assert!(s.cpu_count >= 1);
        assert!(s.preemption_model.is_some());
    }

    #[test]
    fn none_and_unknown_are_bare_metal() {
        let with = |v: Option<&str>| super::SystemInfo {
            virtualization: v.map(String::from),
            ..super::mock()
        };
        assert!(with(Some("KVM")).is_virtual());
        assert!(with(Some("unknown hypervisor")).is_virtual());
        assert!(!with(Some("none")).is_virtual());
        assert!(!with(None).is_virtual());
    }

    #[test]
    fn the_cheap_reading_is_the_full_ones() {
        let full = super::detect();
        assert_eq!(super::hypervisor(), full.virtualization);
        assert_eq!(super::virtualized(), full.is_virtual());
    }
}
