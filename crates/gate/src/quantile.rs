//! Tail quantiles compared with confidence intervals: is the candidate's p99.99 more than
//! the allowed fraction above the baseline's?
//!
//! **With window histograms** (interval logs): both runs are resampled with the stationary
//! block bootstrap over windows ([`crate::bootstrap`]) to the same number of wake-ups (the
//! shorter run's), the quantile of each resample is read from its merged histogram, and the
//! log-ratio candidate/baseline of each pair of resamples forms the bootstrap distribution.
//! The p-value of "worse by more than `max_increase`" is the share of resampled ratios at or
//! below `1 + max_increase` (the percentile-bootstrap test: B. Efron and R. J. Tibshirani,
//! *An Introduction to the Bootstrap*, Chapman & Hall 1993, §16.4), with the usual +1 in
//! numerator and denominator so that it is never 0.
//!
//! **Without** (tickscope JSON keeps per-window summaries only; cyclictest and
//! jitterdebugger keep no windows): the interval of each quantile comes from the binomial
//! distribution of ranks (R. S. Woodruff, "Confidence intervals for medians and other
//! position measures", JASA 47(260):635–646, 1952): the wake-ups of rank `n·q ± √(n·q·(1−q))`
//! bound one standard error of the quantile, and the log-ratio is tested against the normal
//! distribution. That takes wake-ups as independent, which they are not, so the interval is
//! too narrow; such tests decide at a stricter level ([`crate::rules::Rules::unwindowed_strictness`]).

use crate::bootstrap::{draw, GateRng};
use crate::finding::{Decision, Finding};
use crate::grid::Counts;
use crate::pair::Pair;
use crate::rules::{quantile_name, QuantileRule, Rules};
use crate::series::{quantile_of, Series};
use tickscope_engine::time::Nanos;

/// A quantile value made usable in a ratio: at least 1 (ns), since an early wake-up can
/// make a low quantile 0 or negative.
fn positive(v: Nanos) -> f64 {
    (v as f64).max(1.0)
}

/// Wake-ups needed beyond quantile `q` for `min_tail` of them in a run of `n`.
fn enough(n: u64, q: f64, min_tail: u64) -> bool {
    (n as f64) * (1.0 - q) >= min_tail as f64
}

/// The quantile tests of a pair with window histograms, all quantiles on the same
/// resamples.
pub fn windowed(
    base: &Series,
    cand: &Series,
    pair: &Pair,
    rules: &Rules,
    rng: &mut GateRng,
) -> Vec<Finding> {
    let method = format!(
        "stationary block bootstrap of {} resamples over one-second windows (mean block {:.0} \
         windows), both runs at {} wake-ups",
        rules.resamples, pair.block, pair.length
    );
    let mut ratios: Vec<Vec<f64>> =
        vec![Vec::with_capacity(rules.resamples); rules.quantiles.len()];
    let judged: Vec<bool> = rules
        .quantiles
        .iter()
        .map(|r| enough(pair.length, r.quantile, rules.min_tail_samples))
        .collect();
    let few_windows = pair.windows() < rules.min_windows;
    if !few_windows && judged.iter().any(|&j| j) {
        let mut b = Counts::new(&pair.grid);
        let mut c = Counts::new(&pair.grid);
        for _ in 0..rules.resamples {
            b.clear();
            c.clear();
            draw(&pair.base.weights, pair.length, pair.block, rng, |i| {
                b.add(i, &pair.base.windows[i])
            });
            draw(&pair.cand.weights, pair.length, pair.block, rng, |i| {
                c.add(i, &pair.cand.windows[i])
            });
            for (k, r) in rules.quantiles.iter().enumerate() {
                let qb = b.quantile(r.quantile, &pair.grid, &pair.base.windows);
                let qc = c.quantile(r.quantile, &pair.grid, &pair.cand.windows);
                if let (Some(qb), Some(qc)) = (qb, qc) {
                    ratios[k].push((positive(qc) / positive(qb)).ln());
                }
            }
        }
    }
    rules
        .quantiles
        .iter()
        .zip(ratios)
        .zip(judged)
        .map(|((rule, mut r), judged)| {
            let name = quantile_name(rule.quantile);
            if few_windows {
                return Finding {
                    allowed: rule.max_increase,
                    ..Finding::inconclusive(
                        name,
                        "ns",
                        method.clone(),
                        format!(
                            "{} windows, fewer than the {} needed",
                            pair.windows(),
                            rules.min_windows
                        ),
                    )
                };
            }
            if !judged || r.is_empty() {
                return too_short(name, method.clone(), pair.length, rule, rules);
            }
            r.sort_by(f64::total_cmp);
            let limit = (1.0 + rule.max_increase).ln();
            let b = r.len() as f64;
            let at_or_below = r.partition_point(|&x| x <= limit) as f64;
            let at_or_above = (r.len() - r.partition_point(|&x| x < -limit)) as f64;
            let pick = |p: f64| r[((p * b) as usize).min(r.len() - 1)].exp() - 1.0;
            let alpha = rules.alpha();
            let mut f = figures(name, base, cand, rule, method.clone());
            f.interval = Some((pick(alpha / 2.0), pick(1.0 - alpha / 2.0)));
            f.p_regression = Some((at_or_below + 1.0) / (b + 1.0));
            f.p_improvement = Some((at_or_above + 1.0) / (b + 1.0));
            f
        })
        .collect()
}

/// A finding with the whole runs' quantiles and their ratio, to be completed by the test.
fn figures(
    name: String,
    base: &Series,
    cand: &Series,
    rule: &QuantileRule,
    method: String,
) -> Finding {
    let qb = quantile_of(&base.total, rule.quantile).map(positive);
    let qc = quantile_of(&cand.total, rule.quantile).map(positive);
    Finding {
        name,
        unit: "ns",
        baseline: qb,
        candidate: qc,
        change: qb.zip(qc).map(|(b, c)| c / b - 1.0),
        interval: None,
        allowed: rule.max_increase,
        p_regression: None,
        p_improvement: None,
        method,
        inconclusive: None,
        level: None,
        decision: Decision::Pass,
    }
}

fn too_short(name: String, method: String, n: u64, rule: &QuantileRule, rules: &Rules) -> Finding {
    let need = (rules.min_tail_samples as f64 / (1.0 - rule.quantile)).ceil();
    let f = Finding::inconclusive(
        name.clone(),
        "ns",
        method,
        format!(
            "{n} wake-ups in the shorter run; {name} needs at least {need:.0} \
             ({} beyond it)",
            rules.min_tail_samples
        ),
    );
    Finding {
        allowed: rule.max_increase,
        ..f
    }
}

/// One standard error of the log of quantile `q` of `hist` (ascending `(value, count)`, `n`
/// values) from the ranks `n·q ± √(n·q·(1−q))` (Woodruff 1952), at least the spread a bucket
/// of the histogram leaves (its width over √12).
fn log_se(hist: &[(Nanos, u64)], n: u64, q: f64) -> Option<f64> {
    let nf = n as f64;
    let sd = (nf * q * (1.0 - q)).sqrt();
    let at = |rank: f64| quantile_of(hist, (rank / nf).clamp(0.0, 1.0)).map(positive);
    let (lo, hi) = (at(nf * q - sd)?, at(nf * q + sd)?);
    let v = positive(quantile_of(hist, q)?);
    let below = hist
        .iter()
        .rev()
        .map(|b| positive(b.0))
        .find(|&x| x < v)
        .unwrap_or(0.0);
    let bucket = if below > 0.0 { (v / below).ln() } else { 1.0 };
    Some(((hi / lo).ln() / 2.0).max(bucket / 12f64.sqrt()))
}

/// The quantile tests from the runs' whole histograms, wake-ups taken as independent
/// (Woodruff's interval); p-values are multiplied by `rules.unwindowed_strictness` (capped
/// at 1) because that assumption makes them too small.
pub fn unwindowed(base: &Series, cand: &Series, rules: &Rules, why: &str) -> Vec<Finding> {
    let method = format!(
        "{why}: Woodruff rank interval with wake-ups taken as independent, \
         decided at α/{} (reduced power)",
        rules.unwindowed_strictness
    );
    let normal = statrs::distribution::Normal::standard();
    use statrs::distribution::ContinuousCDF;
    let n = base.samples.min(cand.samples);
    rules
        .quantiles
        .iter()
        .map(|rule| {
            let name = quantile_name(rule.quantile);
            if !enough(n, rule.quantile, rules.min_tail_samples) {
                return too_short(name, method.clone(), n, rule, rules);
            }
            let mut f = figures(name.clone(), base, cand, rule, method.clone());
            let ses = log_se(&base.total, base.samples, rule.quantile).zip(log_se(
                &cand.total,
                cand.samples,
                rule.quantile,
            ));
            let (Some((sb, sc)), Some(change)) = (ses, f.change) else {
                return Finding::inconclusive(name, "ns", method.clone(), "empty histogram".into());
            };
            let se = (sb * sb + sc * sc).sqrt();
            let d = (1.0 + change).ln();
            let limit = (1.0 + rule.max_increase).ln();
            let strict = |p: f64| (p * rules.unwindowed_strictness).min(1.0);
            let z = normal.inverse_cdf(1.0 - rules.alpha() / 2.0);
            f.interval = Some(((d - z * se).exp() - 1.0, (d + z * se).exp() - 1.0));
            f.p_regression = Some(strict(normal.sf((d - limit) / se)));
            f.p_improvement = Some(strict(normal.cdf((d + limit) / se)));
            f
        })
        .collect()
}
