//! The facts readers and the doctor checks against fixture trees (see
//! tests/fixtures/doctor/README.md): one copied from this machine, two hand-made.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tickscope_system::doctor::{context, run_checks, worst, Finding, Severity, CHECKS};
use tickscope_system::facts::memory::Limit;
use tickscope_system::facts::{Facts, Root};

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
    // Debugfs is not mounted here: the mode is the kernel log's (copied from /dev/kmsg).
    assert_eq!(
        k.preemption.source(),
        "kernel log (/dev/kmsg, \"Dynamic Preempt:\")"
    );
    assert!(p.skipped[0].starts_with("/sys/kernel/debug/sched/preempt: absent"));
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
fn every_check_says_what_it_looks_at_in_one_sentence() {
    for c in CHECKS {
        let about = c.about();
        assert!(
            about.ends_with('.') && !about.contains('\n') && !about.contains('|'),
            "{}: {about:?}",
            c.id()
        );
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
    // CPU 3 and kernel-managed (its debugfs state says IRQD_AFFINITY_MANAGED): the movable
    // one and the managed one are reported apart, each with its own fix.
    let irq = &m["irq.affinity"];
    assert_eq!(irq.severity, Severity::Medium);
    assert!(
        irq.found.starts_with("1 movable IRQ can")
            && irq.found.contains("eth0-rx-0")
            && !irq.found.contains("nvme0q4")
            && irq.found.ends_with("1 kernel-managed, in irq.managed"),
        "{}",
        irq.found
    );
    let fix = irq.fix.as_deref().unwrap();
    assert!(
        fix.contains("for N in 120; do echo 0-1 > /proc/irq/$N/smp_affinity_list"),
        "{fix}"
    );
    assert!(!fix.contains("isolcpus"), "{fix}");
    let managed = &m["irq.managed"];
    assert_eq!(managed.severity, Severity::Medium);
    assert!(
        managed.found.contains("122 nvme0q4 (42 on measured CPUs)")
            && managed.found.contains("per the IRQ debugfs")
            && !managed.found.contains("eth0"),
        "{}",
        managed.found
    );
    let fix = managed.fix.as_deref().unwrap();
    assert!(
        fix.contains("EIO") && fix.contains("isolcpus=managed_irq,domain,2-3"),
        "{fix}"
    );
    assert!(!fix.contains("echo"), "{fix}");
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
    // A directory of its own: tests run in parallel threads of one process.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let root = Root::at(dir);
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
}

/// PREEMPT_DYNAMIC with neither debugfs nor a build configuration: the mode comes from the
/// kernel log's boot line, and the fact says so.
#[test]
fn the_preemption_mode_can_come_from_the_kernel_log() {
    let (f, m) = findings("dynamic-log", Some(vec![0]));
    let p = f.kernel.preemption.value().expect("read from the log");
    assert_eq!((p.model.as_str(), p.dynamic), ("voluntary", true));
    assert!(f
        .kernel
        .preemption
        .source()
        .contains("kernel log (/dev/kmsg"));
    // The finding says how it was read: the source used and the ones that did not answer.
    let src = &m["kernel.preempt"].source;
    assert!(
        src.starts_with("kernel log (/dev/kmsg")
            && src.contains("tried first: /sys/kernel/debug/sched/preempt: absent"),
        "{src}"
    );
}

/// Each source of the preemption model, in its order (hand-made trees, see the fixtures'
/// README): debugfs first (even when the log says otherwise), the banner, the build
/// configuration, the kernel log; an unreadable log is skipped with its reason.
#[test]
fn the_preemption_model_names_its_source() {
    use tickscope_system::facts::kernel;
    let read = |name: &str| {
        let k = kernel::read(&fixture(name));
        let p = k.preemption.value().cloned().expect(name);
        (p, k.preemption.source().to_string())
    };
    let (p, src) = read("preempt-debugfs");
    assert_eq!((p.model.as_str(), p.dynamic), ("full", true));
    assert_eq!(src, "/sys/kernel/debug/sched/preempt");
    assert!(p.skipped.is_empty());
    let (p, src) = read("preempt-banner");
    assert_eq!((p.model.as_str(), p.dynamic), ("full", false));
    assert_eq!(src, "/proc/sys/kernel/version (uname -v)");
    assert_eq!(p.skipped.len(), 1, "{:?}", p.skipped);
    let (p, src) = read("preempt-config");
    assert_eq!((p.model.as_str(), p.dynamic), ("voluntary", false));
    assert_eq!(
        src,
        "/boot/config-6.1.0-hand-made (CONFIG_PREEMPT_VOLUNTARY)"
    );
    assert!(
        p.skipped[1].contains("no PREEMPT in the banner"),
        "{:?}",
        p.skipped
    );
    let (p, src) = read("dynamic-log");
    assert_eq!(p.model, "voluntary");
    assert!(src.starts_with("kernel log"));
    let (p, src) = read("rt-isolated");
    assert_eq!(
        (p.model.as_str(), src.as_str()),
        ("rt", "/sys/kernel/realtime")
    );

    // A log that cannot be read (here a directory where /dev/kmsg should be) is skipped with
    // its reason, and the build's default mode is used.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let put = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put("proc/sys/kernel/osrelease", "6.18.0-t\n");
    put("proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n");
    put(
        "boot/config-6.18.0-t",
        "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_LAZY=y\n",
    );
    std::fs::create_dir_all(dir.join("dev/kmsg")).unwrap();
    let k = kernel::read(&Root::at(dir));
    let p = k.preemption.value().unwrap();
    assert_eq!((p.model.as_str(), p.dynamic), ("lazy", true));
    assert!(k
        .preemption
        .source()
        .contains("CONFIG_PREEMPT_LAZY, the boot default"));
    assert!(
        p.skipped.iter().any(|s| s.starts_with("/dev/kmsg: ")),
        "{:?}",
        p.skipped
    );
}

/// The kernel log's last "Dynamic Preempt:" wins (it is printed again at every change), in
/// both /dev/kmsg's and dmesg's formats.
#[test]
fn the_last_dynamic_preempt_line_wins() {
    use tickscope_system::facts::kernel::dynamic_preempt_in_log;
    let log = "6,88,241589,-;Dynamic Preempt: none\n6,900,99,-;Dynamic Preempt: full\n";
    assert_eq!(dynamic_preempt_in_log(log).as_deref(), Some("full"));
    let dmesg = "[    0.241589] Dynamic Preempt: voluntary\n";
    assert_eq!(dynamic_preempt_in_log(dmesg).as_deref(), Some("voluntary"));
    assert_eq!(dynamic_preempt_in_log("Linux version 6.18"), None);
}

/// Kernel-managed IRQs on this VM: the virtio-blk request queue (IRQ 36, `virtio1-req.0`) is
/// reported apart as probably managed by its name (no IRQ debugfs here); the movable ones
/// stay in irq.affinity with the write as their fix.
#[test]
fn managed_irqs_are_reported_apart() {
    let (_, m) = findings("this-vm", None);
    let managed = &m["irq.managed"];
    assert_eq!(managed.severity, Severity::Medium);
    assert!(
        managed.found.starts_with("1 kernel-managed IRQ can")
            && managed.found.contains("36 virtio1-req.0")
            && managed.found.contains("probably, by name"),
        "{}",
        managed.found
    );
    let movable = &m["irq.affinity"];
    assert!(
        !movable.found.contains("virtio1-req.0"),
        "{}",
        movable.found
    );
    assert!(
        movable.found.ends_with("1 kernel-managed, in irq.managed"),
        "{}",
        movable.found
    );
    assert!(movable.fix.as_deref().unwrap().contains("EIO"));
    // On CPU 0 only, nothing managed fires (IRQ 36 is effective on CPU 1).
    let (_, m) = findings("this-vm", Some(vec![0]));
    assert_eq!(sev(&m, "irq.managed"), Severity::Ok);
}

/// The clock-read check on measured values: a vDSO read is ok, a slow one info, a system
/// call medium, a µs high; a fixture (nothing to time) is unknown with the reason.
#[test]
fn clock_read_severities() {
    use tickscope_system::clocks::Access;
    use tickscope_system::doctor::checks::clock_read::ClockRead as Check;
    use tickscope_system::doctor::Check as _;
    use tickscope_system::facts::time::ClockRead;
    use tickscope_system::facts::Fact;
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
        if want >= Severity::Medium {
            let fix = got[0].fix.as_deref().unwrap();
            assert!(
                fix.contains("clocksource=tsc") && fix.contains("tsc=reliable"),
                "{fix}"
            );
            let doc = &got[0].citation.as_ref().unwrap().document;
            assert_eq!(doc, "Documentation/admin-guide/kernel-parameters.txt");
        }
    }
}

/// The debugging-options and EFI checks: the hand-made isolated machine has the irqsoff
/// tracer built in and EFI runtime services on (info); the quiet one neither (ok); this VM
/// (no EFI copied) says unknown rather than guess.
#[test]
fn debug_options_and_efi_runtime() {
    let (_, m) = findings("rt-isolated", None);
    assert_eq!(sev(&m, "kernel.debug_options"), Severity::Ok);
    let efi = &m["platform.efi_runtime"];
    assert_eq!(efi.severity, Severity::Info);
    assert!(efi.fix.as_deref().unwrap().contains("efi=noruntime"));
    let (_, m) = findings("rt-quiet", None);
    assert_eq!(sev(&m, "kernel.debug_options"), Severity::Ok);
    assert_eq!(sev(&m, "platform.efi_runtime"), Severity::Ok);
    let (_, m) = findings("this-vm", None);
    assert_eq!(sev(&m, "platform.efi_runtime"), Severity::Unknown);
}

/// The latency tracers: the isolated machine has the irqsoff tracer built in and selected
/// (medium, fix: nop); built in but not selected is info; this VM has neither (ok); a tree
/// where tracefs is unreadable but the configuration has them is info with the reason.
#[test]
fn latency_tracers() {
    use tickscope_system::doctor::checks::latency_tracers::LatencyTracers;
    use tickscope_system::doctor::Check as _;
    use tickscope_system::facts::Fact;
    let (mut f, m) = findings("rt-isolated", Some(vec![2, 3]));
    let t = &m["kernel.latency_tracers"];
    assert_eq!(t.severity, Severity::Medium);
    assert!(
        t.found
            .starts_with("current tracer: irqsoff; CONFIG_IRQSOFF_TRACER=y"),
        "{}",
        t.found
    );
    assert!(t
        .fix
        .as_deref()
        .unwrap()
        .contains("echo nop > /sys/kernel/tracing/current_tracer"));
    let ctx = context(&f, Some(vec![2, 3]), false).unwrap();
    f.kernel.current_tracer = Fact::known("nop".into(), "/sys/kernel/tracing/current_tracer");
    assert_eq!(LatencyTracers.check(&f, &ctx)[0].severity, Severity::Info);
    f.kernel.current_tracer = Fact::unknown("needs root (permission denied)", "tracefs");
    let g = &LatencyTracers.check(&f, &ctx)[0];
    assert_eq!(g.severity, Severity::Info);
    assert!(g.found.contains("needs root"), "{}", g.found);
    let (_, m) = findings("this-vm", None);
    let t = &m["kernel.latency_tracers"];
    assert_eq!(t.severity, Severity::Ok);
    assert!(t.found.starts_with("not built in"), "{}", t.found);
}

/// Every fix is a command for the machine at hand: no `<them>`, `<measured CPUs>`, `cpuN`
/// placeholders, whichever CPUs are measured (all of them, some, one).
#[test]
fn fixes_are_commands_for_this_machine_not_templates() {
    for (tree, cpus) in [
        ("this-vm", None),
        ("this-vm", Some(vec![1])),
        ("rt-isolated", None),
        ("rt-isolated", Some(vec![2, 3])),
        ("rt-quiet", Some(vec![1])),
    ] {
        let (_, m) = findings(tree, cpus.clone());
        for f in m.values() {
            let Some(fix) = &f.fix else { continue };
            for template in [
                "<them>",
                "<measured CPUs>",
                "<other CPUs>",
                "<housekeeping CPUs>",
                "<cgroup>",
                "<tickscope>",
                "cpuN/",
            ] {
                assert!(!fix.contains(template), "{tree} {cpus:?} {}: {fix}", f.id);
            }
        }
    }
}

/// Most important first: the measurements-invalidating ones, then by severity; within one,
/// check order. Only the no-high-resolution-timers and jiffies findings invalidate.
#[test]
fn findings_sort_most_important_first() {
    use tickscope_system::doctor::by_importance;
    let root = fixture("this-vm");
    let facts = Facts::gather(&root, Duration::ZERO);
    let ctx = context(&facts, None, false).unwrap();
    let mut all = run_checks(&facts, &ctx);
    let order: Vec<String> = all.iter().map(|f| f.id.clone()).collect();
    by_importance(&mut all);
    let rank = |s: Severity| match s {
        Severity::Fatal => 0,
        Severity::High => 1,
        Severity::Medium => 2,
        Severity::Unknown => 3,
        Severity::Info => 4,
        Severity::Ok => 5,
    };
    for pair in all.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(
            rank(a.severity) <= rank(b.severity),
            "{} before {}",
            a.id,
            b.id
        );
        if a.severity == b.severity {
            let pos = |id: &str| order.iter().position(|o| o == id).unwrap();
            assert!(pos(&a.id) < pos(&b.id), "stable: {} before {}", a.id, b.id);
        }
    }
    assert_eq!(all[0].id, "kernel.preempt");
    assert!(
        all.iter().all(|f| !f.invalidates),
        "a stock KVM guest can be measured"
    );
    let invalid = Finding::new("x", "t", Severity::Info).invalidating();
    let mut v = vec![Finding::new("y", "t", Severity::Fatal), invalid];
    by_importance(&mut v);
    assert_eq!(v[0].id, "x");
}

#[test]
fn explain_says_which_backend_and_what_to_grant() {
    use tickscope_system::doctor::checks::explain::Explain;
    use tickscope_system::doctor::Check;
    use tickscope_system::facts::privileges::{CAP_BPF, CAP_PERFMON, CAP_SYSLOG};
    use tickscope_system::facts::Fact;
    // this-vm: root, BTF present — the BPF backend.
    let (facts, m) = findings("this-vm", None);
    assert_eq!(facts.kernel.btf.value(), Some(&true));
    assert_eq!(sev(&m, "explain"), Severity::Ok);
    // rt-isolated: uid 1000, no capabilities, no BTF — context mode, fixed by root or a kernel
    // with BTF.
    let (_, m) = findings("rt-isolated", None);
    let f = &m["explain"];
    assert_eq!(f.severity, Severity::Info);
    assert!(f.effect.contains("context mode"), "{}", f.effect);
    // The same facts as an ordinary user holding `caps`, with BTF.
    let ctx = context(&facts, None, false).unwrap();
    let as_user = |caps: &[u32]| {
        let mut f = facts.clone();
        f.privileges.euid = Fact::known(1000, "test");
        f.privileges.cap_eff = Fact::known(caps.iter().map(|c| 1u64 << c).sum(), "test");
        Explain.check(&f, &ctx).remove(0)
    };
    // CAP_SYSLOG is not needed: the kernel addresses come through BPF.
    let enough = as_user(&[CAP_BPF, CAP_PERFMON]);
    assert_eq!(enough.severity, Severity::Ok, "{}", enough.found);
    let no_perfmon = as_user(&[CAP_BPF, CAP_SYSLOG]);
    assert_eq!(no_perfmon.severity, Severity::Info);
    assert!(
        no_perfmon.effect.contains("context mode"),
        "{}",
        no_perfmon.effect
    );
    let fix = no_perfmon.fix.unwrap_or_default();
    assert!(fix.contains("setcap cap_bpf,cap_perfmon+ep"), "{fix}");
    // Root without BTF: the tracefs fallback.
    let mut no_btf = facts.clone();
    no_btf.kernel.btf = Fact::known(false, "test");
    let f = Explain.check(&no_btf, &ctx).remove(0);
    assert!(f.effect.contains("tracefs fallback"), "{}", f.effect);
}
