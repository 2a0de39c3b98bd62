//! The cost of a clock read: every wake-up tickscope measures, and every timestamp a periodic
//! task takes, pays it once (vdso(7): `clock_gettime` is served in user space when the
//! clocksource allows it; Documentation/timers/timekeeping.rst).
//!
//! Measured as `tickscope clocks` measures it ([`crate::clocks::measure_clock`],
//! `CLOCK_MONOTONIC` alone, within 50 ms; [`crate::facts::time::measure_monotonic_read`]), only by
//! the full `tickscope doctor`. The rule, on the median cost of one read:
//! - ok: in user space (vDSO) under [`SLOW_VDSO_NS`] — tsc reads cost tens of ns;
//! - info: in user space but ≥ [`SLOW_VDSO_NS`] (a paravirtual clock, an old CPU);
//! - medium: a system call (the clocksource has no vDSO mode, e.g. hpet or acpi_pm on
//!   kernels that no longer map them) under [`COSTLY_NS`];
//! - high: ≥ [`COSTLY_NS`] (a system call plus an I/O read of hpet or acpi_pm: µs).
//!
//! The fix for medium and high is the tsc clocksource: at run time through
//! `current_clocksource` (Documentation/timers/timekeeping.rst), at boot with
//! `clocksource=tsc`, and `tsc=reliable` where the kernel refused a TSC it judged unstable
//! (Documentation/admin-guide/kernel-parameters.txt, "clocksource=" and "tsc=").

use super::super::{Check, Context, Finding, Severity};
use crate::clocks::Access;
use crate::facts::Facts;

/// `time.clock_read`.
pub struct ClockRead;

/// A vDSO read of the TSC costs 20–60 ns on current x86 machines (measured here: 29 ns); a
/// read above this is slow for a user-space read.
pub const SLOW_VDSO_NS: f64 = 100.0;

/// A read above this (a system call, or a clocksource read through I/O) adds visibly to
/// every timestamp of a loop at tens of µs.
pub const COSTLY_NS: f64 = 1_000.0;

impl Check for ClockRead {
    fn id(&self) -> &'static str {
        "time.clock_read"
    }
    fn about(&self) -> &'static str {
        "What one read of CLOCK_MONOTONIC costs here."
    }
    fn bears_on_run(&self) -> bool {
        false // measured only by `tickscope doctor`, not before every run
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Cost of a CLOCK_MONOTONIC read", Severity::Ok)
            .expected(format!("in user space (vDSO), under {SLOW_VDSO_NS:.0} ns"))
            .cite("Documentation/timers/timekeeping.rst");
        let read = match base.need(&facts.time.monotonic_read) {
            Ok(r) => *r,
            Err(f) => return vec![f.effect("unknown; 'tickscope clocks' measures it")],
        };
        let access = match read.access {
            Access::Vdso => "vDSO, in user space",
            Access::Syscall => "a system call",
            Access::Instruction => "an instruction",
        };
        let f = base.found(
            format!("{:.0} ns per read ({access})", read.ns),
            crate::facts::time::CLOCK_READ_SOURCE,
        );
        let to_tsc = "use the tsc clocksource: now, if it is listed as available, with \
                      'echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource'; \
                      at boot with clocksource=tsc, plus tsc=reliable if the kernel marked an \
                      invariant TSC unstable (Documentation/admin-guide/kernel-parameters.txt)";
        let params = "Documentation/admin-guide/kernel-parameters.txt";
        vec![if read.ns >= COSTLY_NS {
            f.severity(Severity::High)
                .effect("each timestamp costs a µs or more: a loop's own clock reads and every wake-up measured are that much later")
                .fix(to_tsc)
                .cite(params)
        } else if read.access == Access::Syscall {
            f.severity(Severity::Medium)
                .effect("every clock read enters the kernel: hundreds of ns per timestamp")
                .fix(to_tsc)
                .cite(params)
        } else if read.ns >= SLOW_VDSO_NS {
            f.severity(Severity::Info)
                .effect("a user-space read, but a slow one (a paravirtual clock or an old CPU)")
        } else {
            f.effect("negligible beside wake-up latency")
        }]
    }
}
