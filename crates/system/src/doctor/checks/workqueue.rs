//! Unbound workqueues' CPU mask (Documentation/core-api/workqueue.rst; kernel-per-CPU-kthreads.rst: write the housekeeping CPUs to /sys/devices/virtual/workqueue/cpumask).

use super::super::{Check, Context, Finding, Severity};
use super::cpus;
use crate::facts::Facts;

/// `kthreads.workqueue`.
pub struct Workqueue;

impl Check for Workqueue {
    fn id(&self) -> &'static str {
        "kthreads.workqueue"
    }
    fn about(&self) -> &'static str {
        "The CPU mask of unbound workqueues."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Unbound workqueue CPU mask", Severity::Ok)
            .expected("excludes the measured CPUs")
            .cite("Documentation/admin-guide/kernel-per-CPU-kthreads.rst");
        let mask = match base.need(&facts.irq.workqueue_cpumask) {
            Ok(m) => m,
            Err(f) => return vec![f.effect("unknown where unbound kernel work runs")],
        };
        let f = base.found(
            format!("cpumask {}", cpus(mask)),
            facts.irq.workqueue_cpumask.source(),
        );
        let others = ctx.others();
        vec![if !ctx.touches(mask) {
            f.effect("unbound kernel work (writeback, crypto, …) stays off the measured CPUs")
        } else if others.is_empty() {
            f.severity(Severity::Info)
                .effect("unbound kernel work may run on a measured CPU; every CPU is measured, so there is nowhere else to put it")
                .fix(match ctx.split() {
                    Some((h, m)) => format!("measure {} only (--cpus {}) and 'echo {} > /sys/devices/virtual/workqueue/cpumask'", super::named(&m), super::cpus(&m), super::cpus(&h)),
                    None => "nothing: a single CPU runs all unbound work".to_string(),
                })
        } else {
            f.severity(Severity::Medium)
                .effect("unbound kernel work (kworker/u*) may run on a measured CPU and delay the wake-up")
                .fix(format!("echo {} > /sys/devices/virtual/workqueue/cpumask", tickscope_engine::setup::format_cpu_list(&others)))
        }]
    }
}
