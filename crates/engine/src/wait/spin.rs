//! Spinning on a clock: the core that `busy` and `hybrid` share.
//!
//! A spin reads the clock until the reading reaches the expiry; the first reading at or past
//! it is the wake time. Reading `CLOCK_MONOTONIC` goes through the vDSO and costs about
//! 23 ns on the project's reference machine (`clock_gettime(2)`, `vdso(7)`), so a spin
//! notices the expiry within a few tens of ns — at the price of a whole CPU.
//!
//! The clock is behind [`SpinClock`] so that the spinning logic (how often it naps, what the
//! hybrid learns from its sleeps) runs on virtual time in tests
//! ([`crate::mock::MockTimebase`]).

use super::SpinClock;
use crate::time::{read_clock, to_timespec, ClockId, Nanos};
use std::io;

/// The kernel's clock: `clock_gettime(2)` to read it, `clock_nanosleep(2)` with
/// `TIMER_ABSTIME` to sleep on it.
#[derive(Debug, Clone, Copy)]
pub struct KernelClock {
    clock: libc::clockid_t,
}

impl KernelClock {
    /// The kernel clock `clock`.
    pub fn new(clock: ClockId) -> Self {
        KernelClock { clock: clock.raw() }
    }
}

impl SpinClock for KernelClock {
    #[inline]
    fn now(&self) -> Nanos {
        read_clock(self.clock)
    }

    #[inline]
    fn sleep_until(&self, t: Nanos) -> io::Result<()> {
        super::sleep_until::sleep_until(self.clock, &to_timespec(t))
    }
}

/// Decides when a spin naps: every `every`-th clock reading that is still before the expiry
/// (the Cpp-Periodic-Task README's `step_sleep`). The count runs on across waits.
#[derive(Debug, Clone, Default)]
pub(crate) struct NapCounter {
    every: u32,
    count: u32,
    naps: u64,
}

impl NapCounter {
    /// Naps after every `every` readings before the expiry; `None` or `Some(0)`: never.
    pub(crate) fn new(every: Option<u32>) -> Self {
        NapCounter {
            every: every.unwrap_or(0),
            count: 0,
            naps: 0,
        }
    }

    /// Counts one reading that was still before the expiry; true when a nap is due now.
    #[inline]
    pub(crate) fn tick(&mut self) -> bool {
        if self.every == 0 {
            return false;
        }
        self.count += 1;
        if self.count >= self.every {
            self.count = 0;
            self.naps += 1;
            true
        } else {
            false
        }
    }

    /// Naps taken so far.
    pub(crate) fn naps(&self) -> u64 {
        self.naps
    }
}

/// How a spin ended: its first and its last clock reading (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spin {
    /// The first reading, taken as the spin began (for the hybrid, right after its sleep).
    pub first: Nanos,
    /// The first reading at or past the expiry: the wake time.
    pub woke: Nanos,
}

/// Reads `clock` until it reaches `expiry` (absolute ns). When `naps` says a nap is due,
/// sleeps until the time just read — the Cpp-Periodic-Task `clock_nanosleep(TIMER_ABSTIME, now)`,
/// which enters the kernel and returns at once (a point where the scheduler can run
/// something else), not a real sleep.
///
/// # Errors
/// The error of a nap ([`io::ErrorKind::Interrupted`] when a signal cut it short).
#[inline]
pub(crate) fn spin_until<C: SpinClock + ?Sized>(
    clock: &C,
    expiry: Nanos,
    naps: &mut NapCounter,
) -> io::Result<Spin> {
    let first = clock.now();
    let mut now = first;
    while now < expiry {
        if naps.tick() {
            clock.sleep_until(now)?;
        }
        now = clock.now();
    }
    Ok(Spin { first, woke: now })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockTimebase;

    #[test]
    fn the_wake_time_is_the_first_reading_at_or_past_the_expiry() {
        let clock = MockTimebase::new(1_000, 30, vec![0]);
        let s = spin_until(&clock, 1_100, &mut NapCounter::new(None)).unwrap();
        // Readings at 1000, 1030, 1060, 1090, 1120.
        assert_eq!(
            s,
            Spin {
                first: 1_000,
                woke: 1_120
            }
        );
        assert_eq!((clock.reads(), clock.sleeps()), (5, 0));
    }

    #[test]
    fn an_expiry_in_the_past_costs_one_reading() {
        let clock = MockTimebase::new(5_000, 30, vec![0]);
        let s = spin_until(&clock, 1_000, &mut NapCounter::new(Some(1))).unwrap();
        assert_eq!(
            s,
            Spin {
                first: 5_000,
                woke: 5_000
            }
        );
        assert_eq!(clock.sleeps(), 0);
    }

    #[test]
    fn naps_come_every_nth_early_reading_and_the_count_runs_across_spins() {
        // 10 ns per reading; naps return at once (overshoot 0).
        let clock = MockTimebase::new(0, 10, vec![0]);
        let mut naps = NapCounter::new(Some(4));
        // Readings 0..=100: 10 early readings (0..=90) → naps after the 4th and 8th.
        spin_until(&clock, 100, &mut naps).unwrap();
        assert_eq!((naps.naps(), clock.sleeps()), (2, 2));
        // The count stands at 2; two more early readings make the third nap.
        let t = clock.now();
        spin_until(&clock, t + 25, &mut naps).unwrap();
        assert_eq!(naps.naps(), 3);
    }

    #[test]
    fn a_nap_that_oversleeps_delays_the_wake_up() {
        // The nap returns 500 ns after the time it was asked for.
        let clock = MockTimebase::new(0, 10, vec![500]);
        let s = spin_until(&clock, 100, &mut NapCounter::new(Some(1))).unwrap();
        // First reading 0 (early) → nap → woken at 510; next reading 510 ≥ 100.
        assert_eq!(s.woke, 510);
    }

    #[test]
    fn never_napping_is_the_default() {
        let mut n = NapCounter::default();
        assert!((0..1000).all(|_| !n.tick()));
        assert_eq!(n.naps(), 0);
    }

    #[test]
    fn the_kernel_clock_spins_past_its_expiry() {
        let c = KernelClock::new(ClockId::Monotonic);
        let expiry = c.now() + 50_000;
        let s = spin_until(&c, expiry, &mut NapCounter::new(Some(100))).unwrap();
        assert!(s.woke >= expiry && s.first <= s.woke);
        c.sleep_until(c.now() - 1).unwrap();
    }
}
