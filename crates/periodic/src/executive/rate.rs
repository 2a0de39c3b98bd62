//! A task's release grid at an exact rational period: release `k` is at
//! `first + round(k · num / den)` ns, computed from `k` alone in integer arithmetic.
//!
//! A rate such as 30 Hz or 85 Hz has a period that is not a whole number of ns
//! (10⁹/85 = 11 764 705.88… ns). Stepping by a rounded period (`k × 11 764 706`) drifts by
//! 0.12 ns per release — 10 ns a second, 0.86 ms a day — against the rate as written;
//! computing every release from its index keeps each one within ½ ns of the exact instant,
//! with no cumulative drift however long the run. Rounding is half up (`⌊(2kN + D) / 2D⌋`),
//! in `i128` so `k · N` cannot overflow for any index a run can reach.
//!
//! The overrun rule is the one of [`tickscope_engine::grid::Grid`] (cyclictest's `now > next`),
//! on indices instead of ns: every release that had passed before the wake-up is counted
//! once, then skipped or released in turn according to the task's [`OverrunPolicy`]; with
//! [`OverrunPolicy::Relative`] the grid itself moves (its `first` is shifted) so that the
//! next release is one period after the late one started, and stays exact from there.

use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::time::Nanos;

/// The grid of one task: where release `k` is, and which release is next.
#[derive(Debug, Clone)]
pub(crate) struct RateGrid {
    first: Nanos,
    /// The period is `num / den` ns (both positive, the fraction reduced).
    num: i128,
    den: i128,
    /// Index of the next release.
    index: u64,
    /// Its expiry, `at(index)`.
    expiry: Nanos,
    /// Releases up to this index were already counted as overruns.
    overruns_through: u64,
    policy: OverrunPolicy,
}

/// Release `k` of a grid starting at 0 with period `num / den` ns: `round(k · num / den)`,
/// half up.
///
/// # Panics
/// If `den` is not positive or the result does not fit in [`Nanos`].
pub(crate) fn release_offset(k: u64, num: i128, den: i128) -> Nanos {
    let twice = 2 * i128::from(k) * num + den;
    Nanos::try_from(twice / (2 * den)).expect("a release within ±292 years")
}

impl RateGrid {
    /// A grid whose release 0 is at `first` (absolute ns), period `num / den` ns.
    ///
    /// # Panics
    /// If `num` or `den` is not positive.
    pub(crate) fn new(first: Nanos, num: i128, den: i128, policy: OverrunPolicy) -> Self {
        assert!(num > 0 && den > 0, "the period must be positive");
        RateGrid {
            first,
            num,
            den,
            index: 0,
            expiry: first,
            overruns_through: 0,
            policy,
        }
    }

    /// Absolute expiry of release `k`.
    #[inline]
    pub(crate) fn at(&self, k: u64) -> Nanos {
        self.first + release_offset(k, self.num, self.den)
    }

    /// The next release's expiry (absolute ns).
    #[inline]
    pub(crate) fn expiry(&self) -> Nanos {
        self.expiry
    }

    /// The next release's index on the grid.
    #[inline]
    pub(crate) fn index(&self) -> u64 {
        self.index
    }

    /// Moves to the next release after the current one started at `woke`, and returns how
    /// many later releases (not counted before) had already passed at `woke`.
    #[inline]
    pub(crate) fn advance(&mut self, woke: Nanos) -> u64 {
        let next = self.at(self.index + 1);
        if woke <= next {
            self.index += 1;
            self.expiry = next;
            return 0;
        }
        self.advance_late(woke)
    }

    /// [`RateGrid::advance`] after an overrun (`woke > at(index + 1)`).
    #[cold]
    #[inline(never)]
    fn advance_late(&mut self, woke: Nanos) -> u64 {
        // The last release strictly before `woke`: estimate from the period, then correct
        // the rounding by a step either way.
        let elapsed = i128::from(woke - self.first - 1);
        let mut last = u64::try_from(elapsed * self.den / self.num).unwrap_or(self.index + 1);
        last = last.max(self.index + 1);
        while self.at(last + 1) < woke {
            last += 1;
        }
        while last > self.index + 1 && self.at(last) >= woke {
            last -= 1;
        }
        let counted_from = self.overruns_through.max(self.index);
        let overruns = if last > counted_from {
            self.overruns_through = last;
            last - counted_from
        } else {
            0
        };
        self.index = match self.policy {
            OverrunPolicy::Skip => last + 1,
            OverrunPolicy::CatchUp => self.index + 1,
            OverrunPolicy::Relative => {
                // Release `index` is taken to have been due at `woke`: the grid moves by the
                // lateness, and release `index + 1` follows it by one period.
                self.first += woke - self.at(self.index);
                self.overruns_through = self.index;
                self.index + 1
            }
        };
        self.expiry = self.at(self.index);
        overruns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: i128 = 1_000_000_000;

    #[test]
    fn whole_ns_periods_behave_like_the_engine_grid() {
        use tickscope_engine::grid::Grid;
        for policy in [
            OverrunPolicy::Skip,
            OverrunPolicy::CatchUp,
            OverrunPolicy::Relative,
        ] {
            let mut g = Grid::new(1000, 100, policy);
            let mut r = RateGrid::new(1000, 100, 1, policy);
            for woke in [1010, 1200, 1450, 1451, 1452, 1460, 1700, 2000, 2001] {
                let woke = woke.max(r.expiry());
                assert_eq!(r.advance(woke), g.advance(woke), "{policy:?} at {woke}");
                assert_eq!(r.expiry(), g.expiry(), "{policy:?} at {woke}");
            }
        }
    }

    #[test]
    fn skip_and_catch_up_count_each_passed_release_once() {
        // 85 Hz; release 1 at 11 764 706, 2 at 23 529 412, 3 at 35 294 118.
        let mut g = RateGrid::new(0, S, 85, OverrunPolicy::Skip);
        assert_eq!(g.advance(30_000_000), 2);
        assert_eq!((g.index(), g.expiry()), (3, 35_294_118));
        let mut g = RateGrid::new(0, S, 85, OverrunPolicy::CatchUp);
        assert_eq!(g.advance(30_000_000), 2);
        assert_eq!(g.index(), 1);
        assert_eq!(g.advance(30_000_001), 0);
        assert_eq!(g.advance(30_000_002), 0);
        assert_eq!(g.index(), 3);
    }

    #[test]
    fn relative_moves_the_grid_and_keeps_the_rate_exact() {
        // 85 Hz, release 0 at 0; release 0 starts at 30 ms, after releases 1 and 2 passed.
        let mut g = RateGrid::new(0, S, 85, OverrunPolicy::Relative);
        assert_eq!(g.advance(30_000_000), 2);
        assert_eq!((g.index(), g.expiry()), (1, 30_000_000 + 11_764_706));
        // From there the moved grid is exact: release k at 30 ms + round(k·10⁹/85).
        for k in 1..1000u64 {
            assert_eq!(g.advance(g.expiry()), 0);
            assert_eq!(g.expiry(), 30_000_000 + release_offset(k + 1, S, 85));
        }
        // A second overrun counts only releases of the moved grid.
        let late = g.expiry() + 3 * 11_764_706 + 5;
        assert_eq!(g.advance(late), 3);
        assert!((11_764_705..=11_764_706).contains(&(g.expiry() - late)));
    }

    /// A non-harmonic set with two rates whose period is not a whole number of ns: at every
    /// multiple of the hyperperiod, each task's release lands exactly on it — no drift —
    /// up to past 10⁹ activations of the fastest task.
    #[test]
    fn no_cumulative_drift_at_hyperperiod_multiples() {
        // (num, den) of each period in ns: 1 ms, 30 Hz, 85 Hz, 7 ms.
        let set: [(i128, i128); 4] = [(1_000_000, 1), (S, 30), (S, 85), (7_000_000, 1)];
        // Hyperperiod of reduced fractions a/b: lcm(a) / gcd(b) = 1.4 s here.
        let hyper: i128 = 1_400_000_000;
        for &(num, den) in &set {
            assert_eq!(hyper * den % num, 0, "{num}/{den} divides the hyperperiod");
        }
        let first = 123_456;
        for m in [1i128, 2, 3, 1000, 714_286, 1_000_000] {
            let t = m * hyper;
            for &(num, den) in &set {
                let k = u64::try_from(t * den / num).unwrap();
                let g = RateGrid::new(first, num, den, OverrunPolicy::Skip);
                assert_eq!(i128::from(g.at(k) - first), t, "{num}/{den} at m={m}");
            }
        }
        // 10⁶ hyperperiods: 1.4·10⁹ activations of the 1 ms task, 1.19·10⁸ of the 85 Hz one.
        assert!(1_000_000 * (hyper / 1_000_000) >= 1_000_000_000);
        // The rounded period would be 10 ns/s late at 85 Hz: 14 ms after those 1.4·10⁶ s.
        let rounded = (S + 42) / 85; // 11 764 706 ns
        assert_eq!(rounded * 85 * 1_400_000 - 1_400_000 * S, 14_000_000);
    }

    proptest! {
        /// The release formula: within ½ ns of `k·10⁹/f`, and consecutive releases one
        /// floor or ceiling period apart.
        #[test]
        fn release_is_the_rounded_exact_instant(f in 1i128..1_000_000, k in 0u64..4_000_000_000) {
            let r = i128::from(release_offset(k, S, f));
            let exact2 = 2 * i128::from(k) * S; // 2·k·10⁹ = 2·f·(exact instant)
            // |r − k·10⁹/f| ≤ ½  ⇔  |2·f·r − 2·k·10⁹| ≤ f, with ties rounded up.
            prop_assert!((2 * f * r - exact2).abs() <= f);
            let step = i128::from(release_offset(k + 1, S, f)) - r;
            prop_assert!(step == S / f || step == S / f + 1);
        }

        /// Stepping a grid on time visits exactly the releases the formula gives.
        #[test]
        fn stepping_follows_the_formula(
            f in 1i128..100_000,
            first in 0i64..1_000_000_000,
            late in proptest::collection::vec(0i64..3, 1..200),
        ) {
            let mut g = RateGrid::new(first, S, f, OverrunPolicy::Skip);
            for (i, &l) in late.iter().enumerate() {
                prop_assert_eq!(g.index(), i as u64);
                prop_assert_eq!(g.expiry(), first + release_offset(i as u64, S, f));
                let woke = g.expiry() + l; // ≤ 2 ns late: never past the next release
                prop_assert_eq!(g.advance(woke), 0);
            }
        }

        /// Relative: after every start, the next release is at most one period (rounded
        /// up) after it, and never before it.
        #[test]
        fn relative_never_leaves_more_than_a_period(
            f in 1i128..1000,
            delays in proptest::collection::vec(0i64..5_000_000_000, 1..60),
        ) {
            let mut g = RateGrid::new(0, S, f, OverrunPolicy::Relative);
            for &d in &delays {
                let woke = g.expiry() + d;
                g.advance(woke);
                prop_assert!(g.expiry() >= woke);
                prop_assert!(i128::from(g.expiry() - woke) <= S / f + 1);
            }
        }

        /// Skip: every release is either started or counted as an overrun, never both.
        #[test]
        fn skip_accounts_for_every_release(
            f in 1i128..1000,
            delays in proptest::collection::vec(0i64..5_000_000_000, 1..60),
        ) {
            let mut g = RateGrid::new(0, S, f, OverrunPolicy::Skip);
            let (mut overruns, mut last) = (0u64, 0);
            for &d in &delays {
                let woke = (g.expiry() + d).max(last);
                overruns += g.advance(woke);
                last = woke;
            }
            prop_assert_eq!(delays.len() as u64 + overruns, g.index());
        }
    }
}
