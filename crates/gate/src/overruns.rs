//! Overruns compared as counts: has the overrun rate (overruns per wake-up) grown by more
//! than allowed?
//!
//! Given the total `K = k_base + k_cand`, under equal rates the candidate's share is
//! binomial with `π = n_cand / (n_base + n_cand)` (the conditional test for two Poisson
//! rates: J. Przyborowski and H. Wileński, "Homogeneity of results in testing samples from
//! Poisson series", Biometrika 31(3/4):313–323, 1940). Testing "the candidate's rate is at
//! most `1 + max_increase` times the baseline's" moves π to
//! `n_c·(1+δ) / (n_b + n_c·(1+δ))`; the p-value is the exact binomial upper tail. The
//! interval of the rate ratio comes from the Clopper–Pearson interval of π (C. J. Clopper and
//! E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of the
//! binomial", Biometrika 26(4):404–413, 1934), mapped through `ratio = π/(1−π) · n_b/n_c`.
//!
//! Overruns come in bursts, so counting them as independent makes the test eager; the
//! default allowed increase (the rate may double) leaves room for that.

use crate::finding::{Decision, Finding};
use crate::rules::Rules;
use statrs::distribution::{Beta, Binomial, ContinuousCDF, DiscreteCDF};

/// The Clopper–Pearson interval of a binomial proportion, `k` successes of `n`, two-sided at
/// level `alpha`. `None` when `n` is 0.
pub fn clopper_pearson(k: u64, n: u64, alpha: f64) -> Option<(f64, f64)> {
    if n == 0 || k > n {
        return None;
    }
    let (kf, nf) = (k as f64, n as f64);
    let lo = if k == 0 {
        0.0
    } else {
        Beta::new(kf, nf - kf + 1.0).ok()?.inverse_cdf(alpha / 2.0)
    };
    let hi = if k == n {
        1.0
    } else {
        Beta::new(kf + 1.0, nf - kf)
            .ok()?
            .inverse_cdf(1.0 - alpha / 2.0)
    };
    Some((lo, hi))
}

/// The overrun test: `(overruns, wake-ups)` of the baseline and the candidate.
pub fn overruns(base: (u64, u64), cand: (u64, u64), rules: &Rules) -> Finding {
    let ((kb, nb), (kc, nc)) = (base, cand);
    let method = "conditional binomial test of the overrun counts, Clopper–Pearson interval \
                  of the rate ratio (overruns taken as independent)"
        .to_string();
    let rate = |k: u64, n: u64| k as f64 / n.max(1) as f64;
    let mut f = Finding {
        name: "overruns".into(),
        unit: "per wake-up",
        baseline: Some(rate(kb, nb)),
        candidate: Some(rate(kc, nc)),
        change: None,
        interval: None,
        allowed: rules.overruns.max_increase,
        p_regression: Some(1.0),
        p_improvement: None,
        method,
        inconclusive: None,
        level: None,
        decision: Decision::Pass,
    };
    let k = kb + kc;
    if k == 0 || nb == 0 || nc == 0 {
        return f;
    }
    let (nbf, ncf) = (nb as f64, nc as f64);
    if kb > 0 {
        f.change = Some(rate(kc, nc) / rate(kb, nb) - 1.0);
    }
    let to_ratio = |p: f64| {
        if p >= 1.0 {
            f64::INFINITY
        } else {
            p / (1.0 - p) * nbf / ncf - 1.0
        }
    };
    f.interval = clopper_pearson(kc, k, rules.alpha()).map(|(lo, hi)| (to_ratio(lo), to_ratio(hi)));
    let grown = ncf * (1.0 + rules.overruns.max_increase);
    let pi = grown / (nbf + grown);
    if kc > 0 {
        if let Ok(b) = Binomial::new(pi, k) {
            // P(X ≥ kc) = 1 − P(X ≤ kc − 1).
            f.p_regression = Some(b.sf(kc - 1).clamp(f64::MIN_POSITIVE, 1.0));
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_matches_published_values() {
        // 0 of 10: upper limit 1 − 0.025^(1/10) = 0.3085 (exact for k = 0).
        let (lo, hi) = clopper_pearson(0, 10, 0.05).unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - 0.30850).abs() < 1e-4, "{hi}");
        // 5 of 10: 0.1871 .. 0.8129 (Clopper & Pearson's tables; R binom.test).
        let (lo, hi) = clopper_pearson(5, 10, 0.05).unwrap();
        assert!(
            (lo - 0.18709).abs() < 1e-4 && (hi - 0.81291).abs() < 1e-4,
            "{lo} {hi}"
        );
        assert_eq!(clopper_pearson(1, 0, 0.05), None);
    }

    #[test]
    fn more_overruns_than_allowed_fail_and_none_pass() {
        let r = Rules::default();
        let none = overruns((0, 1_000_000), (0, 1_000_000), &r);
        assert_eq!(none.p_regression, Some(1.0));
        let same = overruns((50, 1_000_000), (55, 1_000_000), &r);
        assert!(same.p_regression.unwrap() > 0.5);
        let worse = overruns((50, 1_000_000), (400, 1_000_000), &r);
        assert!(worse.p_regression.unwrap() < 1e-6);
        let (lo, _) = worse.interval.unwrap();
        assert!(lo > 4.0, "{lo}");
        // A baseline without overruns: any count in the candidate is judged by the test.
        let first = overruns((0, 1_000_000), (60, 1_000_000), &r);
        assert!(first.p_regression.unwrap() < 1e-6 && first.change.is_none());
    }
}
