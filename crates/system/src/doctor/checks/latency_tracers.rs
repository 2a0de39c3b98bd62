//! The kernel's latency tracers (the irqsoff and preemptoff tracers,
//! CONFIG_IRQSOFF_TRACER / CONFIG_PREEMPT_TRACER, Documentation/trace/ftrace.rst): the
//! real-time configuration notes list them among the options to leave off on a production
//! real-time kernel (Documentation/core-api/real-time/kernel-configuration.rst). Built in,
//! they put a hook on every interrupts-off and preempt-off section; selected as the current
//! tracer, every such section is timed and the longest traced.
//!
//! The rule: any tracer selected in tracefs `current_tracer` (not `nop`) is medium — its
//! hooks run on the wake-up path now; the latency tracers built in but not selected are
//! info; neither is ok. Which tracer is selected needs root (tracefs); without it, a build
//! with the tracers is reported info with the reason.

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `kernel.latency_tracers`.
pub struct LatencyTracers;

/// The build options of the latency tracers.
pub const OPTIONS: &[&str] = &["IRQSOFF_TRACER", "PREEMPT_TRACER"];

impl Check for LatencyTracers {
    fn id(&self) -> &'static str {
        "kernel.latency_tracers"
    }
    fn about(&self) -> &'static str {
        "The irqsoff and preemptoff latency tracers, built in or running."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(
            self.id(),
            "Latency tracers (irqsoff, preemptoff)",
            Severity::Ok,
        )
        .expected("not built in, or at least not the current tracer")
        .cite("Documentation/core-api/real-time/kernel-configuration.rst");
        let k = &facts.kernel;
        let built: Vec<String> = OPTIONS
            .iter()
            .filter(|o| k.config_y(o))
            .map(|o| format!("CONFIG_{o}=y"))
            .collect();
        let built_text = match (&k.config.value(), built.is_empty()) {
            (None, _) => format!(
                "build configuration unknown ({})",
                k.config.reason().unwrap_or("")
            ),
            (Some(_), true) => "not built in".to_string(),
            (Some(_), false) => built.join(", "),
        };
        let tracer = k.current_tracer.value().map(String::as_str);
        let source = format!("{}, {}", k.config.source(), k.current_tracer.source());
        let stop = "echo nop > /sys/kernel/tracing/current_tracer (Documentation/trace/ftrace.rst)";
        match tracer {
            Some(t) if t != "nop" => {
                return vec![base
                    .severity(Severity::Medium)
                    .found(format!("current tracer: {t}; {built_text}"), source)
                    .effect("a tracer runs now: every interrupts-off or preempt-off section (or every kernel function) is timed and recorded, adding to the wake-up path")
                    .fix(format!("stop it before measuring: {stop}"))
                    .cite("Documentation/trace/ftrace.rst")]
            }
            _ => {}
        }
        let tracer_text = match tracer {
            Some(t) => format!("current tracer: {t}"),
            None => format!(
                "current tracer unknown: {}",
                k.current_tracer.reason().unwrap_or("")
            ),
        };
        let found = format!("{built_text}; {tracer_text}");
        if k.config.value().is_none() && tracer.is_none() {
            let mut f = base.found(found, source).severity(Severity::Unknown);
            f.reason = Some(format!(
                "neither the build configuration nor tracefs is readable ({})",
                k.current_tracer.reason().unwrap_or("")
            ));
            return vec![f.effect("unknown")];
        }
        vec![if built.is_empty() {
            base.found(found, source)
                .effect("no latency-tracer hooks on the wake-up path")
        } else {
            base.severity(Severity::Info)
                .found(found, source)
                .effect("a hook on every interrupts-off and preempt-off section even when no tracer is selected: a few ns each")
                .fix("a kernel built without them for production; keep them to find long interrupts-off sections")
        }]
    }
}
