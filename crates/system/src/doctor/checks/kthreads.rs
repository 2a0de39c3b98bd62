//! Kernel threads bound to the measured CPUs: ksoftirqd, rcuc, kworker, migration (Documentation/admin-guide/kernel-per-CPU-kthreads.rst).

use super::super::{Check, Context, Finding, Severity};
use super::cpus;
use crate::facts::Facts;

/// `kthreads.per-cpu`.
pub struct PerCpuKthreads;

impl Check for PerCpuKthreads {
    fn id(&self) -> &'static str {
        "kthreads.per-cpu"
    }
    fn about(&self) -> &'static str {
        "Kernel threads bound to the measured CPUs."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Per-CPU kernel threads on the measured CPUs", Severity::Info)
            .expected("only the unavoidable per-CPU kthreads (migration, cpuhp, ksoftirqd) on the measured CPUs, and idle")
            .cite("Documentation/admin-guide/kernel-per-CPU-kthreads.rst");
        let mut per_kind: std::collections::BTreeMap<String, usize> = Default::default();
        let mut n = 0;
        for t in &facts.sched.kthreads {
            let Some(set) = &t.cpus_allowed else { continue };
            if set.len() == 1 && ctx.touches(set) {
                n += 1;
                let kind = t
                    .comm
                    .split(['/', ':', '-'])
                    .next()
                    .unwrap_or("")
                    .to_string();
                *per_kind.entry(kind).or_default() += 1;
            }
        }
        let src = "/proc/*/stat (PF_KTHREAD), /proc/*/status Cpus_allowed_list";
        if facts.sched.kthreads.is_empty() {
            let why = format!(
                "no kernel thread found in /proc ({} processes unreadable)",
                facts.sched.unreadable_tasks
            );
            return vec![Finding {
                reason: Some(why),
                ..base.severity(Severity::Unknown).found("unknown", src)
            }
            .effect("unknown which kernel threads share the measured CPUs")
            .fix("run as root")];
        }
        let kinds: Vec<String> = per_kind.iter().map(|(k, c)| format!("{k} ×{c}")).collect();
        vec![base.found(format!("{n} kthreads bound to CPUs {}: {}", cpus(&ctx.cpus), kinds.join(", ")), src)
            .effect("ksoftirqd runs deferred softirqs and kworkers run queued work at SCHED_OTHER: a FIFO measuring thread preempts them, but the work they do with interrupts or preemption off still delays it")
            .fix(match ctx.split() {
                Some((h, m)) => format!("keep per-CPU work away: boot with rcu_nocbs={} for rcuo/rcuc, 'echo {} > /sys/devices/virtual/workqueue/cpumask', and move IRQs to CPU {} for ksoftirqd's softirqs (see irq.affinity)", cpus(&m), cpus(&h), cpus(&h)),
                None => "on a single CPU the per-CPU kernel threads stay: measure on a machine with two or more".to_string(),
            })]
    }
}
