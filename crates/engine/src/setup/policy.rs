//! Scheduling policy and priority of the calling thread, through `sched_setattr(2)`.
//!
//! One call covers every policy: SCHED_OTHER/BATCH (with nice), SCHED_IDLE, SCHED_FIFO/RR
//! (priority 1–99) and SCHED_DEADLINE (runtime ≤ deadline ≤ period, ns). The layout of
//! `struct sched_attr` is `SCHED_ATTR_SIZE_VER0` (48 bytes) from `sched_setattr(2)`.

use super::last_os_error;
use crate::time::Nanos;
use serde::{Deserialize, Serialize};
use std::io;

/// A scheduling policy with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "lowercase")]
pub enum Policy {
    /// SCHED_OTHER, the default time-sharing policy, with a nice value (−20 ..= 19).
    Other {
        /// Nice value, −20 (most favoured) ..= 19.
        nice: i32,
    },
    /// SCHED_BATCH: like OTHER, but assumed CPU-bound (no wake-up preference).
    Batch {
        /// Nice value, −20 ..= 19.
        nice: i32,
    },
    /// SCHED_IDLE: runs only when nothing else wants the CPU.
    Idle,
    /// SCHED_FIFO with a static priority 1 ..= 99.
    Fifo {
        /// Static priority, 1 ..= 99.
        priority: u8,
    },
    /// SCHED_RR with a static priority 1 ..= 99.
    Rr {
        /// Static priority, 1 ..= 99.
        priority: u8,
    },
    /// SCHED_DEADLINE (earliest deadline first with a constant-bandwidth server).
    Deadline {
        /// CPU time reserved per period (ns, ≥ 1024).
        runtime_ns: Nanos,
        /// Relative deadline (ns), runtime ≤ deadline ≤ period.
        deadline_ns: Nanos,
        /// Reservation period (ns).
        period_ns: Nanos,
    },
}

impl Policy {
    /// The policy's short name: `other`, `batch`, `idle`, `fifo`, `rr`, `deadline`.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Other { .. } => "other",
            Policy::Batch { .. } => "batch",
            Policy::Idle => "idle",
            Policy::Fifo { .. } => "fifo",
            Policy::Rr { .. } => "rr",
            Policy::Deadline { .. } => "deadline",
        }
    }

    /// Whether this is a real-time policy (FIFO, RR or DEADLINE).
    pub fn is_realtime(&self) -> bool {
        matches!(
            self,
            Policy::Fifo { .. } | Policy::Rr { .. } | Policy::Deadline { .. }
        )
    }

    fn to_attr(self) -> SchedAttr {
        let mut a = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            ..SchedAttr::default()
        };
        match self {
            Policy::Other { nice } => {
                a.policy = libc::SCHED_OTHER as u32;
                a.nice = nice;
            }
            Policy::Batch { nice } => {
                a.policy = libc::SCHED_BATCH as u32;
                a.nice = nice;
            }
            Policy::Idle => a.policy = libc::SCHED_IDLE as u32,
            Policy::Fifo { priority } => {
                a.policy = libc::SCHED_FIFO as u32;
                a.priority = priority as u32;
            }
            Policy::Rr { priority } => {
                a.policy = libc::SCHED_RR as u32;
                a.priority = priority as u32;
            }
            Policy::Deadline {
                runtime_ns,
                deadline_ns,
                period_ns,
            } => {
                a.policy = SCHED_DEADLINE;
                a.runtime = runtime_ns.max(0) as u64;
                a.deadline = deadline_ns.max(0) as u64;
                a.period = period_ns.max(0) as u64;
            }
        }
        a
    }

    fn from_attr(a: &SchedAttr) -> Policy {
        match a.policy as i32 {
            libc::SCHED_BATCH => Policy::Batch { nice: a.nice },
            libc::SCHED_IDLE => Policy::Idle,
            libc::SCHED_FIFO => Policy::Fifo {
                priority: a.priority as u8,
            },
            libc::SCHED_RR => Policy::Rr {
                priority: a.priority as u8,
            },
            p if p as u32 == SCHED_DEADLINE => Policy::Deadline {
                runtime_ns: a.runtime as Nanos,
                deadline_ns: a.deadline as Nanos,
                period_ns: a.period as Nanos,
            },
            _ => Policy::Other { nice: a.nice },
        }
    }
}

const SCHED_DEADLINE: u32 = 6;

/// `struct sched_attr`, SCHED_ATTR_SIZE_VER0 (`sched_setattr(2)`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
}

/// `sched_getattr(2)` of thread `tid` (0: the calling thread).
fn get_attr(tid: i32) -> io::Result<SchedAttr> {
    let mut a = SchedAttr::default();
    // SAFETY: `tid` is a thread id (0: the calling thread); `a` is writable and its size is
    // passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid,
            &mut a as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0,
        )
    };
    if r != 0 {
        return Err(last_os_error());
    }
    Ok(a)
}

fn set_attr(a: &SchedAttr) -> io::Result<()> {
    // SAFETY: pid 0 is the calling thread; `a` is a valid sched_attr whose size field is set.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, a as *const SchedAttr, 0) };
    if r != 0 {
        return Err(last_os_error());
    }
    Ok(())
}

/// The calling thread's current policy and parameters.
///
/// # Errors
/// The OS error of `sched_getattr`.
pub fn current_policy() -> io::Result<Policy> {
    policy_of(0)
}

/// Thread `tid`'s current policy and parameters, any thread of the machine (`sched_getattr(2)`;
/// 0 is the calling thread): SCHED_DEADLINE's runtime, deadline and period included, which
/// `sched_getparam(2)` cannot give.
///
/// # Errors
/// The OS error of `sched_getattr` (`ESRCH` once the thread is gone).
pub fn policy_of(tid: i32) -> io::Result<Policy> {
    get_attr(tid).map(|a| Policy::from_attr(&a))
}

/// The policy of this process's thread `tid` as read back from the kernel with
/// `sched_getattr(2)` — one system call, no file to open or parse, so that the collector
/// can read it back every window — written as `fifo:90`, `rr:5`, `other`, `other nice 5`,
/// `batch`, `idle`, `deadline` ([`policy_text`]; policy numbers from `sched(7)`), the words
/// `tickscope_explain`'s context uses. `None` when `tid` is not a live thread (any more).
pub(crate) fn read_back(tid: i32) -> Option<String> {
    if tid <= 0 {
        return None;
    }
    get_attr(tid)
        .ok()
        .map(|a| policy_text(&Policy::from_attr(&a)))
}

/// A policy as `read_back` writes it: `fifo:90`, `rr:5`, `other`, `other nice 5`,
/// `batch`, `batch nice 5`, `idle`, `deadline`.
pub fn policy_text(p: &Policy) -> String {
    let with_nice = |name: &str, nice: i32| match nice {
        0 => name.to_string(),
        n => format!("{name} nice {n}"),
    };
    match *p {
        Policy::Other { nice } => with_nice("other", nice),
        Policy::Batch { nice } => with_nice("batch", nice),
        Policy::Fifo { priority } => format!("fifo:{priority}"),
        Policy::Rr { priority } => format!("rr:{priority}"),
        Policy::Idle => "idle".into(),
        Policy::Deadline { .. } => "deadline".into(),
    }
}

/// Sets the calling thread's policy; restores the previous one when dropped.
/// Must be dropped on the thread that created it.
#[derive(Debug)]
pub struct PolicyGuard {
    saved: SchedAttr,
}

impl PolicyGuard {
    /// Applies `policy` to the calling thread.
    ///
    /// # Errors
    /// `EPERM` without the privilege (see [`super::privileges::explain_policy_error`]),
    /// `EBUSY` when SCHED_DEADLINE admission control refuses the bandwidth, `EINVAL` for
    /// parameters out of range.
    pub fn apply(policy: Policy) -> io::Result<Self> {
        let mut saved = get_attr(0)?;
        saved.size = std::mem::size_of::<SchedAttr>() as u32;
        set_attr(&policy.to_attr())?;
        Ok(PolicyGuard { saved })
    }
}

impl Drop for PolicyGuard {
    fn drop(&mut self) {
        let _ = set_attr(&self.saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_read_back_from_the_kernel() {
        assert_eq!(policy_text(&Policy::Fifo { priority: 90 }), "fifo:90");
        assert_eq!(policy_text(&Policy::Other { nice: 5 }), "other nice 5");
        assert_eq!(policy_text(&Policy::Other { nice: 0 }), "other");
        assert_eq!(policy_text(&Policy::Batch { nice: -2 }), "batch nice -2");
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() };
        let mine = current_policy().map(|p| policy_text(&p)).ok();
        assert!(mine.is_some());
        assert_eq!(read_back(me), mine, "this thread's own policy reads back");
        assert_eq!(read_back(-1), None);
        assert_eq!(read_back(0), None);
    }

    #[test]
    fn attr_round_trips() {
        for p in [
            Policy::Other { nice: 3 },
            Policy::Batch { nice: 0 },
            Policy::Idle,
            Policy::Fifo { priority: 90 },
            Policy::Rr { priority: 1 },
            Policy::Deadline {
                runtime_ns: 100_000,
                deadline_ns: 1_000_000,
                period_ns: 1_000_000,
            },
        ] {
            assert_eq!(Policy::from_attr(&p.to_attr()), p);
        }
    }

    #[test]
    fn sched_attr_has_the_kernel_size() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 48);
    }

    #[test]
    fn raising_nice_is_always_allowed_and_restored() {
        std::thread::spawn(|| {
            let before = current_policy().unwrap();
            {
                let _g = PolicyGuard::apply(Policy::Other { nice: 5 }).unwrap();
                assert_eq!(current_policy().unwrap(), Policy::Other { nice: 5 });
            }
            assert_eq!(current_policy().unwrap(), before);
        })
        .join()
        .unwrap();
    }
}
