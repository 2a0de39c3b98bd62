//! A common value grid for the windows of a baseline and a candidate, and the histogram of
//! one resample on it — built so that a resample costs little: the gate draws thousands.
//!
//! Every value of the pair's windows gets a **fine** index (the source's buckets: 1/128 of
//! the value for tickscope, 1 µs for cyclictest) and a **coarse** one (bins 5 % wide). A
//! resample adds each drawn window's coarse counts (a few dozen per window); a quantile is
//! found in two steps — the coarse bin that holds its rank, then, adding only that bin's fine
//! counts of the drawn windows, the fine bucket — so that its value is exact at the source's
//! resolution. The shape test's distance is taken on the coarse bins.

use tickscope_engine::time::Nanos;

/// Relative width of a coarse bin: 5 %.
pub const COARSE_WIDTH: f64 = 0.05;

/// The distinct values of a set of histograms, ascending, with their coarse bins.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    values: Vec<Nanos>,
    /// Coarse bin of each fine index (ascending, from 0, without gaps).
    coarse_of: Vec<u32>,
    /// First fine index of each coarse bin, and one past the last bin's end.
    coarse_start: Vec<u32>,
}

/// One window's histogram on a [`Grid`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Indexed {
    /// `(fine index, count)`, ascending.
    pub fine: Vec<(u32, u64)>,
    /// `(coarse bin, count, first, end)`: the bin's count and its entries `fine[first..end]`.
    pub coarse: Vec<(u32, u64, u32, u32)>,
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
        let step = (1.0 + COARSE_WIDTH).ln();
        let raw = |v: Nanos| ((v.max(1) as f64).ln() / step).floor() as i64;
        let mut coarse_of = Vec::with_capacity(values.len());
        let mut coarse_start = Vec::new();
        let mut last = None;
        for (i, &v) in values.iter().enumerate() {
            let r = raw(v);
            if last != Some(r) {
                coarse_start.push(i as u32);
                last = Some(r);
            }
            coarse_of.push(coarse_start.len() as u32 - 1);
        }
        coarse_start.push(values.len() as u32);
        Grid {
            values,
            coarse_of,
            coarse_start,
        }
    }

    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the grid has no value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Number of coarse bins.
    pub fn coarse_len(&self) -> usize {
        self.coarse_start.len() - 1
    }

    /// The value at fine index `i`.
    ///
    /// # Panics
    /// If `i` is not below [`Grid::len`].
    pub fn value(&self, i: usize) -> Nanos {
        self.values[i]
    }

    /// A histogram on the grid; values missing from the grid are left out.
    pub fn index(&self, histogram: &[(Nanos, u64)]) -> Indexed {
        let mut fine: Vec<(u32, u64)> = histogram
            .iter()
            .filter_map(|&(v, c)| {
                let i = self.values.binary_search(&v).ok()?;
                Some((i as u32, c))
            })
            .filter(|b| b.1 > 0)
            .collect();
        fine.sort_unstable();
        let mut coarse: Vec<(u32, u64, u32, u32)> = Vec::new();
        for (k, &(i, c)) in fine.iter().enumerate() {
            let bin = self.coarse_of[i as usize];
            match coarse.last_mut() {
                Some(last) if last.0 == bin => {
                    last.1 += c;
                    last.3 = k as u32 + 1;
                }
                _ => coarse.push((bin, c, k as u32, k as u32 + 1)),
            }
        }
        Indexed { fine, coarse }
    }
}

/// The histogram of one resample: coarse counts, and which windows were drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    coarse: Vec<u64>,
    total: u64,
    drawn: Vec<u32>,
    scratch: Vec<u64>,
}

impl Counts {
    /// Zero counts on `grid`.
    pub fn new(grid: &Grid) -> Counts {
        Counts {
            coarse: vec![0; grid.coarse_len()],
            total: 0,
            drawn: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Sets every count to 0 and forgets the drawn windows.
    pub fn clear(&mut self) {
        self.coarse.fill(0);
        self.total = 0;
        self.drawn.clear();
    }

    /// Adds window `id` (its histogram `w`) to the resample.
    pub fn add(&mut self, id: usize, w: &Indexed) {
        for &(bin, c, _, _) in &w.coarse {
            self.coarse[bin as usize] += c;
            self.total += c;
        }
        self.drawn.push(id as u32);
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The value of quantile `q` (0 ..= 1) by tickscope's rank rule (the bucket holding rank
    /// `max(1, ⌈q·n⌉)`), the drawn windows being `windows` (the same slice they were added
    /// from). `None` when empty.
    pub fn quantile(&mut self, q: f64, grid: &Grid, windows: &[Indexed]) -> Option<Nanos> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).clamp(1, self.total);
        // Values at or above the wanted one: total − rank + 1; find their coarse bin.
        let mut above = self.total - rank + 1;
        let mut bin = 0;
        for (b, &c) in self.coarse.iter().enumerate().rev() {
            if c >= above {
                bin = b;
                break;
            }
            above -= c;
        }
        let (first, end) = (
            grid.coarse_start[bin] as usize,
            grid.coarse_start[bin + 1] as usize,
        );
        self.scratch.clear();
        self.scratch.resize(end - first, 0);
        for &id in &self.drawn {
            let w = &windows[id as usize];
            if let Ok(k) = w.coarse.binary_search_by_key(&(bin as u32), |e| e.0) {
                let (_, _, a, b) = w.coarse[k];
                for &(i, c) in &w.fine[a as usize..b as usize] {
                    self.scratch[i as usize - first] += c;
                }
            }
        }
        let mut seen = 0;
        for (k, &c) in self.scratch.iter().enumerate().rev() {
            seen += c;
            if seen >= above {
                return Some(grid.value(first + k));
            }
        }
        Some(grid.value(first))
    }

    /// The largest `F_self(x) − F_other(x)` over the coarse bins (one-sided
    /// Kolmogorov–Smirnov distance: positive when `other` holds more mass at high values
    /// than `self`), and the largest `|F_self − F_other|`. Both 0 when either is empty.
    pub fn ks_distance(&self, other: &Counts) -> (f64, f64) {
        if self.total == 0 || other.total == 0 {
            return (0.0, 0.0);
        }
        let (na, nb) = (self.total as f64, other.total as f64);
        let (mut ca, mut cb) = (0u64, 0u64);
        let (mut plus, mut both) = (0.0f64, 0.0f64);
        for (a, b) in self.coarse.iter().zip(&other.coarse) {
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

    fn counts_of(grid: &Grid, hs: &[Vec<(Nanos, u64)>]) -> (Counts, Vec<Indexed>) {
        let windows: Vec<Indexed> = hs.iter().map(|h| grid.index(h)).collect();
        let mut c = Counts::new(grid);
        for (i, w) in windows.iter().enumerate() {
            c.add(i, w);
        }
        (c, windows)
    }

    #[test]
    fn quantiles_on_the_grid_follow_the_rank_rule() {
        // Values in several coarse bins and several fine buckets within one bin.
        let a: Vec<(Nanos, u64)> = vec![(1, 1), (2, 2), (10, 1), (1000, 3), (1010, 2), (1020, 1)];
        let b: Vec<(Nanos, u64)> = vec![(1010, 5), (5000, 1)];
        let grid = Grid::new([&a[..], &b[..]]);
        let (mut c, windows) = counts_of(&grid, &[a.clone(), b.clone()]);
        let mut all: Vec<(Nanos, u64)> = a.iter().chain(&b).copied().collect();
        all.sort();
        for q in [0.0, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.99, 1.0] {
            assert_eq!(
                c.quantile(q, &grid, &windows),
                crate::series::quantile_of(&all, q),
                "q = {q}"
            );
        }
        c.clear();
        assert_eq!(c.quantile(0.5, &grid, &windows), None);
    }

    #[test]
    fn a_window_drawn_twice_counts_twice() {
        let a: Vec<(Nanos, u64)> = vec![(100, 9), (200, 1)];
        let grid = Grid::new([&a[..]]);
        let w = vec![grid.index(&a)];
        let mut c = Counts::new(&grid);
        c.add(0, &w[0]);
        c.add(0, &w[0]);
        assert_eq!(c.total(), 20);
        // Ranks 1-18 are 100s, 19 and 20 are 200s.
        assert_eq!(c.quantile(0.9, &grid, &w), Some(100));
        assert_eq!(c.quantile(0.91, &grid, &w), Some(200));
    }

    #[test]
    fn ks_distance_is_signed_towards_the_larger_other() {
        let low: Vec<(Nanos, u64)> = vec![(100, 5), (200, 5)];
        let high: Vec<(Nanos, u64)> = vec![(200, 5), (300, 5)];
        let grid = Grid::new([&low[..], &high[..]]);
        let (a, _) = counts_of(&grid, &[low]);
        let (b, _) = counts_of(&grid, &[high]);
        assert_eq!(a.ks_distance(&b), (0.5, 0.5));
        assert_eq!(b.ks_distance(&a), (0.0, 0.5));
        assert_eq!(a.ks_distance(&a), (0.0, 0.0));
    }
}
