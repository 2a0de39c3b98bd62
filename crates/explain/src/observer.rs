//! The observer effect of tracing, from the runs of one `--rounds` plan: every second run is
//! not traced (nothing of ours attached in the kernel, [`crate::backend::Capture::freeze`]),
//! and each traced run is paired with the untraced run right after it, seconds apart on the
//! same machine, so that the host's drift between far-apart runs cancels out of the pair.

use crate::section::{MedianInterval, ObserverEffect, PairedEffect};

/// One run's outcome: whether it was traced, its wait method's name (runs of different
/// methods are never paired) and its merged p50, p99 and maximum wake-up latency, ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLatency {
    /// Traced (`false`: nothing of ours attached).
    pub traced: bool,
    /// The wait method (`nanosleep-abs`, …).
    pub method: &'static str,
    /// p50, ns.
    pub p50: i64,
    /// p99, ns.
    pub p99: i64,
    /// Maximum, ns.
    pub max: i64,
}

/// Traced minus untraced: the means of each kind's p50, p99 and maximum, and the paired
/// differences with the median and its distribution-free 95 % interval. Each traced run is
/// paired with the first untraced run after it of the same method that no earlier traced
/// run took: with one method, runs 1 − 2, 3 − 4, …; with several (`--rounds` rotates them,
/// A B B A A B …), the next untraced run of its own method. `None` unless both kinds of run
/// exist.
pub fn observer_effect(rounds: &[RunLatency]) -> Option<ObserverEffect> {
    let mean = |traced: bool, f: fn(&RunLatency) -> i64| {
        let v: Vec<i64> = rounds
            .iter()
            .filter(|r| r.traced == traced)
            .map(f)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<i64>() as f64 / v.len() as f64)
    };
    let delta = |f: fn(&RunLatency) -> i64| Some(mean(true, f)? - mean(false, f)?);
    let mut taken = vec![false; rounds.len()];
    let mut pairs: Vec<(&RunLatency, &RunLatency)> = Vec::new();
    for (i, t) in rounds.iter().enumerate().filter(|(_, r)| r.traced) {
        let next = (i + 1..rounds.len())
            .find(|&j| !taken[j] && !rounds[j].traced && rounds[j].method == t.method);
        if let Some(j) = next {
            taken[j] = true;
            pairs.push((t, &rounds[j]));
        }
    }
    let paired = |f: fn(&RunLatency) -> i64| {
        let d: Vec<i64> = pairs.iter().map(|(t, u)| f(t) - f(u)).collect();
        median_interval(&d)
    };
    Some(ObserverEffect {
        traced_runs: rounds.iter().filter(|r| r.traced).count() as u32,
        untraced_runs: rounds.iter().filter(|r| !r.traced).count() as u32,
        p50_delta_ns: delta(|r| r.p50)?,
        p99_delta_ns: delta(|r| r.p99)?,
        max_delta_ns: delta(|r| r.max)?,
        paired: (!pairs.is_empty()).then(|| PairedEffect {
            pairs: pairs.len() as u32,
            p50: paired(|r| r.p50),
            p99: paired(|r| r.p99),
            max: paired(|r| r.max),
        }),
    })
}

/// The median of `d` (ns; the mean of the middle two for an even count) and, for 6 values or
/// more, its distribution-free 95 % interval: the order statistics k and n − k + 1 (from 1),
/// k the largest with P(Binomial(n, 1/2) < k) ≤ 2.5 % — the sign test's interval (W. J.
/// Conover, *Practical Nonparametric Statistics*, 3rd ed., Wiley 1999, §3.2). It assumes
/// only that the pairs are independent, not that the differences are normal: a host stall
/// in one run moves one difference, not the interval's ends. An empty `d` gives 0 and no
/// interval.
pub fn median_interval(d: &[i64]) -> MedianInterval {
    let mut s = d.to_vec();
    s.sort_unstable();
    let n = s.len();
    let median_ns = match n {
        0 => 0.0,
        _ if n % 2 == 1 => s[n / 2] as f64,
        _ => (s[n / 2 - 1] as f64 + s[n / 2] as f64) / 2.0,
    };
    let mut out = MedianInterval {
        median_ns,
        low_ns: None,
        high_ns: None,
    };
    if n < 6 {
        return out;
    }
    // P(X = j) for X ~ Binomial(n, 1/2), summed from j = 0 until the sum passes 2.5 %; n is
    // at most 500 pairs (`--rounds` ≤ 1000), so 2^-n stays a normal f64.
    let mut pmf = 0.5f64.powi(n as i32);
    let mut cdf = 0.0;
    let mut k = 0;
    loop {
        cdf += pmf;
        if cdf > 0.025 {
            break;
        }
        pmf *= (n - k) as f64 / (k + 1) as f64;
        k += 1;
    }
    if k >= 1 {
        out.low_ns = Some(s[k - 1] as f64);
        out.high_ns = Some(s[n - k] as f64);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(traced: bool, method: &'static str, p50: i64, p99: i64, max: i64) -> RunLatency {
        RunLatency {
            traced,
            method,
            p50,
            p99,
            max,
        }
    }

    #[test]
    fn observer_effect_is_traced_minus_untraced() {
        assert_eq!(observer_effect(&[run(true, "a", 10, 20, 30)]), None);
        let o = observer_effect(&[
            run(true, "a", 10, 20, 30),
            run(false, "a", 8, 20, 40),
            run(true, "a", 12, 20, 30),
        ])
        .unwrap();
        assert_eq!((o.traced_runs, o.untraced_runs), (2, 1));
        assert_eq!(
            (o.p50_delta_ns, o.p99_delta_ns, o.max_delta_ns),
            (3.0, 0.0, -10.0)
        );
        // One pair: runs 1 and 2; run 3 has no untraced run after it.
        let p = o.paired.unwrap();
        assert_eq!(p.pairs, 1);
        assert_eq!(p.p50.median_ns, 2.0);
        assert_eq!((p.p50.low_ns, p.p50.high_ns), (None, None));
        assert_eq!(p.max.median_ns, -10.0);
    }

    #[test]
    fn pairs_are_each_traced_run_and_the_untraced_one_after_it() {
        // Drift between pairs (+100 per pair) that a pair cancels: every pair differs by 3.
        let rounds: Vec<RunLatency> = (0..8)
            .flat_map(|i| {
                [
                    run(true, "a", 100 * i + 3, 0, 0),
                    run(false, "a", 100 * i, 0, 0),
                ]
            })
            .collect();
        let p = observer_effect(&rounds).unwrap().paired.unwrap();
        assert_eq!(p.pairs, 8);
        assert_eq!(p.p50.median_ns, 3.0);
        assert_eq!((p.p50.low_ns, p.p50.high_ns), (Some(3.0), Some(3.0)));
    }

    #[test]
    fn runs_of_different_methods_are_never_paired() {
        // --rounds with two methods rotates them: a b | b a | a b | b a, traced every
        // second run. a is 100 slower than b; tracing adds 1 to either.
        let order = ["a", "b", "b", "a", "a", "b", "b", "a"];
        let rounds: Vec<RunLatency> = order
            .iter()
            .enumerate()
            .map(|(i, &m)| {
                let traced = i % 2 == 0;
                let p50 = if m == "a" { 100 } else { 0 } + i64::from(traced);
                run(traced, m, p50, 0, 0)
            })
            .collect();
        let p = observer_effect(&rounds).unwrap().paired.unwrap();
        // a(0)−a(3), b(2)−b(5), a(4)−a(7); b(6) has no untraced b after it.
        assert_eq!(p.pairs, 3);
        assert_eq!(p.p50.median_ns, 1.0);
    }

    #[test]
    fn the_interval_is_the_sign_tests_order_statistics() {
        // n = 6: P(X = 0) = 1/64 ≤ 2.5 % < P(X ≤ 1) = 7/64, so k = 1: the extremes.
        let m = median_interval(&[5, 1, 4, 2, 6, 3]);
        assert_eq!(m.median_ns, 3.5);
        assert_eq!((m.low_ns, m.high_ns), (Some(1.0), Some(6.0)));
        // n = 20: P(X ≤ 5) = 2.07 % ≤ 2.5 % < P(X ≤ 6) = 5.77 %, so k = 6: the 6th and 15th.
        let d: Vec<i64> = (1..=20).collect();
        let m = median_interval(&d);
        assert_eq!(m.median_ns, 10.5);
        assert_eq!((m.low_ns, m.high_ns), (Some(6.0), Some(15.0)));
        // Fewer than 6: no interval; none at all: 0.
        assert_eq!(median_interval(&[1, 2, 3, 4, 5]).low_ns, None);
        assert_eq!(median_interval(&[]).median_ns, 0.0);
        // 500 pairs (the most --rounds gives) stay finite and ordered.
        let d: Vec<i64> = (0..500).collect();
        let m = median_interval(&d);
        let (lo, hi) = (m.low_ns.unwrap(), m.high_ns.unwrap());
        assert!(
            lo < m.median_ns && m.median_ns < hi,
            "{lo} {} {hi}",
            m.median_ns
        );
    }
}
