//! The histogram the measuring loop records into: HdrHistogram's buckets, without its
//! general-purpose machinery.
//!
//! HdrHistogram (Gil Tene, <http://hdrhistogram.org>; the `hdrhistogram` crate) places a
//! value in sub-bucket `s` of bucket `b` of a log-linear layout. With the layout
//! [`SignedHistogram`](crate::histogram::SignedHistogram) uses — lowest discernible value
//! 1 ns, [`SIGNIFICANT_FIGURES`] = 2, highest trackable [`HIGHEST_TRACKABLE`] — there are
//! 256 sub-buckets per bucket, and a value `v` lands at counts index
//! `b·128 + (v >> b)` with `b = 56 − lzcnt(v | 255)`: values below 256 ns are exact and a
//! bucket is at most 1/128 of its value wide (HdrHistogram's `counts_array_index`). Doing
//! only that — one `lzcnt`, a shift, an add and an increment — costs about a tenth of the
//! crate's `record`, which also keeps totals, extremes and bounds checks general enough for
//! any layout.
//!
//! The bucket boundaries are exactly HdrHistogram's, so quantiles and the exported
//! [`HistogramBuckets`] are the same as [`SignedHistogram`](crate::histogram::SignedHistogram)'s for the same values (a
//! property test checks it). Each half (values ≥ 0 and magnitudes of values < 0) remembers
//! the highest index it touched, so the collector clears, merges and walks only the counters
//! up to it; the number of values is counted only for the negative half (rare) and summed
//! from the counters for the other, off the measuring thread.

use crate::histogram::{HistogramBuckets, HIGHEST_TRACKABLE, SIGNIFICANT_FIGURES};
use crate::time::Nanos;
use crate::zeroed_pages::ZeroedPages;
use std::fmt::Debug;
use std::ops::{AddAssign, BitOr};

/// The unsigned integer a histogram counts in: `u64` for a run's totals, `u32` for the
/// window records the measuring loop fills (half the memory; the loop hands a record over
/// before any counter could reach 2^32, see [`crate::worker::measure`]).
pub trait Count:
    crate::zeroed_pages::Zeroed
    + Default
    + Debug
    + Eq
    + Send
    + Sync
    + AddAssign
    + TryFrom<u64>
    + BitOr<Output = Self>
    + 'static
{
    /// The largest count the type holds.
    const MAX: u64;
    /// One.
    const ONE: Self;
    /// The count as a `u64`.
    fn get(self) -> u64;
}

impl Count for u32 {
    const MAX: u64 = u32::MAX as u64;
    const ONE: Self = 1;
    #[inline(always)]
    fn get(self) -> u64 {
        u64::from(self)
    }
}

impl Count for u64 {
    const MAX: u64 = u64::MAX;
    const ONE: Self = 1;
    #[inline(always)]
    fn get(self) -> u64 {
        self
    }
}

/// log2 of half the sub-bucket count (128 sub-buckets per half bucket).
const SUB_HALF_MAGNITUDE: u32 = 7;
/// Counters per half: HdrHistogram's `counts_len` for this layout (36 buckets × 128).
pub(crate) const COUNTS: usize = 4608;

/// Counters tested for zero at once when walking a half for its non-zero counters.
const SKIP_BLOCK: usize = 8;

/// The counts index of magnitude `v` (≤ [`HIGHEST_TRACKABLE`]).
#[inline(always)]
fn index(v: u64) -> usize {
    let b = 56 - (v | 255).leading_zeros();
    ((b << SUB_HALF_MAGNITUDE) as u64 + (v >> b)) as usize
}

/// The lowest value of the bucket at counts index `i`.
#[inline]
fn lowest(i: usize) -> u64 {
    let (b, s) = bucket_of(i);
    s << b
}

/// The highest value of the bucket at counts index `i`.
#[inline]
fn highest(i: usize) -> u64 {
    let (b, _) = bucket_of(i);
    lowest(i) + (1 << b) - 1
}

/// The lowest value (ns) HdrHistogram's layout at [`SIGNIFICANT_FIGURES`] counts in the same
/// bucket as magnitude `v` (HdrHistogram's `lowestEquivalentValue`); magnitudes beyond
/// [`HIGHEST_TRACKABLE`] are taken at that limit, as recording clamps them. For outputs that
/// re-bucket a window's [`HistogramBuckets`] (a bucket entry carries its highest value for
/// values ≥ 0 and its lowest magnitude for values < 0).
#[inline]
pub fn lowest_equivalent(v: u64) -> u64 {
    lowest(index(v.min(HIGHEST_TRACKABLE)))
}

/// The highest value (ns) in the same bucket as magnitude `v` (HdrHistogram's
/// `highestEquivalentValue`); beyond [`HIGHEST_TRACKABLE`] as [`lowest_equivalent`].
#[inline]
pub fn highest_equivalent(v: u64) -> u64 {
    highest(index(v.min(HIGHEST_TRACKABLE)))
}

/// The index in HdrHistogram's counts array (`counts_array_index` of the layout described in
/// the module docs, 0 to 4607) of the bucket holding magnitude `v` ns; magnitudes beyond
/// [`HIGHEST_TRACKABLE`] are taken at that limit. For writers of HdrHistogram's own encoding
/// (the V2 format of `--hlog`), which lists the counts by this index.
#[inline]
pub fn counts_index(v: u64) -> usize {
    index(v.min(HIGHEST_TRACKABLE))
}

/// The highest value (ns) of the bucket at counts index `i` (< 4608; see
/// [`counts_index`]): what HdrHistogram states as a histogram's maximum when `i` is the
/// highest index counted into.
pub fn counts_highest(i: usize) -> u64 {
    highest(i.min(COUNTS - 1))
}

/// The lowest value (ns) of the bucket at counts index `i` (< 4608; see [`counts_index`]).
#[inline]
pub fn counts_lowest(i: usize) -> u64 {
    lowest(i.min(COUNTS - 1))
}

/// Bucket and sub-bucket of counts index `i` (the inverse of [`index`]).
#[inline]
fn bucket_of(i: usize) -> (u32, u64) {
    let half = 1usize << SUB_HALF_MAGNITUDE;
    if i < 2 * half {
        (0, i as u64)
    } else {
        let b = (i >> SUB_HALF_MAGNITUDE) as u32 - 1;
        (b, (i - (b as usize) * half) as u64)
    }
}

/// One half: the counters and one past the highest index touched since the last clear
/// (0 when nothing was recorded).
#[derive(Debug, Clone)]
struct Half<C: Count> {
    counts: ZeroedPages<C, COUNTS>,
    end: usize,
}

impl<C: Count> Half<C> {
    /// Allocates the counters and writes to each of their pages, so that they are resident
    /// (and locked under `mlockall(MCL_ONFAULT)`) before the measuring loop counts into them.
    fn new() -> Self {
        let mut half = Self::untouched();
        half.prefault(COUNTS);
        half
    }

    /// Maps the counters zeroed and writes none ([`ZeroedPages`]), so that only the pages
    /// later counted into become resident.
    fn untouched() -> Self {
        Half {
            counts: ZeroedPages::new(),
            end: 0,
        }
    }

    /// Writes to every page holding one of the first `end` (≤ [`COUNTS`]) counters.
    fn prefault(&mut self, end: usize) {
        let end = end.min(COUNTS);
        for c in self.counts[..end]
            .iter_mut()
            .step_by(4096 / std::mem::size_of::<C>())
        {
            // SAFETY: `c` is a valid, aligned counter; the volatile write is not elided
            // although it stores the value already there.
            unsafe { std::ptr::write_volatile(c, C::default()) };
        }
        // The page of the last counter, when `end` is not at a page's start.
        if let Some(c) = self.counts[..end].last_mut() {
            // SAFETY: as above.
            unsafe { std::ptr::write_volatile(c, C::default()) };
        }
    }

    /// Counts `magnitude` (≤ [`HIGHEST_TRACKABLE`], which the caller checks).
    #[inline(always)]
    fn record(&mut self, magnitude: u64) {
        debug_assert!(magnitude <= HIGHEST_TRACKABLE);
        let i = index(magnitude);
        // SAFETY: for magnitudes up to HIGHEST_TRACKABLE, `index` is below COUNTS (its
        // largest value, index(HIGHEST_TRACKABLE), is checked against HdrHistogram's
        // `counts_len` in `indices_match_hdrhistogram`); `record` is only reached after
        // that check, so the bounds check is left out of the measuring loop.
        unsafe { *self.counts.get_unchecked_mut(i) += C::ONE };
        // Rarely true after the first few wake-ups: a branch is cheaper than a `max`.
        if i >= self.end {
            self.end = i + 1;
        }
    }

    /// Counts `magnitude` (≤ [`HIGHEST_TRACKABLE`]) `n` times; `n` and the counter's value
    /// must fit in `C` (the caller checks).
    fn record_n(&mut self, magnitude: u64, n: C) {
        let i = index(magnitude);
        self.counts[i] += n;
        if i >= self.end {
            self.end = i + 1;
        }
    }

    fn touched(&self) -> std::ops::Range<usize> {
        0..self.end
    }

    /// Calls `f(index, count)` for each non-zero counter of the touched range, ascending by
    /// index. Zeros are skipped a block of [`SKIP_BLOCK`] counters at a time (their OR, which
    /// the compiler vectorises); only a block holding a count is walked counter by counter. A
    /// window's values fill a few dozen to a few hundred of the thousands of counters up to
    /// its largest, and the collector walks them every window for `--hlog` and `monitor`.
    #[inline]
    fn for_each_nonzero(&self, mut f: impl FnMut(usize, u64)) {
        let counts = &self.counts[self.touched()];
        let mut blocks = counts.chunks_exact(SKIP_BLOCK);
        let mut visit = |base: usize, block: &[C]| {
            for (i, &c) in block.iter().enumerate() {
                if c != C::default() {
                    f(base + i, c.get());
                }
            }
        };
        let mut base = 0;
        for block in &mut blocks {
            if block.iter().fold(C::default(), |any, &c| any | c) != C::default() {
                visit(base, block);
            }
            base += SKIP_BLOCK;
        }
        visit(base, blocks.remainder());
    }

    fn len(&self) -> u64 {
        self.counts[self.touched()].iter().map(|c| c.get()).sum()
    }

    /// How many counters of the touched range are not zero (a branch-free count the
    /// compiler vectorises: sizes [`WindowHistogram::buckets`]'s list before it is filled).
    fn nonzero(&self) -> usize {
        self.counts[self.touched()]
            .iter()
            .map(|&c| usize::from(c != C::default()))
            .sum()
    }

    fn clear(&mut self) {
        let r = self.touched();
        self.counts[r].fill(C::default());
        self.end = 0;
    }

    fn add<D: Count>(&mut self, other: &Half<D>)
    where
        C: From<D>,
    {
        let r = other.touched();
        for (to, from) in self.counts[r.clone()].iter_mut().zip(&other.counts[r]) {
            *to += C::from(*from);
        }
        self.end = self.end.max(other.end);
    }

    /// Adds every count into `to` and zeroes it here, in one pass over the touched range
    /// (instead of an add and then a `memset`).
    fn drain_into<D: Count + From<C>>(&mut self, to: &mut Half<D>) {
        let r = self.touched();
        for (t, f) in to.counts[r.clone()].iter_mut().zip(&mut self.counts[r]) {
            *t += D::from(std::mem::take(f));
        }
        to.end = to.end.max(self.end);
        self.end = 0;
    }

    /// Index of the bucket holding the `rank`-th smallest magnitude (1-based).
    fn index_at_rank(&self, rank: u64) -> usize {
        let mut seen = 0;
        for i in self.touched() {
            seen += self.counts[i].get();
            if seen >= rank {
                return i;
            }
        }
        self.end.saturating_sub(1)
    }
}

/// A signed histogram with HdrHistogram's buckets and a cheap `record` (see the module docs),
/// counting in `C` ([`Count`]: `u64` unless said otherwise, `u32` in the measuring loop's
/// window records). Allocates 2 × 4608 counters once (74 KiB with `u64`, 37 KiB with
/// `u32`); recording never allocates. A `u32` counter wraps after 2^32 − 1 values in one
/// bucket: whoever records into one keeps below that ([`crate::worker::measure`] does).
#[derive(Debug, Clone)]
pub struct WindowHistogram<C: Count = u64> {
    positive: Half<C>,
    negative: Half<C>,
    negative_len: u64,
    clamped: u64,
}

impl<C: Count> Default for WindowHistogram<C> {
    fn default() -> Self {
        WindowHistogram {
            positive: Half::new(),
            negative: Half::new(),
            negative_len: 0,
            clamped: 0,
        }
    }
}

impl WindowHistogram {
    /// An empty histogram covering ±[`HIGHEST_TRACKABLE`] ns, counting in `u64`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<C: Count> WindowHistogram<C> {
    /// An empty histogram whose counters are allocated zeroed and not written: only the
    /// pages values are later counted into become resident (for histograms the collector
    /// fills, such as a run's totals; [`WindowHistogram::default`] writes every page, for a
    /// real-time loop that must not fault).
    pub fn untouched() -> Self {
        WindowHistogram {
            positive: Half::untouched(),
            negative: Half::untouched(),
            negative_len: 0,
            clamped: 0,
        }
    }

    /// Makes the counters of magnitudes up to `magnitude` ns (both signs) resident, by
    /// writing to each of their pages, so that a loop recording such values does not fault
    /// on them (and, under `mlockall(MCL_ONFAULT)`, they are locked). A larger value's page
    /// faults in when it is first counted.
    pub(crate) fn prefault(&mut self, magnitude: u64) {
        let end = index(magnitude.min(HIGHEST_TRACKABLE)) + 1;
        self.positive.prefault(end);
        self.negative.prefault(end);
    }

    /// Records one value (ns); magnitudes beyond [`HIGHEST_TRACKABLE`] are clamped to it and
    /// counted in [`WindowHistogram::clamped`].
    #[inline(always)]
    pub fn record(&mut self, value: Nanos) {
        // −H ≤ value ≤ H in one unsigned comparison (value + H wraps below 0 otherwise).
        if (value as u64).wrapping_add(HIGHEST_TRACKABLE) > 2 * HIGHEST_TRACKABLE {
            return self.record_clamped(value);
        }
        if value >= 0 {
            self.positive.record(value as u64);
        } else {
            self.negative.record(value.unsigned_abs());
            self.negative_len += 1;
        }
    }

    /// Records `value` (ns) `n` times at once: the same as `n` calls of
    /// [`WindowHistogram::record`] (for virtual time's bulk windows, [`crate::mock_bulk`]).
    ///
    /// # Panics
    /// If `n` does not fit in `C`.
    pub(crate) fn record_n(&mut self, value: Nanos, n: u64) {
        if n == 0 {
            return;
        }
        let Ok(count) = C::try_from(n) else {
            panic!("{n} values do not fit in one counter");
        };
        let limit = HIGHEST_TRACKABLE as Nanos;
        if value.unsigned_abs() > HIGHEST_TRACKABLE {
            self.clamped += n;
        }
        let value = value.clamp(-limit, limit);
        if value >= 0 {
            self.positive.record_n(value as u64, count);
        } else {
            self.negative.record_n(value.unsigned_abs(), count);
            self.negative_len += n;
        }
    }

    /// A value beyond ±[`HIGHEST_TRACKABLE`]: counted, and recorded at the limit.
    #[cold]
    #[inline(never)]
    fn record_clamped(&mut self, value: Nanos) {
        self.clamped += 1;
        let limit = HIGHEST_TRACKABLE as Nanos;
        self.record(if value < 0 { -limit } else { limit });
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.positive.len() + self.negative_len
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of values recorded below zero.
    pub fn negative_count(&self) -> u64 {
        self.negative_len
    }

    /// Number of values whose magnitude was clamped.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Forgets every value; touches only the counters that were used.
    pub fn reset(&mut self) {
        self.positive.clear();
        self.negative.clear();
        self.negative_len = 0;
        self.clamped = 0;
    }

    /// Adds every value of `other`; walks only the counters `other` used.
    pub fn add<D: Count>(&mut self, other: &WindowHistogram<D>)
    where
        C: From<D>,
    {
        self.positive.add(&other.positive);
        self.negative.add(&other.negative);
        self.negative_len += other.negative_len;
        self.clamped += other.clamped;
    }

    /// Adds every value into `to` and leaves `self` empty, walking only the counters `self`
    /// used, once: what [`WindowHistogram::add`] then [`WindowHistogram::reset`] do, in one
    /// pass. The collector hands a window's record back to the measuring thread this way.
    pub fn drain_into<D: Count + From<C>>(&mut self, to: &mut WindowHistogram<D>) {
        self.positive.drain_into(&mut to.positive);
        self.negative.drain_into(&mut to.negative);
        to.negative_len += std::mem::take(&mut self.negative_len);
        to.clamped += std::mem::take(&mut self.clamped);
    }

    /// The value at quantile `q` (0.0 ..= 1.0), HdrHistogram's convention: the highest value
    /// of the bucket holding the sample of rank `max(1, ceil(q·n))` (for a negative sample,
    /// the bucket's value closest to zero). `None` when empty.
    pub fn value_at_quantile(&self, q: f64) -> Option<Nanos> {
        self.value_at_quantile_of(q, self.len())
    }

    /// [`WindowHistogram::value_at_quantile`] when the caller already knows the number of
    /// values `n` (a record's [`Moments::count`](crate::moments::Moments::count)): saves the
    /// walk that counts them. `n` must be [`WindowHistogram::len`]; a different `n` gives
    /// the value at another rank (never a panic). `None` when `n` is 0.
    pub(crate) fn value_at_quantile_of(&self, q: f64, n: u64) -> Option<Nanos> {
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).clamp(1, n);
        let n_neg = self.negative_len;
        Some(if rank <= n_neg {
            // Ascending signed order walks the magnitudes downwards.
            let i = self.negative.index_at_rank(n_neg - rank + 1);
            -(lowest(i) as Nanos)
        } else {
            highest(self.positive.index_at_rank(rank - n_neg)) as Nanos
        })
    }

    /// The value at quantile `q` of the magnitudes |x| (for "p99 of |dt − period|"), by the
    /// same convention. `None` when empty.
    pub fn abs_value_at_quantile(&self, q: f64) -> Option<Nanos> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).clamp(1, n);
        let (p, m) = (&self.positive, &self.negative);
        let end = p.end.max(m.end);
        let mut seen = 0;
        for i in 0..end {
            seen += p.counts[i].get() + m.counts[i].get();
            if seen >= rank {
                return Some(highest(i) as Nanos);
            }
        }
        Some(highest(end.saturating_sub(1)) as Nanos)
    }

    /// The counters of values ≥ 0 and of the magnitudes of values < 0, by counts index, up
    /// to the highest one used since the last reset (for [`crate::window_counts`]).
    pub fn used_counters(&self) -> (&[C], &[C]) {
        (
            &self.positive.counts[self.positive.touched()],
            &self.negative.counts[self.negative.touched()],
        )
    }

    /// The histogram as explicit buckets, ascending — the same as
    /// [`SignedHistogram::buckets`](crate::histogram::SignedHistogram::buckets).
    pub fn buckets(&self) -> HistogramBuckets {
        // Sized once: a window of a few hundred buckets grew the list 3–4 times (a copy and a
        // free each), which cost the collector more than the walk itself.
        let negative = match self.negative_len > 0 {
            true => self.negative.nonzero(),
            false => 0,
        };
        let mut buckets: Vec<(Nanos, u64)> = Vec::with_capacity(negative + self.positive.nonzero());
        // The negative half ascending by magnitude, then turned: ascending by value.
        if self.negative_len > 0 {
            self.negative
                .for_each_nonzero(|i, c| buckets.push((-(lowest(i) as Nanos), c)));
            buckets.reverse();
        }
        self.positive
            .for_each_nonzero(|i, c| buckets.push((highest(i) as Nanos, c)));
        HistogramBuckets {
            significant_figures: SIGNIFICANT_FIGURES,
            buckets,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::SignedHistogram;
    use proptest::prelude::*;

    #[test]
    fn indices_match_hdrhistogram() {
        let h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, HIGHEST_TRACKABLE, 2).unwrap();
        assert_eq!(h.distinct_values(), COUNTS);
        for v in [
            0u64,
            1,
            127,
            128,
            255,
            256,
            257,
            511,
            512,
            1000,
            65_535,
            1 << 30,
            HIGHEST_TRACKABLE,
        ] {
            let i = index(v);
            assert!(i < COUNTS, "{v}");
            assert_eq!(lowest(i), h.lowest_equivalent(v), "lowest of {v}");
            assert_eq!(highest(i), h.highest_equivalent(v), "highest of {v}");
            assert_eq!(
                lowest_equivalent(v),
                h.lowest_equivalent(v),
                "pub lowest of {v}"
            );
            assert_eq!(
                highest_equivalent(v),
                h.highest_equivalent(v),
                "pub highest of {v}"
            );
        }
    }

    /// A loop's record holds the pages for magnitudes up to the resident bound and no more;
    /// a collector's histogram only the pages its values fell in.
    #[test]
    fn prefault_makes_only_the_bounded_range_resident() {
        let mut loop_hist = WindowHistogram::<u32>::untouched();
        loop_hist.prefault(100_000_000);
        // 100 ms is counter 2622: pages 0..=2 of 1024 four-byte counters, both signs.
        assert_eq!(index(100_000_000), 2622);
        assert_eq!(loop_hist.positive.counts.resident_pages(), 3);
        assert_eq!(loop_hist.negative.counts.resident_pages(), 3);
        let mut totals = WindowHistogram::<u64>::untouched();
        assert_eq!(totals.positive.counts.resident_pages(), 0);
        loop_hist.record(20_000);
        loop_hist.record(50_000);
        loop_hist.drain_into(&mut totals);
        // Counters 0 ..= index(50 µs) = 1240 are walked: 3 pages of 512 eight-byte counters.
        assert_eq!(totals.positive.counts.resident_pages(), 3);
        assert_eq!(totals.negative.counts.resident_pages(), 0);
        assert_eq!(totals.len(), 2);
        let full = WindowHistogram::new();
        assert_eq!(full.positive.counts.resident_pages(), 9);
    }

    proptest! {
        #[test]
        fn same_quantiles_and_buckets_as_signed_histogram(
            values in proptest::collection::vec(
                prop_oneof![-5_000i64..5_000, -10_000_000i64..10_000_000, -4_000_000_000_000i64..4_000_000_000_000],
                1..300),
            qs in proptest::collection::vec(0.0f64..=1.0, 1..8)
        ) {
            let mut fast = WindowHistogram::new();
            let mut reference = SignedHistogram::new();
            for &v in &values {
                fast.record(v);
                reference.record(v);
            }
            prop_assert_eq!(fast.len(), reference.len());
            prop_assert_eq!(fast.negative_count(), reference.negative_count());
            prop_assert_eq!(fast.clamped(), reference.clamped());
            prop_assert_eq!(fast.buckets(), reference.buckets());
            for q in qs {
                prop_assert_eq!(fast.value_at_quantile(q), reference.value_at_quantile(q), "q {}", q);
                prop_assert_eq!(fast.abs_value_at_quantile(q), reference.abs_value_at_quantile(q), "|q| {}", q);
            }
        }

        #[test]
        fn add_drain_and_reset_touch_only_what_was_used(
            a in proptest::collection::vec(-1_000_000i64..1_000_000, 0..100),
            b in proptest::collection::vec(-1_000_000i64..1_000_000, 0..100),
        ) {
            let (mut ha, mut hb, mut all) = (WindowHistogram::new(), WindowHistogram::new(), WindowHistogram::new());
            a.iter().for_each(|&v| { ha.record(v); all.record(v); });
            b.iter().for_each(|&v| { hb.record(v); all.record(v); });
            let mut drained = ha.clone();
            let mut hb2 = hb.clone();
            hb2.drain_into(&mut drained);
            prop_assert!(hb2.is_empty());
            prop_assert!(hb2.positive.counts.iter().chain(hb2.negative.counts.iter()).all(|&c| c == 0));
            prop_assert_eq!((hb2.negative_count(), hb2.clamped()), (0, 0));
            prop_assert_eq!(drained.buckets(), all.buckets());
            prop_assert_eq!(drained.len(), all.len());
            prop_assert_eq!(drained.value_at_quantile_of(0.99, all.len()), all.value_at_quantile(0.99));
            ha.add(&hb);
            prop_assert_eq!(ha.buckets(), all.buckets());
            ha.reset();
            prop_assert!(ha.is_empty());
            prop_assert!(ha.positive.counts.iter().chain(ha.negative.counts.iter()).all(|&c| c == 0));
        }

        #[test]
        fn a_32_bit_window_drains_into_64_bit_totals_as_if_recorded_there(
            a in proptest::collection::vec(-1_000_000i64..1_000_000, 0..100),
            b in proptest::collection::vec(-4_000_000_000_000i64..4_000_000_000_000, 0..100),
        ) {
            let mut window = WindowHistogram::<u32>::default();
            let (mut total, mut all) = (WindowHistogram::new(), WindowHistogram::new());
            a.iter().for_each(|&v| { total.record(v); all.record(v); });
            b.iter().for_each(|&v| { window.record(v); all.record(v); });
            let mut only_b = WindowHistogram::new();
            b.iter().for_each(|&v| only_b.record(v));
            prop_assert_eq!(window.buckets(), only_b.buckets());
            prop_assert_eq!(window.value_at_quantile(0.99), only_b.value_at_quantile(0.99));
            window.drain_into(&mut total);
            prop_assert!(window.is_empty());
            prop_assert!(window.positive.counts.iter().chain(window.negative.counts.iter()).all(|&c| c == 0));
            prop_assert_eq!(total.buckets(), all.buckets());
            prop_assert_eq!(total.clamped(), all.clamped());
            let mut merged = WindowHistogram::new();
            let mut again = WindowHistogram::<u32>::default();
            b.iter().for_each(|&v| again.record(v));
            merged.add(&again);
            prop_assert_eq!(merged.len(), b.len() as u64);
        }
    }
}
