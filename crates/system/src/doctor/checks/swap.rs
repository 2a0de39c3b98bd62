//! Swap (mlockall(2) keeps tickscope resident; other tasks may still page).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `memory.swap`.
pub struct Swap;

impl Check for Swap {
    fn id(&self) -> &'static str {
        "memory.swap"
    }
    fn about(&self) -> &'static str {
        "Swap, which can page out a real-time task that did not lock its memory."
    }
    fn bears_on_run(&self) -> bool {
        false
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Swap", Severity::Ok)
            .expected("no swap, or every real-time task locked in memory")
            .cite("Documentation/admin-guide/mm/concepts.rst");
        let swaps = match base.need(&facts.memory.swaps) {
            Ok(s) => s,
            Err(f) => return vec![f.effect("unknown").severity(Severity::Info)],
        };
        let f = base.found(
            if swaps.is_empty() {
                "none".to_string()
            } else {
                swaps.join(", ")
            },
            "/proc/swaps",
        );
        vec![if swaps.is_empty() {
            f.effect("no page of a running task is ever written out")
        } else {
            f.severity(Severity::Info)
                .effect("an unlocked page of a real-time task can take milliseconds to fault back in; tickscope locks its own memory (mlockall), other tasks may not")
                .fix("swapoff -a for the measurement, or lock the real-time program's memory (mlockall)")
        }]
    }
}
