//! Lockup detectors (Documentation/admin-guide/lockup-watchdogs.rst; kernel-configuration.rst rates LOCKUP_DETECTOR disabled as high — it is wanted in the build — while kernel-per-CPU-kthreads.rst shows how to keep its per-CPU work off isolated CPUs).

use super::super::{Check, Context, Finding, Severity};
use crate::facts::Facts;

/// `time.watchdog`.
pub struct Watchdog;

impl Check for Watchdog {
    fn id(&self) -> &'static str {
        "time.watchdog"
    }
    fn about(&self) -> &'static str {
        "The lockup detectors and their per-CPU work."
    }
    fn check(&self, facts: &Facts, ctx: &Context) -> Vec<Finding> {
        let t = &facts.time;
        let base = Finding::new(self.id(), "Lockup detector (watchdog)", Severity::Ok)
            .expected("CONFIG_LOCKUP_DETECTOR built in; its per-CPU work kept off the measured CPUs (nohz_full, or kernel.watchdog_cpumask)")
            .cite("Documentation/admin-guide/lockup-watchdogs.rst");
        let w = match base.need(&t.watchdog) {
            Ok(w) => *w,
            Err(f) => return vec![f.effect("unknown")],
        };
        let nmi = t.nmi_watchdog.value().map_or("?".into(), |v| v.to_string());
        let thresh = t.watchdog_thresh_s.value().copied();
        let built = facts.kernel.config_y("LOCKUP_DETECTOR");
        let f = base.found(format!("kernel.watchdog={w}, nmi_watchdog={nmi}, watchdog_thresh={} s, CONFIG_LOCKUP_DETECTOR={}",
            thresh.map_or("?".into(), |v| v.to_string()), if built { "y" } else if facts.kernel.config.value().is_some() { "n" } else { "?" }),
            "/proc/sys/kernel/{watchdog,nmi_watchdog,watchdog_thresh}, kernel configuration");
        if facts.kernel.config.value().is_some() && !built {
            return vec![f.severity(Severity::High)
                .effect("no latency cost, but a stuck CPU is never reported (kernel-configuration.rst rates this high)")
                .fix("build with CONFIG_LOCKUP_DETECTOR=y")
                .cite("Documentation/core-api/real-time/kernel-configuration.rst")];
        }
        vec![if w == 0 {
            f.effect("no watchdog hrtimer on any CPU")
        } else {
            let period = thresh.map_or("a few".into(), |s| format!("{:.0}", s as f64 * 2.0 / 5.0));
            f.severity(Severity::Info)
                .effect(format!("a watchdog hrtimer fires every {period} s on each CPU (a few µs)"))
                .fix(match ctx.split() {
                    Some((h, _)) => format!("sysctl -w kernel.watchdog_cpumask={} (or sysctl -w kernel.watchdog=0 while measuring)", super::cpus(&h)),
                    None => "sysctl -w kernel.watchdog=0 while measuring (and =1 after)".to_string(),
                })
        }]
    }
}
