//! Exact running sums of a series of nanosecond values: count, min, max, Σx, Σx².
//!
//! The sums are `i128`, so they are exact for any run a machine can do (Σx² of 10^12 samples of
//! one second each is 10^30, far below `i128::MAX` ≈ 1.7·10^38), merging two series is
//! addition, and the mean and standard deviation are derived once at the end, in `f64`.

use crate::time::Nanos;

/// Count, extremes and exact power sums of a series of ns values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moments {
    /// Number of values.
    pub count: u64,
    /// Smallest value (ns); `Nanos::MAX` while empty.
    pub min: Nanos,
    /// Largest value (ns); `Nanos::MIN` while empty.
    pub max: Nanos,
    /// Σx (ns).
    pub sum: i128,
    /// Σx² (ns²).
    pub sum_sq: i128,
}

impl Default for Moments {
    fn default() -> Self {
        Moments {
            count: 0,
            min: Nanos::MAX,
            max: Nanos::MIN,
            sum: 0,
            sum_sq: 0,
        }
    }
}

impl Moments {
    /// Adds one value. A handful of integer instructions; never allocates.
    #[inline(always)]
    pub fn record(&mut self, v: Nanos) {
        self.count += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as i128;
        self.sum_sq += (v as i128) * (v as i128);
    }

    /// Records `v` (ns) `n` times at once: the same as `n` calls of [`Moments::record`]
    /// (for virtual time's bulk windows, [`crate::mock_bulk`]).
    pub(crate) fn record_n(&mut self, v: Nanos, n: u64) {
        if n == 0 {
            return;
        }
        self.count += n;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as i128 * n as i128;
        self.sum_sq += (v as i128) * (v as i128) * n as i128;
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Moments) {
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// Smallest value, `None` when empty.
    pub fn min(&self) -> Option<Nanos> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest value, `None` when empty.
    pub fn max(&self) -> Option<Nanos> {
        (self.count > 0).then_some(self.max)
    }

    /// Arithmetic mean (ns), `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Population standard deviation about the mean (ns): √(Σ(x−x̄)²/n), computed from the
    /// exact sums as √((nΣx² − (Σx)²)/n²). `None` when empty.
    pub fn stddev(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let n = self.count as i128;
        let num = (n * self.sum_sq - self.sum * self.sum).max(0);
        Some((num as f64).sqrt() / self.count as f64)
    }

    /// Root-mean-square deviation from a nominal value `t` (ns): √(Σ(x−t)²/n), which is what
    /// the rt 2013 post prints as "SD" of the period. Expanded as Σx² − 2tΣx + nt².
    /// `None` when empty.
    pub(crate) fn rms_about(&self, t: Nanos) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let t = t as i128;
        let n = self.count as i128;
        let s = (self.sum_sq - 2 * t * self.sum + n * t * t).max(0);
        Some((s as f64 / self.count as f64).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_has_no_statistics() {
        let m = Moments::default();
        assert_eq!(
            (m.min(), m.max(), m.mean(), m.stddev()),
            (None, None, None, None)
        );
    }

    #[test]
    fn known_series() {
        let mut m = Moments::default();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            m.record(v);
        }
        assert_eq!(m.mean(), Some(5.0));
        assert_eq!(m.stddev(), Some(2.0));
        assert_eq!((m.min(), m.max()), (Some(2), Some(9)));
        assert_eq!(m.rms_about(5), Some(2.0));
        assert_eq!(m.rms_about(3), Some(8.0f64.sqrt()));
    }

    proptest! {
        #[test]
        fn merge_equals_recording_everything(a in proptest::collection::vec(-1_000_000_000i64..1_000_000_000, 0..50),
                                             b in proptest::collection::vec(-1_000_000_000i64..1_000_000_000, 0..50)) {
            let mut ma = Moments::default();
            a.iter().for_each(|&v| ma.record(v));
            let mut mb = Moments::default();
            b.iter().for_each(|&v| mb.record(v));
            let mut all = Moments::default();
            a.iter().chain(&b).for_each(|&v| all.record(v));
            ma.merge(&mb);
            prop_assert_eq!(ma, all);
        }

        #[test]
        fn stddev_matches_two_pass(v in proptest::collection::vec(-1_000_000i64..1_000_000, 1..100)) {
            let mut m = Moments::default();
            v.iter().for_each(|&x| m.record(x));
            let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
            let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
            prop_assert!((m.stddev().unwrap() - var.sqrt()).abs() <= 1e-6 * var.sqrt().max(1.0));
        }
    }
}
