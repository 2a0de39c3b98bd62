//! The clocks `tickscope clocks` measures and the ways to read them.
//!
//! Clock semantics from `clock_gettime(2)`; the vDSO and its fallback to the system call from
//! the kernel's `lib/vdso/gettimeofday.c`.

use serde::{Deserialize, Serialize};
use std::io;
use tickscope_engine::time::{from_timespec, Nanos};

/// A clock that can be read: one of the `clock_gettime(2)` clocks, or the x86-64 time-stamp
/// counter read by an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// `CLOCK_REALTIME`: wall-clock time; steps when the time is set.
    Realtime,
    /// `CLOCK_REALTIME_COARSE`: the wall-clock time of the last tick (Linux 2.6.32).
    RealtimeCoarse,
    /// `CLOCK_MONOTONIC`: never steps; slewed by NTP.
    Monotonic,
    /// `CLOCK_MONOTONIC_COARSE`: the monotonic time of the last tick (Linux 2.6.32).
    MonotonicCoarse,
    /// `CLOCK_MONOTONIC_RAW`: the hardware clocksource, not slewed by NTP (Linux 2.6.28).
    MonotonicRaw,
    /// `CLOCK_BOOTTIME`: monotonic plus the time spent in suspend (Linux 2.6.39).
    Boottime,
    /// `CLOCK_TAI`: International Atomic Time (Linux 3.10).
    Tai,
    /// `CLOCK_PROCESS_CPUTIME_ID`: CPU time consumed by all threads of the process.
    ProcessCputimeId,
    /// `CLOCK_THREAD_CPUTIME_ID`: CPU time consumed by the calling thread.
    ThreadCputimeId,
    /// The time-stamp counter read with `rdtsc` (x86-64; not ordered with other instructions).
    Rdtsc,
    /// The time-stamp counter read with `rdtscp` (x86-64; waits for earlier instructions).
    Rdtscp,
}

impl ClockKind {
    /// Every clock measured on this architecture, in the order results list them: the nine
    /// `clock_gettime` clocks, then on x86-64 the two TSC reads.
    pub fn all() -> &'static [ClockKind] {
        use ClockKind::*;
        const ALL: [ClockKind; 11] = [
            Realtime,
            RealtimeCoarse,
            Monotonic,
            MonotonicCoarse,
            MonotonicRaw,
            Boottime,
            Tai,
            ProcessCputimeId,
            ThreadCputimeId,
            Rdtsc,
            Rdtscp,
        ];
        if cfg!(target_arch = "x86_64") {
            &ALL
        } else {
            &ALL[..9]
        }
    }

    /// The usual name: `CLOCK_REALTIME`, …, `TSC (rdtsc)`, `TSC (rdtscp)`.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Realtime => "CLOCK_REALTIME",
            ClockKind::RealtimeCoarse => "CLOCK_REALTIME_COARSE",
            ClockKind::Monotonic => "CLOCK_MONOTONIC",
            ClockKind::MonotonicCoarse => "CLOCK_MONOTONIC_COARSE",
            ClockKind::MonotonicRaw => "CLOCK_MONOTONIC_RAW",
            ClockKind::Boottime => "CLOCK_BOOTTIME",
            ClockKind::Tai => "CLOCK_TAI",
            ClockKind::ProcessCputimeId => "CLOCK_PROCESS_CPUTIME_ID",
            ClockKind::ThreadCputimeId => "CLOCK_THREAD_CPUTIME_ID",
            ClockKind::Rdtsc => "TSC (rdtsc)",
            ClockKind::Rdtscp => "TSC (rdtscp)",
        }
    }

    /// The `clock_gettime` id, or `None` for the TSC.
    pub fn clock_id(self) -> Option<libc::clockid_t> {
        Some(match self {
            ClockKind::Realtime => libc::CLOCK_REALTIME,
            ClockKind::RealtimeCoarse => libc::CLOCK_REALTIME_COARSE,
            ClockKind::Monotonic => libc::CLOCK_MONOTONIC,
            ClockKind::MonotonicCoarse => libc::CLOCK_MONOTONIC_COARSE,
            ClockKind::MonotonicRaw => libc::CLOCK_MONOTONIC_RAW,
            ClockKind::Boottime => libc::CLOCK_BOOTTIME,
            ClockKind::Tai => libc::CLOCK_TAI,
            ClockKind::ProcessCputimeId => libc::CLOCK_PROCESS_CPUTIME_ID,
            ClockKind::ThreadCputimeId => libc::CLOCK_THREAD_CPUTIME_ID,
            ClockKind::Rdtsc | ClockKind::Rdtscp => return None,
        })
    }

    /// Whether the clock promises never to go back: the monotonic family, boottime and the
    /// CPU-time clocks (`clock_gettime(2)`). Not realtime and TAI, which step when the time is
    /// set, and not the TSC, which is monotonic on one CPU but across CPUs only where the
    /// counters are synchronised.
    pub fn is_monotonic(self) -> bool {
        matches!(
            self,
            ClockKind::Monotonic
                | ClockKind::MonotonicCoarse
                | ClockKind::MonotonicRaw
                | ClockKind::Boottime
                | ClockKind::ProcessCputimeId
                | ClockKind::ThreadCputimeId
        )
    }
}

/// The advertised resolution of a clock id, ns (`clock_getres(2)`).
///
/// # Errors
/// The OS error; `EINVAL` means the kernel does not know the clock.
pub fn clock_resolution(id: libc::clockid_t) -> io::Result<Nanos> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_getres writes only into it.
    if unsafe { libc::clock_getres(id, &mut ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(from_timespec(&ts))
}

/// Reads a clock id with a real system call, bypassing the vDSO: `syscall(SYS_clock_gettime)`.
/// Returns ns since the clock's epoch, or 0 if the kernel refuses the id.
#[inline]
pub fn read_clock_syscall(id: libc::clockid_t) -> Nanos {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: SYS_clock_gettime takes a clock id and a pointer to a writable timespec of the
    // C library's layout, which `ts` is; the kernel writes only into it.
    unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            id as libc::c_long,
            &mut ts as *mut libc::timespec,
        )
    };
    from_timespec(&ts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_engine::time::read_clock;

    #[test]
    fn names_and_ids() {
        let all = ClockKind::all();
        assert!(all.len() >= 9);
        for c in all {
            assert!(c.name().starts_with("CLOCK_") == c.clock_id().is_some());
        }
        assert!(ClockKind::Monotonic.is_monotonic() && !ClockKind::Realtime.is_monotonic());
    }

    #[test]
    fn syscall_and_vdso_reads_agree() {
        let id = libc::CLOCK_MONOTONIC;
        let a = read_clock(id);
        let b = read_clock_syscall(id);
        let c = read_clock(id);
        assert!(a <= b && b <= c, "{a} {b} {c}");
        assert!(clock_resolution(id).unwrap() > 0);
        assert_eq!(
            clock_resolution(999).unwrap_err().raw_os_error(),
            Some(libc::EINVAL)
        );
    }
}
