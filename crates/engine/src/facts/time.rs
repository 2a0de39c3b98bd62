//! Timekeeping and platform: clocksource, SMT siblings, lockup detector.
//!
//! Sources: `/sys/devices/system/clocksource/clocksource0/{current,available}_clocksource`
//! (Documentation/timers/timekeeping.rst); `cpuN/topology/thread_siblings_list` and
//! `/sys/devices/system/cpu/smt/control` (Documentation/ABI/stable/sysfs-devices-system-cpu);
//! `/proc/sys/kernel/{watchdog,nmi_watchdog,watchdog_thresh}`
//! (Documentation/admin-guide/lockup-watchdogs.rst).

use super::{cpu_list, Fact, Root};
use serde::{Deserialize, Serialize};

/// Time and platform facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeFacts {
    /// Current clocksource (`tsc`, `kvm-clock`, `hpet`, …).
    pub clocksource: Fact<String>,
    /// Available clocksources.
    pub available_clocksources: Fact<Vec<String>>,
    /// Per CPU: (cpu, its SMT siblings including itself).
    pub siblings: Vec<(usize, Fact<Vec<usize>>)>,
    /// `smt/control`: `on`, `off`, `forceoff`, `notsupported`, `notimplemented`.
    pub smt_control: Fact<String>,
    /// `kernel.watchdog` (1: soft and hard lockup detectors on).
    pub watchdog: Fact<i64>,
    /// `kernel.nmi_watchdog` (1: hard lockup detector on).
    pub nmi_watchdog: Fact<i64>,
    /// `kernel.watchdog_thresh`, s.
    pub watchdog_thresh_s: Fact<i64>,
}

/// Reads the time facts under `root`.
pub fn read(root: &Root) -> TimeFacts {
    let cs = "/sys/devices/system/clocksource/clocksource0";
    let siblings = root
        .list("/sys/devices/system/cpu")
        .into_iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse::<usize>().ok())
        .map(|cpu| {
            let f = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
            (cpu, root.fact(&f).and_then(|s| cpu_list(&s)))
        })
        .collect();
    TimeFacts {
        clocksource: root.fact(&format!("{cs}/current_clocksource")),
        available_clocksources: root
            .fact(&format!("{cs}/available_clocksource"))
            .map(|s| s.split_whitespace().map(str::to_string).collect()),
        siblings,
        smt_control: root.fact("/sys/devices/system/cpu/smt/control"),
        watchdog: root.parsed("/proc/sys/kernel/watchdog"),
        nmi_watchdog: root.parsed("/proc/sys/kernel/nmi_watchdog"),
        watchdog_thresh_s: root.parsed("/proc/sys/kernel/watchdog_thresh"),
    }
}
