//! Task sets (`tickscope run --tasks … --json`): each task of the candidate is judged against
//! the baseline's task of the same name, with the tests and rules of a single-rate run
//! (`docs/gate.md`, "Task sets").
//!
//! Every test of every task of one candidate forms **one** family, decided together with
//! Holm's correction ([`crate::holm`]): an A/A pair of task sets fails with probability at
//! most `1 − confidence` however many tasks it has, as a single-rate pair does. Holm's
//! smallest level is then `α/m` for `m` tests in all, which a bootstrap p-value — at least
//! `1/(B + 1)` after `B` resamples — must be able to reach: the resamples are raised to
//! `⌈2m/α⌉` when the rules give fewer (three tasks of six tests at 99 %: 3 600). A task
//! present in only one of the two results cannot be judged: its verdict is inconclusive and
//! says which side lacks it.

use crate::finding::Finding;
use crate::rules::Rules;
use crate::series::Series;
use crate::verdict::{conclude, decide, examine, Outcome, Verdict};

/// The tasks of one result, named (`name=` in the task list, else the period as written).
pub type Tasks = [(String, Series)];

/// The names tasks are matched by: the result's names, with `#k` added to the `k`-th
/// (from 1) of several tasks sharing a name (`1ms #1`, `1ms #2`), matched in order.
fn keys(tasks: &Tasks) -> Vec<String> {
    tasks
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let same = tasks.iter().filter(|(n, _)| n == name).count();
            if same == 1 {
                name.clone()
            } else {
                let k = tasks[..=i].iter().filter(|(n, _)| n == name).count();
                format!("{name} #{k}")
            }
        })
        .collect()
}

/// Judges each task of `cand` (from the file `source`) against the task of `base` with the
/// same name, by `rules`: one verdict per task, the candidate's tasks in their order, then
/// the tasks of the baseline the candidate lacks. Deterministic: every task's resampling
/// generator is seeded from `rules.seed`.
pub fn judge_tasks(base: &Tasks, cand: &Tasks, source: &str, rules: &Rules) -> Vec<Verdict> {
    let (base_keys, cand_keys) = (keys(base), keys(cand));
    let matched = cand_keys.iter().filter(|k| base_keys.contains(k)).count();
    let (rules, raised) = &resampled(rules, matched);
    let mut examined = Vec::new();
    let mut missing = Vec::new();
    for (key, (_, series)) in cand_keys.iter().zip(cand) {
        match base_keys.iter().position(|k| k == key) {
            Some(b) => {
                let (findings, notes) = examine(&base[b].1, series, rules);
                examined.push((key, series, findings, notes));
            }
            None => missing.push(lacking(
                key,
                source,
                Some(series),
                "in the candidate only",
                format!(
                    "the task '{key}' is in the candidate only: the baseline has {}",
                    listed(&base_keys)
                ),
            )),
        }
    }
    for key in base_keys.iter().filter(|k| !cand_keys.contains(k)) {
        missing.push(lacking(
            key,
            source,
            None,
            "in the baseline only",
            format!(
                "the task '{key}' is in the baseline only: the candidate has {}",
                listed(&cand_keys)
            ),
        ));
    }
    // One family: every finding of every task, decided together.
    let mut family: Vec<Finding> = examined.iter().flat_map(|e| e.2.iter().cloned()).collect();
    decide(&mut family, rules.alpha());
    let mut decided = family.into_iter();
    let mut verdicts: Vec<Verdict> = examined
        .into_iter()
        .map(|(key, series, findings, notes)| {
            let own: Vec<Finding> = decided.by_ref().take(findings.len()).collect();
            let mut notes = notes;
            notes.extend(raised.clone());
            Verdict {
                task: Some(key.clone()),
                ..conclude(series, own, notes)
            }
        })
        .collect();
    verdicts.extend(missing);
    verdicts
}

/// `rules` with enough resamples for a family of `tasks` tasks' tests (see the module
/// documentation), and a note when they were raised.
fn resampled(rules: &Rules, tasks: usize) -> (Rules, Option<String>) {
    let per_task = rules.quantiles.len()
        + usize::from(rules.shape.enabled)
        + usize::from(rules.overruns.enabled);
    let tests = per_task * tasks;
    let needed = (2.0 * tests as f64 / rules.alpha()).ceil() as usize;
    let needed = needed.min(100_000);
    if needed <= rules.resamples {
        return (rules.clone(), None);
    }
    let note = format!(
        "resamples raised from {} to {needed}: the {tests} tests of {tasks} tasks are decided \
         together (Holm's smallest level α/{tests})",
        rules.resamples
    );
    (
        Rules {
            resamples: needed,
            ..rules.clone()
        },
        Some(note),
    )
}

/// The names of `keys`, quoted, for a sentence.
fn listed(keys: &[String]) -> String {
    if keys.is_empty() {
        return "no tasks".into();
    }
    let names: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    format!("{} (tasks are matched by name)", names.join(", "))
}

/// The verdict on a task only one side has: inconclusive, `side` saying which side has it
/// (the finding's short reason) and `why` the sentence.
fn lacking(key: &str, source: &str, series: Option<&Series>, side: &str, why: String) -> Verdict {
    Verdict {
        candidate: source.to_string(),
        task: Some(key.to_string()),
        format: "tickscope",
        samples: series.map_or(0, |s| s.samples),
        windows: series.map_or(0, |s| s.windows.len()),
        outcome: Outcome::Inconclusive,
        reasons: vec![why],
        findings: vec![Finding::inconclusive(
            "task".into(),
            "",
            "tasks of the two results matched by name".into(),
            side.to_string(),
        )],
        notes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Decision;
    use crate::synthetic::Model;

    /// A task of 150 one-second windows from the synthetic model, its stalls `scale` times
    /// as long.
    fn task(name: &str, seed: u64, scale: f64) -> (String, Series) {
        let model = Model {
            windows: 150,
            stall_scale: scale,
            ..Model::default()
        };
        (name.to_string(), model.series(seed, name))
    }

    #[test]
    fn duplicate_names_are_numbered_in_order() {
        let s = task("x", 1, 1.0).1;
        let set = vec![
            ("1ms".to_string(), s.clone()),
            ("2ms".to_string(), s.clone()),
            ("1ms".to_string(), s),
        ];
        assert_eq!(keys(&set), vec!["1ms #1", "2ms", "1ms #2"]);
    }

    #[test]
    fn a_regression_in_one_task_fails_that_task_only() {
        let rules = Rules::default();
        let base = vec![task("1ms", 1, 1.0), task("10ms", 3, 1.0)];
        let same = vec![task("1ms", 2, 1.0), task("10ms", 4, 1.0)];
        let v = judge_tasks(&base, &same, "same", &rules);
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|v| v.outcome == Outcome::Pass), "{v:#?}");
        let worse = vec![task("1ms", 2, 1.0), task("10ms", 4, 2.0)];
        let v = judge_tasks(&base, &worse, "worse", &rules);
        assert_eq!(v[0].task.as_deref(), Some("1ms"));
        assert_eq!(v[0].outcome, Outcome::Pass);
        assert_eq!(v[1].task.as_deref(), Some("10ms"));
        assert_eq!(v[1].outcome, Outcome::Regression);
        assert!(v[1]
            .findings
            .iter()
            .any(|f| f.decision == Decision::Regression));
    }

    #[test]
    fn a_task_on_one_side_only_is_inconclusive_and_named() {
        let rules = Rules::default();
        let base = vec![task("1ms", 1, 1.0), task("log", 3, 1.0)];
        let cand = vec![task("1ms", 2, 1.0), task("logger", 4, 1.0)];
        let v = judge_tasks(&base, &cand, "c", &rules);
        let names: Vec<_> = v.iter().map(|v| v.task.clone().unwrap()).collect();
        assert_eq!(names, vec!["1ms", "logger", "log"]);
        assert_eq!(v[0].outcome, Outcome::Pass);
        for (v, side) in [(&v[1], "candidate only"), (&v[2], "baseline only")] {
            assert_eq!(v.outcome, Outcome::Inconclusive);
            assert!(v.reasons[0].contains(side), "{:?}", v.reasons);
        }
        assert!(v[2].reasons[0].contains("'logger'"), "{:?}", v[2].reasons);
    }
}
