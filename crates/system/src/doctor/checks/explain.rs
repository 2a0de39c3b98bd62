//! What `run --explain` and `monitor --explain` can trace here, and how to grant the rest: the
//! BPF backend needs the kernel's BTF and root or `CAP_BPF` + `CAP_PERFMON` ("BPF
//! permissions", capabilities(7); Documentation/bpf/btf.rst); the wait timers' callbacks are
//! found by address, which the kernel shows only to root or `CAP_SYSLOG`
//! (`kallsyms_show_value()`, kernel/kallsyms.c); the tracefs fallback needs root.

use super::super::{Check, Context, Finding, Severity};
use crate::facts::privileges::{CAP_BPF, CAP_PERFMON, CAP_SYSLOG};
use crate::facts::Facts;

/// `explain`.
pub struct Explain;

/// The grant that gives a non-root user every part of the BPF backend.
const SETCAP: &str = "'sudo setcap cap_bpf,cap_perfmon,cap_syslog+ep $(which tickscope)' (setcap \
                      replaces the file's set: name there too what the privileges check asks \
                      for, e.g. cap_sys_nice,cap_ipc_lock; or run as root; deploy/ grants the \
                      same to the monitor service)";

impl Check for Explain {
    fn id(&self) -> &'static str {
        "explain"
    }
    fn about(&self) -> &'static str {
        "What --explain can trace here (BPF backend, tracefs fallback), and how to grant the rest."
    }
    fn bears_on_run(&self) -> bool {
        false
    }
    fn check(&self, facts: &Facts, _ctx: &Context) -> Vec<Finding> {
        let p = &facts.privileges;
        let base = Finding::new(self.id(), "What --explain can trace", Severity::Ok)
            .expected(
                "the BPF backend: the kernel's BTF, and root or CAP_BPF + CAP_PERFMON + CAP_SYSLOG",
            )
            .cite("Documentation/bpf/btf.rst");
        let caps = match base.need(&p.cap_eff) {
            Ok(_) => p,
            Err(f) => {
                return vec![f.effect("unknown; run tickscope run --explain and read its note")]
            }
        };
        let btf = match base.need(&facts.kernel.btf) {
            Ok(b) => *b,
            Err(f) => {
                return vec![f.effect("unknown; run tickscope run --explain and read its note")]
            }
        };
        let root = p.euid.value() == Some(&0);
        let yes = |b: bool| if b { "yes" } else { "no" };
        let (bpf, perfmon, syslog) = (
            caps.has(CAP_BPF),
            caps.has(CAP_PERFMON),
            caps.has(CAP_SYSLOG),
        );
        let f = base.found(
            format!(
                "BTF: {}; euid {}; CAP_BPF {}, CAP_PERFMON {}, CAP_SYSLOG {}",
                yes(btf),
                p.euid.value().map_or("?".into(), |u| u.to_string()),
                yes(bpf),
                yes(perfmon),
                yes(syslog)
            ),
            "/sys/kernel/btf/vmlinux, /proc/self/status (Uid, CapEff)",
        );
        let loads = btf && (root || (bpf && perfmon));
        vec![if loads && (root || syslog) {
            f.effect("the BPF backend: every late wake-up broken into causes, at the least cost")
        } else if loads {
            f.severity(Severity::Info)
                .effect("the BPF backend, but the wait timers' callbacks are hidden (no CAP_SYSLOG): every timer a measured thread starts is taken for its expiry, so a late wake-up can look on time")
                .fix(SETCAP)
        } else if root {
            f.severity(Severity::Info)
                .effect("no BTF: the tracefs fallback, whose text events cost the measured CPU more (docs/explain.md, \"Backends and their cost\")")
                .fix("a kernel built with CONFIG_DEBUG_INFO_BTF=y")
        } else {
            f.severity(Severity::Info)
                .effect("context mode only: late wake-ups counted, no causes")
                .fix(match btf {
                    true => SETCAP,
                    false => "run as root (the tracefs fallback), or a kernel built with CONFIG_DEBUG_INFO_BTF=y and the capabilities",
                })
        }]
    }
}
