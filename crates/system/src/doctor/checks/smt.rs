//! SMT siblings of the measured CPUs (Documentation/admin-guide/hw-vuln/core-scheduling.rst; Documentation/ABI/testing/sysfs-devices-system-cpu smt/control).

use super::super::{Check, Context, Finding, Severity};
use super::cpus;
use crate::facts::Facts;

/// `time.smt`.
pub struct Smt;

impl Check for Smt {
    fn id(&self) -> &'static str {
        "time.smt"
    }
    fn about(&self) -> &'static str {
        "SMT siblings of the measured CPUs."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "SMT siblings of the measured CPUs", Severity::Ok)
            .expected("no SMT sibling, or an idle one")
            .cite("Documentation/admin-guide/kernel-per-CPU-kthreads.rst");
        let mut pairs = Vec::new();
        let mut unknown = None;
        for (cpu, sib) in facts
            .time
            .siblings
            .iter()
            .filter(|(c, _)| ctx.cpus.contains(c))
        {
            match sib.value() {
                Some(s) => {
                    let others: Vec<usize> = s.iter().copied().filter(|x| x != cpu).collect();
                    if !others.is_empty() {
                        pairs.push(format!("cpu{cpu}↔{}", cpus(&others)));
                    }
                }
                None => unknown = Some(sib.clone()),
            }
        }
        if let (Some(u), true) = (unknown, pairs.is_empty()) {
            return vec![base.need(&u).unwrap_err().effect("unknown")];
        }
        let control = facts
            .time
            .smt_control
            .value()
            .cloned()
            .unwrap_or_else(|| "?".into());
        let src = "/sys/devices/system/cpu/cpuN/topology/thread_siblings_list, smt/control";
        if pairs.is_empty() {
            return vec![base
                .found(format!("no siblings (smt/control {control})"), src)
                .effect("the measuring thread has its core to itself")];
        }
        vec![base.severity(Severity::Medium)
            .found(format!("{} (smt/control {control})", pairs.join(", ")), src)
            .effect("work on a sibling thread shares the core's execution units and caches: wake-up path and loop run slower when it is busy")
            .fix("keep the siblings idle (leave them out of every workload), or echo off > /sys/devices/system/cpu/smt/control (or boot with nosmt)")]
    }
}
