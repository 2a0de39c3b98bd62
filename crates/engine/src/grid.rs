//! The expiry grid `t0 + k·period` and the overrun rule.
//!
//! A wake-up is an *overrun* when it happens after the next expiry (`woke > next`), as in
//! cyclictest, which advances `next += interval` while `now > next` and drops those periods
//! silently. tickscope counts every grid point that passed before the thread woke as an
//! overrun, and then either skips to the first future grid point ([`OverrunPolicy::Skip`],
//! cyclictest's behaviour), wakes once for each passed expiry ([`OverrunPolicy::CatchUp`]), or
//! moves the grid so that the next expiry is one period after the late wake-up
//! ([`OverrunPolicy::Relative`]). Every policy counts the same overruns for the same
//! wake-up times: each grid point is counted at most once.

use crate::time::{to_timespec, Nanos, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// What to do after a wake-up that is later than the next expiry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverrunPolicy {
    /// Continue at the first grid point after the wake-up (cyclictest's behaviour).
    #[default]
    Skip,
    /// Wake for every passed grid point in turn (they return at once, late).
    CatchUp,
    /// Move the grid: the next expiry is one period after the late wake-up, and the grid
    /// goes on from there (OROCOS RTT and FreeRTOS `vTaskDelay` behave like this after an
    /// overrun). The phase against the original grid is lost; the passed grid points are
    /// counted as overruns as with the other policies.
    Relative,
}

impl OverrunPolicy {
    /// The name used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            OverrunPolicy::Skip => "skip",
            OverrunPolicy::CatchUp => "catch-up",
            OverrunPolicy::Relative => "relative",
        }
    }
}

/// The position on the expiry grid of one measuring thread.
///
/// The expiry is kept twice: as ns (for the latency) and as the `timespec` the kernel's
/// absolute sleeps take, advanced by the period with a carry, so the measuring loop makes no
/// ns → `timespec` division per wake-up (cyclictest keeps its `next` as a `timespec` the same
/// way, `tsinc` in rt-tests' `cyclictest.c`).
#[derive(Debug, Clone)]
pub struct Grid {
    period: Nanos,
    expiry: Nanos,
    expiry_ts: libc::timespec,
    period_ts: libc::timespec,
    overruns_through: Nanos,
    policy: OverrunPolicy,
}

impl Grid {
    /// A grid whose first expiry is `first_expiry` (ns) with `period` ns between expiries.
    ///
    /// # Panics
    /// If `period` is not positive.
    pub fn new(first_expiry: Nanos, period: Nanos, policy: OverrunPolicy) -> Self {
        assert!(period > 0, "period must be positive");
        Grid {
            period,
            expiry: first_expiry,
            expiry_ts: to_timespec(first_expiry),
            period_ts: to_timespec(period),
            overruns_through: first_expiry,
            policy,
        }
    }

    /// The expiry the thread waits for next, as a normalised `timespec` (equal to
    /// `to_timespec(self.expiry())`).
    #[inline]
    pub(crate) fn expiry_ts(&self) -> &libc::timespec {
        &self.expiry_ts
    }

    /// The expiry the thread waits for next (absolute ns).
    #[inline]
    pub fn expiry(&self) -> Nanos {
        self.expiry
    }

    /// The period (ns).
    pub fn period(&self) -> Nanos {
        self.period
    }

    /// Moves to the next expiry after a wake-up at `woke` for the current one, and returns
    /// how many grid points (not counted before) had already passed at `woke`.
    #[inline]
    pub fn advance(&mut self, woke: Nanos) -> u64 {
        let next = self.expiry + self.period;
        if woke <= next {
            self.expiry = next;
            // Both fields are normalised (tv_nsec < 10^9), so one carry is enough.
            self.expiry_ts.tv_sec += self.period_ts.tv_sec;
            self.expiry_ts.tv_nsec += self.period_ts.tv_nsec;
            if self.expiry_ts.tv_nsec >= NS_PER_SEC as _ {
                self.expiry_ts.tv_nsec -= NS_PER_SEC as libc::c_long;
                self.expiry_ts.tv_sec += 1;
            }
            return 0;
        }
        self.advance_late(woke, next)
    }

    /// [`Grid::advance`] after an overrun (`woke > next`).
    #[cold]
    #[inline(never)]
    fn advance_late(&mut self, woke: Nanos, next: Nanos) -> u64 {
        // The last grid point strictly before `woke`; it is at or after `next`.
        let last_passed = self.expiry + (woke - self.expiry - 1) / self.period * self.period;
        let counted_from = self.overruns_through.max(self.expiry);
        let overruns = if last_passed > counted_from {
            self.overruns_through = last_passed;
            ((last_passed - counted_from) / self.period) as u64
        } else {
            0
        };
        self.expiry = match self.policy {
            OverrunPolicy::Skip => last_passed + self.period,
            OverrunPolicy::CatchUp => next,
            OverrunPolicy::Relative => woke + self.period,
        };
        self.expiry_ts = to_timespec(self.expiry);
        overruns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn on_time_wakeups_step_one_period() {
        let mut g = Grid::new(1000, 100, OverrunPolicy::Skip);
        assert_eq!(g.advance(1010), 0);
        assert_eq!(g.expiry(), 1100);
        // Waking exactly at the next expiry is not an overrun (cyclictest: `now > next`).
        assert_eq!(g.advance(1200), 0);
        assert_eq!(g.expiry(), 1200);
    }

    #[test]
    fn skip_jumps_past_the_wake_up() {
        let mut g = Grid::new(1000, 100, OverrunPolicy::Skip);
        // Expiries 1100 and 1200 passed before waking at 1250.
        assert_eq!(g.advance(1250), 2);
        assert_eq!(g.expiry(), 1300);
    }

    #[test]
    fn catch_up_visits_every_expiry_and_counts_once() {
        let mut g = Grid::new(1000, 100, OverrunPolicy::CatchUp);
        assert_eq!(g.advance(1250), 2);
        assert_eq!(g.expiry(), 1100);
        assert_eq!(g.advance(1251), 0);
        assert_eq!(g.expiry(), 1200);
        assert_eq!(g.advance(1252), 0);
        assert_eq!(g.expiry(), 1300);
    }

    #[test]
    fn relative_moves_the_grid_to_a_period_after_the_late_wake_up() {
        let mut g = Grid::new(1000, 100, OverrunPolicy::Relative);
        // Expiries 1100 and 1200 passed before waking at 1250: counted, then 1350.
        assert_eq!(g.advance(1250), 2);
        assert_eq!(g.expiry(), 1350);
        // On time from there: the new grid.
        assert_eq!(g.advance(1360), 0);
        assert_eq!(g.expiry(), 1450);
        assert!(ts_matches(&g));
    }

    fn ts_matches(g: &Grid) -> bool {
        let t = to_timespec(g.expiry());
        (t.tv_sec, t.tv_nsec) == (g.expiry_ts().tv_sec, g.expiry_ts().tv_nsec)
    }

    proptest! {
        /// The `timespec` expiry stays equal to the ns one, across second boundaries and
        /// overruns, for every policy.
        #[test]
        fn timespec_expiry_follows_the_ns_expiry(
            first in 0i64..4_000_000_000,
            period in 1i64..2_500_000_000,
            delays in proptest::collection::vec(0i64..5_000_000_000, 1..60),
            which in 0usize..3,
        ) {
            let policy = [OverrunPolicy::Skip, OverrunPolicy::CatchUp, OverrunPolicy::Relative]
                [which];
            let mut g = Grid::new(first, period, policy);
            prop_assert!(ts_matches(&g));
            let mut last = 0;
            for &d in &delays {
                let woke = (g.expiry() + d % (3 * period)).max(last);
                g.advance(woke);
                last = woke;
                prop_assert!(ts_matches(&g));
            }
        }

        /// Skip: every grid point is either woken for or counted as an overrun, never both.
        #[test]
        fn skip_accounts_for_every_grid_point(delays in proptest::collection::vec(0i64..450, 1..60)) {
            let mut g = Grid::new(0, 100, OverrunPolicy::Skip);
            let (mut overruns, mut last) = (0u64, 0);
            for &d in &delays {
                let woke = (g.expiry() + d).max(last);
                overruns += g.advance(woke);
                last = woke;
            }
            prop_assert_eq!(delays.len() as u64 + overruns, (g.expiry() / 100) as u64);
        }

        /// Catch-up: every grid point is woken for; no grid point is counted twice.
        #[test]
        fn catch_up_wakes_for_every_grid_point(delays in proptest::collection::vec(0i64..450, 1..60)) {
            let mut g = Grid::new(0, 100, OverrunPolicy::CatchUp);
            let (mut overruns, mut last) = (0u64, 0);
            for &d in &delays {
                let woke = (g.expiry() + d).max(last);
                overruns += g.advance(woke);
                last = woke;
            }
            prop_assert_eq!(delays.len() as u64, (g.expiry() / 100) as u64);
            prop_assert!(overruns <= (last / 100) as u64);
        }
    }
}
