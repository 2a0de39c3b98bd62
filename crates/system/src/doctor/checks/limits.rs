//! Resource limits: RLIMIT_MEMLOCK and RLIMIT_RTPRIO (getrlimit(2), sched(7)).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

use crate::facts::memory::Limit;

/// `memory.limits`.
pub struct Limits;

fn show(l: Option<&Limit>, unit: &str) -> String {
    match l {
        Some(Limit::Unlimited) => "unlimited".into(),
        Some(Limit::Value(v)) => format!("{v}{unit}"),
        None => "?".into(),
    }
}

impl Check for Limits {
    fn id(&self) -> &'static str {
        "memory.limits"
    }
    fn about(&self) -> &'static str {
        "RLIMIT_MEMLOCK and RLIMIT_RTPRIO, and the capabilities that lift them."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let p = &facts.privileges;
        let base = Finding::new(
            self.id(),
            "Memory-lock and RT-priority limits",
            Severity::Ok,
        )
        .expected(
            "RLIMIT_MEMLOCK unlimited (or CAP_IPC_LOCK) and RLIMIT_RTPRIO ≥ 90 (or CAP_SYS_NICE)",
        )
        .cite("Documentation/scheduler/sched-rt-group.rst");
        if let Err(f) = base.need(&p.memlock) {
            return vec![f.effect("unknown")];
        }
        let f = base.found(
            format!(
                "RLIMIT_MEMLOCK {}, RLIMIT_RTPRIO {}, CAP_IPC_LOCK {}, CAP_SYS_NICE {}",
                show(p.memlock.value(), " bytes"),
                show(p.rtprio.value(), ""),
                if p.has(crate::facts::privileges::CAP_IPC_LOCK) {
                    "yes"
                } else {
                    "no"
                },
                if p.has(crate::facts::privileges::CAP_SYS_NICE) {
                    "yes"
                } else {
                    "no"
                }
            ),
            "/proc/self/limits, /proc/self/status CapEff",
        );
        let mut missing = Vec::new();
        if !p.may_lock_all() {
            missing.push("memory cannot be fully locked: a page fault in the measuring loop costs µs to ms ('ulimit -l unlimited', or '@realtime - memlock unlimited' in /etc/security/limits.conf)");
        }
        if !p.may_set_rt(tickscope_engine::run::AUTO_PRIORITY) {
            missing.push("SCHED_FIFO 90 is not allowed ('ulimit -r 99', '@realtime - rtprio 99' in /etc/security/limits.conf, or 'setcap cap_sys_nice+ep \"$(command -v tickscope)\"')");
        }
        vec![if missing.is_empty() {
            f.effect("tickscope can lock its memory and use SCHED_FIFO")
        } else {
            f.severity(Severity::Medium)
                .effect(missing.join("; "))
                .fix("raise the limits as above, or run as root")
        }]
    }
}
