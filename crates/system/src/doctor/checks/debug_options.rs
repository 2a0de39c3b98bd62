//! Kernel debugging options that cost latency on every lock or
//! preempt-count change even when nobody is debugging (the kernel's real-time configuration
//! notes, Documentation/core-api/real-time/kernel-configuration.rst; lockdep,
//! Documentation/locking/lockdep-design.rst; KASAN, Documentation/dev-tools/kasan.rst).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `kernel.debug_options`.
pub struct DebugOptions;

/// Options that slow every lock operation or memory access (tens of % of kernel time).
pub const HEAVY: &[&str] = &[
    "PROVE_LOCKING",
    "DEBUG_LOCKDEP",
    "LOCK_STAT",
    "KASAN",
    "KCSAN",
    "DEBUG_PAGEALLOC_ENABLE_DEFAULT",
    "SLUB_DEBUG_ON",
    "DEBUG_OBJECTS",
];

/// Options that check every preempt-count change (a few ns each, always). The latency
/// tracers have their own check, [`super::latency_tracers`].
pub const HOOKS: &[&str] = &["DEBUG_PREEMPT"];

impl Check for DebugOptions {
    fn id(&self) -> &'static str {
        "kernel.debug_options"
    }
    fn about(&self) -> &'static str {
        "Kernel debugging options (lockdep, KASAN, …) that cost latency on every lock or preempt-count change."
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let base = Finding::new(self.id(), "Kernel debugging options", Severity::Ok)
            .expected("none that checks every lock, memory access or preempt-count change")
            .cite("Documentation/core-api/real-time/kernel-configuration.rst");
        let k = &facts.kernel;
        if let Err(f) = base.need(&k.config) {
            return vec![f.effect("unknown: the build configuration is not readable")];
        }
        let on = |list: &[&str]| -> Vec<String> {
            list.iter()
                .filter(|o| k.config_y(o))
                .map(|o| format!("CONFIG_{o}"))
                .collect()
        };
        let (heavy, hooks) = (on(HEAVY), on(HOOKS));
        let all: Vec<String> = heavy.iter().chain(&hooks).cloned().collect();
        let f = base.found(
            if all.is_empty() {
                "none of them".to_string()
            } else {
                all.join(", ")
            },
            k.config.source(),
        );
        vec![if !heavy.is_empty() {
            f.severity(Severity::Medium)
                .effect("lock validation or memory checking slows every kernel path, and the wake-up path with it")
                .fix("measure on a kernel built without them (a distribution's production or -rt kernel)")
        } else if !hooks.is_empty() {
            f.severity(Severity::Info)
                .effect("a check on every preempt-count change: a few ns each")
                .fix("a kernel built without it for production")
        } else {
            f.effect("no debugging hooks on the wake-up path")
        }]
    }
}
