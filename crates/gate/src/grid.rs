//! A common value grid for the windows of a baseline and a candidate, so that a resample's
//! histogram is a dense array of counts that windows are added into and quantiles read from
//! without allocating.

use tickscope_engine::time::Nanos;

/// The distinct values of a set of histograms, ascending; windows become lists of
/// `(index into the grid, count)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    values: Vec<Nanos>,
}

impl Grid {
    /// The grid of every value in `histograms`.
    pub fn new<'a>(histograms: impl IntoIterator<Item = &'a [(Nanos, u64)]>) -> Grid {
        let mut values: Vec<Nanos> = histograms
            .into_iter()
            .flat_map(|h| h.iter().map(|b| b.0))
            .collect();
        values.sort_unstable();
        values.dedup();
        Grid { values }
    }

    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the grid has no value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The value at grid index `i`.
    ///
    /// # Panics
    /// If `i` is not below [`Grid::len`].
    pub fn value(&self, i: usize) -> Nanos {
        self.values[i]
    }

    /// A histogram as `(grid index, count)`; values missing from the grid are left out.
    pub fn index(&self, histogram: &[(Nanos, u64)]) -> Vec<(u32, u64)> {
        histogram
            .iter()
            .filter_map(|&(v, c)| {
                let i = self.values.binary_search(&v).ok()?;
                Some((u32::try_from(i).ok()?, c))
            })
            .collect()
    }
}

/// Counts on a [`Grid`]: a resample's histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    counts: Vec<u64>,
    total: u64,
}

impl Counts {
    /// Zero counts on a grid of `len` values.
    pub fn new(len: usize) -> Counts {
        Counts {
            counts: vec![0; len],
            total: 0,
        }
    }

    /// Sets every count to 0.
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.total = 0;
    }

    /// Adds an indexed histogram ([`Grid::index`]).
    pub fn add(&mut self, indexed: &[(u32, u64)]) {
        for &(i, c) in indexed {
            self.counts[i as usize] += c;
            self.total += c;
        }
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The grid index of quantile `q` (0 ..= 1) by tickscope's rank rule (the bucket holding
    /// rank `max(1, ⌈q·n⌉)`), searched from the top since the gate reads tails. `None` when
    /// empty.
    pub fn quantile_index(&self, q: f64) -> Option<usize> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).clamp(1, self.total);
        // Values at or above the wanted one: total − rank + 1.
        let above = self.total - rank + 1;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate().rev() {
            seen += c;
            if seen >= above {
                return Some(i);
            }
        }
        Some(0)
    }

    /// The largest `F_self(x) − F_other(x)` over the grid (one-sided Kolmogorov–Smirnov
    /// distance: positive when `other` holds more mass at high values than `self`), and the
    /// largest `|F_self − F_other|`. Both 0 when either is empty.
    pub fn ks_distance(&self, other: &Counts) -> (f64, f64) {
        if self.total == 0 || other.total == 0 {
            return (0.0, 0.0);
        }
        let (na, nb) = (self.total as f64, other.total as f64);
        let (mut ca, mut cb) = (0u64, 0u64);
        let (mut plus, mut both) = (0.0f64, 0.0f64);
        for (a, b) in self.counts.iter().zip(&other.counts) {
            ca += a;
            cb += b;
            let d = ca as f64 / na - cb as f64 / nb;
            plus = plus.max(d);
            both = both.max(d.abs());
        }
        (plus, both)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_on_the_grid_follow_the_rank_rule() {
        let a: Vec<(Nanos, u64)> = vec![(1, 1), (2, 2), (10, 1)];
        let grid = Grid::new([&a[..]]);
        let mut c = Counts::new(grid.len());
        c.add(&grid.index(&a));
        let q = |q| grid.value(c.quantile_index(q).unwrap());
        for (x, want) in [(0.0, 1), (0.25, 1), (0.5, 2), (0.75, 2), (0.99, 10)] {
            assert_eq!(q(x), want);
            assert_eq!(Some(want), crate::series::quantile_of(&a, x));
        }
        c.clear();
        assert_eq!(c.quantile_index(0.5), None);
    }

    #[test]
    fn ks_distance_is_signed_towards_the_larger_other() {
        let low: Vec<(Nanos, u64)> = vec![(1, 5), (2, 5)];
        let high: Vec<(Nanos, u64)> = vec![(2, 5), (3, 5)];
        let grid = Grid::new([&low[..], &high[..]]);
        let (mut a, mut b) = (Counts::new(grid.len()), Counts::new(grid.len()));
        a.add(&grid.index(&low));
        b.add(&grid.index(&high));
        assert_eq!(a.ks_distance(&b), (0.5, 0.5));
        assert_eq!(b.ks_distance(&a), (0.0, 0.5));
        assert_eq!(a.ks_distance(&a), (0.0, 0.0));
    }
}
