//! What one test found for one candidate: the figures, the interval, the p-values and,
//! once the family is decided ([`crate::holm`]), the decision.

use serde::Serialize;

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// No change beyond the allowed one was shown.
    Pass,
    /// The candidate is worse by more than allowed, at the family's confidence.
    Regression,
    /// The candidate is better by more than allowed, at the family's confidence.
    Improvement,
    /// Not enough data to judge (see [`Finding::inconclusive`]).
    Inconclusive,
    /// The test does not apply to these inputs (see [`Finding::method`]).
    NotRun,
}

impl Decision {
    /// The word shown in tables.
    pub fn word(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Regression => "REGRESSION",
            Decision::Improvement => "improvement",
            Decision::Inconclusive => "inconclusive",
            Decision::NotRun => "not run",
        }
    }
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The test: `p99.99`, `shape`, `overruns`.
    pub name: String,
    /// The unit of `baseline` and `candidate`: `ns`, `per wake-up`, `KS distance`.
    pub unit: &'static str,
    /// The baseline's figure (a quantile, an overrun rate), when there is one.
    pub baseline: Option<f64>,
    /// The candidate's figure.
    pub candidate: Option<f64>,
    /// The change: relative (0.2 = +20 %) for quantiles and rates, the distance for shape.
    pub change: Option<f64>,
    /// The interval of `change` at the rules' confidence (two-sided), when computed.
    pub interval: Option<(f64, f64)>,
    /// The allowed change (same unit as `change`).
    pub allowed: f64,
    /// p-value of "worse by more than allowed" (0 < p ≤ 1); `None` when not tested.
    pub p_regression: Option<f64>,
    /// p-value of "better by more than allowed"; `None` when the test has no such side.
    pub p_improvement: Option<f64>,
    /// How it was computed (the method and its sampling unit), one line.
    pub method: String,
    /// Why the data are not enough, when they are not.
    pub inconclusive: Option<String>,
    /// The level `p_regression` was compared with in Holm's procedure, once decided.
    pub level: Option<f64>,
    /// The decision, once the family is decided.
    pub decision: Decision,
}

impl Finding {
    /// A finding for a test that could not be judged, with the reason.
    pub fn inconclusive(name: String, unit: &'static str, method: String, why: String) -> Self {
        Finding {
            name,
            unit,
            baseline: None,
            candidate: None,
            change: None,
            interval: None,
            allowed: 0.0,
            p_regression: None,
            p_improvement: None,
            method,
            inconclusive: Some(why),
            level: None,
            decision: Decision::Inconclusive,
        }
    }

    /// A finding for a test that does not apply, with the reason as its method.
    pub fn not_run(name: String, why: String) -> Self {
        Finding {
            decision: Decision::NotRun,
            inconclusive: None,
            ..Finding::inconclusive(name, "", why, String::new())
        }
    }
}
