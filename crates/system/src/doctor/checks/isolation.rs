//! CPU isolation boot parameters and their coherence with the measured CPUs (Documentation/admin-guide/kernel-per-CPU-kthreads.rst, Documentation/timers/no_hz.rst).

use super::super::{Check, Context, Finding, Severity};
use super::cpus;
use crate::facts::Facts;

/// `kernel.isolation`.
pub struct Isolation;

impl Check for Isolation {
    fn id(&self) -> &'static str {
        "kernel.isolation"
    }
    fn about(&self) -> &'static str {
        "CPU isolation boot parameters and whether they cover the measured CPUs."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let k = &facts.kernel;
        let base = Finding::new(
            self.id(),
            "CPU isolation (isolcpus, nohz_full, rcu_nocbs, irqaffinity)",
            Severity::Ok,
        )
        .cite("Documentation/admin-guide/kernel-per-CPU-kthreads.rst");
        if let Err(f) = base.need(&k.cmdline) {
            return vec![f.effect("unknown whether the measured CPUs are shielded")];
        }
        let src = "/proc/cmdline";
        let summary = format!(
            "isolcpus={} nohz_full={} rcu_nocbs={} irqaffinity={}; measured {}",
            cpus(&k.isolcpus),
            cpus(&k.nohz_full),
            cpus(&k.rcu_nocbs),
            cpus(&k.irqaffinity),
            cpus(&ctx.cpus)
        );
        let mut out = Vec::new();
        let not_nocb: Vec<usize> = k
            .nohz_full
            .iter()
            .copied()
            .filter(|c| !k.rcu_nocbs.contains(c))
            .collect();
        if !k.nohz_full.is_empty() && !k.rcu_nocbs.is_empty() && !not_nocb.is_empty() {
            out.push(
                base.clone()
                    .severity(Severity::Medium)
                    .expected("nohz_full ⊆ rcu_nocbs")
                    .found(
                        format!(
                            "{summary}; CPUs {} are nohz_full but not rcu_nocbs",
                            cpus(&not_nocb)
                        ),
                        src,
                    )
                    .effect(
                        "RCU callbacks still run on those CPUs, interrupting the measuring thread",
                    )
                    .fix(format!(
                        "add them to rcu_nocbs= (e.g. 'rcu_nocbs={}')",
                        cpus(&k.nohz_full)
                    ))
                    .cite("Documentation/timers/no_hz.rst"),
            );
        }
        let shielded: Vec<usize> = k.isolcpus.iter().chain(&k.nohz_full).copied().collect();
        let housekeeping: Vec<usize> = ctx
            .online
            .iter()
            .copied()
            .filter(|c| !shielded.contains(c))
            .collect();
        if !shielded.is_empty() && housekeeping.is_empty() {
            out.push(base.clone().severity(Severity::High)
                .expected("at least one housekeeping CPU outside isolcpus= and nohz_full=")
                .found(format!("{summary}; no housekeeping CPU"), src)
                .effect("timekeeping, RCU and unbound work must still run somewhere: on the isolated CPUs")
                .fix("leave CPU 0 out of isolcpus= and nohz_full="));
        }
        let isolated = ctx.measured_in(&shielded);
        if !k.irqaffinity.is_empty() && ctx.touches(&k.irqaffinity) {
            out.push(
                base.clone()
                    .severity(Severity::Medium)
                    .expected("irqaffinity= excludes the measured CPUs")
                    .found(
                        format!(
                            "{summary}; irqaffinity includes {}",
                            cpus(&ctx.measured_in(&k.irqaffinity))
                        ),
                        src,
                    )
                    .effect("device interrupts are routed to the measured CPUs by default")
                    .fix(format!("boot with irqaffinity={}", cpus(&ctx.others())))
                    .cite("Documentation/core-api/irq/irq-affinity.rst"),
            );
        }
        if isolated.len() == ctx.cpus.len() {
            out.push(
                base.expected("measured CPUs in isolcpus= or nohz_full=")
                    .found(summary, src)
                    .effect("the measured CPUs run no other tasks and (with nohz_full) no tick"),
            );
        } else if out.is_empty() {
            let fix = match (ctx.split(), ctx.others().is_empty()) {
                (None, _) => {
                    "nothing can be isolated on a single CPU: measure on a machine with two or more"
                        .to_string()
                }
                (Some((h_set, m_set)), all_measured) => {
                    let (h, m) = (cpus(&h_set), cpus(&m_set));
                    let narrow = match all_measured {
                        true => format!("measure {} only (--cpus {m}) and ", super::named(&m_set)),
                        false => String::new(),
                    };
                    format!("{narrow}boot with 'isolcpus=domain,managed_irq,{m} nohz_full={m} rcu_nocbs={m} irqaffinity={h}' ({} for housekeeping)", super::named(&h_set))
                }
            };
            out.push(base.severity(Severity::Info)
                .expected("measured CPUs in isolcpus= or nohz_full=")
                .found(summary, src)
                .effect("other tasks, kernel threads and the tick share the measured CPUs: expect occasional tens-of-µs delays")
                .fix(fix));
        }
        out
    }
}
