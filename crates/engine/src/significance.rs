//! Is a difference between two sets of measurements more than noise? One place for the
//! statistics every A/B decision in tickscope uses (`doctor --measure` today; a regression
//! gate can use the same).
//!
//! The test is the two-sided **Mann–Whitney U test** (Wilcoxon rank-sum test): it asks
//! whether a value from one sample tends to be larger than one from the other, without
//! assuming any distribution — wake-up latencies are far from normal. Its inputs are one
//! number per run (for example each round's p99), so that the unit of replication is the
//! run, not the wake-up: wake-ups within a run are not independent (one noisy second moves
//! thousands of them), runs interleaved in time are close to it.
//!
//! * Ties get mid-ranks.
//! * With at most 60 values in all (`EXACT_MAX_TOTAL`), the p-value is **exact**: the
//!   distribution of the rank sum over every way of splitting the pooled mid-ranks into two
//!   groups of the given sizes, counted by dynamic programming (exact with ties too).
//! * Above, the normal approximation with the tie correction of the variance and a
//!   continuity correction of ½.
//!
//! Sources: H. B. Mann and D. R. Whitney, "On a Test of Whether one of Two Random Variables
//! is Stochastically Larger than the Other", Annals of Mathematical Statistics 18(1):50–60,
//! 1947; M. Hollander, D. A. Wolfe and E. Chicken, *Nonparametric Statistical Methods*, 3rd
//! ed., Wiley 2014, §4.1 (the rank-sum statistic, its exact null distribution, the large-
//! sample approximation with ties).

/// The significance level tickscope uses for "a measurable effect": 0.05 (two-sided).
pub(crate) const ALPHA: f64 = 0.05;

/// The largest `n1 + n2` for which [`mann_whitney`] computes the exact p-value.
pub(crate) const EXACT_MAX_TOTAL: usize = 60;

/// The result of [`mann_whitney`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: the number of pairs (a, b) with a > b, ties counting ½;
    /// 0 ..= n1·n2. Above n1·n2/2, values of the first sample tend to be larger.
    pub u: f64,
    /// Two-sided p-value, 0 < p ≤ 1: how often a difference at least this large would occur
    /// if both samples came from the same distribution.
    pub p: f64,
    /// Whether `p` is exact (small samples) rather than the normal approximation.
    pub exact: bool,
}

impl MannWhitney {
    /// Whether the difference is significant at the 0.05 level (`ALPHA`).
    pub fn significant(&self) -> bool {
        self.p < ALPHA
    }
}

/// The two-sided Mann–Whitney U test of `a` against `b` (any unit, the same for both).
/// `None` when either sample is empty or holds a NaN.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    // Pool, sort, and give ties the mean of their ranks; ranks are kept doubled (2·rank) so
    // that mid-ranks stay integers.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, true))
        .chain(b.iter().map(|&v| (v, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let mut rank2 = vec![0u64; n];
    let mut tie_term = 0.0; // Σ (t³ − t) over groups of ties
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j share their mean (i+1+j)/2; doubled: i+1+j.
        for r in &mut rank2[i..j] {
            *r = (i + 1 + j) as u64;
        }
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let w2: u64 = pooled
        .iter()
        .zip(&rank2)
        .filter(|(p, _)| p.1)
        .map(|(_, r)| r)
        .sum();
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let u = w2 as f64 / 2.0 - n1f * (n1f + 1.0) / 2.0;
    let mean_u = n1f * n2f / 2.0;
    if n <= EXACT_MAX_TOTAL {
        let p = exact_p(&rank2, n1, w2, n1 as u64 * (n as u64 + 1));
        return Some(MannWhitney { u, p, exact: true });
    }
    let nf = n as f64;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    let p = if var <= 0.0 {
        1.0
    } else {
        let d = ((u - mean_u).abs() - 0.5).max(0.0);
        (2.0 * normal_upper_tail(d / var.sqrt())).min(1.0)
    };
    Some(MannWhitney { u, p, exact: false })
}

/// The exact two-sided p-value: the share of the C(n, n1) ways of choosing `n1` of the
/// doubled ranks `rank2` whose sum lies at least as far from its mean `mean2` (n1·(n+1), the
/// doubled mean rank sum) as the observed doubled rank sum `w2`.
fn exact_p(rank2: &[u64], n1: usize, w2: u64, mean2: u64) -> f64 {
    let max_sum: u64 = rank2.iter().sum();
    let width = max_sum as usize + 1;
    // ways[k][s]: subsets of size k of the ranks seen so far with doubled rank sum s.
    let mut ways = vec![vec![0u128; width]; n1 + 1];
    ways[0][0] = 1;
    for &r in rank2 {
        let r = r as usize;
        for k in (1..=n1).rev() {
            let (lower, upper) = ways.split_at_mut(k);
            let (from, to) = (&lower[k - 1], &mut upper[0]);
            for s in (r..width).rev() {
                to[s] += from[s - r];
            }
        }
    }
    // |s − mean2| ≥ |w2 − mean2|, all in integers.
    let dist = |s: u64| s.abs_diff(mean2);
    let observed = dist(w2);
    let (mut extreme, mut total) = (0u128, 0u128);
    for (s, &count) in ways[n1].iter().enumerate() {
        total += count;
        if dist(s as u64) >= observed {
            extreme += count;
        }
    }
    if total == 0 {
        return 1.0;
    }
    (extreme as f64 / total as f64).min(1.0)
}

/// P(Z > z) for a standard normal Z: ½·erfc(z/√2).
fn normal_upper_tail(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty
/// or holding a NaN.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(match v.len() % 2 {
        1 => v[m],
        _ => (v[m - 1] + v[m]) / 2.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_separation_of_five_and_five_is_2_of_252() {
        // Exact: only the two most extreme of C(10,5) = 252 splits are as far from the mean.
        let r = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 0.0);
        assert!((r.p - 2.0 / 252.0).abs() < 1e-12, "{}", r.p);
        assert!(r.significant());
        let r = mann_whitney(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(r.u, 25.0);
        assert!((r.p - 2.0 / 252.0).abs() < 1e-12);
    }

    #[test]
    fn two_rounds_each_can_never_be_significant() {
        // C(4,2) = 6 splits: the most extreme has p = 2/6.
        let r = mann_whitney(&[1.0, 2.0], &[100.0, 200.0]).unwrap();
        assert!((r.p - 1.0 / 3.0).abs() < 1e-12);
        assert!(!r.significant());
    }

    #[test]
    fn identical_samples_give_p_one() {
        let r = mann_whitney(&[5.0; 4], &[5.0; 4]).unwrap();
        assert_eq!(r.p, 1.0);
        assert_eq!(r.u, 8.0);
    }

    #[test]
    fn interleaved_samples_are_not_significant() {
        let r = mann_whitney(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(r.p > 0.5, "{}", r.p);
    }

    #[test]
    fn a_textbook_value_with_ties() {
        // a = 1,2,2,3 and b = 2,3,4,5: pooled mid-ranks 1, 3,3,3, 5.5,5.5, 7, 8; W(a) = 12.5,
        // U = 2.5; the exact p against the enumeration of the C(8,4) = 70 splits.
        let r = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(r.u, 2.5);
        assert!((r.p - brute_force(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0])).abs() < 1e-12);
    }

    /// The exact p-value by listing every split (for the test only).
    fn brute_force(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let n = pooled.len();
        let u_of = |mask: u32| -> f64 {
            let mut u = 0.0;
            for i in (0..n).filter(|i| mask & (1 << i) != 0) {
                for j in (0..n).filter(|j| mask & (1 << j) == 0) {
                    u += match pooled[i].partial_cmp(&pooled[j]).unwrap() {
                        std::cmp::Ordering::Greater => 1.0,
                        std::cmp::Ordering::Equal => 0.5,
                        std::cmp::Ordering::Less => 0.0,
                    };
                }
            }
            u
        };
        let mean = (a.len() * b.len()) as f64 / 2.0;
        let observed = (u_of((1 << a.len()) - 1) - mean).abs();
        let splits: Vec<u32> = (0..1u32 << n)
            .filter(|m| m.count_ones() as usize == a.len())
            .collect();
        let extreme = splits
            .iter()
            .filter(|&&m| (u_of(m) - mean).abs() >= observed - 1e-9)
            .count();
        extreme as f64 / splits.len() as f64
    }

    #[test]
    fn exact_matches_brute_force_on_small_samples() {
        let cases: &[(&[f64], &[f64])] = &[
            (&[3.0, 1.0, 4.0], &[1.0, 5.0, 9.0, 2.0]),
            (&[10.0, 10.0, 12.0], &[10.0, 11.0, 11.0]),
            (&[7.0], &[1.0, 2.0, 3.0]),
        ];
        for (a, b) in cases {
            let r = mann_whitney(a, b).unwrap();
            assert!(
                (r.p - brute_force(a, b)).abs() < 1e-12,
                "{a:?} {b:?}: {}",
                r.p
            );
        }
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (0..40).map(f64::from).collect();
        let b: Vec<f64> = (20..60).map(f64::from).collect();
        let r = mann_whitney(&a, &b).unwrap();
        assert!(!r.exact);
        assert!(r.significant(), "{}", r.p);
        let r = mann_whitney(&a, &a).unwrap();
        assert!(r.p > 0.9, "{}", r.p);
    }

    #[test]
    fn empty_or_nan_is_none() {
        assert!(mann_whitney(&[], &[1.0]).is_none());
        assert!(mann_whitney(&[f64::NAN], &[1.0]).is_none());
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
