//! cpuidle-haltpoll: a guest polls before halting (Documentation/virt/guest-halt-polling.rst).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `virt.haltpoll`.
pub struct Haltpoll;

impl Check for Haltpoll {
    fn id(&self) -> &'static str {
        "virt.haltpoll"
    }
    fn about(&self) -> &'static str {
        "cpuidle-haltpoll: a guest polls before halting."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let v = &facts.virt;
        let base = Finding::new(
            self.id(),
            "Guest halt polling (cpuidle-haltpoll)",
            Severity::Ok,
        )
        .expected("in a guest: the haltpoll cpuidle driver with guest_halt_poll_ns > 0")
        .cite("Documentation/virt/guest-halt-polling.rst");
        let guest = v.hypervisor.value().is_some_and(|h| h != "none");
        let driver = facts
            .power
            .idle_driver
            .value()
            .cloned()
            .unwrap_or_else(|| "none".into());
        let src = "/sys/devices/system/cpu/cpuidle/current_driver, /sys/module/haltpoll/parameters/guest_halt_poll_ns";
        if !guest {
            return vec![base
                .severity(Severity::Info)
                .found(format!("not a guest (cpuidle driver {driver})"), src)
                .effect("not applicable")];
        }
        let poll = v.haltpoll_poll_ns.value().copied();
        let f = base.found(
            format!(
                "cpuidle driver {driver}, guest_halt_poll_ns {}",
                poll.map_or("absent".into(), |p| p.to_string())
            ),
            src,
        );
        vec![match (driver.as_str(), poll) {
            ("haltpoll", Some(p)) if p > 0 => f.effect(format!("an idle vCPU polls up to {p} ns before halting: a wake-up within that window avoids the host round trip")),
            ("haltpoll", _) => f.severity(Severity::Medium)
                .effect("the haltpoll driver is loaded but polling is off: every idle wake-up is a host round trip (20-70 µs)")
                .fix("echo 200000 > /sys/module/haltpoll/parameters/guest_halt_poll_ns (or remove haltpoll.guest_halt_poll_ns=0 from the command line); holding PM QoS at 0 makes the vCPU poll instead of halting"),
            _ => f.severity(Severity::Medium)
                .effect("the guest halts without polling: every idle wake-up is a host round trip")
                .fix("boot with cpuidle_haltpoll.force=1 (CONFIG_HALTPOLL_CPUIDLE), or hold PM QoS at 0 while measuring"),
        }]
    }
}
