//! Time as tickscope holds it: signed integer nanoseconds on a named clock.
//!
//! Every instant and every duration inside the engine is an [`Nanos`] (`i64` nanoseconds).
//! Signed, so that an early wake-up is a negative latency rather than a wrapped unsigned
//! number; 64-bit, so that it covers ±292 years. Floating point appears only in derived
//! statistics (mean, standard deviation), never in a time stamp.

use serde::{Deserialize, Serialize};

/// Signed nanoseconds: an instant on a clock (ns since that clock's epoch) or a duration.
pub type Nanos = i64;

/// Nanoseconds in one microsecond.
pub const NS_PER_US: Nanos = 1_000;
/// Nanoseconds in one millisecond.
pub const NS_PER_MS: Nanos = 1_000_000;
/// Nanoseconds in one second.
pub const NS_PER_SEC: Nanos = 1_000_000_000;

/// The clocks a periodic task can be woken on (see `clock_gettime(2)` and `clock_nanosleep(2)`).
///
/// Only clocks that `clock_nanosleep` accepts with `TIMER_ABSTIME` are listed: the coarse,
/// raw and CPU-time clocks can be read but not slept on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockId {
    /// `CLOCK_MONOTONIC`: never steps; slewed by NTP. The default, as in cyclictest.
    Monotonic,
    /// `CLOCK_REALTIME`: wall-clock time; can step when the time is set.
    Realtime,
    /// `CLOCK_BOOTTIME`: like monotonic, but also counts time spent in suspend.
    Boottime,
    /// `CLOCK_TAI`: International Atomic Time, realtime without leap seconds.
    Tai,
}

impl ClockId {
    /// Every clock, in the order the CLI lists them.
    pub const ALL: [ClockId; 4] = [
        ClockId::Monotonic,
        ClockId::Realtime,
        ClockId::Boottime,
        ClockId::Tai,
    ];

    /// The lower-case name used on the command line and in result files (`monotonic`, …).
    pub fn name(self) -> &'static str {
        match self {
            ClockId::Monotonic => "monotonic",
            ClockId::Realtime => "realtime",
            ClockId::Boottime => "boottime",
            ClockId::Tai => "tai",
        }
    }

    /// Parses a name as returned by [`ClockId::name`]; `None` for anything else.
    pub fn from_name(name: &str) -> Option<ClockId> {
        ClockId::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The kernel's clock id (`CLOCK_MONOTONIC`, …) for `clock_gettime(2)`.
    pub fn raw(self) -> libc::clockid_t {
        match self {
            ClockId::Monotonic => libc::CLOCK_MONOTONIC,
            ClockId::Realtime => libc::CLOCK_REALTIME,
            ClockId::Boottime => libc::CLOCK_BOOTTIME,
            ClockId::Tai => libc::CLOCK_TAI,
        }
    }
}

/// A source of the current time. The real one reads a kernel clock; tests use
/// `crate::mock::MockClock`.
pub trait Clock {
    /// The current time on this clock, in ns since the clock's epoch.
    fn now(&self) -> Nanos;
}

/// Reads a kernel clock with `clock_gettime(2)` (through the vDSO where the kernel offers it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SystemClock(pub ClockId);

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Nanos {
        read_clock(self.0.raw())
    }
}

/// Reads any clock id with `clock_gettime(2)` and returns ns since its epoch.
///
/// Returns 0 if the kernel refuses the clock id (`EINVAL`); callers that accept arbitrary ids
/// check with `clock_getres` first.
#[inline]
pub fn read_clock(id: libc::clockid_t) -> Nanos {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime writes only into it.
    unsafe { libc::clock_gettime(id, &mut ts) };
    // A clock's reading fits: i64 ns reach the year 2262 on CLOCK_REALTIME, so the
    // saturating checks of `from_timespec` are not needed on this per-wake-up path.
    #[allow(clippy::unnecessary_cast)] // time_t and c_long are i32 on 32-bit targets
    (ts.tv_sec as i64)
        .wrapping_mul(NS_PER_SEC)
        .wrapping_add(ts.tv_nsec as i64)
}

/// Converts a `timespec` to ns. Saturates instead of overflowing for absurd inputs.
#[inline]
#[allow(clippy::unnecessary_cast)] // time_t and c_long are i32 on 32-bit targets
pub fn from_timespec(ts: &libc::timespec) -> Nanos {
    (ts.tv_sec as i64)
        .saturating_mul(NS_PER_SEC)
        .saturating_add(ts.tv_nsec as i64)
}

/// Converts ns to a normalised `timespec` (`0 <= tv_nsec < 10^9`, also for negative input).
#[inline]
pub fn to_timespec(ns: Nanos) -> libc::timespec {
    if ns >= 0 {
        // The common case; plain division is cheaper than the Euclidean one.
        return libc::timespec {
            tv_sec: (ns / NS_PER_SEC) as libc::time_t,
            tv_nsec: (ns % NS_PER_SEC) as _,
        };
    }
    libc::timespec {
        tv_sec: ns.div_euclid(NS_PER_SEC) as libc::time_t,
        tv_nsec: ns.rem_euclid(NS_PER_SEC) as _,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespec_round_trip_including_negative() {
        for ns in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            -1,
            -1_000_000_001,
            1 << 60,
        ] {
            let ts = to_timespec(ns);
            assert!((0..NS_PER_SEC as _).contains(&ts.tv_nsec));
            assert_eq!(from_timespec(&ts), ns);
        }
    }

    #[test]
    fn clock_names_round_trip() {
        for c in ClockId::ALL {
            assert_eq!(ClockId::from_name(c.name()), Some(c));
        }
        assert_eq!(ClockId::from_name("bogus"), None);
    }

    #[test]
    fn system_clock_is_monotonic_across_two_reads() {
        let c = SystemClock(ClockId::Monotonic);
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
    }
}
