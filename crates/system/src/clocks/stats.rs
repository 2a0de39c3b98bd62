//! The statistics of `tickscope clocks`, as pure functions of recorded numbers: no clock is
//! read here, so everything is tested against synthetic input.
//!
//! Percentiles of short, exact lists (batch means, after-idle pairs) are nearest-rank: the
//! value of rank ⌈q·n⌉ (at least 1) among the sorted values. The back-to-back deltas, which
//! can number in the millions, go into a [`SignedHistogram`] (HdrHistogram, 3 significant
//! digits, exact below 2048) allocated once, so recording them never allocates.

use super::{Access, CostStats, DeltaStats, PairStats};
use tickscope_engine::histogram::SignedHistogram;
use tickscope_engine::time::Nanos;

/// The value of rank ⌈q·n⌉ (clamped to 1..=n) in `sorted` (ascending); `q` in 0.0..=1.0.
///
/// # Panics
/// If `sorted` is empty.
pub fn nearest_rank(sorted: &[i64], q: f64) -> i64 {
    let n = sorted.len();
    let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1]
}

/// The cost of one read from the durations of batches of `reads_per_batch` reads each (ns):
/// median, p10, p90 and minimum of the batch means. Sorts `batch_ns` in place (no
/// allocation). `None` when there are no batches or `reads_per_batch` is 0.
pub fn cost_stats(batch_ns: &mut [Nanos], reads_per_batch: usize) -> Option<CostStats> {
    if batch_ns.is_empty() || reads_per_batch == 0 {
        return None;
    }
    batch_ns.sort_unstable();
    let per_read = |v: Nanos| v as f64 / reads_per_batch as f64;
    Some(CostStats {
        batches: batch_ns.len() as u64,
        reads_per_batch: reads_per_batch as u64,
        median_ns: per_read(nearest_rank(batch_ns, 0.5)),
        p10_ns: per_read(nearest_rank(batch_ns, 0.1)),
        p90_ns: per_read(nearest_rank(batch_ns, 0.9)),
        min_ns: per_read(batch_ns[0]),
    })
}

/// Statistics of after-idle pair deltas (ns), taken after sleeping `gap_ns` each. Sorts
/// `deltas` in place. `None` when empty.
pub fn pair_stats(deltas: &mut [Nanos], gap_ns: Nanos) -> Option<PairStats> {
    if deltas.is_empty() {
        return None;
    }
    deltas.sort_unstable();
    Some(PairStats {
        samples: deltas.len() as u64,
        gap_ns,
        min: deltas[0],
        p50: nearest_rank(deltas, 0.5),
        p90: nearest_rank(deltas, 0.9),
        max: deltas[deltas.len() - 1],
    })
}

/// Whether a library read that costs `library_ns` went through the vDSO, given that the same
/// read as a real system call costs `syscall_ns` (both medians, ns).
///
/// A vDSO read stays in user space (tens of ns); a system call pays kernel entry and exit on
/// top of the same work, and the vDSO falls back to exactly that call for clocks it cannot
/// serve (`lib/vdso/gettimeofday.c`: CPU-time clocks, or a clocksource without a vDSO
/// mode). So a library read costing at least half the system call's is taken to be one.
pub fn access_verdict(library_ns: f64, syscall_ns: f64) -> Access {
    if library_ns < 0.5 * syscall_ns {
        Access::Vdso
    } else {
        Access::Syscall
    }
}

/// Accumulates successive reads of one clock, arriving in runs of back-to-back reads, into
/// [`DeltaStats`]. Allocates its histogram once in [`DeltaAccumulator::new`]; adding never
/// allocates.
#[derive(Debug, Clone)]
pub struct DeltaAccumulator {
    hist: SignedHistogram,
    samples: u64,
    min: i64,
    max: i64,
    zero: u64,
    granularity: Option<i64>,
    backward: u64,
    last: Option<i64>,
}

impl Default for DeltaAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl DeltaAccumulator {
    /// An empty accumulator (allocates about 0.5 MiB for the histogram).
    pub fn new() -> Self {
        let mut acc = DeltaAccumulator {
            hist: SignedHistogram::new(),
            samples: 0,
            min: 0,
            max: 0,
            zero: 0,
            granularity: None,
            backward: 0,
            last: None,
        };
        acc.reset();
        acc
    }

    /// Forgets everything, keeping the allocation.
    pub fn reset(&mut self) {
        self.hist.reset();
        self.samples = 0;
        self.min = i64::MAX;
        self.max = i64::MIN;
        self.zero = 0;
        self.granularity = None;
        self.backward = 0;
        self.last = None;
    }

    /// Adds a run of reads taken back to back, in order. The deltas within the run enter the
    /// distribution; the step from the previous run's last read to this run's first counts
    /// only towards the granularity and the backward steps (other work lay between them).
    /// Differences wrap, so a counter crossing `i64::MAX` still gives the right step.
    pub fn add_run(&mut self, reads: &[i64]) {
        let Some(&first) = reads.first() else {
            return;
        };
        if let Some(last) = self.last {
            self.step(first.wrapping_sub(last));
        }
        for pair in reads.windows(2) {
            let d = pair[1].wrapping_sub(pair[0]);
            self.step(d);
            self.hist.record(d);
            self.samples += 1;
            self.min = self.min.min(d);
            self.max = self.max.max(d);
            self.zero += u64::from(d == 0);
        }
        self.last = Some(reads[reads.len() - 1]);
    }

    #[inline]
    fn step(&mut self, d: i64) {
        if d < 0 {
            self.backward += 1;
        } else if d > 0 && self.granularity.is_none_or(|g| d < g) {
            self.granularity = Some(d);
        }
    }

    /// The statistics so far; `None` until some run held two reads.
    pub fn summary(&self) -> Option<DeltaStats> {
        if self.samples == 0 {
            return None;
        }
        let q = |q: f64| {
            self.hist
                .value_at_quantile(q)
                .map_or(self.max, |v| v.clamp(self.min, self.max))
        };
        Some(DeltaStats {
            samples: self.samples,
            min: self.min,
            p50: q(0.5),
            p99: q(0.99),
            max: self.max,
            zero: self.zero,
            granularity: self.granularity,
            backward_steps: self.backward,
        })
    }
}

impl DeltaStats {
    /// The same statistics with every value multiplied by `unit_ns` (ns per unit, e.g. ns per
    /// TSC tick) and rounded to the nearest ns; a positive granularity stays at least 1 ns.
    /// Counts are unchanged.
    pub fn scaled(&self, unit_ns: f64) -> DeltaStats {
        let s = |v: i64| (v as f64 * unit_ns).round() as i64;
        DeltaStats {
            min: s(self.min),
            p50: s(self.p50),
            p99: s(self.p99),
            max: s(self.max),
            granularity: self.granularity.map(|g| s(g).max(1)),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deltas_of(runs: &[&[i64]]) -> Option<DeltaStats> {
        let mut acc = DeltaAccumulator::new();
        for r in runs {
            acc.add_run(r);
        }
        acc.summary()
    }

    #[test]
    fn back_to_back_deltas_of_a_known_run() {
        // Deltas 10, 10, 0, 10, -5, 15.
        let s = deltas_of(&[&[0, 10, 20, 20, 30, 25, 40]]).unwrap();
        assert_eq!((s.samples, s.min, s.max), (6, -5, 15));
        assert_eq!((s.p50, s.p99), (10, 15));
        assert_eq!((s.zero, s.granularity, s.backward_steps), (1, Some(10), 1));
    }

    #[test]
    fn run_boundaries_count_for_steps_but_not_for_the_distribution() {
        // Within runs: 10 and 20; across the boundary 10 → 5 steps back.
        let s = deltas_of(&[&[0, 10], &[5, 25]]).unwrap();
        assert_eq!((s.samples, s.min, s.max), (2, 10, 20));
        assert_eq!((s.backward_steps, s.granularity), (1, Some(10)));
        // A boundary step smaller than any in-run delta sets the granularity.
        let s = deltas_of(&[&[0, 0, 0], &[3, 3]]).unwrap();
        assert_eq!((s.samples, s.zero, s.granularity), (3, 3, Some(3)));
    }

    #[test]
    fn a_coarse_clock_mostly_repeats_and_steps_by_its_tick() {
        let tick = 4_000_000;
        let mut reads = vec![0i64; 1000];
        for (i, r) in reads.iter_mut().enumerate() {
            *r = if i < 600 { tick } else { 2 * tick };
        }
        let s = deltas_of(&[&reads]).unwrap();
        assert_eq!((s.min, s.p50, s.p99, s.max), (0, 0, 0, tick));
        assert_eq!(
            (s.zero, s.granularity, s.backward_steps),
            (998, Some(tick), 0)
        );
    }

    #[test]
    fn nothing_to_summarise() {
        assert_eq!(deltas_of(&[]), None);
        assert_eq!(deltas_of(&[&[5], &[]]), None);
        let mut acc = DeltaAccumulator::new();
        acc.add_run(&[1, 2, 3]);
        acc.reset();
        assert_eq!(acc.summary(), None);
        acc.add_run(&[7, 9]);
        assert_eq!(acc.summary().unwrap().granularity, Some(2));
    }

    #[test]
    fn a_counter_wrapping_past_i64_max_still_steps_forward() {
        let s = deltas_of(&[&[i64::MAX - 1, i64::MIN + 2]]).unwrap();
        assert_eq!((s.min, s.backward_steps), (4, 0));
    }

    #[test]
    fn ticks_scale_to_ns() {
        let s = deltas_of(&[&[0, 1, 25, 50]]).unwrap().scaled(0.4);
        assert_eq!((s.min, s.p50, s.max), (0, 10, 10));
        assert_eq!(s.granularity, Some(1));
    }

    #[test]
    fn cost_and_pair_percentiles_are_nearest_rank() {
        let mut batches: Vec<Nanos> = (1..=10).rev().map(|k| k * 1000).collect();
        let c = cost_stats(&mut batches, 100).unwrap();
        assert_eq!((c.batches, c.reads_per_batch), (10, 100));
        assert_eq!(
            (c.p10_ns, c.median_ns, c.p90_ns, c.min_ns),
            (10.0, 50.0, 90.0, 10.0)
        );
        assert_eq!(cost_stats(&mut [], 100), None);
        assert_eq!(cost_stats(&mut [5], 0), None);

        let mut pairs = vec![300, 100, 200];
        let p = pair_stats(&mut pairs, 1_000_000).unwrap();
        assert_eq!(
            (p.samples, p.min, p.p50, p.p90, p.max),
            (3, 100, 200, 300, 300)
        );
        assert_eq!(pair_stats(&mut [], 1), None);
        assert_eq!(nearest_rank(&[7], 0.0), 7);
    }

    #[test]
    fn vdso_or_syscall() {
        assert_eq!(access_verdict(23.0, 251.0), Access::Vdso);
        assert_eq!(access_verdict(545.0, 560.0), Access::Syscall);
        assert_eq!(access_verdict(300.0, 251.0), Access::Syscall);
    }
}
