//! `busy`: spin reading the clock until the expiry.
//!
//! The most precise way to wake — the thread never sleeps, so no timer interrupt, idle exit
//! or wake-up path stands between the expiry and the wake time — and the most expensive: a
//! whole CPU. With `--busy-sleep-every N` the spin calls
//! `clock_nanosleep(TIMER_ABSTIME)` for the time it just read after every N readings
//! before the expiry, as the Cpp-Periodic-Task README's `step_sleep` does. That call returns
//! at once (its time has passed): it is a trip through the kernel where the scheduler may
//! run something else, not a sleep, and it gives back no CPU time.
//!
//! Under SCHED_FIFO/RR a spinning thread uses more than the share of each
//! `sched_rt_period_us` that `sched_rt_runtime_us` allows real-time tasks (95 % by
//! default), so the kernel takes the CPU away from it for the rest of that period when
//! other tasks wait (Documentation/scheduler/sched-rt-group.rst): a ~50 ms gap per second.
//! [`super::throttle_warning`] says so before such a run.

use super::spin::{spin_until, KernelClock, NapCounter};
use super::SpinClock;
use super::{MethodDescriptor, MethodObservations, WakeMethod, Wakes};
use crate::time::{ClockId, Nanos};
use std::io;

/// `busy` in the registry ([`super::registry`]): spins the whole period.
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    spin_share: |_, _| Some(1.0),
    ..MethodDescriptor::sleeping(
        "clock_gettime(2)",
        // A spin returns from no wait; only its naps (`--busy-sleep-every`) reach an hrtimer.
        Wakes::hrtimer_sleep(&[]),
        |clock, options| Ok(Box::new(Busy::new(clock, options.busy_sleep_every))),
    )
};

/// Spins on a clock until each expiry, optionally napping every N readings.
#[derive(Debug)]
pub struct Busy<C: SpinClock = KernelClock> {
    clock: C,
    naps: NapCounter,
}

impl Busy<KernelClock> {
    /// Spins on the kernel clock `clock`; with `sleep_every = Some(n)`, n > 0, naps after
    /// every n readings before the expiry (see the module docs).
    pub fn new(clock: ClockId, sleep_every: Option<u32>) -> Self {
        Busy::with_clock(KernelClock::new(clock), sleep_every)
    }
}

impl<C: SpinClock> Busy<C> {
    /// Spins on any [`SpinClock`] (the mock clock in tests).
    pub fn with_clock(clock: C, sleep_every: Option<u32>) -> Self {
        Busy {
            clock,
            naps: NapCounter::new(sleep_every),
        }
    }

    /// The clock spun on.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Naps taken so far.
    pub fn naps(&self) -> u64 {
        self.naps.naps()
    }
}

impl<C: SpinClock + Send> WakeMethod for Busy<C> {
    fn now(&self) -> Nanos {
        self.clock.now()
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, _last_woke: Nanos) -> io::Result<Nanos> {
        Ok(spin_until(&self.clock, expiry, &mut self.naps)?.woke)
    }

    fn interface(&self) -> &'static str {
        "clock_gettime spin"
    }

    fn observations(&self) -> MethodObservations {
        MethodObservations {
            naps: Some(self.naps.naps()),
            ..MethodObservations::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockTimebase;

    #[test]
    fn wakes_at_the_first_reading_past_each_expiry() {
        let mut b = Busy::with_clock(MockTimebase::new(0, 40, vec![0]), None);
        assert_eq!(b.wait(1_000, 0).unwrap(), 1_000);
        assert_eq!(b.wait(2_000, 1_000).unwrap(), 2_000);
        assert_eq!(b.wait(2_030, 2_000).unwrap(), 2_040);
        assert_eq!(b.observations().naps, Some(0));
    }

    #[test]
    fn sleep_every_counts_early_readings_across_waits() {
        // 100 ns per reading, naps return at once: a 1 µs wait has 10 early readings.
        let mut b = Busy::with_clock(MockTimebase::new(0, 100, vec![0]), Some(3));
        b.wait(1_000, 0).unwrap();
        assert_eq!(b.naps(), 3);
        b.wait(2_000, 1_000).unwrap();
        // 20 early readings in all → 6 naps; the mock saw each as a sleep.
        assert_eq!(b.naps(), 6);
        assert_eq!(b.clock().sleeps(), 6);
    }
}
