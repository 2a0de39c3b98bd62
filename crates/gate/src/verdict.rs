//! The verdict on one candidate: every test run, the family decided together with Holm's
//! correction ([`crate::holm`]), and the outcome with the reasons for it.

use crate::bootstrap::rng;
use crate::finding::{Decision, Finding};
use crate::holm::holm;
use crate::pair::Pair;
use crate::rules::Rules;
use crate::series::{Series, WindowKind};
use crate::{overruns, quantile, shape};
use serde::Serialize;

/// The outcome of a gate, best to worst as the exit status orders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No test showed a change beyond the allowed one.
    Pass,
    /// Some quantile is better by more than allowed, none worse.
    Improvement,
    /// Some test could not be judged for lack of data, none showed a regression.
    Inconclusive,
    /// Some test showed the candidate worse by more than allowed.
    Regression,
}

impl Outcome {
    /// The exit status: 0 pass or improvement, 1 regression, 3 inconclusive (2 is kept for
    /// usage errors).
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Pass | Outcome::Improvement => 0,
            Outcome::Regression => 1,
            Outcome::Inconclusive => 3,
        }
    }

    /// The word shown to people.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Improvement => "improvement",
            Outcome::Inconclusive => "inconclusive",
            Outcome::Regression => "REGRESSION",
        }
    }
}

/// The verdict on one candidate against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The candidate's file.
    pub candidate: String,
    /// The task judged, when the inputs are task sets (`tickscope run --tasks`): each task
    /// of the candidate is judged against the baseline's task of the same name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The candidate's format.
    pub format: &'static str,
    /// Wake-ups in the candidate.
    pub samples: u64,
    /// Windows in the candidate.
    pub windows: usize,
    /// The outcome.
    pub outcome: Outcome,
    /// Why, one sentence per deciding test (empty for a plain pass).
    pub reasons: Vec<String>,
    /// Every test, in the rules' order: quantiles, shape, overruns.
    pub findings: Vec<Finding>,
    /// Remarks on the inputs (reduced power, how windows were read).
    pub notes: Vec<String>,
}

fn pct(x: f64) -> String {
    format!("{:+.1} %", x * 100.0)
}

/// Judges `cand` against `base` by `rules`. Deterministic: the resampling generator is
/// seeded from `rules.seed`.
pub fn judge(base: &Series, cand: &Series, rules: &Rules) -> Verdict {
    let (mut findings, notes) = examine(base, cand, rules);
    decide(&mut findings, rules.alpha());
    conclude(cand, findings, notes)
}

/// Runs every test of `rules` on `cand` against `base`, undecided: the findings, and the
/// notes on the inputs. Deterministic: the resampling generator is seeded from
/// `rules.seed`.
pub fn examine(base: &Series, cand: &Series, rules: &Rules) -> (Vec<Finding>, Vec<String>) {
    let mut rng = rng(rules.seed);
    let mut notes: Vec<String> = cand
        .notes
        .iter()
        .map(|n| format!("candidate: {n}"))
        .collect();
    let weaker = |s: &Series| match s.window_kind {
        WindowKind::Histograms => None,
        WindowKind::Summaries => Some(format!(
            "{} keeps no window histograms (tickscope JSON: give --hlog files for full power)",
            s.source
        )),
        WindowKind::None => Some(format!("{} has no windows ({})", s.source, s.format)),
    };
    let why = weaker(base).or_else(|| weaker(cand));
    let histograms = Pair::of_histograms(base, cand, rules);
    let mut findings = match &histograms {
        Some(pair) => quantile::windowed(base, cand, pair, rules, &mut rng),
        None => quantile::unwindowed(base, cand, rules, why.as_deref().unwrap_or("")),
    };
    if let Some(w) = &why {
        notes.push(format!("reduced power: {w}"));
    }
    if rules.shape.enabled {
        let f = match &histograms {
            Some(pair) => shape::shape(pair, rules, "every wake-up", &mut rng),
            None => match Pair::of_window_p99(base, cand, rules) {
                Some(pair) => shape::shape(&pair, rules, "the windows' p99", &mut rng),
                None => Finding::not_run(
                    "shape".into(),
                    format!(
                        "{}: without windows a KS test counts wake-ups as independent and \
                         rejects nearly every A/A pair",
                        why.as_deref().unwrap_or("no windows")
                    ),
                ),
            },
        };
        findings.push(f);
    }
    if rules.overruns.enabled {
        findings.push(match (base.overruns, cand.overruns) {
            (Some(kb), Some(kc)) => {
                overruns::overruns((kb, base.samples), (kc, cand.samples), rules)
            }
            _ => Finding::not_run(
                "overruns".into(),
                "not counted by both inputs (only tickscope results count overruns)".into(),
            ),
        });
    }
    (findings, notes)
}

/// The verdict on `cand` from its decided `findings` (see [`decide`]) and `notes`: the
/// outcome, and a sentence per deciding test.
pub fn conclude(cand: &Series, findings: Vec<Finding>, notes: Vec<String>) -> Verdict {
    let mut reasons = Vec::new();
    for f in &findings {
        match f.decision {
            Decision::Regression => reasons.push(match (f.unit, f.change) {
                ("KS distance", Some(d)) => format!(
                    "shape: the candidate's distribution lies higher by a KS distance of {d:.3}, \
                     more than the allowed {:.3} (p = {:.2e} ≤ {:.4})",
                    f.allowed,
                    f.p_regression.unwrap_or(1.0),
                    f.level.unwrap_or(0.0)
                ),
                (_, change) => format!(
                    "{}: {} {}, more than the allowed {} (p = {:.2e} ≤ {:.4})",
                    f.name,
                    change.map_or("appeared".to_string(), |c| format!("changed {}", pct(c))),
                    f.interval
                        .map(|(lo, hi)| format!("(interval {} .. {})", pct(lo), pct(hi)))
                        .unwrap_or_default(),
                    pct(f.allowed),
                    f.p_regression.unwrap_or(1.0),
                    f.level.unwrap_or(0.0)
                ),
            }),
            Decision::Inconclusive => reasons.push(format!(
                "{}: not enough data: {}",
                f.name,
                f.inconclusive.as_deref().unwrap_or("")
            )),
            Decision::Improvement => reasons.push(format!(
                "{}: improved {} (interval {} .. {})",
                f.name,
                f.change.map(pct).unwrap_or_default(),
                f.interval.map(|i| pct(i.0)).unwrap_or_default(),
                f.interval.map(|i| pct(i.1)).unwrap_or_default()
            )),
            Decision::Pass | Decision::NotRun => {}
        }
    }
    let has = |d: Decision| findings.iter().any(|f| f.decision == d);
    let outcome = if has(Decision::Regression) {
        Outcome::Regression
    } else if has(Decision::Inconclusive) {
        Outcome::Inconclusive
    } else if has(Decision::Improvement) {
        Outcome::Improvement
    } else {
        Outcome::Pass
    };
    if outcome == Outcome::Regression {
        reasons.retain(|r| !r.contains("not enough data") && !r.contains("improved"));
    }
    Verdict {
        candidate: cand.source.clone(),
        task: None,
        format: cand.format,
        samples: cand.samples,
        windows: cand.windows.len(),
        outcome,
        reasons,
        findings,
        notes,
    }
}

/// Decides the family: regressions by Holm over every tested `p_regression`, then
/// improvements by Holm over every `p_improvement` of what is not a regression. `alpha` is
/// the family-wise significance level, `1 − confidence` ([`Rules::alpha`]).
pub fn decide(findings: &mut [Finding], alpha: f64) {
    let tested: Vec<usize> = (0..findings.len())
        .filter(|&i| findings[i].p_regression.is_some() && findings[i].inconclusive.is_none())
        .collect();
    let p: Vec<f64> = tested
        .iter()
        .map(|&i| findings[i].p_regression.unwrap_or(1.0))
        .collect();
    for (&i, (rejected, level)) in tested.iter().zip(holm(&p, alpha)) {
        findings[i].level = Some(level);
        findings[i].decision = if rejected {
            Decision::Regression
        } else {
            Decision::Pass
        };
    }
    let better: Vec<usize> = tested
        .iter()
        .copied()
        .filter(|&i| findings[i].decision == Decision::Pass && findings[i].p_improvement.is_some())
        .collect();
    let p: Vec<f64> = better
        .iter()
        .map(|&i| findings[i].p_improvement.unwrap_or(1.0))
        .collect();
    for (&i, (rejected, _)) in better.iter().zip(holm(&p, alpha)) {
        if rejected {
            findings[i].decision = Decision::Improvement;
        }
    }
}
