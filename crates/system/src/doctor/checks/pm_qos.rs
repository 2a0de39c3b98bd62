//! PM QoS: per-CPU resume latency limits and who holds /dev/cpu_dma_latency (Documentation/power/pm_qos_interface.rst, Documentation/ABI/testing/sysfs-devices-power).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `power.pm-qos`.
pub struct PmQos;

impl Check for PmQos {
    fn id(&self) -> &'static str {
        "power.pm-qos"
    }
    fn about(&self) -> &'static str {
        "PM QoS: per-CPU resume latency limits and who holds /dev/cpu_dma_latency."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let p = &facts.power;
        let base = Finding::new(self.id(), "PM QoS (CPU wake-up latency limit)", Severity::Ok)
            .expected("a latency limit of 0 held while measuring (tickscope holds /dev/cpu_dma_latency itself when it may write it)")
            .cite("Documentation/power/pm_qos_interface.rst");
        let per_cpu: Vec<String> = p
            .cpus
            .iter()
            .filter(|c| ctx.cpus.contains(&c.cpu))
            .map(|c| {
                format!(
                    "cpu{}={}",
                    c.cpu,
                    c.resume_latency.value().map_or("?", |v| v.as_str())
                )
            })
            .collect();
        let holders: Vec<String> = p
            .pm_qos_holders
            .iter()
            .map(|h| format!("{} (pid {})", h.comm, h.pid))
            .collect();
        let unreadable = p.pm_qos_unreadable;
        let held_by = match (holders.is_empty(), unreadable) {
            (true, 0) => "nobody".to_string(),
            (true, n) => format!(
                "none of the readable processes; unknown: needs root for the other {n} processes' fds"
            ),
            (false, 0) => holders.join(", "),
            (false, n) => format!(
                "{} (unknown: needs root for the other {n} processes' fds)",
                holders.join(", ")
            ),
        };
        let found = format!(
            "pm_qos_resume_latency_us {}; /dev/cpu_dma_latency held by {held_by}",
            per_cpu.join(" ")
        );
        let writable = facts.privileges.pm_qos_writable.value().copied();
        let f = base.found(
            found,
            "cpuN/power/pm_qos_resume_latency_us, /proc/*/fd -> /dev/cpu_dma_latency",
        );
        vec![match writable {
            Some(true) => f.severity(Severity::Info)
                .effect("tickscope run holds the limit at 0 by default, removing most of the idle-exit cost; other programs see it only while they hold it too"),
            Some(false) if holders.is_empty() => f.severity(Severity::Medium)
                .effect(if unreadable == 0 {
                    "nobody holds a latency limit and this user may not: wake-ups that find the CPU idle pay the idle-state exit"
                } else {
                    "this user may not hold a latency limit, and no process it can see holds one: unless another does, wake-ups that find the CPU idle pay the idle-state exit"
                })
                .fix("run tickscope as root, or grant write access: chmod/udev rule on /dev/cpu_dma_latency, or 'echo n/a > /sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us' as root"),
            Some(false) => f.severity(Severity::Info)
                .effect("another process holds a limit (its value is not readable); this user may not add one"),
            None => Finding {
                reason: facts.privileges.pm_qos_writable.reason().map(|r| format!("/dev/cpu_dma_latency: {r}")),
                ..f.severity(Severity::Unknown)
            }
                .effect("unknown whether a limit can be held")
                .fix("check that /dev/cpu_dma_latency exists (CONFIG_CPU_IDLE / PM QoS)"),
        }]
    }
}
