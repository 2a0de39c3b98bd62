//! A histogram of signed nanosecond values with bounded memory.
//!
//! HdrHistogram (Gil Tene; the `hdrhistogram` crate) records non-negative integers with a
//! fixed relative precision in constant memory. Latency is signed (an early wake-up is
//! negative), so [`SignedHistogram`] keeps two: one for values ≥ 0 and one for the magnitude
//! of values < 0. Both are allocated up front and never grow; values beyond the range are
//! clamped to it and counted in [`SignedHistogram::clamped`].

use crate::time::Nanos;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Significant decimal digits kept. With 2, values below 256 ns are exact and every bucket
/// is at most 1/128 (0.8 %) of its value wide: 64 ns at 10 µs, 1 µs at 128 µs — finer than
/// cyclictest's 1 µs buckets wherever latencies usually are. A histogram then has 4 608
/// counters (37 KiB), so clearing, merging and walking one each second stays cheap.
pub const SIGNIFICANT_FIGURES: u8 = 2;

/// The largest magnitude recorded exactly: one hour in ns. Larger values are clamped.
pub const HIGHEST_TRACKABLE: u64 = 3_600_000_000_000;

/// A signed-value HdrHistogram pair (see the module docs).
#[derive(Debug, Clone)]
pub struct SignedHistogram {
    positive: Histogram<u64>,
    negative: Histogram<u64>,
    clamped: u64,
}

impl Default for SignedHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl SignedHistogram {
    /// An empty histogram covering ±[`HIGHEST_TRACKABLE`] ns at [`SIGNIFICANT_FIGURES`] digits.
    /// Allocates about 74 KiB; recording never allocates.
    pub fn new() -> Self {
        let make = || {
            let mut h = Histogram::new_with_bounds(1, HIGHEST_TRACKABLE, SIGNIFICANT_FIGURES)
                .expect("constant histogram bounds are valid");
            h.auto(false);
            h
        };
        SignedHistogram {
            positive: make(),
            negative: make(),
            clamped: 0,
        }
    }

    /// Records one value (ns). Never allocates; values beyond ±1 h are clamped and counted.
    #[inline]
    pub fn record(&mut self, value: Nanos) {
        let (h, magnitude) = if value >= 0 {
            (&mut self.positive, value as u64)
        } else {
            (&mut self.negative, value.unsigned_abs())
        };
        if magnitude > HIGHEST_TRACKABLE {
            self.clamped += 1;
        }
        h.saturating_record(magnitude.min(HIGHEST_TRACKABLE));
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.positive.len() + self.negative.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of values that were recorded below zero.
    pub fn negative_count(&self) -> u64 {
        self.negative.len()
    }

    /// Number of values whose magnitude exceeded [`HIGHEST_TRACKABLE`] and were clamped.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Forgets every value, keeping the allocation. Skips a half that holds nothing.
    pub fn reset(&mut self) {
        for h in [&mut self.positive, &mut self.negative] {
            if !h.is_empty() {
                h.reset();
            }
        }
        self.clamped = 0;
    }

    /// Adds every value of `other` into `self`. Same bounds on both sides, so it never fails
    /// and never allocates.
    pub fn add(&mut self, other: &SignedHistogram) {
        // `Histogram::add` walks every counter, so skip a half that holds nothing.
        for (to, from) in [
            (&mut self.positive, &other.positive),
            (&mut self.negative, &other.negative),
        ] {
            if !from.is_empty() {
                to.add(from).expect("histograms share bounds");
            }
        }
        self.clamped += other.clamped;
    }

    /// The value at quantile `q` (0.0 ..= 1.0): the upper bound of the bucket holding the
    /// sample of rank `max(1, ceil(q·n))` in ascending order — HdrHistogram's convention.
    /// `None` when empty.
    pub fn value_at_quantile(&self, q: f64) -> Option<Nanos> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).clamp(1, n);
        let n_neg = self.negative.len();
        Some(if rank <= n_neg {
            // Ascending signed order walks the magnitudes downwards.
            let m = value_at_rank(&self.negative, n_neg - rank + 1);
            -(self.negative.lowest_equivalent(m) as Nanos)
        } else {
            let v = value_at_rank(&self.positive, rank - n_neg);
            self.positive.highest_equivalent(v) as Nanos
        })
    }

    /// The value at quantile `q` of the magnitudes |x| (for "p99 of |dt − period|").
    /// Allocates a scratch histogram; not for the measuring thread. `None` when empty.
    pub fn abs_value_at_quantile(&self, q: f64) -> Option<Nanos> {
        if self.is_empty() {
            return None;
        }
        let mut both = self.positive.clone();
        both.add(&self.negative).expect("histograms share bounds");
        Some(both.highest_equivalent(both.value_at_quantile(q)) as Nanos)
    }

    /// The histogram as explicit buckets, ascending: see [`HistogramBuckets`].
    pub fn buckets(&self) -> HistogramBuckets {
        let mut buckets: Vec<(Nanos, u64)> = self
            .negative
            .iter_recorded()
            .map(|v| {
                (
                    -(self.negative.lowest_equivalent(v.value_iterated_to()) as Nanos),
                    v.count_at_value(),
                )
            })
            .collect();
        buckets.reverse();
        buckets.extend(self.positive.iter_recorded().map(|v| {
            (
                self.positive.highest_equivalent(v.value_iterated_to()) as Nanos,
                v.count_at_value(),
            )
        }));
        HistogramBuckets {
            significant_figures: SIGNIFICANT_FIGURES,
            buckets,
        }
    }

    /// Rebuilds a histogram from [`SignedHistogram::buckets`] output: the same counts land in
    /// the same buckets.
    pub fn from_buckets(b: &HistogramBuckets) -> Self {
        let mut h = SignedHistogram::new();
        for &(v, count) in &b.buckets {
            let (hist, m) = if v >= 0 {
                (&mut h.positive, v as u64)
            } else {
                (&mut h.negative, v.unsigned_abs())
            };
            hist.saturating_record_n(m.min(HIGHEST_TRACKABLE), count);
        }
        h
    }
}

/// The ascending `rank`-th value (1-based) of a non-empty histogram.
fn value_at_rank(h: &Histogram<u64>, rank: u64) -> u64 {
    let mut seen = 0;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen >= rank {
            return v.value_iterated_to();
        }
    }
    h.max()
}

/// A histogram as explicit buckets that another program can rebuild without HdrHistogram.
///
/// `buckets` holds `[value_ns, count]` pairs in ascending order of value, only non-empty
/// buckets. For `value_ns >= 0`, `count` samples lay in the bucket whose highest value is
/// `value_ns`; for `value_ns < 0`, in the bucket whose value closest to zero is `value_ns`.
/// HdrHistogram's bucketing: with `significant_figures` = 2, values below 256 ns are exact
/// and a bucket is at most `|value_ns| / 128` wide.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramBuckets {
    /// Decimal digits of precision of the bucketing (2: buckets at most 1/128 of their value).
    pub significant_figures: u8,
    /// `[value_ns, count]` pairs, ascending by value.
    pub buckets: Vec<(Nanos, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn quantiles_walk_negative_then_positive() {
        let mut h = SignedHistogram::new();
        for v in [-300, -100, 5, 10, 20] {
            h.record(v);
        }
        assert_eq!(h.value_at_quantile(0.0), Some(-300));
        assert_eq!(h.value_at_quantile(0.2), Some(-300));
        assert_eq!(h.value_at_quantile(0.4), Some(-100));
        assert_eq!(h.value_at_quantile(0.6), Some(5));
        assert_eq!(h.value_at_quantile(1.0), Some(20));
        assert_eq!(h.negative_count(), 2);
    }

    #[test]
    fn empty_has_no_quantiles() {
        assert_eq!(SignedHistogram::new().value_at_quantile(0.5), None);
    }

    #[test]
    fn huge_values_are_clamped_and_counted() {
        let mut h = SignedHistogram::new();
        h.record(i64::MAX);
        h.record(i64::MIN);
        assert_eq!(h.clamped(), 2);
        assert_eq!(h.len(), 2);
    }

    proptest! {
        #[test]
        fn buckets_round_trip(values in proptest::collection::vec(-10_000_000i64..10_000_000, 1..300)) {
            let mut h = SignedHistogram::new();
            for &v in &values { h.record(v); }
            let b = h.buckets();
            prop_assert!(b.buckets.windows(2).all(|w| w[0].0 < w[1].0));
            prop_assert_eq!(b.buckets.iter().map(|x| x.1).sum::<u64>(), values.len() as u64);
            let back = SignedHistogram::from_buckets(&b);
            prop_assert_eq!(back.buckets(), b);
            for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
                prop_assert_eq!(back.value_at_quantile(q), h.value_at_quantile(q));
            }
        }

        #[test]
        fn quantile_is_within_precision_of_exact(values in proptest::collection::vec(-1_000_000i64..1_000_000, 1..500), q in 0.0f64..=1.0) {
            let mut h = SignedHistogram::new();
            for &v in &values { h.record(v); }
            let mut sorted = values.clone();
            sorted.sort();
            let n = sorted.len();
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
            let exact = sorted[rank - 1];
            let got = h.value_at_quantile(q).unwrap();
            let tolerance = exact.unsigned_abs() / 64 + 1;
            prop_assert!(got.abs_diff(exact) <= tolerance, "q={q} exact={exact} got={got}");
        }
    }
}
