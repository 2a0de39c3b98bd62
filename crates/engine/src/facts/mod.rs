//! Facts about the machine that bound wake-up latency, read from `/proc` and `/sys`.
//!
//! Every reader takes a [`Root`] — `/` on a live system, a fixture tree in tests — and
//! returns typed facts. What cannot be read becomes [`Fact::Unknown`] with the reason
//! (`needs root`, `absent`, `unexpected content …`); no reader panics on a missing or
//! malformed source. The `tickscope doctor` checks ([`crate::doctor`]) turn these facts into
//! findings; [`crate::setup::privileges`] uses the same readers to explain a refused setting.
//!
//! One file per concern: [`kernel`] (preemption model, high-resolution timers, HZ, NO_HZ,
//! isolation boot parameters), [`irq`], [`sched`], [`power`], [`memory`], [`time`], [`virt`],
//! [`privileges`]. File formats are those of the kernel's `Documentation/filesystems/proc.rst`
//! and `Documentation/ABI/` (<https://docs.kernel.org/filesystems/proc.html>).

pub mod irq;
pub mod kernel;
pub mod kernel_config;
pub mod memory;
pub mod power;
pub mod privileges;
pub mod sched;
pub mod time;
pub mod virt;

use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// Where `/proc`, `/sys` and `/dev` are: `/` on a live system, a fixture tree in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    dir: PathBuf,
    live: bool,
}

impl Root {
    /// The running system (`/`). Readers may also make system calls about the calling
    /// process (e.g. `faccessat(2)`) that a fixture tree stands in for otherwise.
    pub fn live() -> Self {
        Root {
            dir: PathBuf::from("/"),
            live: true,
        }
    }

    /// A tree mirroring `/proc`, `/sys` and `/dev` under `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Root {
            dir: dir.into(),
            live: false,
        }
    }

    /// Whether this is the running system.
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// The path of the absolute system path `abs` (e.g. `/proc/cmdline`) under this root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.dir.join(abs.trim_start_matches('/'))
    }

    /// The file's content, or why it could not be read (see [`why`]).
    ///
    /// # Errors
    /// The reason as one phrase, e.g. `needs root` or `absent`.
    pub fn read(&self, abs: &str) -> Result<String, String> {
        std::fs::read_to_string(self.path(abs)).map_err(|e| why(&e))
    }

    /// The file's content, trimmed, as a [`Fact`] citing `abs`.
    pub fn fact(&self, abs: &str) -> Fact<String> {
        match self.read(abs) {
            Ok(s) => Fact::known(s.trim().to_string(), abs),
            Err(reason) => Fact::unknown(reason, abs),
        }
    }

    /// The file's content parsed with `FromStr` after trimming.
    pub fn parsed<T: std::str::FromStr>(&self, abs: &str) -> Fact<T> {
        self.fact(abs).and_then(|s| {
            s.parse::<T>()
                .map_err(|_| format!("unexpected content {s:?}"))
        })
    }

    /// The names in a directory, sorted; empty when it cannot be listed.
    pub fn list(&self, abs: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(abs))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by_key(|a| natural(a));
        v
    }

    /// Whether `abs` exists under this root.
    pub fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }
}

/// Sort key putting `cpu2` before `cpu10` and `9` before `10`.
fn natural(s: &str) -> (String, u64, String) {
    let start = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
    let digits: String = s[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let rest = s[start + digits.len()..].to_string();
    (s[..start].to_string(), digits.parse().unwrap_or(0), rest)
}

/// One phrase for a failed read: `needs root` for EACCES/EPERM, `absent` for ENOENT, else the
/// system's message.
pub fn why(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::PermissionDenied => "needs root (permission denied)".into(),
        io::ErrorKind::NotFound => "absent".into(),
        _ => e.to_string(),
    }
}

/// A value read from the system, with the file or call it came from, or why it is unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Fact<T> {
    /// Read successfully.
    Known {
        /// The value.
        value: T,
        /// The file or call it came from, e.g. `/proc/cmdline`.
        source: String,
    },
    /// Not readable, absent or not understood.
    Unknown {
        /// Why, e.g. `needs root (permission denied)`.
        reason: String,
        /// The file or call that was tried.
        source: String,
    },
}

impl<T> Fact<T> {
    /// A known value from `source`.
    pub fn known(value: T, source: impl Into<String>) -> Self {
        Fact::Known {
            value,
            source: source.into(),
        }
    }

    /// An unknown value: `reason` why `source` gave none.
    pub fn unknown(reason: impl Into<String>, source: impl Into<String>) -> Self {
        Fact::Unknown {
            reason: reason.into(),
            source: source.into(),
        }
    }

    /// The value, if known.
    pub fn value(&self) -> Option<&T> {
        match self {
            Fact::Known { value, .. } => Some(value),
            Fact::Unknown { .. } => None,
        }
    }

    /// The file or call it came from (or was tried).
    pub fn source(&self) -> &str {
        match self {
            Fact::Known { source, .. } | Fact::Unknown { source, .. } => source,
        }
    }

    /// Why it is unknown, if it is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Fact::Known { .. } => None,
            Fact::Unknown { reason, .. } => Some(reason),
        }
    }

    /// Maps the value, keeping the source.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Fact<U> {
        match self {
            Fact::Known { value, source } => Fact::Known {
                value: f(value),
                source,
            },
            Fact::Unknown { reason, source } => Fact::Unknown { reason, source },
        }
    }

    /// Maps the value through a parser whose error becomes the unknown reason.
    pub fn and_then<U>(self, f: impl FnOnce(T) -> Result<U, String>) -> Fact<U> {
        match self {
            Fact::Known { value, source } => match f(value) {
                Ok(v) => Fact::Known { value: v, source },
                Err(reason) => Fact::Unknown { reason, source },
            },
            Fact::Unknown { reason, source } => Fact::Unknown { reason, source },
        }
    }

    /// Borrowing view.
    pub fn as_ref(&self) -> Fact<&T> {
        match self {
            Fact::Known { value, source } => Fact::Known {
                value,
                source: source.clone(),
            },
            Fact::Unknown { reason, source } => Fact::Unknown {
                reason: reason.clone(),
                source: source.clone(),
            },
        }
    }
}

/// A CPU list (`0-3,8`) as in `Documentation/admin-guide/kernel-parameters.rst` "cpu lists";
/// an empty string is the empty set.
///
/// # Errors
/// The text, quoted, when it is not a CPU list.
pub fn cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    crate::setup::parse_cpu_list(s).map_err(|_| format!("not a CPU list: {s:?}"))
}

/// A hexadecimal CPU mask as in `/proc/irq/*/smp_affinity` (`ff,ffffffff`): the CPUs set.
///
/// # Errors
/// The text, quoted, when it is not a mask.
pub fn cpu_mask(s: &str) -> Result<Vec<usize>, String> {
    let hex: String = s.trim().chars().filter(|&c| c != ',').collect();
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("not a CPU mask: {s:?}"));
    }
    let mut cpus = Vec::new();
    for (k, c) in hex.chars().rev().enumerate() {
        let nibble = c.to_digit(16).unwrap_or(0);
        for bit in 0..4 {
            if nibble & (1 << bit) != 0 {
                cpus.push(k * 4 + bit);
            }
        }
    }
    Ok(cpus)
}

/// Everything `tickscope doctor` reads, gathered once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// Kernel build and boot parameters.
    pub kernel: kernel::KernelFacts,
    /// Interrupts and their affinity.
    pub irq: irq::IrqFacts,
    /// Scheduler settings and kernel threads.
    pub sched: sched::SchedFacts,
    /// Idle states, PM QoS, frequency scaling.
    pub power: power::PowerFacts,
    /// THP, swap, memory-lock limit.
    pub memory: memory::MemoryFacts,
    /// Clocksource, SMT topology, lockup detector.
    pub time: time::TimeFacts,
    /// Hypervisor, haltpoll, steal time.
    pub virt: virt::VirtFacts,
    /// What this process may set.
    pub privileges: privileges::PrivilegeFacts,
}

impl Facts {
    /// Reads every fact under `root`; steal time is sampled over `steal_sample` (zero: a
    /// single reading, rate unknown). Never fails: unreadable facts are [`Fact::Unknown`].
    /// On the running system with a non-zero `steal_sample` (the full doctor, which may take
    /// time) the cost of a clock read is measured too ([`time::measure_monotonic_read`], within 50 ms).
    pub fn gather(root: &Root, steal_sample: std::time::Duration) -> Self {
        let mut time = time::read(root);
        if root.is_live() && !steal_sample.is_zero() {
            time.monotonic_read = time::measure_monotonic_read();
        }
        Facts {
            kernel: kernel::read(root),
            irq: irq::read(root),
            sched: sched::read(root),
            power: power::read(root),
            memory: memory::read(root),
            time,
            virt: virt::read(root, steal_sample),
            privileges: privileges::read(root),
        }
    }
}

/// Path-independent convenience for tests and callers: `Path` to `Root`.
impl From<&Path> for Root {
    fn from(p: &Path) -> Self {
        Root::at(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_lists() {
        assert_eq!(cpu_mask("3").unwrap(), vec![0, 1]);
        assert_eq!(cpu_mask("00000000,00000100").unwrap(), vec![8]);
        assert!(cpu_mask("xyz").is_err());
        assert_eq!(cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert_eq!(cpu_list("\n").unwrap(), Vec::<usize>::new());
        assert!(cpu_list("a-b").is_err());
    }

    #[test]
    fn unreadable_is_unknown_with_reason() {
        let root = Root::at("/nonexistent-tickscope-root");
        let f = root.fact("/proc/cmdline");
        assert_eq!(f.reason(), Some("absent"));
        assert_eq!(f.source(), "/proc/cmdline");
        let n: Fact<i64> = root.parsed("/proc/sys/kernel/sched_rt_runtime_us");
        assert!(n.value().is_none());
    }
}
