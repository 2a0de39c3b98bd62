//! A window's histogram as the collector hands it to the outputs: the measuring loop's
//! counters themselves, copied up to the highest one used, in HdrHistogram's counts order.
//!
//! Copying the used counters (a `memcpy` of a few thousand integers) is far cheaper than
//! picking out the non-zero ones as `(value, count)` pairs: at 1 kHz under callgrind a
//! window's latency and period-deviation histograms fill a few hundred of the ~2 000–4 000
//! counters up to their largest value, and walking them for pairs cost the collector about
//! 30 000 instructions per histogram per window (`bench/lightness.sh`). Outputs read what
//! they need from the counters directly: `--hlog` writes them as HdrHistogram's V2 counts
//! array (the same order), `monitor` sums ranges of them into its classic buckets; the
//! others ask for [`WindowCounts::buckets`].
//!
//! Layout: index `i` is HdrHistogram's `counts_array_index` of the layout described in
//! [`crate::window_histogram`] (lowest discernible value 1 ns, 2 significant figures);
//! [`counts_index`] maps a value to it, [`counts_lowest`] and [`counts_highest`] give a
//! bucket's bounds.

use crate::histogram::{HistogramBuckets, SIGNIFICANT_FIGURES};
use crate::time::Nanos;
use crate::window_histogram::{
    counts_highest, counts_index, counts_lowest, Count, WindowHistogram,
};

/// Counts of a window's values ≥ 0 and of the magnitudes of its values < 0, each by counts
/// index up to the highest non-zero one (empty when there is none). Counts are `u32`, as in
/// the loop's window records (one thread's window stays below 2^32 values,
/// [`crate::worker::measure`]): a copy is a `memcpy`, and sums over them vectorise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowCounts {
    positive: Vec<u32>,
    negative: Vec<u32>,
}

impl WindowCounts {
    /// From the counters of each half, by counts index (trailing zeros are dropped).
    pub fn new(mut positive: Vec<u32>, mut negative: Vec<u32>) -> Self {
        for half in [&mut positive, &mut negative] {
            let used = half.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            half.truncate(used);
        }
        WindowCounts { positive, negative }
    }

    /// A copy of `h`'s counters up to the highest one used: for the outputs that read a
    /// window's histogram after its record went back to the measuring loop. `None` when a
    /// counter does not fit in `u32` (only a merge of several threads' windows could hold
    /// 2^32 values in one bucket: never at the periods and thread counts tickscope runs).
    pub fn of<C: Count>(h: &WindowHistogram<C>) -> Option<Self> {
        let (positive, negative) = h.used_counters();
        let fits = |c: &[C]| c.iter().all(|c| c.get() <= u64::from(u32::MAX));
        // Decided at compile time for the loop's own `u32` records.
        if C::MAX > u64::from(u32::MAX) && !(fits(positive) && fits(negative)) {
            return None;
        }
        let copy = |c: &[C]| -> Vec<u32> { c.iter().map(|&c| c.get() as u32).collect() };
        Some(Self::new(copy(positive), copy(negative)))
    }

    /// From explicit buckets ([`HistogramBuckets`]: a value ≥ 0 is its bucket's highest, a
    /// value < 0 its bucket's value closest to zero; magnitudes beyond HdrHistogram's highest
    /// trackable value are counted at it). `None` when a bucket's count does not fit in `u32`.
    pub fn from_buckets(b: &HistogramBuckets) -> Option<Self> {
        let (mut positive, mut negative) = (Vec::<u32>::new(), Vec::<u32>::new());
        for &(value, count) in &b.buckets {
            let half = if value < 0 {
                &mut negative
            } else {
                &mut positive
            };
            let i = counts_index(value.unsigned_abs());
            if half.len() <= i {
                half.resize(i + 1, 0);
            }
            half[i] = u32::try_from(u64::from(half[i]) + count).ok()?;
        }
        Some(Self::new(positive, negative))
    }

    /// The counts of values ≥ 0 by counts index; the last one is not zero.
    pub fn positive(&self) -> &[u32] {
        &self.positive
    }

    /// The counts of the magnitudes of values < 0 by counts index; the last one is not zero.
    pub fn negative(&self) -> &[u32] {
        &self.negative
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        sum(&self.positive) + sum(&self.negative)
    }

    /// Whether there is no value.
    pub fn is_empty(&self) -> bool {
        self.positive.is_empty() && self.negative.is_empty()
    }

    /// Adds the counts of `half` (one of [`WindowCounts::positive`] and
    /// [`WindowCounts::negative`]) by ranges of counts indices: those at indices up to
    /// `last[0]` into `out[0]`, above `last[k − 1]` up to `last[k]` into `out[k]`, above the
    /// last one into `out[last.len()]` (`last` ascending; `out` has `last.len() + 1` slots).
    /// For outputs with buckets of their own (Prometheus's classic buckets): one vectorised
    /// sum per range, no work per HdrHistogram bucket.
    ///
    /// # Panics
    /// If `out` has fewer than `last.len() + 1` slots.
    pub fn add_ranges(half: &[u32], last: &[usize], out: &mut [u64]) {
        let mut from = 0;
        for (slot, &l) in last.iter().enumerate() {
            let to = (l + 1).min(half.len());
            if from < to {
                out[slot] += sum(&half[from..to]);
                from = to;
            }
        }
        if from < half.len() {
            out[last.len()] += sum(&half[from..]);
        }
    }

    /// Calls `f(index, count)` for each non-zero counter of `half`, ascending: runs of zeros
    /// are passed eight counters at a time (one OR each), for walking the few hundred counts
    /// among a window's thousands of counters. (`dyn`: compiled here, at the engine's
    /// optimisation level, whoever calls it.)
    pub fn for_each_nonzero(half: &[u32], f: &mut dyn FnMut(usize, u32)) {
        let mut blocks = half.chunks_exact(8);
        let mut base = 0;
        for block in &mut blocks {
            if block.iter().fold(0, |any, &c| any | c) != 0 {
                for (j, &c) in block.iter().enumerate() {
                    if c != 0 {
                        f(base + j, c);
                    }
                }
            }
            base += 8;
        }
        for (j, &c) in blocks.remainder().iter().enumerate() {
            if c != 0 {
                f(base + j, c);
            }
        }
    }

    /// Calls `f(value, count)` for each non-empty bucket, ascending by value, with the values
    /// of [`HistogramBuckets`] (the highest of the bucket for values ≥ 0, the value closest
    /// to zero for values < 0).
    pub fn for_each_bucket(&self, mut f: impl FnMut(Nanos, u64)) {
        for (i, &c) in self.negative.iter().enumerate().rev() {
            if c != 0 {
                f(-(counts_lowest(i) as Nanos), u64::from(c));
            }
        }
        for (i, &c) in self.positive.iter().enumerate() {
            if c != 0 {
                f(counts_highest(i) as Nanos, u64::from(c));
            }
        }
    }

    /// Σ count × middle value of the bucket (HdrHistogram's `medianEquivalentValue`: the
    /// lowest value plus half the bucket's width, rounded up), ns, of the values ≥ 0 and of
    /// the magnitudes of the values < 0. Per block of 128 counters sharing one bucket width
    /// (`2^b`), as `2^b·Σ c·s + 2^(b−1)·Σ c` with `s` the sub-bucket: two vectorised sums
    /// over the counters instead of a bucket's bounds per counter.
    pub fn middle_sums(&self) -> (u128, u128) {
        (middle_sum(&self.positive), middle_sum(&self.negative))
    }

    /// The same histogram as explicit buckets.
    pub fn buckets(&self) -> HistogramBuckets {
        let mut buckets = Vec::new();
        self.for_each_bucket(|v, c| buckets.push((v, c)));
        HistogramBuckets {
            significant_figures: SIGNIFICANT_FIGURES,
            buckets,
        }
    }
}

/// Σ of `counts`, widened (vectorised).
fn sum(counts: &[u32]) -> u64 {
    counts.iter().map(|&c| u64::from(c)).sum()
}

/// Σ count × bucket middle of one half (see [`WindowCounts::middle_sums`]).
fn middle_sum(counts: &[u32]) -> u128 {
    // The layout of [`crate::window_histogram`]: indices 0..256 are the exact values 0..256;
    // index k·128 + j (k ≥ 2, j < 128) is sub-bucket s = 128 + j of the bucket of width
    // 2^b, b = k − 1, whose lowest value is s·2^b and middle s·2^b + 2^(b−1).
    let mut total: u128 = 0;
    for (k, block) in counts.chunks(128).enumerate() {
        // Σ j·c_j = Σ_t (n − P_t) over t < len, with P_t = c_0 + … + c_t: one running sum
        // and one sum of running sums, two adds per counter and no multiplication.
        // c < 2^32 and len ≤ 128: both stay below 2^46.
        let (mut running, mut of_running) = (0u64, 0u64);
        for &c in block {
            running += u64::from(c);
            of_running += running;
        }
        if running == 0 {
            continue;
        }
        let (n, len) = (u128::from(running), block.len() as u128);
        let weighted = n * len - u128::from(of_running);
        total += match k {
            0 | 1 => (k as u128 * 128) * n + weighted,
            _ => ((128 * n + weighted) << (k - 1)) + (n << (k - 2)),
        };
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window_histogram::WindowHistogram;
    use proptest::prelude::*;

    proptest! {
        /// The counters, the explicit buckets and back give the histogram's own buckets.
        #[test]
        fn counts_and_buckets_agree(
            values in proptest::collection::vec(
                prop_oneof![-5_000_000i64..5_000_000, -300i64..300, 0i64..4_000_000_000_000],
                0..300),
        ) {
            let mut h = WindowHistogram::<u32>::default();
            for &v in &values {
                h.record(v);
            }
            let counts = WindowCounts::of(&h).unwrap();
            prop_assert_eq!(counts.buckets(), h.buckets());
            prop_assert_eq!(counts.len(), values.len() as u64);
            prop_assert_eq!(counts.is_empty(), values.is_empty());
            prop_assert_eq!(WindowCounts::from_buckets(&h.buckets()), Some(counts.clone()));
            prop_assert!(counts.positive().last().is_none_or(|&c| c != 0));
            prop_assert!(counts.negative().last().is_none_or(|&c| c != 0));
            // The middles summed per block are those of each bucket.
            let middle = |low: u64| u128::from(low + (counts_highest(counts_index(low)) - low).div_ceil(2));
            let (mut p, mut n) = (0u128, 0u128);
            counts.for_each_bucket(|v, c| match v < 0 {
                true => n += middle(v.unsigned_abs()) * u128::from(c),
                false => p += middle(counts_lowest(counts_index(v as u64))) * u128::from(c),
            });
            prop_assert_eq!(counts.middle_sums(), (p, n));
            // The walk visits every non-zero counter once, in order.
            let mut walked = Vec::new();
            WindowCounts::for_each_nonzero(counts.positive(), &mut |i, _| walked.push(i));
            let want: Vec<usize> = (0..counts.positive().len()).filter(|&i| counts.positive()[i] != 0).collect();
            prop_assert_eq!(walked, want);
        }
    }
}
