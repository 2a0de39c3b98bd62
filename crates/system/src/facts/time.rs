//! Timekeeping and platform: clocksource, SMT siblings, lockup detector.
//!
//! Sources: `/sys/devices/system/clocksource/clocksource0/{current,available}_clocksource`
//! (Documentation/timers/timekeeping.rst); `cpuN/topology/thread_siblings_list` and
//! `/sys/devices/system/cpu/smt/control` (Documentation/ABI/stable/sysfs-devices-system-cpu);
//! `/proc/sys/kernel/{watchdog,nmi_watchdog,watchdog_thresh}`
//! (Documentation/admin-guide/lockup-watchdogs.rst); the cost of a `CLOCK_MONOTONIC` read,
//! measured as `tickscope clocks` does ([`crate::clocks::measure_clock`]) on the running system
//! by [`measure_monotonic_read`], apart from the file parsing of [`read`].

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
    /// The cost of one `CLOCK_MONOTONIC` read through the C library, measured (live only,
    /// and only when the doctor may take time: within 50 ms).
    pub monotonic_read: Fact<ClockRead>,
}

/// The measured cost of reading a clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockRead {
    /// Median cost of one read, ns (batches of 1000 reads).
    pub ns: f64,
    /// Whether the read stayed in user space (vDSO) or entered the kernel.
    pub access: crate::clocks::Access,
}

/// The budget of the clock-read measurement, ns: 45 ms, so that with its last batch and
/// pair it ends within 50 ms (measured here: 46 ms).
pub const CLOCK_READ_BUDGET_NS: tickscope_engine::time::Nanos =
    45 * tickscope_engine::time::NS_PER_MS;

/// Where [`TimeFacts::monotonic_read`] comes from.
pub const CLOCK_READ_SOURCE: &str = "tickscope clocks (CLOCK_MONOTONIC alone, ≤ 50 ms)";

/// Measures the cost of a `CLOCK_MONOTONIC` read on the running system as `tickscope clocks`
/// does ([`crate::clocks::measure_clock`], [`CLOCK_READ_BUDGET_NS`]). Kept apart from
/// [`read`], which only parses files, so the check is tested on values;
/// [`super::Facts::gather`] calls it on the live system when the doctor may take time.
pub fn measure_monotonic_read() -> Fact<ClockRead> {
    use crate::clocks::{measure_clock, ClockKind, ClockOutcome};
    match measure_clock(ClockKind::Monotonic, CLOCK_READ_BUDGET_NS) {
        Ok(ClockOutcome::Measured(m)) => Fact::known(
            ClockRead {
                ns: m.cost.median_ns,
                access: m.access,
            },
            CLOCK_READ_SOURCE,
        ),
        Ok(ClockOutcome::Unsupported { reason }) => Fact::unknown(reason, CLOCK_READ_SOURCE),
        Err(e) => Fact::unknown(e.to_string(), CLOCK_READ_SOURCE),
    }
}

/// Reads the time facts under `root`. Only parses files: [`TimeFacts::monotonic_read`] is
/// left unknown (not measured), for [`measure_monotonic_read`] to fill in on the running
/// system.
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
        monotonic_read: Fact::unknown(
            match root.is_live() {
                true => "not measured for a run",
                false => "measured on the running system only",
            },
            CLOCK_READ_SOURCE,
        ),
    }
}
