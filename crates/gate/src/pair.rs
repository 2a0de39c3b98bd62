//! A baseline and a candidate prepared for resampling: their windows on one value grid
//! ([`crate::grid`]), the run length they are compared at and the block length.

use crate::bootstrap::default_block_len;
use crate::grid::{Grid, Indexed};
use crate::rules::Rules;
use crate::series::{Series, WindowKind};

/// One side's windows, indexed on the pair's grid.
#[derive(Debug, Clone)]
pub struct Side {
    /// Each window's histogram on the grid.
    pub windows: Vec<Indexed>,
    /// Each window's wake-ups.
    pub weights: Vec<u64>,
}

/// Both sides of a comparison, windows with histograms.
#[derive(Debug, Clone)]
pub struct Pair {
    /// The values of both sides' windows.
    pub grid: Grid,
    /// The baseline.
    pub base: Side,
    /// The candidate.
    pub cand: Side,
    /// Wake-ups each resample holds: the shorter run's.
    pub length: u64,
    /// Mean block length, windows.
    pub block: f64,
}

impl Pair {
    /// The pair of two series whose windows carry histograms ([`WindowKind::Histograms`]);
    /// `None` otherwise.
    pub fn of_histograms(base: &Series, cand: &Series, rules: &Rules) -> Option<Pair> {
        if base.window_kind != WindowKind::Histograms || cand.window_kind != WindowKind::Histograms
        {
            return None;
        }
        let grid = Grid::new(
            base.windows
                .iter()
                .chain(&cand.windows)
                .map(|w| &w.histogram[..]),
        );
        let side = |s: &Series| Side {
            windows: s.windows.iter().map(|w| grid.index(&w.histogram)).collect(),
            weights: s.windows.iter().map(|w| w.samples).collect(),
        };
        let (b, c) = (side(base), side(cand));
        Some(Pair::new(grid, b, c, rules))
    }

    /// The pair of two series compared by each window's p99 (one value per window, windows
    /// counted, not wake-ups); `None` when a side has a window without a p99 or no windows.
    pub fn of_window_p99(base: &Series, cand: &Series, rules: &Rules) -> Option<Pair> {
        let p99s = |s: &Series| -> Option<Vec<(i64, u64)>> {
            s.windows.iter().map(|w| w.p99.map(|v| (v, 1))).collect()
        };
        let (b, c) = (p99s(base)?, p99s(cand)?);
        if b.is_empty() || c.is_empty() {
            return None;
        }
        let grid = Grid::new(b.iter().chain(&c).map(std::slice::from_ref));
        let side = |v: &[(i64, u64)]| Side {
            windows: v
                .iter()
                .map(|x| grid.index(std::slice::from_ref(x)))
                .collect(),
            weights: vec![1; v.len()],
        };
        let (bs, cs) = (side(&b), side(&c));
        Some(Pair::new(grid, bs, cs, rules))
    }

    fn new(grid: Grid, base: Side, cand: Side, rules: &Rules) -> Pair {
        let total = |s: &Side| s.weights.iter().sum::<u64>();
        let length = total(&base).min(total(&cand));
        let n = base.windows.len().min(cand.windows.len());
        let block = rules.block_windows.unwrap_or_else(|| default_block_len(n));
        Pair {
            grid,
            base,
            cand,
            length,
            block,
        }
    }

    /// The fewer windows of the two sides.
    pub fn windows(&self) -> usize {
        self.base.windows.len().min(self.cand.windows.len())
    }
}
