//! Idle states of the measured CPUs: exit latency and disable flags (Documentation/admin-guide/pm/cpuidle.rst).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `power.cpuidle`.
pub struct Cpuidle;

impl Check for Cpuidle {
    fn id(&self) -> &'static str {
        "power.cpuidle"
    }
    fn about(&self) -> &'static str {
        "Idle states of the measured CPUs: exit latency and which are disabled."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let p = &facts.power;
        let base = Finding::new(self.id(), "Idle states (cpuidle)", Severity::Ok)
            .expected("no enabled idle state with an exit latency above a few µs on the measured CPUs, or PM QoS held at 0")
            .cite("Documentation/admin-guide/pm/cpuidle.rst");
        let driver = match base.need(&p.idle_driver) {
            Ok(d) => d.clone(),
            Err(f) => {
                return vec![f
                    .effect("without cpuidle the CPU idles in the architecture default (HLT/WFI)")
                    .severity(Severity::Info)]
            }
        };
        let governor = p
            .idle_governor
            .value()
            .cloned()
            .unwrap_or_else(|| "?".into());
        let mut deep = Vec::new();
        let mut states = String::new();
        for cpu in p.cpus.iter().filter(|c| ctx.cpus.contains(&c.cpu)) {
            for s in &cpu.idle_states {
                let lat = s.latency_us.unwrap_or(0);
                let off = s.disabled == Some(true);
                if cpu.cpu == ctx.cpus[0] {
                    states.push_str(&format!(
                        "{}{} {} µs{}",
                        if states.is_empty() { "" } else { ", " },
                        s.name,
                        lat,
                        if off { " (disabled)" } else { "" }
                    ));
                }
                if lat > 0 && !off {
                    deep.push((cpu.cpu, s.index, s.name.clone(), lat));
                }
            }
        }
        let found = format!(
            "driver {driver}, governor {governor}; CPU {} states: {}",
            ctx.cpus[0],
            if states.is_empty() {
                "none".into()
            } else {
                states
            }
        );
        let f = base.found(
            found,
            "/sys/devices/system/cpu/cpuidle/, cpuN/cpuidle/stateK/{name,latency,disable}",
        );
        if deep.is_empty() {
            return vec![
                f.effect("a measured CPU never enters a state it must be woken from slowly")
            ];
        }
        let max = deep.iter().map(|d| d.3).max().unwrap_or(0);
        let virt =
            driver == "haltpoll" || facts.virt.hypervisor.value().is_some_and(|h| h != "none");
        let note = if virt {
            " In a guest the real cost is the host waking the halted vCPU, typically 20-70 µs, whatever the state's declared latency."
        } else {
            ""
        };
        let states: Vec<String> = deep
            .iter()
            .filter(|d| d.0 == deep[0].0)
            .map(|d| format!("state{}", d.1))
            .collect();
        vec![f.severity(Severity::Medium)
            .effect(format!("waking from an idle state adds up to its exit latency ({max} µs declared) to every wake-up that finds the CPU idle.{note}"))
            .fix(format!("hold PM QoS at 0 (tickscope run does by default as root; 'tickscope run --pm-qos 0'), or disable the states: for c in {}; do for s in {}; do echo 1 > /sys/devices/system/cpu/cpu$c/cpuidle/$s/disable; done; done (echo 0 to restore), or boot with 'idle=poll' (burns the CPU)", ctx.cpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "), states.join(" ")))]
    }
}
