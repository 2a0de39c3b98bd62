//! The facts readers and the doctor checks against fixture trees (see
//! tests/fixtures/doctor/README.md): one copied from this machine, two hand-made.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tickscope_engine::doctor::{context, run_checks, worst, Finding, Severity, CHECKS};
use tickscope_engine::facts::memory::Limit;
use tickscope_engine::facts::{Facts, Root};

fn fixture(name: &str) -> Root {
    Root::at(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/doctor")
            .join(name),
    )
}

fn findings(name: &str, cpus: Option<Vec<usize>>) -> (Facts, BTreeMap<String, Finding>) {
    let root = fixture(name);
    let facts = Facts::gather(&root, Duration::ZERO);
    let ctx = context(&facts, cpus, false).unwrap();
    let all = run_checks(&facts, &ctx);
    let mut map = BTreeMap::new();
    for f in all {
        map.entry(f.id.clone()).or_insert(f);
    }
    (facts, map)
}

fn sev(m: &BTreeMap<String, Finding>, id: &str) -> Severity {
    m.get(id)
        .unwrap_or_else(|| panic!("no finding {id}"))
        .severity
}

#[test]
fn this_vm_facts() {
    let (f, m) = findings("this-vm", None);
    let k = &f.kernel;
    assert_eq!(
        k.release.value().map(String::as_str),
        Some("6.18.44-fc-v595")
    );
    assert_eq!(k.config_value("HZ"), Some("250"));
    assert!(k.config_y("NO_HZ_IDLE"));
    let p = k.preemption.value().unwrap();
    assert_eq!(p.model, "none");
    assert!(p.dynamic);
    assert!(k.preemption.source().contains("config.gz"));
    assert_eq!(k.hrtimer_resolution_ns.value(), Some(&1));
    assert_eq!(k.online.value(), Some(&vec![0, 1]));
    assert!(k.nohz_full.is_empty() && k.isolcpus.is_empty());
    let irqs = f.irq.irqs.value().unwrap();
    assert!(irqs.len() >= 10);
    assert!(irqs
        .iter()
        .any(|i| i.name.contains("virtio") && i.affinity.is_some()));
    assert_eq!(f.irq.columns, vec![0, 1]);
    assert_eq!(f.sched.rt_runtime_us.value(), Some(&950_000));
    assert_eq!(f.sched.cgroup_rt_runtime_us.value(), Some(&950_000));
    assert!(f.sched.kthreads.iter().any(|t| t.comm == "ksoftirqd/0"));
    assert_eq!(
        f.power.idle_driver.value().map(String::as_str),
        Some("haltpoll")
    );
    assert_eq!(f.power.cpus.len(), 2);
    assert_eq!(f.power.cpus[0].idle_states[0].name, "POLL");
    assert!(f.power.cpus[0].cpufreq.value().is_none());
    assert_eq!(
        f.memory.thp_enabled.value().map(String::as_str),
        Some("madvise")
    );
    assert_eq!(f.memory.swaps.value(), Some(&Vec::new()));
    assert_eq!(f.time.clocksource.value().map(String::as_str), Some("tsc"));
    assert_eq!(f.virt.haltpoll_poll_ns.value(), Some(&0));
    assert!(f.virt.steal_ticks.value().unwrap().contains_key(&1));
    assert_eq!(
        f.virt.hypervisor.value().map(String::as_str),
        Some("unknown hypervisor")
    );
    assert_eq!(f.privileges.euid.value(), Some(&0));
    assert!(f.privileges.may_set_rt(90));
    // Checks.
    assert_eq!(sev(&m, "kernel.preempt"), Severity::Fatal);
    assert_eq!(sev(&m, "kernel.hrtimers"), Severity::Ok);
    assert_eq!(sev(&m, "irq.affinity"), Severity::Medium);
    assert_eq!(sev(&m, "virt.haltpoll"), Severity::Medium);
    assert_eq!(sev(&m, "virt.hypervisor"), Severity::High);
    assert_eq!(sev(&m, "virt.steal"), Severity::Unknown);
    assert_eq!(sev(&m, "time.smt"), Severity::Ok);
    assert_eq!(
        worst(&m.values().cloned().collect::<Vec<_>>()),
        Severity::Fatal
    );
    for f in m.values() {
        assert!(
            !f.found.is_empty() && !f.source.is_empty() && !f.effect.is_empty(),
            "{f:?}"
        );
        if matches!(
            f.severity,
            Severity::Fatal | Severity::High | Severity::Medium
        ) {
            assert!(
                f.fix.is_some() && f.citation.is_some(),
                "{} needs a fix and a citation",
                f.id
            );
        }
    }
}

#[test]
fn every_check_reports() {
    let (_, m) = findings("this-vm", None);
    for c in CHECKS {
        assert!(m.contains_key(c.id()), "{} gave no finding", c.id());
    }
}

#[test]
fn rt_isolated_smt_handmade() {
    let (f, m) = findings("rt-isolated", Some(vec![2, 3]));
    let k = &f.kernel;
    assert_eq!(k.preemption.value().unwrap().model, "rt");
    assert!(k.config.source().starts_with("/boot/config-"));
    assert_eq!(k.isolcpus, vec![2, 3]);
    assert_eq!(k.nohz_full, vec![2, 3]);
    assert_eq!(k.rcu_nocbs, vec![3]);
    assert_eq!(k.irqaffinity, vec![0, 1]);
    assert_eq!(sev(&m, "kernel.preempt"), Severity::Ok);
    assert_eq!(sev(&m, "kernel.tick"), Severity::Ok);
    // nohz_full ⊄ rcu_nocbs is reported first.
    let iso = &m["kernel.isolation"];
    assert_eq!(iso.severity, Severity::Medium);
    assert!(
        iso.found.contains("nohz_full but not rcu_nocbs"),
        "{}",
        iso.found
    );
    // IRQ 120 is effective on CPU 3; IRQ 121 is not on 2-3; IRQ 122 (an NVMe queue) is on
    // CPU 3 and kernel-managed (its debugfs state says IRQD_AFFINITY_MANAGED).
    let irq = &m["irq.affinity"];
    assert_eq!(irq.severity, Severity::Medium);
    assert!(
        irq.found.starts_with("2 IRQs")
            && irq.found.contains("eth0-rx-0")
            && irq.found.ends_with("kernel-managed: 122"),
        "{}",
        irq.found
    );
    let fix = irq.fix.as_deref().unwrap();
    assert!(
        fix.contains("for N in 120; do echo 0-1 > /proc/irq/$N/smp_affinity_list"),
        "{fix}"
    );
    assert!(fix.contains("isolcpus=managed_irq,domain,2-3"), "{fix}");
    assert_eq!(sev(&m, "irq.agents"), Severity::Medium);
    // The mask is hex: "3" is CPUs 0-1, off the measured CPUs.
    assert_eq!(sev(&m, "kthreads.workqueue"), Severity::Ok);
    assert!(m["kthreads.per-cpu"].found.contains("ksoftirqd ×1"));
    assert_eq!(sev(&m, "power.cpuidle"), Severity::Medium);
    assert!(m["power.cpuidle"].effect.contains("133 µs"));
    assert!(m["power.pm-qos"].found.contains("cyclictest (pid 901)"));
    assert_eq!(sev(&m, "power.cpufreq"), Severity::High);
    assert_eq!(sev(&m, "memory.thp"), Severity::Medium);
    assert_eq!(sev(&m, "memory.swap"), Severity::Info);
    assert_eq!(sev(&m, "memory.limits"), Severity::Medium);
    assert_eq!(f.memory.memlock.value(), Some(&Limit::Value(65_536)));
    assert_eq!(sev(&m, "time.clocksource"), Severity::High);
    let smt = &m["time.smt"];
    assert_eq!(smt.severity, Severity::Medium);
    assert!(
        smt.found.contains("cpu2↔0") && smt.found.contains("cpu3↔1"),
        "{}",
        smt.found
    );
    assert_eq!(sev(&m, "virt.hypervisor"), Severity::Ok);
    assert_eq!(sev(&m, "privileges"), Severity::Medium);
    assert!(!f.privileges.may_set_rt(90));
    assert!(!f.privileges.may_lock_all());
}

#[test]
fn rt_quiet_is_all_ok_or_info() {
    let (_, m) = findings("rt-quiet", Some(vec![1]));
    let all: Vec<Finding> = m.values().cloned().collect();
    let bad: Vec<&Finding> = all
        .iter()
        .filter(|f| {
            !matches!(
                f.severity,
                Severity::Ok | Severity::Info | Severity::Unknown
            )
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    assert_eq!(sev(&m, "kernel.isolation"), Severity::Ok);
    assert_eq!(sev(&m, "power.cpuidle"), Severity::Ok);
}

#[test]
fn housekeeping_and_bad_cpus() {
    let root = fixture("rt-isolated");
    let facts = Facts::gather(&root, Duration::ZERO);
    assert!(context(&facts, Some(vec![7]), false)
        .unwrap_err()
        .contains("not online"));
    let ctx = context(&facts, None, false).unwrap();
    assert_eq!(ctx.cpus, vec![0, 1, 2, 3]);
}

#[test]
fn missing_and_malformed_sources_are_unknown_never_a_panic() {
    let dir = tempfile_dir();
    let root = Root::at(&dir);
    // Empty tree: every check still reports, mostly unknown, with a reason.
    let facts = Facts::gather(&root, Duration::ZERO);
    let ctx = context(&facts, Some(vec![0]), false).unwrap();
    let all = run_checks(&facts, &ctx);
    assert!(all
        .iter()
        .any(|f| f.severity == Severity::Unknown && f.reason.as_deref() == Some("absent")));
    // Malformed: garbage everywhere.
    for p in [
        "proc/sys/kernel/sched_rt_runtime_us",
        "proc/interrupts",
        "proc/cmdline",
        "proc/stat",
        "proc/self/limits",
        "proc/self/status",
        "sys/devices/system/cpu/online",
        "sys/kernel/mm/transparent_hugepage/enabled",
        "proc/config.gz",
    ] {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, "\u{1}garbage ((( -- =\n").unwrap();
    }
    // A directory where a file is expected.
    std::fs::create_dir_all(dir.join("proc/timer_list")).unwrap();
    let facts = Facts::gather(&root, Duration::from_millis(1));
    let rt = facts.sched.rt_runtime_us.reason().unwrap();
    assert!(rt.starts_with("unexpected content"), "{rt}");
    assert!(facts
        .kernel
        .config
        .reason()
        .unwrap()
        .starts_with("not gzip"));
    assert!(facts.kernel.hrtimer_resolution_ns.reason().is_some());
    let ctx = context(&facts, Some(vec![0]), false).unwrap();
    let all = run_checks(&facts, &ctx);
    assert!(all.len() >= CHECKS.len());
    for f in &all {
        if f.severity == Severity::Unknown {
            assert!(f.reason.is_some(), "{} is unknown without a reason", f.id);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("tickscope-doctor-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// PREEMPT_DYNAMIC with neither debugfs nor a build configuration: the mode comes from the
/// kernel log's boot line, and the fact says so.
#[test]
fn the_preemption_mode_can_come_from_the_kernel_log() {
    let (f, _) = findings("dynamic-log", Some(vec![0]));
    let p = f.kernel.preemption.value().expect("read from the log");
    assert_eq!((p.model.as_str(), p.dynamic), ("voluntary", true));
    assert!(f.kernel.preemption.source().contains("kernel log"));
}

/// The clock-read check on measured values: a vDSO read is ok, a slow one info, a system
/// call medium, a µs high; a fixture (nothing to time) is unknown with the reason.
#[test]
fn clock_read_severities() {
    use tickscope_engine::clocks::Access;
    use tickscope_engine::doctor::checks::clock_read::ClockRead as Check;
    use tickscope_engine::doctor::Check as _;
    use tickscope_engine::facts::time::ClockRead;
    use tickscope_engine::facts::Fact;
    let (mut f, m) = findings("this-vm", None);
    assert_eq!(sev(&m, "time.clock_read"), Severity::Unknown);
    let ctx = context(&f, None, false).unwrap();
    for (ns, access, want) in [
        (29.0, Access::Vdso, Severity::Ok),
        (180.0, Access::Vdso, Severity::Info),
        (420.0, Access::Syscall, Severity::Medium),
        (1900.0, Access::Syscall, Severity::High),
    ] {
        f.time.monotonic_read = Fact::known(ClockRead { ns, access }, "test");
        let got = Check.check(&f, &ctx);
        assert_eq!(got[0].severity, want, "{ns} ns {access:?}");
        assert!(got[0].found.contains(&format!("{ns:.0} ns")));
    }
}

/// The debugging-options and EFI checks: the hand-made isolated machine has the irqsoff
/// tracer built in and EFI runtime services on (info); the quiet one neither (ok); this VM
/// (no EFI copied) says unknown rather than guess.
#[test]
fn debug_options_and_efi_runtime() {
    let (_, m) = findings("rt-isolated", None);
    let d = &m["kernel.debug_options"];
    assert_eq!(d.severity, Severity::Info);
    assert!(d.found.contains("CONFIG_IRQSOFF_TRACER"), "{}", d.found);
    assert_eq!(sev(&m, "platform.efi_runtime"), Severity::Info);
    let (_, m) = findings("rt-quiet", None);
    assert_eq!(sev(&m, "kernel.debug_options"), Severity::Ok);
    assert_eq!(sev(&m, "platform.efi_runtime"), Severity::Ok);
    let (_, m) = findings("this-vm", None);
    assert_eq!(sev(&m, "platform.efi_runtime"), Severity::Unknown);
}
