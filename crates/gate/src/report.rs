//! Everything one `tickscope gate` call decided, and its three renderings: a table for
//! people that says why, JSON (`--json`, schema `tickscope.gate/1`) and JUnit XML
//! (`--junit FILE`, what CI systems read).

use crate::finding::{Decision, Finding};
use crate::rules::Rules;
use crate::verdict::{Outcome, Verdict};
use comfy_table::{presets, CellAlignment};
use serde::Serialize;
use tickscope_report::units;

/// The schema name of the JSON report.
pub const SCHEMA: &str = "tickscope.gate/1";

/// The verdicts on every candidate against one baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The worst outcome of all candidates and tasks (what the exit status says).
    pub outcome: Outcome,
    /// The baseline's file.
    pub baseline: String,
    /// The baseline's format.
    pub baseline_format: &'static str,
    /// Wake-ups in the baseline.
    pub baseline_samples: u64,
    /// Windows in the baseline.
    pub baseline_windows: usize,
    /// Remarks on how the baseline was read.
    pub baseline_notes: Vec<String>,
    /// The baseline's tasks by name, when it is a task set (`run --tasks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_tasks: Option<Vec<String>>,
    /// The rules decided by.
    pub rules: Rules,
    /// One verdict per candidate, in the order given; for a task-set candidate one per task
    /// (each with its `task`), the candidate's tasks in their order, then those only the
    /// baseline has.
    pub verdicts: Vec<Verdict>,
}

impl Report {
    /// The report of `verdicts` on `baseline` (for a task set, every task merged:
    /// [`crate::input::Input::whole`]).
    pub fn new(baseline: &crate::series::Series, rules: &Rules, verdicts: Vec<Verdict>) -> Report {
        Report {
            schema: SCHEMA,
            outcome: verdicts
                .iter()
                .map(|v| v.outcome)
                .max()
                .unwrap_or(Outcome::Pass),
            baseline: baseline.source.clone(),
            baseline_format: baseline.format,
            baseline_samples: baseline.samples,
            baseline_windows: baseline.windows.len(),
            baseline_notes: baseline.notes.clone(),
            baseline_tasks: None,
            rules: rules.clone(),
            verdicts,
        }
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Every field is a plain value: serialization cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The table for people: per candidate, one row per test, then why it failed; for a
    /// task-set candidate first a row per task, then each task's tests. Fitted to the
    /// terminal's width ([`tickscope_report::fit::width`]): tables cut, prose wrapped.
    pub fn to_text(&self) -> String {
        let mut out = match &self.baseline_tasks {
            Some(tasks) => format!(
                "baseline {} (task set: {}; {} releases)\n",
                self.baseline,
                tasks.join(", "),
                self.baseline_samples
            ),
            None => {
                let mut out = format!(
                    "baseline {} ({}, {} wake-ups, {} windows)\n",
                    self.baseline,
                    self.baseline_format,
                    self.baseline_samples,
                    self.baseline_windows
                );
                for n in &self.baseline_notes {
                    out += &format!("  baseline: {n}\n");
                }
                out
            }
        };
        for (i, v) in self.verdicts.iter().enumerate() {
            if let Some(task) = &v.task {
                let first = i == 0
                    || self.verdicts[i - 1].task.is_none()
                    || self.verdicts[i - 1].candidate != v.candidate;
                if first {
                    out += &self.task_summary(i);
                }
                out += &format!(
                    "\ncandidate {}, task {} ({}, {} releases, {} windows): {}\n",
                    v.candidate,
                    task,
                    v.format,
                    v.samples,
                    v.windows,
                    v.outcome.word()
                );
            } else {
                out += &format!(
                    "\ncandidate {} ({}, {} wake-ups, {} windows): {}\n",
                    v.candidate,
                    v.format,
                    v.samples,
                    v.windows,
                    v.outcome.word()
                );
            }
            let mut table = comfy_table::Table::new();
            table.load_style(presets::UTF8_FULL_CONDENSED);
            table.set_header(vec![
                "test",
                "baseline",
                "candidate",
                "change",
                "interval",
                "allowed",
                "p",
                "level",
                "result",
            ]);
            for f in &v.findings {
                table.add_row(row(f));
            }
            for (i, col) in table.column_iter_mut().enumerate() {
                if (1..8).contains(&i) {
                    col.set_cell_alignment(CellAlignment::Right);
                }
            }
            out += &tickscope_report::fit::table(&table);
            out.push('\n');
            for r in &v.reasons {
                out += &format!("  why: {r}\n");
            }
            for n in &v.notes {
                out += &format!("  note: {n}\n");
            }
            // How each test was computed, tests sharing a method on one line.
            let mut methods: Vec<(Vec<&str>, String)> = Vec::new();
            for f in &v.findings {
                let m = if f.decision == Decision::NotRun {
                    format!("not run: {}", f.method)
                } else {
                    f.method.clone()
                };
                match methods.iter_mut().find(|(_, x)| *x == m) {
                    Some((names, _)) => names.push(&f.name),
                    None => methods.push((vec![&f.name], m)),
                }
            }
            for (names, m) in methods {
                out += &format!("  {}: {m}\n", names.join(", "));
            }
        }
        out += &format!(
            "\noutcome: {} (confidence {} for all tests of a candidate together, Holm)\n",
            self.outcome.word(),
            self.rules.confidence
        );
        // Tables were fitted above; the lines of prose wrap to the same width.
        tickscope_report::fit::wrap(&out)
    }

    /// The table of a task-set candidate whose first task's verdict is `self.verdicts[first]`:
    /// a row per task with its outcome and the tests that decided it, then the candidate's
    /// outcome (the worst of its tasks').
    fn task_summary(&self, first: usize) -> String {
        let cand = &self.verdicts[first].candidate;
        let tasks: Vec<&Verdict> = self.verdicts[first..]
            .iter()
            .take_while(|v| v.task.is_some() && &v.candidate == cand)
            .collect();
        let outcome = tasks
            .iter()
            .map(|v| v.outcome)
            .max()
            .unwrap_or(Outcome::Pass);
        let mut out = format!(
            "\ncandidate {cand} (task set, {} tasks): {}\n",
            tasks.len(),
            outcome.word()
        );
        let mut table = comfy_table::Table::new();
        table.load_style(presets::UTF8_FULL_CONDENSED);
        table.set_header(vec!["task", "releases", "windows", "result", "decided by"]);
        for v in &tasks {
            let decided: Vec<String> = v
                .findings
                .iter()
                .filter(|f| !matches!(f.decision, Decision::Pass | Decision::NotRun))
                .map(|f| match (f.name.as_str(), &f.inconclusive) {
                    ("task", Some(side)) => side.clone(),
                    _ => format!("{} {}", f.name, f.decision.word()),
                })
                .collect();
            table.add_row(vec![
                v.task.clone().unwrap_or_default(),
                v.samples.to_string(),
                v.windows.to_string(),
                v.outcome.word().to_string(),
                decided.join(", "),
            ]);
        }
        for (i, col) in table.column_iter_mut().enumerate() {
            if (1..3).contains(&i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        out += &tickscope_report::fit::table(&table);
        out.push('\n');
        out
    }

    /// The report as JUnit XML: a test suite per candidate (per task of a task-set
    /// candidate, named `FILE: task NAME`), a test case per test; a regression is a `<failure>`, an inconclusive or not-run test `<skipped>`.
    pub fn to_junit(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let count = |d: Decision| {
            self.verdicts
                .iter()
                .flat_map(|v| &v.findings)
                .filter(|f| f.decision == d)
                .count()
        };
        let total: usize = self.verdicts.iter().map(|v| v.findings.len()).sum();
        out += &format!(
            "<testsuites name=\"tickscope gate\" tests=\"{total}\" failures=\"{}\" skipped=\"{}\">\n",
            count(Decision::Regression),
            count(Decision::Inconclusive) + count(Decision::NotRun)
        );
        for v in &self.verdicts {
            let failures = v
                .findings
                .iter()
                .filter(|f| f.decision == Decision::Regression)
                .count();
            let suite = match &v.task {
                Some(task) => format!("{}: task {task}", v.candidate),
                None => v.candidate.clone(),
            };
            out += &format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">\n",
                xml(&suite),
                v.findings.len()
            );
            for f in &v.findings {
                let detail = row(f).join(" | ");
                let name = match &v.task {
                    Some(task) => format!("{task}: {}", f.name),
                    None => f.name.clone(),
                };
                out += &format!(
                    "    <testcase classname=\"tickscope.gate\" name=\"{}\">",
                    xml(&name)
                );
                match f.decision {
                    Decision::Regression => {
                        out += &format!(
                            "<failure message=\"{}\">{}</failure>",
                            xml(&format!("{} regressed", f.name)),
                            xml(&detail)
                        )
                    }
                    Decision::Inconclusive => {
                        out += &format!(
                            "<skipped message=\"{}\"/>",
                            xml(f.inconclusive.as_deref().unwrap_or("inconclusive"))
                        )
                    }
                    Decision::NotRun => {
                        out += &format!("<skipped message=\"{}\"/>", xml(&f.method))
                    }
                    Decision::Pass | Decision::Improvement => {
                        out += &format!("<system-out>{}</system-out>", xml(&detail))
                    }
                }
                out += "</testcase>\n";
            }
            out += "  </testsuite>\n";
        }
        out += "</testsuites>\n";
        out
    }
}

/// A finding's table row.
fn row(f: &Finding) -> Vec<String> {
    let value = |v: Option<f64>| match (v, f.unit) {
        (Some(v), "ns") => units::ns(v),
        (Some(v), "per wake-up") => format!("{v:.3e}"),
        (Some(v), _) => format!("{v:.3}"),
        (None, _) => String::new(),
    };
    let rel = f.unit != "KS distance";
    let change = |c: f64| {
        if !rel {
            format!("{c:.3}")
        } else if c.is_finite() {
            format!("{:+.1} %", c * 100.0)
        } else {
            "+∞".into()
        }
    };
    vec![
        f.name.clone(),
        value(f.baseline),
        value(f.candidate),
        f.change.map(change).unwrap_or_default(),
        f.interval
            .map(|(lo, hi)| format!("{} .. {}", change(lo), change(hi)))
            .unwrap_or_default(),
        if f.decision == Decision::NotRun {
            String::new()
        } else if rel {
            format!("≤ {:+.0} %", f.allowed * 100.0)
        } else {
            format!("≤ {:.3}", f.allowed)
        },
        f.p_regression
            .filter(|_| f.inconclusive.is_none())
            .map(|p| {
                if p < 1e-4 {
                    "< 0.0001".to_string()
                } else {
                    format!("{p:.4}")
                }
            })
            .unwrap_or_default(),
        f.level.map(|l| format!("{l:.4}")).unwrap_or_default(),
        f.decision.word().to_string(),
    ]
}

/// Text escaped for XML attributes and content.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}
