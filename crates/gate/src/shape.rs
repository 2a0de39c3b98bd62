//! Has the distribution moved towards higher latency — anywhere, not only at the chosen
//! quantiles? A one-sided two-sample Kolmogorov–Smirnov distance whose null distribution is
//! drawn by resampling *windows*, not wake-ups.
//!
//! The classical KS test takes every wake-up as independent; at 10⁶ wake-ups it then rejects
//! nearly every A/A pair, because two runs differ by more than sampling noise of independent
//! values (a noisy second moves thousands together). Here the statistic is `D⁺ = max_x
//! (F_base(x) − F_cand(x))` (how much more of the candidate lies above any latency), and its
//! distribution under "no change" comes from the stationary block bootstrap
//! ([`crate::bootstrap`]) over the pooled windows of both runs: two pseudo-runs of the
//! shorter run's length are drawn from the pool and their `D⁺` recorded, `resamples` times.
//! Drawing both at the shorter length makes the null spread at least that of the real pair,
//! so the test errs towards passing. The p-value is the share of pooled `D⁺` at least the
//! observed one minus the allowed distance. (KS: N. Smirnov, "Table for estimating the
//! goodness of fit of empirical distributions", Ann. Math. Statist. 19(2):279–281, 1948;
//! bootstrapping its null: Efron & Tibshirani 1993, §16.)
//!
//! With window histograms (interval logs) the distribution is that of every wake-up; with
//! window summaries (tickscope JSON) it is that of the windows' p99s — one value a second.

use crate::bootstrap::{draw, GateRng};
use crate::finding::{Decision, Finding};
use crate::grid::{Counts, Indexed};
use crate::pair::{Pair, Side};
use crate::rules::Rules;

/// The shape test of a prepared pair; `what` names what was compared ("every wake-up",
/// "the windows' p99").
pub fn shape(pair: &Pair, rules: &Rules, what: &str, rng: &mut GateRng) -> Finding {
    let method = format!(
        "one-sided KS distance of {what} (bins 5 % wide), null from {} block-bootstrap pseudo-pairs over the \
         pooled windows",
        rules.resamples
    );
    if pair.windows() < rules.min_windows {
        let f = Finding::inconclusive(
            "shape".into(),
            "KS distance",
            method,
            format!(
                "{} windows, fewer than the {} needed",
                pair.windows(),
                rules.min_windows
            ),
        );
        return Finding {
            allowed: rules.shape.max_distance,
            ..f
        };
    }
    let whole = |s: &Side| {
        let mut c = Counts::new(&pair.grid);
        s.windows.iter().enumerate().for_each(|(i, w)| c.add(i, w));
        c
    };
    let (observed, _) = whole(&pair.base).ks_distance(&whole(&pair.cand));
    let pooled: Vec<&Indexed> = pair.base.windows.iter().chain(&pair.cand.windows).collect();
    let weights: Vec<u64> = pair
        .base
        .weights
        .iter()
        .chain(&pair.cand.weights)
        .copied()
        .collect();
    let (mut a, mut b) = (Counts::new(&pair.grid), Counts::new(&pair.grid));
    let threshold = observed - rules.shape.max_distance;
    let mut at_least = 0usize;
    for _ in 0..rules.resamples {
        a.clear();
        b.clear();
        draw(&weights, pair.length, pair.block, rng, |i| {
            a.add(i, pooled[i])
        });
        draw(&weights, pair.length, pair.block, rng, |i| {
            b.add(i, pooled[i])
        });
        if a.ks_distance(&b).0 >= threshold {
            at_least += 1;
        }
    }
    Finding {
        name: "shape".into(),
        unit: "KS distance",
        baseline: None,
        candidate: None,
        change: Some(observed),
        interval: None,
        allowed: rules.shape.max_distance,
        p_regression: Some((at_least as f64 + 1.0) / (rules.resamples as f64 + 1.0)),
        p_improvement: None,
        method,
        inconclusive: None,
        level: None,
        decision: Decision::Pass,
    }
}
