//! The scenario's table: the source's layout, a column (or block) for each published machine
//! and one for this machine.

use super::format::{Layout, Scenario};
use super::metrics::{in_unit, show, value, StepData};
use serde::Serialize;
use std::collections::HashMap;
use tickscope_engine::result::WindowStats;
use tickscope_report::escaped;
use tickscope_system::system::SystemInfo;

/// The table as printed and as stored in the scenario document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rendered {
    /// Column headers.
    pub header: Vec<String>,
    /// Rows of cells (`-` where nothing was measured or published).
    pub rows: Vec<Vec<String>>,
}

impl Rendered {
    /// Aligned text: first column left, others right; when that is wider than the
    /// terminal ([`tickscope_report::fit`]), a box table cut into parts that fit. Each cell
    /// with its control characters escaped ([`escaped`]).
    pub fn text(&self) -> String {
        let plain = self.plain();
        match tickscope_report::fit::width() {
            Some(w) if tickscope_report::fit::text_width(&plain) > w => {
                let mut t = comfy_table::Table::new();
                t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
                let shown = |r: &Vec<String>| -> Vec<String> {
                    r.iter().map(|c| escaped(c).into_owned()).collect()
                };
                t.set_header(shown(&self.header));
                for r in &self.rows {
                    t.add_row(shown(r));
                }
                for (i, col) in t.column_iter_mut().enumerate() {
                    if i > 0 {
                        col.set_cell_alignment(comfy_table::CellAlignment::Right);
                    }
                }
                tickscope_report::fit::table(&t)
            }
            _ => plain,
        }
    }

    /// Aligned text: first column left, others right, two spaces apart. Padded by hand, not
    /// with a `format!` width (which panics above 65 535), so no cell length can fail it.
    fn plain(&self) -> String {
        let n = self.header.len();
        let shown = |r: &Vec<String>| -> Vec<String> {
            r.iter().take(n).map(|c| escaped(c).into_owned()).collect()
        };
        let header = shown(&self.header);
        let rows: Vec<Vec<String>> = self.rows.iter().map(shown).collect();
        let mut w = vec![0; n];
        for r in std::iter::once(&header).chain(&rows) {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |r: &Vec<String>| {
            let mut out = String::new();
            for (i, c) in r.iter().enumerate() {
                let pad = " ".repeat(w[i].saturating_sub(c.chars().count()));
                if i > 0 {
                    out.push_str("  ");
                    out.push_str(&pad);
                    out.push_str(c);
                } else {
                    out.push_str(c);
                    out.push_str(&pad);
                }
            }
            out.trim_end().to_string()
        };
        let rule = "-".repeat(w.iter().sum::<usize>() + 2 * n.saturating_sub(1));
        let mut out = vec![line(&header), rule];
        out.extend(rows.iter().map(line));
        out.join("\n")
    }
}

/// This machine's column label.
pub fn this_machine(system: &SystemInfo) -> String {
    format!(
        "this machine ({}, {})",
        system.cpu_model.as_deref().unwrap_or(&system.machine),
        system.kernel_release
    )
}

/// Builds the table from the steps' results (`None` for a step that did not run).
pub fn render(s: &Scenario, results: &[(String, Option<StepData>)]) -> Rendered {
    let by_name: HashMap<&str, &StepData> = results
        .iter()
        .filter_map(|(n, d)| d.as_ref().map(|d| (n.as_str(), d)))
        .collect();
    let data = |step: &str| by_name.get(step).copied();
    match s.table.layout {
        Layout::Rows => {
            let mut header = vec![String::new()];
            for p in &s.published {
                for c in &s.table.columns {
                    header.push(format!("{}: {c}", p.label));
                }
            }
            for c in &s.table.columns {
                header.push(format!("this machine: {c}"));
            }
            let rows = s
                .table
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let unit = r
                        .unit
                        .as_deref()
                        .or(s.table.unit.as_deref())
                        .unwrap_or("ns");
                    let mut row = vec![format!("{} [{unit}]", r.label)];
                    for p in &s.published {
                        for c in &s.table.columns {
                            row.push(
                                p.values
                                    .get(c)
                                    .and_then(|v| v.get(i))
                                    .map_or("-".into(), |v| show(*v, unit)),
                            );
                        }
                    }
                    for c in &s.table.columns {
                        row.push(
                            data(c)
                                .and_then(|d| value(&r.metric, d))
                                .map_or("-".into(), |v| show(in_unit(v, &r.metric, unit), unit)),
                        );
                    }
                    row
                })
                .collect();
            Rendered { header, rows }
        }
        Layout::Windows => {
            let cols = [
                "n",
                "Mean [us]",
                "[us] SD",
                "[%]",
                "[us] Min",
                "[%]",
                "[us] Max",
                "[%]",
            ];
            let mut header = vec!["".to_string()];
            header.extend(cols.iter().map(|c| c.to_string()));
            let mut rows = Vec::new();
            let fmt = |v: &[f64]| -> Vec<String> {
                v.iter()
                    .enumerate()
                    .map(|(i, x)| match i {
                        0 | 4 | 6 => format!("{x:.0}"),
                        _ => format!("{x:.3}"),
                    })
                    .collect()
            };
            for p in &s.published {
                for (i, w) in p.windows.iter().enumerate() {
                    let mut r = vec![format!("{} {}", p.label, i + 1)];
                    r.extend(fmt(w));
                    rows.push(r);
                }
                if let Some(t) = &p.total {
                    let mut r = vec![format!("{} total", p.label)];
                    r.extend(fmt(t));
                    rows.push(r);
                }
            }
            if let Some(StepData::Run(doc)) = s.table.step.as_deref().and_then(data) {
                let period = doc.config.period_ns as f64;
                for w in &doc.first().summary.windows {
                    if let Some(v) = window_line(w, period) {
                        let mut r = vec![format!("this machine {}", w.index + 1)];
                        r.extend(fmt(&v));
                        rows.push(r);
                    }
                }
                if let Some(p) = &doc.first().summary.period_ns {
                    let v = [
                        p.samples as f64,
                        p.mean / 1e3,
                        p.rms_jitter / 1e3,
                        100.0 * p.rms_jitter / period,
                        p.min as f64 / 1e3,
                        100.0 * (period - p.min as f64) / period,
                        p.max as f64 / 1e3,
                        100.0 * (p.max as f64 - period) / period,
                    ];
                    let mut r = vec!["this machine total".to_string()];
                    r.extend(fmt(&v));
                    rows.push(r);
                }
            }
            Rendered { header, rows }
        }
    }
}

/// One window as the 2013 `rt` post prints it: n, mean dt, SD (RMS about the period, as
/// `rt` computes it), SD %, min, (period − min) %, max, (max − period) % — µs.
fn window_line(w: &WindowStats, period: f64) -> Option<[f64; 8]> {
    let (mean, sd, min, max) = (
        w.period_mean?,
        w.period_rms_jitter?,
        w.period_min? as f64,
        w.period_max? as f64,
    );
    Some([
        w.samples as f64,
        mean / 1e3,
        sd / 1e3,
        100.0 * sd / period,
        min / 1e3,
        100.0 * (period - min) / period,
        max / 1e3,
        100.0 * (max - period) / period,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_longer_than_a_format_width_and_control_characters_are_printed() {
        let long = "l".repeat(70_000);
        let r = Rendered {
            header: vec![String::new(), "x\u{1b}[2J".into()],
            rows: vec![
                vec![long.clone(), "1".into()],
                vec!["a".into(), "22".into()],
            ],
        };
        let t = r.plain();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].ends_with("x\\u{1b}[2J"), "{}", lines[0]);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'));
        // The second column is as wide as its escaped header, `x\u{1b}[2J` (10 characters).
        assert!(lines[2] == format!("{long}  {}1", " ".repeat(9)), "line 2");
        assert_eq!(lines[3].chars().count(), 70_000 + 2 + 10);
        assert!(lines[3].starts_with("a ") && lines[3].ends_with(" 22"));
    }
}
