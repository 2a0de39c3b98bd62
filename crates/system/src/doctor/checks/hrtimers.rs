//! High-resolution timers: without them a timer expires on the next tick (Documentation/timers/highres.rst).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `kernel.hrtimers`.
pub struct HighResTimers;

impl Check for HighResTimers {
    fn id(&self) -> &'static str {
        "kernel.hrtimers"
    }
    fn about(&self) -> &'static str {
        "High-resolution timers: without them a timer expires on the next tick."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "High-resolution timers", Severity::Ok)
            .expected("active: hrtimer resolution 1 ns")
            .effect("without them every expiry is rounded up to the next tick (4 ms at HZ=250)")
            .cite("Documentation/timers/highres.rst");
        let r = match base.need(&facts.kernel.hrtimer_resolution_ns) {
            Ok(r) => *r,
            Err(f) => return vec![f.fix("run as root to read /proc/timer_list")],
        };
        let f = base.found(
            format!("resolution {r} ns"),
            facts.kernel.hrtimer_resolution_ns.source(),
        );
        vec![if r <= 1 {
            f
        } else {
            f.severity(Severity::Fatal)
                .invalidating()
                .fix("build with CONFIG_HIGH_RES_TIMERS=y and remove 'highres=off' from the kernel command line")
        }]
    }
}
