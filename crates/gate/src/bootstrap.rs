//! The stationary block bootstrap over windows (Politis & Romano 1994), the resampling every
//! windowed test uses.
//!
//! Resampling single wake-ups would treat them as independent, which they are not: a noisy
//! second moves thousands of them together, so an i.i.d. bootstrap makes intervals far too
//! narrow. Resampling whole *blocks of consecutive windows* keeps the dependence within a
//! block (H. R. Künsch, "The jackknife and the bootstrap for general stationary
//! observations", Annals of Statistics 17(3):1217–1241, 1989). The stationary bootstrap
//! draws blocks of random, geometrically distributed length with mean `L`, wrapping around
//! the end, so that the resampled series is stationary itself (D. N. Politis and J. P.
//! Romano, "The stationary bootstrap", Journal of the American Statistical Association
//! 89(428):1303–1313, 1994). The default mean block length is `⌈n^(1/3)⌉` windows, the rate
//! that is optimal for variance and distribution estimates (P. Hall, J. L. Horowitz and
//! B.-Y. Jing, "On blocking rules for the bootstrap with dependent data", Biometrika
//! 82(3):561–574, 1995).
//!
//! Runs of unequal length are compared at **equal run length**: each resample draws windows
//! until it holds a given number of wake-ups (the shorter run's), so that a 10-minute
//! baseline and a 1-minute candidate are judged on quantiles of equally many wake-ups.

use rand::{RngExt, SeedableRng};

/// The generator every resample draws from: ChaCha8, seeded from the rules, so that the
/// same inputs and rules always give the same verdict.
pub type GateRng = rand::rngs::ChaCha8Rng;

/// A generator seeded with `seed`.
pub fn rng(seed: u64) -> GateRng {
    GateRng::seed_from_u64(seed)
}

/// The default mean block length for `n` windows: `⌈n^(1/3)⌉`, at least 1.
pub fn default_block_len(n: usize) -> f64 {
    (n as f64).cbrt().ceil().max(1.0)
}

/// Draws one stationary-bootstrap resample of a series of windows whose sizes (wake-ups, or
/// 1 each when windows are counted) are `weights`, calling `take(i)` for each window `i`
/// drawn, until the drawn windows hold at least `target` (the last window is taken whole).
/// `mean_block` is the mean block length in windows (≥ 1).
///
/// Nothing is drawn when `weights` is empty or sums to 0.
pub fn draw(
    weights: &[u64],
    target: u64,
    mean_block: f64,
    rng: &mut GateRng,
    mut take: impl FnMut(usize),
) {
    let n = weights.len();
    if n == 0 || weights.iter().all(|&w| w == 0) {
        return;
    }
    let restart = 1.0 / mean_block.max(1.0);
    let mut at = rng.random_range(0..n);
    let mut held = 0u64;
    while held < target {
        take(at);
        held += weights[at];
        at = if rng.random::<f64>() < restart {
            rng.random_range(0..n)
        } else {
            (at + 1) % n
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resample_reaches_its_target_and_keeps_blocks_together() {
        let weights = vec![10u64; 100];
        let mut r = rng(7);
        let mut drawn = Vec::new();
        draw(&weights, 500, 10.0, &mut r, |i| drawn.push(i));
        assert_eq!(drawn.len(), 50);
        // Mostly consecutive: with mean block length 10, about 1 in 10 steps jumps.
        let steps = drawn
            .windows(2)
            .filter(|p| p[1] == (p[0] + 1) % 100)
            .count();
        assert!(steps >= 30, "{steps} of 49 steps consecutive");
    }

    #[test]
    fn the_same_seed_draws_the_same_windows() {
        let weights = vec![1u64; 37];
        let run = |seed| {
            let mut v = Vec::new();
            draw(&weights, 100, 4.0, &mut rng(seed), |i| v.push(i));
            v
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn nothing_is_drawn_from_nothing() {
        let mut n = 0;
        draw(&[], 10, 2.0, &mut rng(1), |_| n += 1);
        draw(&[0, 0], 10, 2.0, &mut rng(1), |_| n += 1);
        assert_eq!(n, 0);
        assert_eq!(default_block_len(1000), 10.0);
        assert_eq!(default_block_len(0), 1.0);
    }
}
