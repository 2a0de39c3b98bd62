//! Timer migration (Documentation/admin-guide/sysctl/kernel.rst, timer_migration).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `sched.timer-migration`.
pub struct TimerMigration;

impl Check for TimerMigration {
    fn id(&self) -> &'static str {
        "sched.timer-migration"
    }
    fn about(&self) -> &'static str {
        "Whether timers migrate between CPUs (the timer_migration sysctl)."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Timer migration", Severity::Ok)
            .expected("kernel.timer_migration = 0 on a tuned real-time system")
            .cite("Documentation/admin-guide/sysctl/kernel.rst");
        let v = match base.need(&facts.sched.timer_migration) {
            Ok(v) => *v,
            Err(f) => return vec![f.effect("unknown")],
        };
        let f = base.found(
            format!("timer_migration={v}"),
            facts.sched.timer_migration.source(),
        );
        vec![if v == 0 {
            f.effect("unpinned timers stay on the CPU that armed them")
        } else {
            f.severity(Severity::Info)
                .effect("unpinned kernel timers of idle CPUs may be expired on another CPU, including a measured one (the measuring thread's own hrtimer is pinned and unaffected)")
                .fix("sysctl -w kernel.timer_migration=0")
        }]
    }
}
