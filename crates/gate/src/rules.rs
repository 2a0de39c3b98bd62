//! The rules a gate decides by: which quantiles, how much change is allowed, at what
//! confidence — from a small TOML file (`--rules FILE`) or the defaults.
//!
//! ```toml
//! confidence = 0.99          # family-wise: at most 1 % of A/A pairs fail
//! min_windows = 30           # fewer windows on either side: inconclusive
//! min_tail_samples = 10      # wake-ups beyond a quantile needed to judge it
//! resamples = 1000           # bootstrap resamples per test
//! seed = 1                   # the same inputs and seed give the same verdict
//!
//! [[quantiles]]
//! quantile = 0.9999
//! max_increase = 0.05        # 5 %
//!
//! [shape]
//! enabled = true
//! max_distance = 0.02
//!
//! [overruns]
//! enabled = true
//! max_increase = 1.0         # the rate may double
//! ```
//!
//! Every key is optional; a missing one keeps its default, an unknown one is an error.

use serde::{Deserialize, Serialize};

/// The run length the defaults are made for: 20 minutes at 1 kHz (1200 one-second windows,
/// 1.2 million wake-ups), so that p99.99 has 120 wake-ups beyond it; `bench/gate.sh`
/// measures the defaults' false-failure rate and power at this length.
pub const DEFAULT_RUN_LENGTH: &str = "20 minutes at 1 kHz (1200 windows)";

/// One quantile to compare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantileRule {
    /// The quantile, 0 < q < 1 (0.9999 for p99.99).
    pub quantile: f64,
    /// The largest allowed relative increase of the candidate's quantile over the
    /// baseline's, as a fraction (0.10 = 10 %); the gate fails only when the increase is
    /// above it with the rules' confidence.
    pub max_increase: f64,
}

/// The window-level shape test ([`crate::shape`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShapeRule {
    /// Whether the test runs.
    pub enabled: bool,
    /// The largest allowed one-sided Kolmogorov–Smirnov distance towards higher latency,
    /// 0 ..= 1.
    pub max_distance: f64,
}

impl Default for ShapeRule {
    fn default() -> Self {
        ShapeRule {
            enabled: true,
            max_distance: 0.02,
        }
    }
}

/// The overrun-rate test ([`crate::overruns`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OverrunRule {
    /// Whether the test runs (where both sides count overruns).
    pub enabled: bool,
    /// The largest allowed relative increase of the overrun rate (overruns per wake-up), as
    /// a fraction (1.0: the rate may double).
    pub max_increase: f64,
}

impl Default for OverrunRule {
    fn default() -> Self {
        OverrunRule {
            enabled: true,
            max_increase: 1.0,
        }
    }
}

/// Everything the gate decides by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Family-wise confidence, 0.5 < c < 1: the chance that an A/A pair passes (all tests
    /// of a candidate together, Holm's correction).
    pub confidence: f64,
    /// Fewer windows than this on either side makes a windowed test inconclusive.
    pub min_windows: usize,
    /// Fewer wake-ups than this beyond a quantile (in the shorter run) makes its test
    /// inconclusive.
    pub min_tail_samples: u64,
    /// Bootstrap resamples per test, 200 ..= 100 000.
    pub resamples: usize,
    /// Mean block length of the bootstrap, windows; absent: `⌈n^(1/3)⌉`.
    pub block_windows: Option<f64>,
    /// The seed of the resampling generator.
    pub seed: u64,
    /// Tests on inputs without window histograms take wake-ups as independent, which makes
    /// their intervals too narrow; they decide at the significance level divided by this
    /// (≥ 1).
    pub unwindowed_strictness: f64,
    /// The quantiles compared.
    pub quantiles: Vec<QuantileRule>,
    /// The shape test.
    pub shape: ShapeRule,
    /// The overrun test.
    pub overruns: OverrunRule,
}

impl Default for Rules {
    fn default() -> Self {
        let q = |quantile, max_increase| QuantileRule {
            quantile,
            max_increase,
        };
        Rules {
            confidence: 0.99,
            min_windows: 30,
            min_tail_samples: 10,
            resamples: 1000,
            block_windows: None,
            seed: 1,
            unwindowed_strictness: 10.0,
            quantiles: vec![q(0.5, 0.10), q(0.99, 0.05), q(0.999, 0.05), q(0.9999, 0.05)],
            shape: ShapeRule::default(),
            overruns: OverrunRule::default(),
        }
    }
}

impl Rules {
    /// Reads rules from TOML text.
    ///
    /// # Errors
    /// One line: not TOML, an unknown key, or a value out of range ([`Rules::check`]).
    pub fn from_toml(text: &str) -> Result<Rules, String> {
        let rules: Rules = toml::from_str(text).map_err(|e| {
            let msg = e.message().to_string();
            match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].lines().count().max(1);
                    format!("line {line}: {msg}")
                }
                None => msg,
            }
        })?;
        rules.check()?;
        Ok(rules)
    }

    /// The significance level, `1 − confidence`.
    pub fn alpha(&self) -> f64 {
        1.0 - self.confidence
    }

    /// Checks every value's range.
    ///
    /// # Errors
    /// One line naming the first value out of range.
    pub fn check(&self) -> Result<(), String> {
        let fraction = |v: f64| v.is_finite() && v >= 0.0;
        if !(self.confidence > 0.5 && self.confidence < 1.0) {
            return Err(format!(
                "confidence {} is not between 0.5 and 1",
                self.confidence
            ));
        }
        if !(200..=100_000).contains(&self.resamples) {
            return Err(format!(
                "resamples {} is not between 200 and 100000",
                self.resamples
            ));
        }
        if self.min_windows < 2 {
            return Err("min_windows must be at least 2".into());
        }
        if self.min_tail_samples < 1 {
            return Err("min_tail_samples must be at least 1".into());
        }
        if let Some(b) = self.block_windows {
            if !(b.is_finite() && b >= 1.0) {
                return Err(format!("block_windows {b} is not a length ≥ 1"));
            }
        }
        if !(self.unwindowed_strictness.is_finite() && self.unwindowed_strictness >= 1.0) {
            return Err("unwindowed_strictness must be at least 1".into());
        }
        if self.quantiles.is_empty() && !self.shape.enabled && !self.overruns.enabled {
            return Err("no test is enabled".into());
        }
        for q in &self.quantiles {
            if !(q.quantile > 0.0 && q.quantile < 1.0) {
                return Err(format!("quantile {} is not between 0 and 1", q.quantile));
            }
            if !fraction(q.max_increase) {
                return Err(format!(
                    "max_increase {} of quantile {} is not a fraction ≥ 0",
                    q.max_increase, q.quantile
                ));
            }
        }
        if !(self.shape.max_distance.is_finite() && (0.0..1.0).contains(&self.shape.max_distance)) {
            return Err("shape.max_distance must be in 0 ..< 1".into());
        }
        if !fraction(self.overruns.max_increase) {
            return Err("overruns.max_increase must be a fraction ≥ 0".into());
        }
        Ok(())
    }
}

/// The name of a quantile as people write it: 0.9999 → `p99.99`, 0.5 → `p50`.
pub fn quantile_name(q: f64) -> String {
    let pct = format!("{:.4}", q * 100.0);
    let pct = pct.trim_end_matches('0').trim_end_matches('.');
    format!("p{pct}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_their_own_check_and_an_empty_file_is_the_defaults() {
        Rules::default().check().unwrap();
        assert_eq!(Rules::from_toml("").unwrap(), Rules::default());
    }

    #[test]
    fn a_file_overrides_what_it_names() {
        let r = Rules::from_toml(
            "confidence = 0.95\n[[quantiles]]\nquantile = 0.999\nmax_increase = 0.2\n\
             [overruns]\nenabled = false\n",
        )
        .unwrap();
        assert_eq!(r.confidence, 0.95);
        assert_eq!(r.quantiles.len(), 1);
        assert!(!r.overruns.enabled);
        assert_eq!(r.overruns.max_increase, 1.0);
        assert!(r.shape.enabled);
    }

    #[test]
    fn bad_rules_are_named() {
        let e = Rules::from_toml("confidense = 0.9").unwrap_err();
        assert!(e.contains("line 1") && e.contains("confidense"), "{e}");
        let e = Rules::from_toml("confidence = 1.5").unwrap_err();
        assert!(e.contains("confidence 1.5"), "{e}");
        let e = Rules::from_toml("[[quantiles]]\nquantile = 2\nmax_increase = 0.1").unwrap_err();
        assert!(e.contains("quantile 2"), "{e}");
        let e = Rules::from_toml("resamples = 5").unwrap_err();
        assert!(e.contains("resamples"), "{e}");
    }

    #[test]
    fn quantiles_are_named_as_people_write_them() {
        assert_eq!(quantile_name(0.5), "p50");
        assert_eq!(quantile_name(0.99), "p99");
        assert_eq!(quantile_name(0.999), "p99.9");
        assert_eq!(quantile_name(0.9999), "p99.99");
    }
}
