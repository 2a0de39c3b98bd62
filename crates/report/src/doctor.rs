//! `tickscope doctor` output: the terminal view and the JSON document `tickscope.doctor/1`
//! (field by field in `docs/doctor-schema.md`).

use crate::document::ToolInfo;
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tickscope_engine::doctor::measure::KnobResult;
use tickscope_engine::doctor::{worst, Finding, Severity};
use tickscope_engine::system::SystemInfo;

/// The schema identifier of the doctor document.
pub const DOCTOR_SCHEMA: &str = "tickscope.doctor/1";

/// Exit status for findings whose worst severity is `s`: 0 for ok/info/unknown, 1 for
/// medium/high, 3 for fatal (2 stays "bad input").
pub fn exit_status(s: Severity) -> u8 {
    match s {
        Severity::Fatal => 3,
        Severity::High | Severity::Medium => 1,
        _ => 0,
    }
}

/// Counts of findings by severity and the resulting exit status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorSummary {
    /// Findings per severity name (`fatal`, `high`, `medium`, `info`, `ok`, `unknown`).
    pub counts: BTreeMap<String, usize>,
    /// The worst severity counting for the exit status (`unknown` counts as `info`).
    pub worst: Severity,
    /// The exit status `tickscope doctor` returns: 0, 1 or 3.
    pub exit_status: u8,
}

/// The `tickscope.doctor/1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorDocument {
    /// Always [`DOCTOR_SCHEMA`].
    pub schema: String,
    /// The program that wrote it.
    pub tool: ToolInfo,
    /// The machine.
    pub system: SystemInfo,
    /// The CPUs checked as "measured".
    pub cpus: Vec<usize>,
    /// Every finding, in check order.
    pub findings: Vec<Finding>,
    /// Counts and exit status.
    pub summary: DoctorSummary,
    /// The `--measure` table, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Vec<KnobResult>>,
}

impl DoctorDocument {
    /// A document for `findings` (and `measure`, if run) about `cpus` on `system`.
    pub fn new(
        system: SystemInfo,
        cpus: Vec<usize>,
        findings: Vec<Finding>,
        measure: Option<Vec<KnobResult>>,
    ) -> Self {
        let mut counts = BTreeMap::new();
        for f in &findings {
            *counts.entry(f.severity.name().to_string()).or_insert(0) += 1;
        }
        let w = worst(&findings);
        DoctorDocument {
            schema: DOCTOR_SCHEMA.into(),
            tool: ToolInfo::current(),
            system,
            cpus,
            summary: DoctorSummary {
                counts,
                worst: w,
                exit_status: exit_status(w),
            },
            findings,
            measure,
        }
    }
}

fn new_table(head: Vec<&str>) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(head);
    t
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// The findings as a table (severity, check, found), then one block per finding that is
/// not `ok`: expected, found and where, effect, fix with its kernel document.
pub fn findings_text(findings: &[Finding]) -> String {
    let mut t = new_table(vec!["severity", "check", "found"]);
    for f in findings {
        t.add_row(vec![
            f.severity.name().to_uppercase(),
            f.id.clone(),
            shorten(&f.found, 70),
        ]);
    }
    let mut out = t.to_string();
    out.push('\n');
    for f in findings.iter().filter(|f| f.severity != Severity::Ok) {
        out.push_str(&format!(
            "\n[{}] {} — {}\n",
            f.severity.name().to_uppercase(),
            f.id,
            f.title
        ));
        out.push_str(&format!("  expected: {}\n", f.expected));
        out.push_str(&format!("  found:    {}  (from {})\n", f.found, f.source));
        if let Some(r) = &f.reason {
            out.push_str(&format!("  unknown:  {r}\n"));
        }
        out.push_str(&format!("  effect:   {}\n", f.effect));
        if let Some(fix) = &f.fix {
            out.push_str(&format!("  fix:      {fix}\n"));
        }
        if let Some(c) = &f.citation {
            out.push_str(&format!("  see:      {} ({})\n", c.document, c.url));
        }
    }
    out
}

/// One line: counts per severity and the exit status.
pub fn summary_line(doc: &DoctorDocument) -> String {
    let order = ["fatal", "high", "medium", "info", "unknown", "ok"];
    let parts: Vec<String> = order
        .iter()
        .filter_map(|k| doc.summary.counts.get(*k).map(|n| format!("{n} {k}")))
        .collect();
    format!(
        "{} checks on CPUs {}: {} (exit status {})",
        doc.findings.len(),
        tickscope_engine::setup::format_cpu_list(&doc.cpus),
        parts.join(", "),
        doc.summary.exit_status
    )
}

/// The `--measure` table: knob, without/with, p50/p99/max each side (µs), p99 ratio,
/// then the verdicts.
pub fn measure_text(rows: &[KnobResult]) -> String {
    let us = |ns: i64| format!("{:.1}", ns as f64 / 1000.0);
    let mut t = new_table(vec![
        "knob",
        "without",
        "with",
        "p50 µs",
        "p99 µs",
        "max µs",
        "p99 ratio",
    ]);
    for r in rows {
        let cell = |f: fn(&tickscope_engine::doctor::measure::Side) -> i64| match (
            &r.without_stats,
            &r.with_stats,
        ) {
            (Some(a), Some(b)) => format!("{} → {}", us(f(a)), us(f(b))),
            _ => "—".into(),
        };
        t.add_row(vec![
            r.knob.name().to_string(),
            r.without.clone(),
            r.with.clone(),
            cell(|s| s.p50_ns),
            cell(|s| s.p99_ns),
            cell(|s| s.max_ns),
            r.ratio_p99.map_or("—".into(), |x| format!("{x:.2}")),
        ]);
    }
    for (i, col) in t.column_iter_mut().enumerate() {
        if i >= 3 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = t.to_string();
    out.push('\n');
    for r in rows {
        out.push_str(&format!("  {}: {}\n", r.knob.name(), r.verdict));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses() {
        assert_eq!(exit_status(Severity::Ok), 0);
        assert_eq!(exit_status(Severity::Info), 0);
        assert_eq!(exit_status(Severity::Medium), 1);
        assert_eq!(exit_status(Severity::High), 1);
        assert_eq!(exit_status(Severity::Fatal), 3);
    }

    #[test]
    fn document_round_trips() {
        let f = Finding::new("x.y", "T", Severity::Medium)
            .expected("e")
            .found("f", "/proc/x")
            .effect("slow")
            .fix("echo 0 > /x")
            .cite("Documentation/admin-guide/pm/cpuidle.rst");
        let d = DoctorDocument::new(SystemInfo::default(), vec![0, 1], vec![f], None);
        assert_eq!(d.summary.exit_status, 1);
        let j = serde_json::to_string(&d).unwrap();
        let back: DoctorDocument = serde_json::from_str(&j).unwrap();
        assert_eq!(back, d);
        let text = findings_text(&d.findings);
        assert!(
            text.contains("[MEDIUM] x.y") && text.contains("docs.kernel.org"),
            "{text}"
        );
    }
}
