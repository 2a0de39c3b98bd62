//! The kernel: version banner, build configuration, preemption model, high-resolution
//! timers, HZ and NO_HZ, and the CPU-isolation boot parameters.
//!
//! Sources: `/proc/sys/kernel/{osrelease,version}` (what `uname -r`/`-v` print);
//! `/proc/config.gz` (CONFIG_IKCONFIG_PROC) or `/boot/config-<release>`; the preemption
//! model from `/sys/kernel/realtime` (PREEMPT_RT), `/sys/kernel/debug/sched/preempt`
//! (PREEMPT_DYNAMIC; debugfs, root), the banner, the build configuration, the kernel log's
//! `Dynamic Preempt:` line (`/dev/kmsg`, non-blocking) and `preempt=` (in the order
//! `preemption` gives)
//! (Documentation/admin-guide/kernel-parameters.txt); `/proc/timer_list` (root) for the
//! hrtimer resolution (Documentation/timers/highres.rst: 1 ns when high-resolution mode is
//! active, the tick period otherwise); `/proc/cmdline` for `isolcpus=`, `nohz_full=`,
//! `rcu_nocbs=`, `irqaffinity=` (Documentation/timers/no_hz.rst,
//! Documentation/admin-guide/kernel-per-CPU-kthreads.rst).

use super::kernel_config::KernelConfig;
use super::{cpu_list, Fact, Root};
use serde::{Deserialize, Serialize};
use std::io::Read;

/// The preemption model and how it was found (the fact's source is the one used).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preemption {
    /// `none`, `voluntary`, `full`, `lazy` or `rt`.
    pub model: String,
    /// Whether the model can be switched at boot (`CONFIG_PREEMPT_DYNAMIC`).
    pub dynamic: bool,
    /// The sources tried before the one used, each with why it did not answer
    /// (`/sys/kernel/debug/sched/preempt: absent`); empty when the first answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
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
    pub config: Fact<KernelConfig>,
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
    /// The ftrace tracer selected now (`current_tracer` in tracefs: `nop` when none, or e.g.
    /// `irqsoff`, `preemptoff`, `function`; Documentation/trace/ftrace.rst); root only.
    #[serde(default = "unknown_tracer")]
    pub current_tracer: Fact<String>,
    /// Whether the kernel exposes its own BTF (`/sys/kernel/btf/vmlinux` exists;
    /// `CONFIG_DEBUG_INFO_BTF`, Documentation/bpf/btf.rst): what `--explain`'s BPF backend
    /// loads its programs against.
    #[serde(default = "unknown_btf")]
    pub btf: Fact<bool>,
}

fn unknown_tracer() -> Fact<String> {
    Fact::unknown("not recorded", TRACEFS_CURRENT_TRACER[0])
}

/// Where tracefs shows the current tracer: its own mount point (Linux 4.1 and later), then
/// the older place under debugfs (Documentation/trace/ftrace.rst, "The File System").
pub const TRACEFS_CURRENT_TRACER: [&str; 2] = [
    "/sys/kernel/tracing/current_tracer",
    "/sys/kernel/debug/tracing/current_tracer",
];

/// The current tracer from the first tracefs place that answers; unknown with both reasons.
fn current_tracer(root: &Root) -> Fact<String> {
    let mut why = Vec::new();
    for path in TRACEFS_CURRENT_TRACER {
        match root.fact(path) {
            Fact::Known { value, source } if !value.is_empty() => {
                return Fact::known(value, source)
            }
            Fact::Known { .. } => why.push(format!("{path}: empty (tracefs not mounted)")),
            Fact::Unknown { reason, .. } => why.push(format!("{path}: {reason}")),
        }
    }
    let reason = if why.iter().any(|w| w.contains("needs root")) {
        format!("needs root ({})", why.join("; "))
    } else if why.iter().all(|w| w.ends_with(": absent")) {
        "absent (tracefs not mounted)".to_string()
    } else {
        why.join("; ")
    };
    Fact::unknown(reason, TRACEFS_CURRENT_TRACER.join(", "))
}

fn unknown_efi() -> Fact<bool> {
    Fact::unknown("not recorded", "/sys/firmware/efi")
}

fn unknown_btf() -> Fact<bool> {
    Fact::unknown("not recorded", BTF)
}

/// Where the kernel's own BTF is (Documentation/ABI/testing/sysfs-kernel-btf).
const BTF: &str = "/sys/kernel/btf/vmlinux";

impl KernelFacts {
    /// `CONFIG_<name>`'s value, when the configuration is known and sets it.
    pub fn config_value(&self, name: &str) -> Option<&str> {
        self.config.value().and_then(|c| c.get(name))
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
        current_tracer: current_tracer(root),
        btf: btf(root),
    }
}

/// Whether `/sys/kernel/btf/vmlinux` exists. In a fixture tree without `sys/kernel`, unknown.
fn btf(root: &Root) -> Fact<bool> {
    if !root.is_live() && !root.path("/sys/kernel").is_dir() {
        return Fact::unknown("not in this tree", BTF);
    }
    Fact::known(root.path(BTF).is_file(), BTF)
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

fn config(root: &Root, release: Option<&str>) -> Fact<KernelConfig> {
    let gz = "/proc/config.gz";
    match std::fs::read(root.path(gz)) {
        Ok(bytes) => {
            let mut text = String::new();
            match flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text) {
                Ok(_) => Fact::known(KernelConfig::parse(&text), gz),
                Err(e) => Fact::unknown(format!("not gzip text: {e}"), gz),
            }
        }
        Err(gz_err) => {
            let Some(release) = release else {
                return Fact::unknown(super::why(&gz_err), gz);
            };
            let boot = format!("/boot/config-{release}");
            match root.read(&boot) {
                Ok(text) => Fact::known(KernelConfig::parse(&text), boot),
                Err(reason) => Fact::unknown(
                    format!("{gz}: {}; {boot}: {reason}", super::why(&gz_err)),
                    format!("{gz}, {boot}"),
                ),
            }
        }
    }
}

/// Where the kernel log is read: `/dev/kmsg` (Documentation/ABI/testing/dev-kmsg), opened
/// non-blocking so reading stops at the end of the buffer instead of waiting for new records.
pub const KMSG: &str = "/dev/kmsg";

/// Most bytes read from the kernel log (its ring buffer is 2^CONFIG_LOG_BUF_SHIFT bytes,
/// 128 KiB to a few MiB; records carry a header besides).
const KMSG_MAX_BYTES: usize = 32 << 20;

/// The kernel log's records as text, read from `path` under `root` non-blocking until the end
/// (`EAGAIN`; `EOF` for a fixture's regular file). A record overwritten while reading
/// (`EPIPE`) is skipped, as dev-kmsg documents.
///
/// # Errors
/// Why the log could not be read: `needs root (permission denied)` without CAP_SYSLOG under
/// `kernel.dmesg_restrict=1` (Documentation/admin-guide/sysctl/kernel.rst), `absent`, …
pub fn read_kernel_log(root: &Root, path: &str) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(root.path(path))
        .map_err(|e| super::why(&e))?;
    let mut text = Vec::new();
    // One record per read(2) from /dev/kmsg; a record is at most 1 KiB of text plus its
    // dictionary, so 8 KiB never gets EINVAL for a short buffer.
    let mut buf = vec![0u8; 8192];
    while text.len() < KMSG_MAX_BYTES {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if text.is_empty() => return Err(super::why(&e)),
            Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// The preemption mode the kernel log last reported: the text after the last
/// `Dynamic Preempt:` (printed at boot and at every change, kernel/sched/core.c
/// `sched_dynamic_update`), in `/dev/kmsg`'s record format (`6,123,456,-;Dynamic Preempt:
/// full`) or `dmesg`'s (`[    0.24] Dynamic Preempt: full`).
pub fn dynamic_preempt_in_log(log: &str) -> Option<String> {
    log.lines()
        .rev()
        .filter_map(|l| l.split_once("Dynamic Preempt:"))
        .map(|(_, m)| m.trim().to_string())
        .find(|m| !m.is_empty())
}

/// The preemption model, from the first source that tells it:
/// 1. PREEMPT_RT: `/sys/kernel/realtime` = 1, `PREEMPT_RT` in `uname -v`, or
///    `CONFIG_PREEMPT_RT=y` (an RT kernel is `rt` whatever its dynamic mode);
/// 2. `/sys/kernel/debug/sched/preempt` (PREEMPT_DYNAMIC; the current mode in parentheses,
///    `none voluntary (full) lazy`; debugfs, root);
/// 3. `uname -v` of a kernel built without PREEMPT_DYNAMIC (`PREEMPT_LAZY`, `PREEMPT`);
/// 4. the build configuration of such a kernel (`CONFIG_PREEMPT_VOLUNTARY`, `…_NONE`);
/// 5. for PREEMPT_DYNAMIC, the kernel log's last `Dynamic Preempt:` line (`/dev/kmsg`,
///    non-blocking; the boot mode and every change since, unless the ring buffer wrapped);
/// 6. for PREEMPT_DYNAMIC, `preempt=` on `/proc/cmdline`, else the build's default mode
///    (`CONFIG_PREEMPT_{NONE,VOLUNTARY,LAZY}`, `CONFIG_PREEMPT`).
///
/// The build configuration comes before the kernel log for a kernel without
/// PREEMPT_DYNAMIC because its model is fixed at build time; for a PREEMPT_DYNAMIC kernel it
/// is only the default that `preempt=` or a later change overrides, so the log comes first.
/// The sources that did not answer are kept in [`Preemption::skipped`].
fn preemption(
    root: &Root,
    version: &Fact<String>,
    config: &Fact<KernelConfig>,
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
    let mut skipped: Vec<String> = Vec::new();
    let found = |model: &str, source: &str, skipped: &[String]| {
        Fact::known(
            Preemption {
                model: model.to_string(),
                dynamic,
                skipped: skipped.to_vec(),
            },
            source,
        )
    };
    let uname = "/proc/sys/kernel/version (uname -v)";
    // 1. PREEMPT_RT.
    let realtime = root.fact("/sys/kernel/realtime");
    if realtime.value().map(String::as_str) == Some("1") {
        return found("rt", "/sys/kernel/realtime", &skipped);
    }
    if banner.contains("PREEMPT_RT") {
        return found("rt", uname, &skipped);
    }
    if cfg("PREEMPT_RT") {
        return found("rt", config.source(), &skipped);
    }
    // 2. debugfs.
    let debugfs_path = "/sys/kernel/debug/sched/preempt";
    let debugfs = root.fact(debugfs_path);
    match debugfs.value().and_then(|s| s.split(['(', ')']).nth(1)) {
        Some(mode) if !mode.trim().is_empty() => return found(mode.trim(), debugfs_path, &skipped),
        _ => skipped.push(format!(
            "{debugfs_path}: {}",
            debugfs.reason().unwrap_or("no mode in parentheses")
        )),
    }
    if !dynamic {
        // 3. The banner of a kernel whose model is fixed at build time.
        if banner.contains("PREEMPT_LAZY") {
            return found("lazy", uname, &skipped);
        }
        if banner.split_whitespace().any(|w| w == "PREEMPT") {
            return found("full", uname, &skipped);
        }
        skipped.push(match version.reason() {
            Some(r) => format!("{uname}: {r}"),
            None => format!("{uname}: no PREEMPT in the banner"),
        });
        // 4. Its build configuration.
        for (opt, mode) in [
            ("PREEMPT_VOLUNTARY", "voluntary"),
            ("PREEMPT_NONE", "none"),
            ("PREEMPT_LAZY", "lazy"),
            ("PREEMPT", "full"),
        ] {
            if cfg(opt) {
                return found(
                    mode,
                    &format!("{} (CONFIG_{opt})", config.source()),
                    &skipped,
                );
            }
        }
        if config.value().is_some() || !banner.is_empty() {
            // A banner without PREEMPT and no choice in the configuration: PREEMPT_NONE.
            return found(
                "none",
                &format!("{uname} (no PREEMPT in the banner)"),
                &skipped,
            );
        }
        return Fact::unknown(
            format!(
                "neither the banner nor the build configuration is readable ({})",
                skipped.join("; ")
            ),
            "uname -v",
        );
    }
    skipped.push(format!(
        "{uname}: PREEMPT_DYNAMIC, the mode is chosen at boot"
    ));
    // 5. The kernel log.
    let log_source = format!("kernel log ({KMSG}, \"Dynamic Preempt:\")");
    let log_path = KMSG;
    match read_kernel_log(root, log_path) {
        Ok(log) => match dynamic_preempt_in_log(&log) {
            Some(mode) => return found(&mode, &log_source, &skipped),
            None => skipped.push(format!(
                "{log_path}: no \"Dynamic Preempt:\" line (the ring buffer wrapped?)"
            )),
        },
        Err(reason) => skipped.push(format!("{log_path}: {reason}")),
    }
    // 6. The command line, then the build's default.
    if let Some(mode) = cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| w.strip_prefix("preempt="))
        .last()
    {
        return found(mode, "/proc/cmdline (preempt=)", &skipped);
    }
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
                &skipped,
            );
        }
    }
    skipped.push(format!(
        "build configuration: {}",
        config.reason().unwrap_or("has no PREEMPT_* choice")
    ));
    Fact::unknown(
        format!(
            "PREEMPT_DYNAMIC and the mode is not readable ({})",
            skipped.join("; ")
        ),
        debugfs_path,
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
        let c = KernelConfig::parse("# CONFIG_X is not set\nCONFIG_HZ=250\nCONFIG_S=\"a b\"\n");
        assert_eq!(c.get("HZ"), Some("250"));
        assert_eq!(c.get("S"), Some("a b"));
        assert_eq!(c.get("X"), None);
    }
}
