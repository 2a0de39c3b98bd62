//! What this process may set: capabilities, the RT-priority and memory-lock limits, and
//! write access to the PM QoS device.
//!
//! Sources: `CapEff` and `Uid` of `/proc/self/status` (capabilities(7), bit numbers from
//! `include/uapi/linux/capability.h`), `/proc/self/limits`, `faccessat(2)` with `AT_EACCESS`
//! on `/dev/cpu_dma_latency` (nothing is opened, so no PM QoS request is made).

use super::memory::Limit;
use super::{Fact, Root};
use serde::{Deserialize, Serialize};
pub use tickscope_engine::probe::{capabilities, CAP_IPC_LOCK, CAP_SYS_NICE};

/// CAP_SYSLOG's bit in the capability sets (include/uapi/linux/capability.h): kernel
/// addresses in `/proc/kallsyms` and the kernel log.
pub const CAP_SYSLOG: u32 = 34;
/// CAP_PERFMON's bit: attaching BPF programs to tracepoints, BPF helpers that read kernel
/// memory (Linux 5.8+).
pub const CAP_PERFMON: u32 = 38;
/// CAP_BPF's bit: loading BPF programs and creating maps (Linux 5.8+).
pub const CAP_BPF: u32 = 39;

/// Privilege facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrivilegeFacts {
    /// Effective user id.
    pub euid: Fact<u32>,
    /// The effective capability mask.
    pub cap_eff: Fact<u64>,
    /// Soft RLIMIT_RTPRIO.
    pub rtprio: Fact<Limit>,
    /// Soft RLIMIT_MEMLOCK, bytes.
    pub memlock: Fact<Limit>,
    /// Whether this process may open `/dev/cpu_dma_latency` for writing.
    pub pm_qos_writable: Fact<bool>,
}

impl PrivilegeFacts {
    /// Whether the effective set holds capability bit `cap` (false when unknown).
    pub fn has(&self, cap: u32) -> bool {
        self.cap_eff.value().is_some_and(|m| m & (1u64 << cap) != 0)
    }

    /// Whether SCHED_FIFO/RR at `priority` is allowed: CAP_SYS_NICE or RLIMIT_RTPRIO ≥ it
    /// (sched(7)).
    pub fn may_set_rt(&self, priority: u8) -> bool {
        self.has(CAP_SYS_NICE)
            || matches!(self.rtprio.value(), Some(Limit::Unlimited))
            || matches!(self.rtprio.value(), Some(Limit::Value(v)) if *v >= u64::from(priority))
    }

    /// Whether `mlockall` of any size is allowed: CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK.
    pub fn may_lock_all(&self) -> bool {
        self.has(CAP_IPC_LOCK) || matches!(self.memlock.value(), Some(Limit::Unlimited))
    }
}

/// Reads the privilege facts of the calling process (a live root) or of the process a
/// fixture tree's `/proc/self` describes.
pub fn read(root: &Root) -> PrivilegeFacts {
    let status = root.fact("/proc/self/status");
    let field = |name: &'static str| {
        status.clone().and_then(move |s| {
            s.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .ok_or_else(|| format!("no {name} line"))
        })
    };
    let mem = super::memory::read_limits(root);
    PrivilegeFacts {
        euid: field("Uid:").and_then(|v| {
            v.split_whitespace()
                .nth(1)
                .and_then(|e| e.parse().ok())
                .ok_or_else(|| format!("unexpected Uid {v:?}"))
        }),
        cap_eff: capabilities(root),
        rtprio: mem.1,
        memlock: mem.0,
        pm_qos_writable: writable(root, super::power::PM_QOS_DEVICE),
    }
}

/// Whether the calling process may write `abs` under `root` (`faccessat(2)`, `AT_EACCESS`).
pub fn writable(root: &Root, abs: &str) -> Fact<bool> {
    let path = root.path(abs);
    if !path.exists() {
        return Fact::unknown("absent", abs);
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return Fact::unknown("path contains a NUL byte", abs);
    };
    // SAFETY: `c` is a NUL-terminated path.
    let r = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    Fact::known(r == 0, format!("faccessat({abs}, W_OK)"))
}
