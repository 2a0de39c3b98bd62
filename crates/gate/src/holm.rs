//! Holm's step-down correction for several tests that decide together (S. Holm, "A simple
//! sequentially rejective multiple test procedure", Scandinavian Journal of Statistics
//! 6(2):65–70, 1979): the chance that *any* of the family rejects when nothing changed stays
//! at most α, with more power than Bonferroni's α/m for each.
//!
//! Sort the m p-values ascending; compare the k-th smallest (k from 1) with α/(m − k + 1);
//! reject while it is below, stop at the first that is not.

/// Which of `p` are rejected at family-wise level `alpha`, and the level each is compared
/// with in the step-down order (also for those after the first non-rejected one, which are
/// not rejected whatever their p-value).
pub fn holm(p: &[f64], alpha: f64) -> Vec<(bool, f64)> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![(false, alpha); m];
    let mut rejecting = true;
    for (k, &i) in order.iter().enumerate() {
        let level = alpha / (m - k) as f64;
        rejecting &= p[i] <= level;
        out[i] = (rejecting, level);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_steps_down_and_stops_at_the_first_failure() {
        // Levels 0.05/4, 0.05/3, 0.05/2, 0.05/1.
        let r = holm(&[0.01, 0.04, 0.012, 0.5], 0.05);
        assert_eq!(r[0], (true, 0.0125));
        assert!(r[2].0 && (r[2].1 - 0.05 / 3.0).abs() < 1e-12);
        // 0.04 > 0.025: not rejected, nor is anything after it.
        assert!(!r[1].0 && !r[3].0);
        assert!(holm(&[], 0.05).is_empty());
        assert_eq!(holm(&[0.05], 0.05), vec![(true, 0.05)]);
    }

    #[test]
    fn holm_is_never_stricter_than_bonferroni() {
        let p = [0.001, 0.002, 0.003, 0.004, 0.01];
        let r = holm(&p, 0.05);
        for (pi, ri) in p.iter().zip(&r) {
            if *pi <= 0.05 / p.len() as f64 {
                assert!(ri.0);
            }
        }
    }
}
