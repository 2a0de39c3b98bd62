//! `Periodic::explain` (cargo feature `explain`): a 1 ms loop explains its own late
//! wake-ups in process. Needs root (tracing); skipped with a reason otherwise. Structure
//! only: every late wake-up handed over is attributed to one cause once nothing is pending.
#![cfg(feature = "explain")]

use std::time::{Duration, Instant};
use tickscope::{Periodic, Strategy};

#[test]
fn a_loop_explains_its_late_wake_ups_in_process() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping a_loop_explains_its_late_wake_ups_in_process: not root (tracing)");
        return;
    }
    if !std::path::Path::new("/sys/kernel/tracing").is_dir()
        && !std::path::Path::new("/sys/kernel/btf/vmlinux").exists()
    {
        eprintln!("skipping a_loop_explains_its_late_wake_ups_in_process: neither BTF nor tracefs");
        return;
    }
    let mut looper = Periodic::new(1_000_000, Strategy::Sleep).unwrap();
    assert!(looper.explanation().is_none());
    // 0 ns: every wake-up is late, so there is something to explain whatever the load.
    looper.explain(0).unwrap();
    for _ in 0..1000 {
        looper.wait().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let e = loop {
        let e = looper.explanation().unwrap();
        if e.pending == 0 || Instant::now() > deadline {
            break e;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(["bpf", "tracefs"].contains(&e.backend.as_str()), "{e:?}");
    assert!(e.late > 0 && e.late <= 1000 && e.pending == 0, "{e:?}");
    let counted: u64 = e.causes.iter().map(|c| c.count).sum();
    assert_eq!(counted + e.dropped, e.late, "{e:?}");
    assert!(
        e.causes.windows(2).all(|w| w[0].count >= w[1].count),
        "{e:?}"
    );
    // The host is named only where there is one, and an idle vCPU's late interrupt is the
    // host's, not a C-state's (the library's explainer once took every machine for bare
    // metal). Read here from the CPU flags, apart from the library's own reading.
    let guest = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    let impossible = if guest {
        "exit from idle"
    } else {
        "hypervisor"
    };
    assert!(
        e.causes.iter().all(|c| c.cause != impossible),
        "a {} machine: {e:?}",
        if guest { "virtual" } else { "bare-metal" }
    );
    assert!(looper.explain(-1).is_err());
}
