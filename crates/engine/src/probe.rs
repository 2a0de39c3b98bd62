//! Reading the system the engine itself needs: where `/proc` and `/sys` are ([`Root`]: the
//! live system or a fixture tree), a value read with its source or why it is unknown
//! ([`Fact`]), and the few probes that word a refused setting
//! ([`crate::setup::privileges`]): the effective capabilities, the soft resource limits and
//! the RT throttling budget. The machine facts of `tickscope doctor` (crate
//! `tickscope-system`) are built on the same types and readers.
//!
//! Sources: `CapEff` of `/proc/self/status` (capabilities(7), bit numbers from
//! `include/uapi/linux/capability.h`), `getrlimit(2)`, `/proc/sys/kernel/sched_rt_runtime_us`
//! and `sched_rt_period_us`, the cgroup v1 `cpu.rt_runtime_us` of this process's cgroup
//! (Documentation/scheduler/sched-rt-group.rst); file formats as in the kernel's
//! `Documentation/filesystems/proc.rst`.

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

/// Path-independent convenience for tests and callers: `Path` to `Root`.
impl From<&Path> for Root {
    fn from(p: &Path) -> Self {
        Root::at(p)
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

/// A soft resource limit: a number or unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// No limit (`RLIM_INFINITY`).
    Unlimited,
    /// The limit (bytes for RLIMIT_MEMLOCK, a priority 0..99 for RLIMIT_RTPRIO).
    Value(u64),
}

/// The calling process's soft limit for `resource` (`getrlimit(2)`).
pub fn soft_rlimit(resource: libc::__rlimit_resource_t) -> Limit {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a writable rlimit.
    unsafe { libc::getrlimit(resource, &mut r) };
    if r.rlim_cur == libc::RLIM_INFINITY {
        Limit::Unlimited
    } else {
        Limit::Value(r.rlim_cur)
    }
}

/// CAP_SYS_NICE's bit in the capability sets.
pub const CAP_SYS_NICE: u32 = 23;
/// CAP_IPC_LOCK's bit.
pub const CAP_IPC_LOCK: u32 = 14;

/// The effective capability mask from `/proc/self/status`.
pub fn capabilities(root: &Root) -> Fact<u64> {
    root.fact("/proc/self/status").and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .ok_or_else(|| "no CapEff line".to_string())
    })
}

/// `/proc/sys/kernel/sched_rt_runtime_us`.
pub fn rt_runtime_us(root: &Root) -> Fact<i64> {
    root.parsed("/proc/sys/kernel/sched_rt_runtime_us")
}

/// `/proc/sys/kernel/sched_rt_period_us`.
pub fn rt_period_us(root: &Root) -> Fact<i64> {
    root.parsed("/proc/sys/kernel/sched_rt_period_us")
}

/// The RT budget of this process's cgroup (`/proc/self/cgroup`'s `cpu` controller line, then
/// `cpu.rt_runtime_us` under the v1 mount `/sys/fs/cgroup/cpu,cpuacct` or `/sys/fs/cgroup/cpu`).
pub fn cgroup_rt_runtime_us(root: &Root) -> Fact<i64> {
    let cgroups = match root.read("/proc/self/cgroup") {
        Ok(s) => s,
        Err(r) => return Fact::unknown(r, "/proc/self/cgroup"),
    };
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == "cpu") {
            let path = path.trim_end_matches('/');
            for mount in ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"] {
                let f = format!("{mount}{path}/cpu.rt_runtime_us");
                if let Fact::Known { value, source } = root.parsed::<i64>(&f) {
                    return Fact::known(value, source);
                }
            }
        }
    }
    Fact::unknown(
        "no cgroup v1 cpu.rt_runtime_us (RT group scheduling not exposed)",
        "/proc/self/cgroup",
    )
}
