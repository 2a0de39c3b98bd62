//! What this user may set, and how to grant the rest (sched(7), capabilities(7), Documentation/power/pm_qos_interface.rst).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

use crate::facts::privileges::{CAP_IPC_LOCK, CAP_SYS_NICE};

/// `privileges`.
pub struct Privileges;

impl Check for Privileges {
    fn id(&self) -> &'static str {
        "privileges"
    }
    fn about(&self) -> &'static str {
        "What this user may set (policy, priority, PM QoS), and how to grant the rest."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let p = &facts.privileges;
        let base = Finding::new(self.id(), "What this user may set", Severity::Ok)
            .expected("SCHED_FIFO, memory locking and PM QoS all allowed")
            .cite("Documentation/scheduler/sched-rt-group.rst");
        if let Err(f) = base.need(&p.cap_eff) {
            return vec![f.effect("unknown")];
        }
        let yes = |b: bool| if b { "yes" } else { "no" };
        let fifo = p.may_set_rt(tickscope_engine::run::AUTO_PRIORITY);
        let lock = p.may_lock_all();
        let qos = p.pm_qos_writable.value().copied();
        let euid = p.euid.value().map_or("?".into(), |u| u.to_string());
        let f = base.found(
            format!("euid {euid}; SCHED_FIFO 90: {}; mlockall: {}; PM QoS: {}; affinity: yes",
                yes(fifo), yes(lock), qos.map_or("unknown (no /dev/cpu_dma_latency)", yes)),
            "/proc/self/status (Uid, CapEff), /proc/self/limits, faccessat(/dev/cpu_dma_latency, W_OK)");
        let mut grants = Vec::new();
        if !fifo {
            grants.push(if p.has(CAP_SYS_NICE) {
                ""
            } else {
                "SCHED_FIFO: 'sudo setcap cap_sys_nice+ep $(which tickscope)' or 'ulimit -r 99'"
            });
        }
        if !lock {
            grants.push(if p.has(CAP_IPC_LOCK) { "" } else { "mlockall: 'sudo setcap cap_ipc_lock+ep $(which tickscope)' or 'ulimit -l unlimited'" });
        }
        if qos == Some(false) {
            grants.push("PM QoS: run as root, or a udev rule giving the user's group write access to /dev/cpu_dma_latency");
        }
        grants.retain(|g| !g.is_empty());
        vec![if grants.is_empty() {
            f.effect("tickscope can apply every setting it measures best with")
        } else {
            f.severity(Severity::Medium)
                .effect("without them tickscope measures at SCHED_OTHER, unlocked or with idle states allowed: the numbers are those of an ordinary program")
                .fix(grants.join("; "))
        }]
    }
}
