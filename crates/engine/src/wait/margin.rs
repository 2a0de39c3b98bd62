//! The hybrid method's margin: how long before the expiry its sleep should end.
//!
//! The hybrid sleeps until `expiry − margin` and spins the rest. A sleep ends late by its
//! *overshoot* (the wake-up latency of that sleep: timer interrupt, idle exit, scheduling);
//! whenever the overshoot exceeds the margin, the spin starts after the expiry and the
//! wake-up is late. So the margin should sit just above a high percentile of the overshoot:
//! larger costs CPU (each period spins `margin − overshoot`), smaller costs precision.
//!
//! `MarginTuner` learns it while the run goes on, with no allocation after construction
//! and a few tens of instructions per sleep on average:
//!
//! * it keeps the last [`WINDOW`] overshoots in a ring;
//! * the first 256 sleeps (`WARMUP`) are the warm-up: they use a generous margin
//!   (`warmup_margin`); then the margin is *calibrated* to the 99.5th percentile (`QUANTILE`) of the
//!   overshoots plus a quarter plus 2 µs (`GUARD_NS`);
//! * after that, every 64 sleeps (`UPDATE_EVERY`) the margin is set the same way from the
//!   window, so it follows the machine up and down within about one window;
//! * the percentile is found without sorting: the ring is cut into blocks of
//!   `UPDATE_EVERY` slots, each keeping, as it fills, its count of coverable overshoots and
//!   its `TOP` largest. The `QUANTILE` of at most [`WINDOW`] values is among the
//!   `TOP` largest, so merging the blocks' lists gives exactly the value a sort would;
//! * a sleep that overshoots the margin raises it at once, to 1.25 × that overshoot plus
//!   `GUARD_NS` but at most to twice the margin: noise that comes in bursts costs a few
//!   late wake-ups instead of a window's worth.
//!
//! A learnt margin never exceeds half the period, and overshoots longer than that — a
//! hypervisor taking the CPU away for milliseconds — are counted and reported but do not
//! drive the margin: no margin a hybrid can afford would have caught them, and spinning
//! half of every period for them would buy nothing. (The sleep must also end after the
//! previous wake-up for its overshoot to be measured at all.) On a machine where sleeps
//! regularly overshoot by half a period, `busy` is the honest choice; when no overshoot in
//! the window is coverable, the margin drops to `GUARD_NS` (the hybrid then sleeps almost
//! to the expiry, and keeps measuring). A fixed margin
//! (`--margin 100us`) is used as given, up to the whole period (a busy-wait), and never
//! changes, but its overshoots are still counted.

use crate::time::{Nanos, NS_PER_US};
use serde::{Deserialize, Serialize};

/// Overshoots kept for the percentile: the last 1024 sleeps (about 1 s at 1 kHz).
pub const WINDOW: usize = 1024;
/// Sleeps at the warm-up margin before the first calibration.
pub(crate) const WARMUP: usize = 256;
/// Sleeps between two margin updates after the warm-up.
pub(crate) const UPDATE_EVERY: usize = 64;
/// The overshoot percentile the margin is set from.
pub(crate) const QUANTILE: f64 = 0.995;
/// How many of the largest overshoots each block keeps: the [`QUANTILE`] of `n ≤ WINDOW`
/// values is the `(n − ⌈QUANTILE·n⌉ + 1)`-th largest, at most 6 for 1024 values
/// (`quantile_fits_in_top` checks every `n`).
pub(crate) const TOP: usize = 6;
/// Blocks of [`UPDATE_EVERY`] ring slots.
const BLOCKS: usize = WINDOW / UPDATE_EVERY;
/// Added to the scaled percentile, ns: covers the spin's own first clock read and keeps a
/// floor when sleeps are very precise.
pub(crate) const GUARD_NS: Nanos = 2 * NS_PER_US;
/// The largest warm-up margin, ns: above the sleep latency p99 of a real-time thread on
/// common hardware (tens of µs, see cyclictest's published numbers), so that most warm-up
/// wake-ups are on time, without spinning a quarter of each millisecond.
pub(crate) const WARMUP_MARGIN_MAX_NS: Nanos = 200 * NS_PER_US;

/// How the hybrid's margin is chosen (`--margin`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Margin {
    /// Calibrated from the sleeps' measured overshoot and adapted during the run.
    #[default]
    Auto,
    /// This many ns, always (≥ 0; a whole period or more makes the hybrid a busy-wait).
    Fixed(Nanos),
}

/// The margin used while the warm-up measures the overshoot: half the period, at most
/// [`WARMUP_MARGIN_MAX_NS`] (ns).
pub(crate) fn warmup_margin(period: Nanos) -> Nanos {
    (period / 2).clamp(0, WARMUP_MARGIN_MAX_NS)
}

/// An overshoot with headroom: plus a quarter, plus [`GUARD_NS`] (ns).
fn with_headroom(overshoot: Nanos) -> Nanos {
    overshoot + overshoot / 4 + GUARD_NS
}

/// What the margin was over a run, for the result file (all ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarginStats {
    /// `auto` or `fixed`.
    pub mode: String,
    /// The margin the run started with (the warm-up margin for `auto`).
    pub initial_ns: Nanos,
    /// The margin set at the end of the warm-up (`auto` only; `None` if the run was shorter).
    pub calibrated_ns: Option<Nanos>,
    /// The margin in force at the end.
    pub final_ns: Nanos,
    /// The smallest margin used.
    pub min_ns: Nanos,
    /// The largest margin used.
    pub max_ns: Nanos,
    /// The mean margin over all sleeps.
    pub mean_ns: f64,
    /// Sleeps whose overshoot was measured.
    pub sleeps: u64,
    /// Sleeps that overshot the margin in force (the wake-up was late because of the sleep).
    pub overshot: u64,
    /// The largest overshoot measured.
    pub max_overshoot_ns: Nanos,
}

/// What one block of [`UPDATE_EVERY`] ring slots holds: the number of its overshoots a
/// learnt margin could cover and the [`TOP`] largest of them, descending (`Nanos::MIN` where
/// there are fewer).
#[derive(Debug, Clone, Copy)]
struct Block {
    coverable: usize,
    top: [Nanos; TOP],
}

impl Block {
    const EMPTY: Block = Block {
        coverable: 0,
        top: [Nanos::MIN; TOP],
    };

    /// Adds a coverable overshoot `s` (≥ 0).
    #[inline]
    fn add(&mut self, s: Nanos) {
        self.coverable += 1;
        if s > self.top[TOP - 1] {
            insert_top(&mut self.top, s);
        }
    }
}

/// Inserts `s` into `top` (descending), dropping the smallest.
fn insert_top(top: &mut [Nanos; TOP], s: Nanos) {
    let mut i = TOP - 1;
    while i > 0 && top[i - 1] < s {
        top[i] = top[i - 1];
        i -= 1;
    }
    top[i] = s;
}

/// `ring` with each of its pages written, so that they are resident before the loop.
fn prefaulted(mut ring: Box<[Nanos; WINDOW]>) -> Box<[Nanos; WINDOW]> {
    for v in ring.iter_mut().step_by(4096 / std::mem::size_of::<Nanos>()) {
        // SAFETY: `v` is valid and aligned; volatile so that the write is kept.
        unsafe { std::ptr::write_volatile(v, 0) };
    }
    ring
}

/// The rank (0-based, ascending) of the [`QUANTILE`] among `n ≥ 1` values.
fn quantile_rank(n: usize) -> usize {
    ((QUANTILE * n as f64).ceil() as usize).clamp(1, n) - 1
}

/// Learns the margin from measured overshoots (see the module docs). Pure logic: no clock,
/// no system call, no allocation after [`MarginTuner::new`].
#[derive(Debug, Clone)]
pub(crate) struct MarginTuner {
    auto: bool,
    period: Nanos,
    margin: Nanos,
    initial: Nanos,
    calibrated: Option<Nanos>,
    ring: Box<[Nanos; WINDOW]>,
    blocks: Box<[Block; BLOCKS]>,
    filled: usize,
    next: usize,
    since_update: usize,
    sleeps: u64,
    overshot: u64,
    margin_sum: i128,
    min_used: Nanos,
    max_used: Nanos,
    max_overshoot: Nanos,
}

impl MarginTuner {
    /// A tuner for a run with `period` ns between expiries. Allocates its window and block
    /// summaries (9 KiB); call it before the measuring loop.
    ///
    /// # Panics
    /// If `period` is not positive.
    pub(crate) fn new(period: Nanos, margin: Margin) -> Self {
        assert!(period > 0, "period must be positive");
        let (auto, initial) = match margin {
            Margin::Auto => (true, warmup_margin(period)),
            Margin::Fixed(m) => (false, m.clamp(0, period)),
        };
        MarginTuner {
            auto,
            period,
            margin: initial,
            initial,
            calibrated: None,
            ring: prefaulted(Box::new([0; WINDOW])),
            blocks: Box::new([Block::EMPTY; BLOCKS]),
            filled: 0,
            next: 0,
            since_update: 0,
            sleeps: 0,
            overshot: 0,
            margin_sum: 0,
            min_used: initial,
            max_used: initial,
            max_overshoot: 0,
        }
    }

    /// The margin to use for the next sleep, ns.
    #[inline]
    pub(crate) fn margin(&self) -> Nanos {
        self.margin
    }

    /// Records the overshoot of one sleep (its end minus the time it was asked to end, ns;
    /// negative values count as 0) and, in `auto` mode, adapts the margin (see the module
    /// docs).
    #[inline]
    pub(crate) fn observe(&mut self, overshoot: Nanos) {
        let s = overshoot.max(0);
        self.sleeps += 1;
        self.margin_sum += self.margin as i128;
        self.max_overshoot = self.max_overshoot.max(s);
        self.since_update += 1;
        let late = s > self.margin;
        if late {
            self.overshot += 1;
        }
        if !self.auto {
            return;
        }
        let slot = self.next;
        let block = &mut self.blocks[slot / UPDATE_EVERY];
        if slot.is_multiple_of(UPDATE_EVERY) {
            // The block's slots are all overwritten from here on: its summary starts afresh.
            *block = Block::EMPTY;
        }
        if s <= self.period / 2 {
            block.add(s);
        }
        self.ring[slot] = s;
        self.next = (slot + 1) % WINDOW;
        self.filled = (self.filled + 1).min(WINDOW);
        let due = match self.calibrated {
            None => WARMUP,
            Some(_) => UPDATE_EVERY,
        };
        if self.since_update >= due {
            self.since_update = 0;
            let m = self.coverable_quantile().map_or(GUARD_NS, with_headroom);
            self.set(m);
            self.calibrated.get_or_insert(self.margin);
        } else if late && self.calibrated.is_some() && s <= self.cap() {
            self.set(with_headroom(s).min(2 * self.margin.max(GUARD_NS)));
        }
    }

    /// The largest learnt margin: half the period (ns).
    fn cap(&self) -> Nanos {
        self.period / 2
    }

    /// The [`QUANTILE`] of the overshoots in the window that a learnt margin could cover
    /// (at most [`Self::cap`]), ns; `None` if none could. Merges the blocks' [`TOP`] lists;
    /// the block being overwritten (if the ring is not at a block boundary) is read slot by
    /// slot, since its summary covers only its new values.
    fn coverable_quantile(&self) -> Option<Nanos> {
        let cap = self.cap();
        let partial = (!self.next.is_multiple_of(UPDATE_EVERY)).then_some(self.next / UPDATE_EVERY);
        let mut top = [Nanos::MIN; TOP];
        let mut n = 0;
        for (b, block) in self.blocks.iter().enumerate() {
            if Some(b) == partial {
                let slots = b * UPDATE_EVERY..((b + 1) * UPDATE_EVERY).min(self.filled);
                for &s in self.ring[slots].iter().filter(|&&s| s <= cap) {
                    n += 1;
                    if s > top[TOP - 1] {
                        insert_top(&mut top, s);
                    }
                }
                continue;
            }
            n += block.coverable;
            // Descending: once one is not above the current sixth, none after it is.
            for &s in &block.top {
                if s <= top[TOP - 1] {
                    break;
                }
                insert_top(&mut top, s);
            }
        }
        if n == 0 {
            return None;
        }
        // The value of ascending rank r is the (n − r)-th largest.
        Some(top[n - quantile_rank(n) - 1])
    }

    /// Sets a learnt margin (at most [`Self::cap`]) and keeps its range.
    fn set(&mut self, m: Nanos) {
        let m = m.min(self.cap());
        self.margin = m;
        self.min_used = self.min_used.min(m);
        self.max_used = self.max_used.max(m);
    }

    /// What the margin was so far.
    pub(crate) fn stats(&self) -> MarginStats {
        MarginStats {
            mode: if self.auto { "auto" } else { "fixed" }.into(),
            initial_ns: self.initial,
            calibrated_ns: self.calibrated,
            final_ns: self.margin,
            min_ns: self.min_used,
            max_ns: self.max_used,
            mean_ns: if self.sleeps > 0 {
                self.margin_sum as f64 / self.sleeps as f64
            } else {
                self.margin as f64
            },
            sleeps: self.sleeps,
            overshot: self.overshot,
            max_overshoot_ns: self.max_overshoot,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = NS_PER_US;
    const MS: Nanos = 1_000 * US;

    #[test]
    fn quantile_fits_in_top() {
        for n in 1..=WINDOW {
            assert!(n - quantile_rank(n) <= TOP, "{n}");
        }
    }

    /// The quantile by sorting, as the tuner computed it before the block summaries.
    fn sorted_quantile(window: &[Nanos], cap: Nanos) -> Option<Nanos> {
        let mut v: Vec<Nanos> = window.iter().copied().filter(|&s| s <= cap).collect();
        v.sort_unstable();
        (!v.is_empty()).then(|| v[quantile_rank(v.len())])
    }

    proptest::proptest! {
        /// After any number of sleeps, the blocks give the same quantile as sorting the
        /// window (the last WINDOW overshoots), at and between block boundaries.
        #[test]
        fn block_summaries_give_the_sorted_quantile(
            overshoots in proptest::collection::vec(
                proptest::prop_oneof![0i64..50_000, 0i64..2_000_000, -5i64..5], 1..3000),
            auto in proptest::bool::ANY,
        ) {
            let mut t = MarginTuner::new(MS, if auto { Margin::Auto } else { Margin::Fixed(0) });
            t.auto = true; // the ring is kept in auto mode only
            let mut seen = Vec::new();
            for (k, &o) in overshoots.iter().enumerate() {
                t.since_update = 0; // keep the margin out of it: only the quantile is checked
                t.observe(o);
                seen.push(o.max(0));
                if k % 7 == 0 || k + 1 == overshoots.len() {
                    let window = &seen[seen.len().saturating_sub(WINDOW)..];
                    proptest::prop_assert_eq!(t.coverable_quantile(), sorted_quantile(window, t.cap()));
                }
            }
        }
    }

    #[test]
    fn warm_up_margin_is_half_the_period_up_to_200_us() {
        assert_eq!(warmup_margin(200 * US), 100 * US);
        assert_eq!(warmup_margin(10 * MS), 200 * US);
        let t = MarginTuner::new(MS, Margin::Auto);
        assert_eq!(t.margin(), 200 * US);
    }

    #[test]
    fn calibration_sets_the_margin_from_the_warm_up_percentile() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        // 255 sleeps: still warming up.
        for k in 0..WARMUP - 1 {
            t.observe(10 * US + (k % 10) as Nanos * US);
        }
        assert_eq!(t.margin(), 200 * US);
        assert_eq!(t.stats().calibrated_ns, None);
        t.observe(10 * US);
        // Overshoots 10..=19 µs: p99.5 is 19 µs → 19 + 4.75 + 2 µs.
        let expected = 19 * US + 19 * US / 4 + GUARD_NS;
        assert_eq!(t.margin(), expected);
        assert_eq!(t.stats().calibrated_ns, Some(expected));
    }

    #[test]
    fn the_margin_follows_a_change_of_overshoot_within_a_window() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        for _ in 0..WINDOW {
            t.observe(20 * US);
        }
        let quiet = t.margin();
        assert_eq!(quiet, 20 * US + 5 * US + GUARD_NS);
        // The machine gets noisier: overshoots of 80 µs. The first raises the margin at once
        // (to twice 27 µs); the second to 1.25 × 80 µs + 2 µs; no sleep is late after that.
        for _ in 0..UPDATE_EVERY {
            t.observe(80 * US);
        }
        assert_eq!(t.margin(), 80 * US + 20 * US + GUARD_NS);
        assert_eq!(t.stats().overshot, 2);
        // Quiet again: after a full window of quiet sleeps the margin comes back down.
        for _ in 0..WINDOW {
            t.observe(20 * US);
        }
        assert_eq!(t.margin(), quiet);
        let r = t.stats();
        // The warm-up's 200 µs is the largest margin used.
        assert_eq!((r.min_ns, r.max_ns), (quiet, 200 * US));
        assert_eq!(r.max_overshoot_ns, 80 * US);
    }

    #[test]
    fn a_rare_late_sleep_only_doubles_the_margin_until_the_next_update() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        let quiet = 30 * US + 30 * US / 4 + GUARD_NS;
        for k in 0..4 * WINDOW {
            // One 300 µs overshoot every 512 sleeps: 2 per window, below 0.5 %.
            t.observe(if k % 512 == 0 { 300 * US } else { 30 * US });
            if k == 1024 {
                assert_eq!(t.margin(), 2 * quiet);
            }
        }
        assert_eq!(t.margin(), quiet);
        let r = t.stats();
        assert_eq!(r.overshot, 8);
        // The warm-up's 200 µs is the largest margin used.
        assert_eq!(r.max_ns, 200 * US);
    }

    #[test]
    fn stalls_longer_than_half_a_period_do_not_drive_the_margin() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        for k in 0..4 * WINDOW {
            // A 3 ms stall every 32 sleeps (3 %, a busy hypervisor): no margin below half
            // the period covers them, so the margin follows the other 97 %.
            t.observe(if k % 32 == 0 { 3 * MS } else { 30 * US });
        }
        assert_eq!(t.margin(), 30 * US + 30 * US / 4 + GUARD_NS);
        let r = t.stats();
        assert_eq!((r.overshot, r.max_overshoot_ns), (128, 3 * MS));
        // Only stalls: spinning would catch none of them; the hybrid sleeps almost to the
        // expiry and keeps measuring.
        let mut t = MarginTuner::new(MS, Margin::Auto);
        for _ in 0..WARMUP {
            t.observe(3 * MS);
        }
        assert_eq!(t.margin(), GUARD_NS);
    }

    #[test]
    fn a_burst_of_noise_costs_a_few_late_wake_ups() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        for _ in 0..WINDOW {
            t.observe(10 * US);
        }
        // 100 sleeps overshoot 200 µs each: the margin (14.5 µs) doubles to 29, 58, 116 µs,
        // then 1.25 × 200 + 2 µs covers them: 4 late wake-ups, not 100.
        for _ in 0..100 {
            t.observe(200 * US);
        }
        assert_eq!(t.stats().overshot, 4);
        assert_eq!(t.margin(), 200 * US + 50 * US + GUARD_NS);
    }

    #[test]
    fn a_learnt_margin_never_exceeds_half_the_period() {
        let mut t = MarginTuner::new(100 * US, Margin::Auto);
        // 45 µs with headroom is 58 µs: more than half the period.
        for _ in 0..WARMUP + 10 {
            t.observe(45 * US);
        }
        assert_eq!(t.margin(), 50 * US);
        assert_eq!(MarginTuner::new(MS, Margin::Fixed(2 * MS)).margin(), MS);
    }

    #[test]
    fn a_fixed_margin_never_changes_but_counts_overshoots() {
        let mut t = MarginTuner::new(MS, Margin::Fixed(50 * US));
        for k in 0..3 * WINDOW {
            t.observe(if k % 100 == 0 { 70 * US } else { 10 * US });
        }
        let r = t.stats();
        assert_eq!(t.margin(), 50 * US);
        assert_eq!(r.mode, "fixed");
        assert_eq!(
            (r.calibrated_ns, r.min_ns, r.max_ns),
            (None, 50 * US, 50 * US)
        );
        assert_eq!(r.overshot, 31);
        assert_eq!(r.mean_ns, 50_000.0);
        assert_eq!(MarginTuner::new(MS, Margin::Fixed(-5)).margin(), 0);
    }

    #[test]
    fn negative_overshoots_count_as_zero() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        for _ in 0..WARMUP {
            t.observe(-1_000);
        }
        assert_eq!(t.margin(), GUARD_NS);
    }
}
