//! The hybrid method's margin: how long before the expiry its sleep should end.
//!
//! The hybrid sleeps until `expiry − margin` and spins the rest. A sleep ends late by its
//! *overshoot* (the wake-up latency of that sleep: timer interrupt, idle exit, scheduling);
//! whenever the overshoot exceeds the margin, the spin starts after the expiry and the
//! wake-up is late. So the margin should sit just above a high percentile of the overshoot:
//! larger costs CPU (each period spins `margin − overshoot`), smaller costs precision.
//!
//! [`MarginTuner`] learns it while the run goes on, with no allocation after construction:
//! it keeps the last [`WINDOW`] overshoots in a ring, and every [`UPDATE_EVERY`] sleeps sets
//! the margin to the [`QUANTILE`] of that window plus a quarter plus [`GUARD_NS`]. The first
//! [`UPDATE_EVERY`] sleeps are the warm-up: they use a generous margin
//! ([`warmup_margin`]), and the first update is the calibrated margin. A fixed margin
//! (`--margin 100us`) never changes, but its overshoots are still counted.

use crate::time::{Nanos, NS_PER_US};
use serde::{Deserialize, Serialize};

/// Overshoots kept for the percentile: the last 1024 sleeps (about 1 s at 1 kHz).
pub const WINDOW: usize = 1024;
/// Sleeps between two margin updates, and the length of the warm-up.
pub const UPDATE_EVERY: usize = 256;
/// The overshoot percentile the margin is set from.
pub const QUANTILE: f64 = 0.995;
/// Added to the scaled percentile, ns: covers the spin's own first clock read and keeps a
/// floor when sleeps are very precise.
pub const GUARD_NS: Nanos = 2 * NS_PER_US;
/// The largest warm-up margin, ns.
pub const WARMUP_MARGIN_MAX_NS: Nanos = 500 * NS_PER_US;

/// How the hybrid's margin is chosen (`--margin`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Margin {
    /// Calibrated from the sleeps' measured overshoot and adapted during the run.
    #[default]
    Auto,
    /// This many ns, always (≥ 0; values above the period make the hybrid a busy-wait).
    Fixed(Nanos),
}

/// The margin used while the warm-up measures the overshoot: half the period, at most
/// [`WARMUP_MARGIN_MAX_NS`] (ns).
pub fn warmup_margin(period: Nanos) -> Nanos {
    (period / 2).clamp(0, WARMUP_MARGIN_MAX_NS)
}

/// What the margin was over a run, for the result file (all ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarginReport {
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

/// Learns the margin from measured overshoots (see the module docs). Pure logic: no clock,
/// no system call, no allocation after [`MarginTuner::new`].
#[derive(Debug, Clone)]
pub struct MarginTuner {
    auto: bool,
    period: Nanos,
    margin: Nanos,
    initial: Nanos,
    calibrated: Option<Nanos>,
    ring: Box<[Nanos; WINDOW]>,
    scratch: Box<[Nanos; WINDOW]>,
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
    /// A tuner for a run with `period` ns between expiries. Allocates its two windows
    /// (16 KiB); call it before the measuring loop.
    ///
    /// # Panics
    /// If `period` is not positive.
    pub fn new(period: Nanos, margin: Margin) -> Self {
        assert!(period > 0, "period must be positive");
        let (auto, initial) = match margin {
            Margin::Auto => (true, warmup_margin(period)),
            Margin::Fixed(m) => (false, m.max(0)),
        };
        MarginTuner {
            auto,
            period,
            margin: initial,
            initial,
            calibrated: None,
            ring: Box::new([0; WINDOW]),
            scratch: Box::new([0; WINDOW]),
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
    pub fn margin(&self) -> Nanos {
        self.margin
    }

    /// Records the overshoot of one sleep (its end minus the time it was asked to end, ns;
    /// negative values count as 0) and, every [`UPDATE_EVERY`] sleeps in `auto` mode,
    /// updates the margin.
    #[inline]
    pub fn observe(&mut self, overshoot: Nanos) {
        let s = overshoot.max(0);
        self.sleeps += 1;
        self.margin_sum += self.margin as i128;
        if s > self.margin {
            self.overshot += 1;
        }
        self.max_overshoot = self.max_overshoot.max(s);
        self.ring[self.next] = s;
        self.next = (self.next + 1) % WINDOW;
        self.filled = (self.filled + 1).min(WINDOW);
        self.since_update += 1;
        if self.auto && self.since_update >= UPDATE_EVERY {
            self.since_update = 0;
            self.update();
        }
    }

    /// Sets the margin from the window: [`QUANTILE`] of the overshoots, plus a quarter,
    /// plus [`GUARD_NS`], at most one period.
    fn update(&mut self) {
        let n = self.filled;
        let window = &mut self.scratch[..n];
        window.copy_from_slice(&self.ring[..n]);
        let rank = ((QUANTILE * n as f64).ceil() as usize).clamp(1, n) - 1;
        let (_, q, _) = window.select_nth_unstable(rank);
        let q = *q;
        let m = (q + q / 4 + GUARD_NS).min(self.period);
        self.margin = m;
        self.calibrated.get_or_insert(m);
        self.min_used = self.min_used.min(m);
        self.max_used = self.max_used.max(m);
    }

    /// What the margin was so far.
    pub fn report(&self) -> MarginReport {
        MarginReport {
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
    fn warm_up_margin_is_half_the_period_up_to_500_us() {
        assert_eq!(warmup_margin(200 * US), 100 * US);
        assert_eq!(warmup_margin(10 * MS), 500 * US);
        let t = MarginTuner::new(MS, Margin::Auto);
        assert_eq!(t.margin(), 500 * US);
    }

    #[test]
    fn calibration_sets_the_margin_from_the_warm_up_percentile() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        // 255 sleeps: still warming up.
        for k in 0..UPDATE_EVERY - 1 {
            t.observe(10 * US + (k % 10) as Nanos * US);
        }
        assert_eq!(t.margin(), 500 * US);
        assert_eq!(t.report().calibrated_ns, None);
        t.observe(10 * US);
        // Overshoots 10..=19 µs: p99.5 is 19 µs → 19 + 4.75 + 2 µs.
        let expected = 19 * US + 19 * US / 4 + GUARD_NS;
        assert_eq!(t.margin(), expected);
        assert_eq!(t.report().calibrated_ns, Some(expected));
    }

    #[test]
    fn the_margin_follows_a_change_of_overshoot_within_a_window() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        for _ in 0..WINDOW {
            t.observe(20 * US);
        }
        let quiet = t.margin();
        assert_eq!(quiet, 20 * US + 5 * US + GUARD_NS);
        // The machine gets noisier: overshoots of 80 µs. Once they fill more than 0.5 % of
        // the window the margin rises.
        for _ in 0..UPDATE_EVERY {
            t.observe(80 * US);
        }
        assert_eq!(t.margin(), 80 * US + 20 * US + GUARD_NS);
        // Quiet again: after a full window of quiet sleeps the margin comes back down.
        for _ in 0..WINDOW {
            t.observe(20 * US);
        }
        assert_eq!(t.margin(), quiet);
        let r = t.report();
        // The warm-up's 500 µs is the largest margin used.
        assert_eq!((r.min_ns, r.max_ns), (quiet, 500 * US));
        assert_eq!(r.max_overshoot_ns, 80 * US);
    }

    #[test]
    fn rare_stalls_do_not_move_the_margin() {
        let mut t = MarginTuner::new(MS, Margin::Auto);
        for k in 0..4 * WINDOW {
            // One 5 ms stall every 512 sleeps: 2 per window, below 0.5 %.
            t.observe(if k % 512 == 0 { 5 * MS } else { 30 * US });
        }
        assert_eq!(t.margin(), 30 * US + 30 * US / 4 + GUARD_NS);
        assert_eq!(t.report().overshot, 8);
    }

    #[test]
    fn the_margin_never_exceeds_the_period() {
        let mut t = MarginTuner::new(100 * US, Margin::Auto);
        for _ in 0..UPDATE_EVERY {
            t.observe(300 * US);
        }
        assert_eq!(t.margin(), 100 * US);
    }

    #[test]
    fn a_fixed_margin_never_changes_but_counts_overshoots() {
        let mut t = MarginTuner::new(MS, Margin::Fixed(50 * US));
        for k in 0..3 * WINDOW {
            t.observe(if k % 100 == 0 { 70 * US } else { 10 * US });
        }
        let r = t.report();
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
        for _ in 0..UPDATE_EVERY {
            t.observe(-1_000);
        }
        assert_eq!(t.margin(), GUARD_NS);
    }
}
