//! The kernel: version banner, build configuration, preemption model, high-resolution
//! timers, HZ and NO_HZ, and the CPU-isolation boot parameters.
//!
//! Sources: `/proc/sys/kernel/{osrelease,version}` (what `uname -r`/`-v` print);
//! `/proc/config.gz` (CONFIG_IKCONFIG_PROC) or `/boot/config-<release>`; the preemption
//! model from `/sys/kernel/debug/sched/preempt` (PREEMPT_DYNAMIC; debugfs, root), the
//! kernel log's `Dynamic Preempt:` line (`klogctl(2)`),
//! `/sys/kernel/realtime` (PREEMPT_RT), the banner, the build configuration and `preempt=`
//! (Documentation/admin-guide/kernel-parameters.txt); `/proc/timer_list` (root) for the
//! hrtimer resolution (Documentation/timers/highres.rst: 1 ns when high-resolution mode is
//! active, the tick period otherwise); `/proc/cmdline` for `isolcpus=`, `nohz_full=`,
//! `rcu_nocbs=`, `irqaffinity=` (Documentation/timers/no_hz.rst,
//! Documentation/admin-guide/kernel-per-CPU-kthreads.rst).

use super::{cpu_list, Fact, Root};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;

/// The preemption model and how it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preemption {
    /// `none`, `voluntary`, `full`, `lazy` or `rt`.
    pub model: String,
    /// Whether the model can be switched at boot (`CONFIG_PREEMPT_DYNAMIC`).
    pub dynamic: bool,
}

/// Kernel facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelFacts {
    /// `uname -r`.
    pub release: Fact<String>,
    /// `uname -v`, e.g. `#1 SMP PREEMPT_DYNAMIC …`.
    pub version: Fact<String>,
    /// The build configuration: `CONFIG_X` → `y`, `m`, a number or a string (unquoted);
    /// options "is not set" are absent.
    pub config: Fact<BTreeMap<String, String>>,
    /// The preemption model.
    pub preemption: Fact<Preemption>,
    /// The hrtimer resolution of CPU 0's clock bases, ns (1 = high-resolution mode).
    pub hrtimer_resolution_ns: Fact<u64>,
    /// The kernel command line.
    pub cmdline: Fact<String>,
    /// Online CPUs.
    pub online: Fact<Vec<usize>>,
    /// CPUs isolated from the scheduler's load balancing (`/sys/devices/system/cpu/isolated`).
    pub isolated: Fact<Vec<usize>>,
    /// `isolcpus=` CPUs (flags such as `domain,managed_irq` dropped); empty when absent.
    pub isolcpus: Vec<usize>,
    /// `nohz_full=` CPUs; empty when absent.
    pub nohz_full: Vec<usize>,
    /// `rcu_nocbs=` CPUs; empty when absent.
    pub rcu_nocbs: Vec<usize>,
    /// `irqaffinity=` CPUs; empty when absent.
    pub irqaffinity: Vec<usize>,
    /// Whether the machine booted with EFI (`/sys/firmware/efi` exists).
    #[serde(default = "unknown_efi")]
    pub efi: Fact<bool>,
}

fn unknown_efi() -> Fact<bool> {
    Fact::unknown("not recorded", "/sys/firmware/efi")
}

impl KernelFacts {
    /// `CONFIG_<name>`'s value, when the configuration is known and sets it.
    pub fn config_value(&self, name: &str) -> Option<&str> {
        self.config
            .value()
            .and_then(|c| c.get(name))
            .map(String::as_str)
    }

    /// Whether the configuration is known and sets `CONFIG_<name>=y`.
    pub fn config_y(&self, name: &str) -> bool {
        self.config_value(name) == Some("y")
    }
}

/// Reads the kernel facts under `root`.
pub fn read(root: &Root) -> KernelFacts {
    let release = root.fact("/proc/sys/kernel/osrelease");
    let version = root.fact("/proc/sys/kernel/version");
    let config = config(root, release.value().map(String::as_str));
    let cmdline = root.fact("/proc/cmdline");
    let line = cmdline.value().cloned().unwrap_or_default();
    let param = |name: &str| boot_cpus(&line, name);
    let preemption = preemption(root, &version, &config, &line);
    KernelFacts {
        hrtimer_resolution_ns: hrtimer_resolution(root),
        online: root
            .fact("/sys/devices/system/cpu/online")
            .and_then(|s| cpu_list(&s)),
        isolated: root
            .fact("/sys/devices/system/cpu/isolated")
            .and_then(|s| cpu_list(&s)),
        isolcpus: param("isolcpus"),
        nohz_full: param("nohz_full"),
        rcu_nocbs: param("rcu_nocbs"),
        irqaffinity: param("irqaffinity"),
        release,
        version,
        config,
        preemption,
        cmdline,
        efi: efi(root),
    }
}

/// Whether the machine booted with EFI: `/sys/firmware/efi` exists (Documentation/ABI/
/// testing/sysfs-firmware-efi). In a fixture tree without `sys/firmware`, unknown.
fn efi(root: &Root) -> Fact<bool> {
    let source = "/sys/firmware/efi";
    if !root.is_live() && !root.path("/sys/firmware").is_dir() {
        return Fact::unknown("not in this tree", source);
    }
    Fact::known(root.path(source).is_dir(), source)
}

/// The CPUs of boot parameter `name=` on `cmdline` (last occurrence wins, as in the kernel);
/// flag words before the list (`isolcpus=nohz,domain,2-3`) are skipped. Empty when absent or
/// not a CPU list.
pub fn boot_cpus(cmdline: &str, name: &str) -> Vec<usize> {
    let Some(value) = cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| w.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
        .last()
    else {
        return Vec::new();
    };
    let list: Vec<&str> = value
        .split(',')
        .filter(|p| p.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    cpu_list(&list.join(",")).unwrap_or_default()
}

/// Parses a kernel `.config`: `CONFIG_X=v` lines; comments (including "is not set") skipped.
pub fn parse_config(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("CONFIG_"))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect()
}

fn config(root: &Root, release: Option<&str>) -> Fact<BTreeMap<String, String>> {
    let gz = "/proc/config.gz";
    match std::fs::read(root.path(gz)) {
        Ok(bytes) => {
            let mut text = String::new();
            match flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text) {
                Ok(_) => Fact::known(parse_config(&text), gz),
                Err(e) => Fact::unknown(format!("not gzip text: {e}"), gz),
            }
        }
        Err(gz_err) => {
            let Some(release) = release else {
                return Fact::unknown(super::why(&gz_err), gz);
            };
            let boot = format!("/boot/config-{release}");
            match root.read(&boot) {
                Ok(text) => Fact::known(parse_config(&text), boot),
                Err(reason) => Fact::unknown(
                    format!("{gz}: {}; {boot}: {reason}", super::why(&gz_err)),
                    format!("{gz}, {boot}"),
                ),
            }
        }
    }
}

/// The kernel log: `klogctl(2)` on the running system (CAP_SYSLOG, or `dmesg_restrict=0`),
/// the file `dmesg` of a fixture tree otherwise.
fn kernel_log(root: &Root) -> Option<String> {
    match root.is_live() {
        true => crate::system::kernel_log(),
        false => root.fact("/dmesg").value().cloned(),
    }
}

fn preemption(
    root: &Root,
    version: &Fact<String>,
    config: &Fact<BTreeMap<String, String>>,
    cmdline: &str,
) -> Fact<Preemption> {
    let banner = version.value().map(String::as_str).unwrap_or("");
    let cfg = |k: &str| {
        config
            .value()
            .and_then(|c| c.get(k))
            .is_some_and(|v| v == "y")
    };
    let dynamic = banner.contains("PREEMPT_DYNAMIC") || cfg("PREEMPT_DYNAMIC");
    let found = |model: &str, source: &str| {
        Fact::known(
            Preemption {
                model: model.to_string(),
                dynamic,
            },
            source,
        )
    };
    if root
        .fact("/sys/kernel/realtime")
        .value()
        .map(String::as_str)
        == Some("1")
    {
        return found("rt", "/sys/kernel/realtime");
    }
    if banner.contains("PREEMPT_RT") {
        return found("rt", "/proc/sys/kernel/version (uname -v)");
    }
    if cfg("PREEMPT_RT") {
        return found("rt", config.source());
    }
    if dynamic {
        // The selected mode is in parentheses: "none voluntary (full) lazy".
        let debugfs = root.fact("/sys/kernel/debug/sched/preempt");
        if let Some(mode) = debugfs.value().and_then(|s| s.split(['(', ')']).nth(1)) {
            return found(mode, "/sys/kernel/debug/sched/preempt");
        }
        // The boot log says "Dynamic Preempt: MODE" (kernel/sched/core.c,
        // sched_dynamic_update); it is gone once the ring buffer wrapped.
        if let Some(mode) = kernel_log(root).and_then(|log| {
            log.lines().find_map(|l| {
                l.split_once("Dynamic Preempt:")
                    .map(|(_, m)| m.trim().to_string())
            })
        }) {
            return found(&mode, "kernel log (\"Dynamic Preempt:\", klogctl(2))");
        }
        if let Some(mode) = cmdline
            .split_whitespace()
            .take_while(|w| *w != "--")
            .filter_map(|w| w.strip_prefix("preempt="))
            .last()
        {
            return found(mode, "/proc/cmdline (preempt=)");
        }
        // No override on the command line: the build's default mode applies.
        for (opt, mode) in [
            ("PREEMPT_NONE", "none"),
            ("PREEMPT_VOLUNTARY", "voluntary"),
            ("PREEMPT_LAZY", "lazy"),
            ("PREEMPT", "full"),
        ] {
            if cfg(opt) {
                return found(
                    mode,
                    &format!(
                        "{} (CONFIG_{opt}, the boot default; no preempt= on /proc/cmdline)",
                        config.source()
                    ),
                );
            }
        }
        return Fact::unknown(
            format!(
                "PREEMPT_DYNAMIC and the mode is not readable ({}; build configuration {})",
                debugfs.reason().unwrap_or("no mode"),
                config.reason().unwrap_or("has no PREEMPT_* choice")
            ),
            "/sys/kernel/debug/sched/preempt",
        );
    }
    if banner.contains("PREEMPT_LAZY") {
        return found("lazy", "/proc/sys/kernel/version (uname -v)");
    }
    if banner.contains("PREEMPT") {
        return found("full", "/proc/sys/kernel/version (uname -v)");
    }
    if cfg("PREEMPT_VOLUNTARY") {
        return found("voluntary", config.source());
    }
    if config.value().is_some() || !banner.is_empty() {
        return found("none", "/proc/sys/kernel/version (uname -v)");
    }
    Fact::unknown(
        "neither the banner nor the build configuration is readable",
        "uname -v",
    )
}

fn hrtimer_resolution(root: &Root) -> Fact<u64> {
    root.fact("/proc/timer_list").and_then(|s| {
        s.lines()
            .find_map(|l| l.trim().strip_prefix(".resolution:"))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| "no .resolution line".to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_parameters() {
        let c = "quiet isolcpus=managed_irq,domain,2-3 nohz_full=2,3 rcu_nocbs=1-3 -- nohz_full=0";
        assert_eq!(boot_cpus(c, "isolcpus"), vec![2, 3]);
        assert_eq!(boot_cpus(c, "nohz_full"), vec![2, 3]);
        assert_eq!(boot_cpus(c, "rcu_nocbs"), vec![1, 2, 3]);
        assert!(boot_cpus(c, "irqaffinity").is_empty());
    }

    #[test]
    fn config_lines() {
        let c = parse_config("# CONFIG_X is not set\nCONFIG_HZ=250\nCONFIG_S=\"a b\"\n");
        assert_eq!(c.get("HZ").map(String::as_str), Some("250"));
        assert_eq!(c.get("S").map(String::as_str), Some("a b"));
        assert!(!c.contains_key("X"));
    }
}
