//! Transparent huge pages: enabled and defrag modes (Documentation/admin-guide/mm/transhuge.rst).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `memory.thp`.
pub struct Thp;

impl Check for Thp {
    fn id(&self) -> &'static str {
        "memory.thp"
    }
    fn about(&self) -> &'static str {
        "Transparent huge pages: the enabled and defrag modes."
    }
    fn bears_on_run(&self) -> bool {
        false
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let m = &facts.memory;
        let base = Finding::new(self.id(), "Transparent huge pages", Severity::Ok)
            .expected("enabled: madvise or never; defrag: not always")
            .cite("Documentation/admin-guide/mm/transhuge.rst");
        let enabled = match base.need(&m.thp_enabled) {
            Ok(e) => e.clone(),
            Err(f) => return vec![f.effect("unknown").severity(Severity::Info)],
        };
        let defrag = m.thp_defrag.value().cloned().unwrap_or_else(|| "?".into());
        let f = base.found(
            format!("enabled [{enabled}], defrag [{defrag}]"),
            "/sys/kernel/mm/transparent_hugepage/{enabled,defrag}",
        );
        vec![if enabled == "always" || defrag == "always" {
            f.severity(Severity::Medium)
                .effect("page faults may compact memory synchronously and khugepaged collapses pages in the background: stalls of other tasks, TLB shootdown IPIs on the measured CPUs")
                .fix("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled; echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag (or boot with transparent_hugepage=madvise)")
        } else {
            f.effect("huge pages only where a program asks (tickscope locks its memory anyway)")
        }]
    }
}
