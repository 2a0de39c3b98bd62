//! Preemption model: a kernel without PREEMPT_RT gives no bound on wake-up latency (kernel-configuration.rst: PREEMPT_RT missing is fatal).
//! The finding names the source the model was read from and the ones tried before it
//! (their order: [`crate::facts::kernel`]).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `kernel.preempt`.
pub struct Preempt;

impl Check for Preempt {
    fn id(&self) -> &'static str {
        "kernel.preempt"
    }
    fn about(&self) -> &'static str {
        "The preemption model: without PREEMPT_RT nothing bounds wake-up latency."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Preemption model", Severity::Ok)
            .expected("rt (CONFIG_PREEMPT_RT)")
            .cite("Documentation/core-api/real-time/kernel-configuration.rst");
        let p = match base.need(&facts.kernel.preemption) {
            Ok(p) => p,
            Err(f) => return vec![f.effect("without the model no bound can be stated")],
        };
        let dynamic = if p.dynamic { ", PREEMPT_DYNAMIC" } else { "" };
        let found = format!("{}{dynamic}", p.model);
        // How it was read: the source used, after the ones that did not answer.
        let used = facts.kernel.preemption.source();
        let source = match p.skipped.is_empty() {
            true => used.to_string(),
            false => format!("{used}; tried first: {}", p.skipped.join("; ")),
        };
        let f = base.found(found, source);
        let boot = if p.dynamic && p.model != "full" {
            "; meanwhile 'preempt=full' on the kernel command line makes most kernel code preemptible"
        } else {
            ""
        };
        vec![match p.model.as_str() {
            "rt" => f.effect("sleeping spinlocks and threaded interrupts: the highest-priority task runs within a bounded time"),
            "none" | "voluntary" => f.severity(Severity::Fatal).effect(
                "a wake-up waits for whatever kernel path the CPU is in to finish or reach a preemption point: milliseconds are possible",
            ).fix(format!("boot a PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y){boot}")),
            _ => f.severity(Severity::Fatal).effect(
                "spinlocks, softirqs and interrupt handlers still delay the wake-up without bound (tens to hundreds of µs)",
            ).fix("boot a PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y)"),
        }]
    }
}
