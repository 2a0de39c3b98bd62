//! `tickscope doctor` output: the terminal view and the JSON document `tickscope.doctor/1`
//! (field by field in `docs/doctor-schema.md`).

use crate::document::ToolInfo;
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tickscope_system::doctor::measure::KnobResult;
use tickscope_system::doctor::{fix_first, worst, Finding, Severity};
use tickscope_system::system::SystemInfo;

/// The schema identifier of the doctor document.
pub const DOCTOR_SCHEMA: &str = "tickscope.doctor/1";

/// The exit status of `tickscope doctor` for `findings`: 3 when one makes measurements on
/// this machine invalid ([`Finding::invalidates`]); else 1 when `fail_on` is given and a
/// finding is at least that severe (`unknown` counting as `info`); else 0 — the machine can
/// be measured and the findings are advice. (2 stays "bad input".)
pub fn exit_status(findings: &[Finding], fail_on: Option<Severity>) -> u8 {
    if findings.iter().any(|f| f.invalidates) {
        3
    } else if fail_on.is_some_and(|s| worst(findings) >= s) {
        1
    } else {
        0
    }
}

/// Counts of findings by severity and the resulting exit status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorSummary {
    /// Findings per severity name (`fatal`, `high`, `medium`, `info`, `ok`, `unknown`).
    pub counts: BTreeMap<String, usize>,
    /// The worst severity (`unknown` counts as `info`).
    pub worst: Severity,
    /// Findings that make measurements on this machine invalid.
    #[serde(default)]
    pub invalidating: usize,
    /// `--fail-on`: the severity from which the exit status is 1, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<Severity>,
    /// The exit status `tickscope doctor` returns: 0, 1 or 3 ([`exit_status`]).
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
    /// Every finding, most important first
    /// ([`tickscope_system::doctor::by_importance`]).
    pub findings: Vec<Finding>,
    /// Counts and exit status.
    pub summary: DoctorSummary,
    /// The `--measure` table, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Vec<KnobResult>>,
}

impl DoctorDocument {
    /// A document for `findings` (and `measure`, if run) about `cpus` on `system`; `fail_on`
    /// as `--fail-on` ([`exit_status`]).
    pub fn new(
        system: SystemInfo,
        cpus: Vec<usize>,
        findings: Vec<Finding>,
        measure: Option<Vec<KnobResult>>,
        fail_on: Option<Severity>,
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
                invalidating: findings.iter().filter(|f| f.invalidates).count(),
                fail_on,
                exit_status: exit_status(&findings, fail_on),
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
/// not `ok` — first, under "Fix these first", those that invalidate measurements or are
/// medium or worse with a fix ([`fix_first`]); then, under "Advice", the rest: expected,
/// found and where, effect, fix with its kernel document. `findings` come most important
/// first.
pub fn findings_text(findings: &[Finding]) -> String {
    let mut t = new_table(vec!["severity", "check", "found"]);
    for f in findings {
        t.add_row(vec![
            f.severity.name().to_uppercase(),
            f.id.clone(),
            shorten(&f.found, 70),
        ]);
    }
    let mut out = crate::fit::text_table(&t);
    out.push('\n');
    let (first, advice): (Vec<&Finding>, Vec<&Finding>) = findings
        .iter()
        .filter(|f| f.severity != Severity::Ok)
        .partition(|f| fix_first(f));
    for (heading, group) in [
        ("Fix these first (most important first):", first),
        (
            "Advice (worth knowing; measurements are valid without it):",
            advice,
        ),
    ] {
        if group.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{heading}\n"));
        for f in group {
            block(&mut out, f);
        }
    }
    out
}

/// One finding's block: title, expected, found and where, effect, fix, kernel document.
fn block(out: &mut String, f: &Finding) {
    {
        let invalid = match f.invalidates {
            true => " (measurements on this machine are invalid until fixed)",
            false => "",
        };
        out.push_str(&format!(
            "\n[{}] {} — {}{invalid}\n",
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
}

/// One line: counts per severity and the exit status.
pub fn summary_line(doc: &DoctorDocument) -> String {
    let order = ["fatal", "high", "medium", "info", "unknown", "ok"];
    let parts: Vec<String> = order
        .iter()
        .filter_map(|k| doc.summary.counts.get(*k).map(|n| format!("{n} {k}")))
        .collect();
    let meaning = match (doc.summary.exit_status, doc.summary.fail_on) {
        (3, _) => "measurements on this machine are invalid until the findings marked so are fixed"
            .to_string(),
        (1, Some(s)) => format!(
            "a finding is {} or worse (--fail-on {})",
            s.name(),
            s.name()
        ),
        _ => "this machine can be measured; the findings are advice".to_string(),
    };
    format!(
        "{} checks on CPUs {}: {} — {meaning} (exit status {})",
        doc.findings.len(),
        tickscope_engine::setup::format_cpu_list(&doc.cpus),
        parts.join(", "),
        doc.summary.exit_status
    )
}

/// The first line of `tickscope doctor`: host, kernel release, what was read (`place`:
/// "this machine" or "tree PATH") and the measured CPUs.
pub fn header_line(system: &SystemInfo, place: &str, cpus: &[usize]) -> String {
    format!(
        "tickscope doctor: {} {} ({place}), measured CPUs {}\n",
        system.hostname,
        system.kernel_release,
        tickscope_engine::setup::format_cpu_list(cpus)
    )
}

/// What `--measure` is about to do: 5 knobs × `rounds` interleaved rounds of 2 runs of
/// `duration_ns` each, and the total in seconds.
pub fn measure_plan_line(rounds: u32, duration_ns: i64) -> String {
    format!(
        "tickscope: measuring 5 knobs, {rounds} interleaved round(s) of 2 runs of {} ms each \
         (about {} s)",
        duration_ns / 1_000_000,
        (5 * 2 * i64::from(rounds) * duration_ns) / 1_000_000_000
    )
}

/// The `--measure` section: its heading, then [`measure_text`].
pub fn measure_section(rows: &[KnobResult]) -> String {
    format!(
        "\nWhat the knobs tickscope can set are worth here (each changes one setting of an \
         ordinary program):\n{}",
        measure_text(rows).trim_end()
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
        let cell = |f: fn(&tickscope_system::doctor::measure::Side) -> i64| match (
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
    let mut out = crate::fit::table(&t);
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
        let f = |s| vec![Finding::new("x.y", "t", s)];
        // Advice, however severe, is status 0 unless --fail-on asks.
        assert_eq!(exit_status(&f(Severity::Ok), None), 0);
        assert_eq!(exit_status(&f(Severity::Fatal), None), 0);
        assert_eq!(exit_status(&f(Severity::Medium), Some(Severity::High)), 0);
        assert_eq!(exit_status(&f(Severity::Medium), Some(Severity::Medium)), 1);
        assert_eq!(exit_status(&f(Severity::Unknown), Some(Severity::Info)), 1);
        let invalid = vec![Finding::new("x.y", "t", Severity::Fatal).invalidating()];
        assert_eq!(exit_status(&invalid, None), 3);
        assert_eq!(exit_status(&invalid, Some(Severity::Ok)), 3);
    }

    #[test]
    fn document_round_trips() {
        let f = Finding::new("x.y", "T", Severity::Medium)
            .expected("e")
            .found("f", "/proc/x")
            .effect("slow")
            .fix("echo 0 > /x")
            .cite("Documentation/admin-guide/pm/cpuidle.rst");
        let d = DoctorDocument::new(
            SystemInfo::default(),
            vec![0, 1],
            vec![f],
            None,
            Some(Severity::Medium),
        );
        assert_eq!(d.summary.exit_status, 1);
        let j = serde_json::to_string(&d).unwrap();
        let back: DoctorDocument = serde_json::from_str(&j).unwrap();
        assert_eq!(back, d);
        let text = findings_text(&d.findings);
        assert!(
            text.contains("[MEDIUM] x.y") && text.contains("docs.kernel.org"),
            "{text}"
        );
        assert!(text.contains("Fix these first"), "{text}");
    }
}
