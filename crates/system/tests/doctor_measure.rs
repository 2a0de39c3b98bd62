//! `doctor --measure` leaves every knob as it found it: the process's policy, timer slack,
//! affinity and PM QoS file descriptors read back the same afterwards.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tickscope_engine::setup::{allowed_cpus, current_policy, current_timer_slack};
use tickscope_engine::time::NS_PER_MS;
use tickscope_system::doctor::context;
use tickscope_system::doctor::measure::{measure, Knob, MeasureConfig};
use tickscope_system::facts::{Facts, Root};

fn pm_qos_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|t| t.as_os_str() == "/dev/cpu_dma_latency")
        })
        .count()
}

#[test]
fn measure_restores_every_knob() {
    let facts = Facts::gather(&Root::live(), Duration::ZERO);
    let ctx = context(&facts, None, true).unwrap();
    let before = (
        current_policy().unwrap(),
        current_timer_slack(),
        allowed_cpus().unwrap(),
        pm_qos_fds(),
    );
    let cfg = MeasureConfig {
        duration_ns: 100 * NS_PER_MS,
        rounds: 1,
        period_ns: NS_PER_MS,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut lines = 0;
    let rows = measure(&cfg, &facts, &ctx, &stop, &mut |_| lines += 1);
    let after = (
        current_policy().unwrap(),
        current_timer_slack(),
        allowed_cpus().unwrap(),
        pm_qos_fds(),
    );
    assert_eq!(before, after, "a knob was left changed");
    assert_eq!(rows.len(), Knob::ALL.len());
    for r in &rows {
        match (&r.without_stats, &r.with_stats) {
            (Some(a), Some(b)) => {
                assert!(a.samples > 0 && b.samples > 0);
                assert!(a.p50_ns <= a.p99_ns && a.p99_ns <= a.max_ns, "{r:?}");
                assert!(r.verdict.starts_with("on this machine"), "{}", r.verdict);
            }
            _ => {
                eprintln!("{}: {}", r.knob.name(), r.verdict);
                assert!(r.verdict.starts_with("unknown: "), "{}", r.verdict);
            }
        }
    }
    let root = facts.privileges.euid.value() == Some(&0);
    if root {
        assert!(rows.iter().all(|r| r.with_stats.is_some()), "{rows:#?}");
        assert_eq!(lines, 2 * Knob::ALL.len());
    } else {
        eprintln!("not root: policy and PM QoS rows are expected to say 'unknown: needs root'");
    }
}
