//! `hybrid`: sleep until `expiry − margin`, then spin to the expiry.
//!
//! The sleep is an absolute `clock_nanosleep(TIMER_ABSTIME)` (`clock_nanosleep(2)`), so it
//! costs no CPU; the spin ([`super::spin`]) gives the wake-up busy-wait precision as long
//! as the sleep ends before the expiry, that is while its overshoot stays below the margin.
//! The margin is fixed (`--margin 100us`) or learnt from the measured overshoots
//! (`--margin auto`, [`super::margin::MarginTuner`]); the result reports the margin used.
//! CPU cost per period is about `margin − overshoot` of spinning plus one sleep.

use super::margin::{Margin, MarginTuner};
use super::spin::{spin_until, KernelClock, NapCounter};
use super::SpinClock;
use super::{MethodDescriptor, MethodObservations, WakeMethod, Wakes};
use crate::time::{ClockId, Nanos, NS_PER_MS};
use std::io;

/// `hybrid` in the registry ([`super::registry`]): spins its margin of each period (the
/// auto margin never exceeds half the period, see [`super::margin`]).
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    spin_share: |options, period| match options.margin {
        Margin::Fixed(m) if period > 0 && m > 0 => Some((m as f64 / period as f64).min(1.0)),
        _ => None,
    },
    ..MethodDescriptor::sleeping(
        "clock_nanosleep(2)",
        Wakes {
            timer_before_expiry: true,
            ..Wakes::hrtimer_sleep(&[libc::SYS_clock_nanosleep])
        },
        |clock, options| Ok(Box::new(Hybrid::new(clock, options.margin))),
    )
};

/// Sleeps to a margin before each expiry, then spins.
#[derive(Debug)]
pub struct Hybrid<C: SpinClock = KernelClock> {
    clock: C,
    mode: Margin,
    tuner: MarginTuner,
    never: NapCounter,
}

impl Hybrid<KernelClock> {
    /// Sleeps and spins on the kernel clock `clock` with the margin `mode`.
    pub fn new(clock: ClockId, mode: Margin) -> Self {
        Hybrid::with_clock(KernelClock::new(clock), mode)
    }
}

impl<C: SpinClock> Hybrid<C> {
    /// Sleeps and spins on any [`SpinClock`] (the mock clock in tests). The margin's tuner
    /// assumes a 1 ms period until [`WakeMethod::arm`] gives the real one. Allocates the
    /// tuner's windows (16 KiB).
    pub fn with_clock(clock: C, mode: Margin) -> Self {
        Hybrid {
            clock,
            mode,
            tuner: MarginTuner::new(NS_PER_MS, mode),
            never: NapCounter::default(),
        }
    }

    /// The clock slept and spun on.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The margin the next wait will use, ns.
    pub fn margin(&self) -> Nanos {
        self.tuner.margin()
    }
}

impl<C: SpinClock + Send> WakeMethod for Hybrid<C> {
    fn now(&self) -> Nanos {
        self.clock.now()
    }

    /// Starts the margin's tuner afresh for `period` (allocates; before the loop).
    fn arm(&mut self, _first_expiry: Nanos, period: Nanos) -> io::Result<()> {
        if period <= 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the period must be positive",
            ));
        }
        self.tuner = MarginTuner::new(period, self.mode);
        Ok(())
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos> {
        let target = expiry - self.tuner.margin();
        self.clock.sleep_until(target)?;
        let spin = spin_until(&self.clock, expiry, &mut self.never)?;
        // A target at or before the previous wake-up was already past when the sleep began
        // (catch-up after an overrun, or a margin of a whole period): not a sleep to learn from.
        if target > last_woke {
            self.tuner.observe(spin.first - target);
        }
        Ok(spin.woke)
    }

    fn interface(&self) -> &'static str {
        "clock_nanosleep(TIMER_ABSTIME) + clock_gettime spin"
    }

    fn observations(&self) -> MethodObservations {
        MethodObservations {
            margin: Some(self.tuner.stats()),
            ..MethodObservations::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockTimebase;
    use crate::time::NS_PER_US;

    const US: Nanos = NS_PER_US;
    const MS: Nanos = NS_PER_MS;

    /// Runs `n` periods of 1 ms starting at 10 ms; returns the latencies.
    fn run(h: &mut Hybrid<MockTimebase>, n: i64) -> Vec<Nanos> {
        h.arm(10 * MS, MS).unwrap();
        run_on(h, 0..n)
    }

    /// Waits for expiries `10 ms + k ms` for each k of `ks` without re-arming.
    fn run_on(h: &mut Hybrid<MockTimebase>, ks: std::ops::Range<i64>) -> Vec<Nanos> {
        let mut last = h.now();
        ks.map(|k| {
            let expiry = 10 * MS + k * MS;
            let woke = h.wait(expiry, last).unwrap();
            last = woke;
            woke - expiry
        })
        .collect()
    }

    #[test]
    fn sleeps_that_end_inside_the_margin_wake_on_time() {
        // Every sleep overshoots by 30 µs; a reading costs 50 ns.
        let mut h = Hybrid::with_clock(MockTimebase::new(0, 50, vec![30 * US]), Margin::Auto);
        let lat = run(&mut h, 2_000);
        assert!(lat.iter().all(|&l| (0..50).contains(&l)), "{lat:?}");
        let r = h.observations().margin.unwrap();
        assert_eq!(r.calibrated_ns, Some(30 * US + 30 * US / 4 + 2 * US));
        assert_eq!((r.sleeps, r.overshot), (2_000, 0));
        assert_eq!(h.margin(), r.final_ns);
    }

    #[test]
    fn a_sleep_that_overshoots_the_margin_is_a_late_wake_up_and_is_counted() {
        let mut script = vec![10 * US; 99];
        script.push(200 * US);
        let mut h = Hybrid::with_clock(MockTimebase::new(0, 50, script), Margin::Fixed(100 * US));
        let lat = run(&mut h, 1_000);
        let late: Vec<Nanos> = lat.iter().copied().filter(|&l| l >= 50).collect();
        // Every 100th sleep ends 200 µs after the target, 100 µs after the expiry.
        assert_eq!(late, vec![100 * US; 10]);
        let r = h.observations().margin.unwrap();
        assert_eq!((r.overshot, r.max_overshoot_ns), (10, 200 * US));
    }

    #[test]
    fn spin_cost_shrinks_once_calibrated() {
        // Reading count is the mock's measure of CPU: calibrated, each period spins
        // about margin − overshoot = 9.5 µs instead of 490 µs during the warm-up.
        let mut h = Hybrid::with_clock(MockTimebase::new(0, 100, vec![10 * US]), Margin::Auto);
        run(&mut h, 256);
        let warm = h.clock().reads();
        let lat = run_on(&mut h, 256..512);
        let calibrated = h.clock().reads() - warm;
        assert!(lat.iter().all(|&l| (0..100).contains(&l)), "{lat:?}");
        assert!(calibrated * 10 < warm, "{calibrated} vs {warm}");
    }

    #[test]
    fn past_targets_are_not_learnt_from() {
        let mut h = Hybrid::with_clock(MockTimebase::new(3 * MS, 50, vec![5 * US]), Margin::Auto);
        h.arm(0, MS).unwrap();
        // Catch-up: the expiry is long past; the wait returns after one sleep and one reading.
        let woke = h.wait(MS, 3 * MS).unwrap();
        assert_eq!(woke, 3 * MS + 5 * US);
        assert_eq!(h.observations().margin.unwrap().sleeps, 0);
    }
}
