//! Clocksource (Documentation/timers/timekeeping.rst; hpet and acpi_pm are read through slow I/O).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `time.clocksource`.
pub struct Clocksource;

impl Check for Clocksource {
    fn id(&self) -> &'static str {
        "time.clocksource"
    }
    fn about(&self) -> &'static str {
        "The clocksource, and whether reading it needs slow I/O."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let t = &facts.time;
        let base = Finding::new(self.id(), "Clocksource", Severity::Ok)
            .expected("tsc (read in user space through the vDSO in ~20 ns)")
            .cite("Documentation/timers/timekeeping.rst");
        let cs = match base.need(&t.clocksource) {
            Ok(c) => c.clone(),
            Err(f) => return vec![f.effect("unknown")],
        };
        let avail = t
            .available_clocksources
            .value()
            .map(|v| v.join(" "))
            .unwrap_or_else(|| "?".into());
        let f = base.found(
            format!("{cs} (available: {avail})"),
            "/sys/devices/system/clocksource/clocksource0/{current,available}_clocksource",
        );
        vec![match cs.as_str() {
            "tsc" | "arch_sys_counter" | "riscv_clocksource" | "timebase" => f.effect("clock reads are cheap and in user space (tickscope clocks measures the cost)"),
            "kvm-clock" | "hyperv_clocksource_tsc_page" | "xen" => f.severity(Severity::Info)
                .effect("a paravirtual clock: readable through the vDSO, slightly dearer than tsc")
                .fix("if 'tsc' is available and stable: echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource"),
            // Timestamps in ticks (1-10 ms): latencies below a tick cannot be measured.
            "jiffies" => f.severity(Severity::Fatal).invalidating()
                .effect("timestamps advance once per tick (1-10 ms): wake-up latencies below a tick cannot be measured")
                .fix("echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource (if listed), or boot with clocksource=tsc"),
            _ => f.severity(Severity::High)
                .effect("every clock read is a system call and an I/O access (µs): each wake-up is measured, and timekeeping runs, slower")
                .fix("echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource (if listed), or boot with tsc=reliable on a machine with an invariant TSC"),
        }]
    }
}
