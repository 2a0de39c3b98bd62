//! What `run --explain` and `monitor --explain` can trace here, and how to grant the rest: the
//! BPF backend needs the kernel's BTF and root or `CAP_BPF` + `CAP_PERFMON` ("BPF
//! permissions", capabilities(7); Documentation/bpf/btf.rst) — the kernel addresses it needs
//! come through BPF, so `CAP_SYSLOG` is not among them; the tracefs fallback needs root.

use super::super::{Check, Context, Finding, Severity};
use crate::facts::privileges::{CAP_BPF, CAP_PERFMON};
use crate::facts::Facts;

/// `explain`.
pub struct Explain;

/// The grant that gives a non-root user the BPF backend.
const SETCAP: &str =
    "'sudo setcap cap_bpf,cap_perfmon+ep $(which tickscope)' (setcap replaces the \
                      file's set: name there too what the privileges check asks for, e.g. \
                      cap_sys_nice,cap_ipc_lock; or run as root; deploy/ grants the same to the \
                      monitor service)";

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
            .expected("the BPF backend: the kernel's BTF, and root or CAP_BPF + CAP_PERFMON")
            .cite("Documentation/bpf/btf.rst");
        if let Err(f) = base.need(&p.cap_eff) {
            return vec![f.effect("unknown; run tickscope run --explain and read its note")];
        }
        let btf = match base.need(&facts.kernel.btf) {
            Ok(b) => *b,
            Err(f) => {
                return vec![f.effect("unknown; run tickscope run --explain and read its note")]
            }
        };
        let root = p.euid.value() == Some(&0);
        let yes = |b: bool| if b { "yes" } else { "no" };
        let (bpf, perfmon) = (p.has(CAP_BPF), p.has(CAP_PERFMON));
        let f = base.found(
            format!(
                "BTF: {}; euid {}; CAP_BPF {}, CAP_PERFMON {}",
                yes(btf),
                p.euid.value().map_or("?".into(), |u| u.to_string()),
                yes(bpf),
                yes(perfmon)
            ),
            "/sys/kernel/btf/vmlinux, /proc/self/status (Uid, CapEff)",
        );
        vec![if btf && (root || (bpf && perfmon)) {
            f.effect("the BPF backend: every late wake-up broken into causes, at the least cost")
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
