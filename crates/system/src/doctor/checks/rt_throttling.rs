//! RT throttling: sched_rt_runtime_us/period, and the cgroup's cpu.rt_runtime_us under RT group scheduling, a known silent failure (Documentation/scheduler/sched-rt-group.rst; <https://github.com/LinuxCNC/linuxcnc/issues/2821>).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `sched.rt-throttling`.
pub struct RtThrottling;

impl Check for RtThrottling {
    fn id(&self) -> &'static str {
        "sched.rt-throttling"
    }
    fn about(&self) -> &'static str {
        "RT throttling: sched_rt_runtime_us, and a cgroup's cpu.rt_runtime_us."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let s = &facts.sched;
        let base = Finding::new(self.id(), "RT throttling", Severity::Ok)
            .expected("RT tasks may run (runtime > 0, and the cgroup's budget > 0 under RT group scheduling)")
            .cite("Documentation/scheduler/sched-rt-group.rst");
        let runtime = match base.need(&s.rt_runtime_us) {
            Ok(r) => *r,
            Err(f) => return vec![f.effect("unknown whether RT tasks are throttled")],
        };
        let period = s.rt_period_us.value().copied();
        let cg = s.cgroup_rt_runtime_us.value().copied();
        let mut found = format!(
            "sched_rt_runtime_us={runtime}, sched_rt_period_us={}",
            period.map_or("?".into(), |p| p.to_string())
        );
        let mut src = "/proc/sys/kernel/sched_rt_runtime_us, sched_rt_period_us".to_string();
        if let Some(c) = cg {
            found.push_str(&format!(", cgroup cpu.rt_runtime_us={c}"));
            src.push_str(&format!(", {}", s.cgroup_rt_runtime_us.source()));
        }
        let f = base.found(found, src);
        if runtime == 0 {
            return vec![f
                .severity(Severity::High)
                .effect("no task may use an RT policy: every measurement runs at SCHED_OTHER")
                .fix("sysctl -w kernel.sched_rt_runtime_us=950000")];
        }
        if cg == Some(0) {
            return vec![f.severity(Severity::High)
                .effect("RT group scheduling gives this cgroup no RT budget: setting SCHED_FIFO fails with EPERM even as root")
                .fix(format!("echo 950000 > {} (after the same in each parent directory up to the root cgroup), or start tickscope from the root cgroup", s.cgroup_rt_runtime_us.source()))];
        }
        if runtime < 0 {
            return vec![f.effect("no throttling: a runaway RT task can starve the CPU, but a measurement is never paused")];
        }
        let gap = period.map_or(String::new(), |p| {
            format!(" ({} ms per {} ms)", (p - runtime) / 1000, p / 1000)
        });
        vec![f.severity(Severity::Info)
            .effect(format!("a sleeping measuring thread is unaffected; a spinning one (busy, hybrid) is paused once per period{gap}"))
            .fix("for spinning methods: sysctl -w kernel.sched_rt_runtime_us=-1 (and restore 950000 afterwards)")]
    }
}
