//! The hypervisor (Documentation/core-api/real-time/hardware.rst: "each guest CPU is represented as a thread on the host").

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `virt.hypervisor`.
pub struct Hypervisor;

impl Check for Hypervisor {
    fn id(&self) -> &'static str {
        "virt.hypervisor"
    }
    fn about(&self) -> &'static str {
        "The hypervisor, if any: a guest CPU is a thread on the host."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Hypervisor", Severity::Ok)
            .expected("bare metal, or vCPUs pinned to isolated host CPUs")
            .cite("Documentation/core-api/real-time/hardware.rst");
        let h = match base.need(&facts.virt.hypervisor) {
            Ok(h) => h.clone(),
            Err(f) => return vec![f.effect("unknown")],
        };
        let f = base.found(h.clone(), facts.virt.hypervisor.source());
        vec![if h == "none" {
            f.effect("no host scheduler between the timer and the CPU")
        } else {
            f.severity(Severity::High)
                .effect("a vCPU is a host thread: a timer interrupt for a halted or descheduled vCPU is delivered when the host runs it — sporadic stalls of milliseconds that no guest setting removes")
                .fix("on the host: pin each vCPU to its own isolated host CPU, run the vCPU threads at SCHED_FIFO, and avoid overcommit; in the guest: cpuidle-haltpoll with guest_halt_poll_ns > 0")
        }]
    }
}
