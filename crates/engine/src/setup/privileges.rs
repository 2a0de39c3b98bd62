//! Why a setting was refused, said in the terms of the fix.
//!
//! Sources: `sched(7)` (RLIMIT_RTPRIO, CAP_SYS_NICE, RT throttling, SCHED_DEADLINE admission
//! control and affinity), `capabilities(7)`, Documentation/scheduler/sched-rt-group.rst.
//!
//! The probes themselves are the readers of [`crate::probe`] (on the live root); this file
//! only words their answers for a failed run.

use super::Policy;
use std::io;

use crate::probe::{self, capabilities, soft_rlimit, Limit, Root};
use crate::probe::{CAP_IPC_LOCK, CAP_SYS_NICE};

/// Whether the process's effective capabilities include bit `cap` (from `/proc/self/status`).
pub(crate) fn has_capability(cap: u32) -> bool {
    capabilities(&Root::live())
        .value()
        .is_some_and(|mask| mask & (1u64 << cap) != 0)
}

/// Whether the process may set real-time policies regardless of RLIMIT_RTPRIO.
pub fn has_cap_sys_nice() -> bool {
    has_capability(CAP_SYS_NICE)
}

/// The soft RLIMIT_RTPRIO (`ulimit -r`): the highest RT priority allowed without
/// CAP_SYS_NICE.
pub fn rtprio_limit() -> u64 {
    rlimit(libc::RLIMIT_RTPRIO)
}

fn rlimit(resource: libc::__rlimit_resource_t) -> u64 {
    match soft_rlimit(resource) {
        Limit::Unlimited => libc::RLIM_INFINITY,
        Limit::Value(v) => v,
    }
}

/// `/proc/sys/kernel/sched_rt_runtime_us`: µs per period RT tasks may use (-1: no limit).
pub fn rt_runtime_us() -> Option<i64> {
    probe::rt_runtime_us(&Root::live()).value().copied()
}

/// `/proc/sys/kernel/sched_rt_period_us`: the RT throttling period in µs.
pub fn rt_period_us() -> Option<i64> {
    probe::rt_period_us(&Root::live()).value().copied()
}

/// The RT runtime budget of this process's cgroup under RT group scheduling
/// (cgroup v1 `cpu.rt_runtime_us`), where the kernel exposes one.
fn cgroup_rt_runtime_us() -> Option<i64> {
    probe::cgroup_rt_runtime_us(&Root::live()).value().copied()
}

/// One sentence saying why `policy` could not be applied and how to allow it.
pub fn explain_policy_error(policy: &Policy, err: &io::Error) -> String {
    let what = describe(policy);
    let errno = err.raw_os_error().unwrap_or(0);
    let mut reasons = Vec::new();
    match (policy, errno) {
        (Policy::Deadline { .. }, libc::EBUSY) => reasons.push(
            "SCHED_DEADLINE admission control refused the bandwidth: the runtime/period of all \
             deadline threads must fit in sched_rt_runtime_us/sched_rt_period_us per CPU; \
             lower the deadline runtime or use fewer threads"
                .to_string(),
        ),
        (Policy::Deadline { .. }, libc::EINVAL) => reasons.push(
            "the kernel rejected the parameters: runtime must be at least 1024 ns and \
             runtime <= deadline <= period"
                .to_string(),
        ),
        (Policy::Deadline { .. }, libc::EPERM) if has_cap_sys_nice() => reasons.push(
            "a SCHED_DEADLINE thread's CPU affinity must span its whole root domain: run it \
             unpinned rather than one thread per CPU, or put it in an exclusive cpuset"
                .to_string(),
        ),
        (_, libc::EPERM) => {
            if !has_cap_sys_nice() {
                let limit = rtprio_limit();
                match policy {
                    Policy::Fifo { priority } | Policy::Rr { priority } => reasons.push(format!(
                        "the process lacks CAP_SYS_NICE and RLIMIT_RTPRIO is {limit} (below \
                         priority {priority}): run as root, grant the capability with \
                         'sudo setcap cap_sys_nice+ep <path to tickscope>', or raise \
                         'ulimit -r' (e.g. '@realtime - rtprio 99' in /etc/security/limits.conf)"
                    )),
                    Policy::Deadline { .. } => reasons.push(
                        "SCHED_DEADLINE needs CAP_SYS_NICE: run as root or grant it with \
                         'sudo setcap cap_sys_nice+ep <path to tickscope>'"
                            .to_string(),
                    ),
                    _ => reasons.push(
                        "a negative nice value needs CAP_SYS_NICE or RLIMIT_NICE \
                         ('ulimit -e'); use a nice value of 0 or higher, or run as root"
                            .to_string(),
                    ),
                }
            }
            if rt_runtime_us() == Some(0) {
                reasons.push(
                    "real-time scheduling is disabled: /proc/sys/kernel/sched_rt_runtime_us is 0 \
                     (set it to 950000 to allow RT tasks)"
                        .to_string(),
                );
            }
            if cgroup_rt_runtime_us() == Some(0) {
                reasons.push(
                    "RT group scheduling gives this process's cgroup no RT budget \
                     (cpu.rt_runtime_us = 0): give the cgroup a budget or start tickscope \
                     from the root cgroup"
                        .to_string(),
                );
            }
            if reasons.is_empty() {
                reasons.push(
                    "the kernel refused it (EPERM) although the process has CAP_SYS_NICE; \
                     a container runtime or RT group scheduling may forbid RT policies"
                        .to_string(),
                );
            }
        }
        _ => reasons.push(format!("{err}")),
    }
    format!("cannot set {what}: {}", reasons.join("; "))
}

/// Whether locking memory is unbounded for this process: CAP_IPC_LOCK, or an unlimited
/// `RLIMIT_MEMLOCK`.
pub(crate) fn memlock_unlimited() -> bool {
    has_capability(CAP_IPC_LOCK) || rlimit(libc::RLIMIT_MEMLOCK) == libc::RLIM_INFINITY
}

/// The soft `RLIMIT_MEMLOCK` in bytes (`ulimit -l` × 1024), `None` when unlimited.
pub(crate) fn memlock_limit() -> Option<u64> {
    let l = rlimit(libc::RLIMIT_MEMLOCK);
    (l != libc::RLIM_INFINITY).then_some(l)
}

/// One sentence for a failed `mlockall`.
pub fn explain_mlock_error(err: &io::Error) -> String {
    let limit = rlimit(libc::RLIMIT_MEMLOCK);
    let limit = if limit == libc::RLIM_INFINITY {
        "unlimited".to_string()
    } else {
        format!("{} KiB", limit / 1024)
    };
    if has_capability(CAP_IPC_LOCK) {
        format!("cannot lock memory: {err}")
    } else {
        format!(
            "cannot lock memory ({err}): RLIMIT_MEMLOCK is {limit} ('ulimit -l'); run as root, \
             grant 'sudo setcap cap_ipc_lock+ep <path to tickscope>', raise 'ulimit -l', or \
             do without locking memory"
        )
    }
}

/// One sentence for a failed PM QoS request.
pub fn explain_pm_qos_error(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "cannot hold {}: permission denied (the device is root-only); run as root or \
             leave PM QoS alone",
            super::PM_QOS_PATH
        ),
        Some(libc::ENOENT) => format!(
            "cannot hold {}: the kernel has no such device",
            super::PM_QOS_PATH
        ),
        _ => format!("cannot hold {}: {err}", super::PM_QOS_PATH),
    }
}

fn describe(p: &Policy) -> String {
    match p {
        Policy::Fifo { priority } => format!("SCHED_FIFO priority {priority}"),
        Policy::Rr { priority } => format!("SCHED_RR priority {priority}"),
        Policy::Deadline {
            runtime_ns,
            period_ns,
            ..
        } => format!("SCHED_DEADLINE runtime {runtime_ns} ns / period {period_ns} ns"),
        Policy::Other { nice } => format!("SCHED_OTHER nice {nice}"),
        Policy::Batch { nice } => format!("SCHED_BATCH nice {nice}"),
        Policy::Idle => "SCHED_IDLE".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explanations_name_the_setting() {
        let e = io::Error::from_raw_os_error(libc::EPERM);
        let s = explain_policy_error(&Policy::Fifo { priority: 90 }, &e);
        assert!(s.starts_with("cannot set SCHED_FIFO priority 90: "), "{s}");
        let e = io::Error::from_raw_os_error(libc::EBUSY);
        let s = explain_policy_error(
            &Policy::Deadline {
                runtime_ns: 1,
                deadline_ns: 2,
                period_ns: 2,
            },
            &e,
        );
        assert!(s.contains("admission control"), "{s}");
        assert!(
            explain_pm_qos_error(&io::Error::from_raw_os_error(libc::EACCES))
                .contains("leave PM QoS alone")
        );
    }
}
