//! `tickscope clocks` on paper: the `tickscope.clocks/1` document and the terminal tables.
//!
//! The document carries the same `tool` and `system` blocks as `tickscope.run/2`, the
//! configuration, and the engine's [`ClocksResult`] flattened into the top level (`cpu`,
//! `tsc`, `clocks`, `idle_compare`, …). Times are integer ns; costs are `f64` ns per read.

use crate::document::{rfc3339, ToolInfo};
use crate::terminal::system_line;
use crate::units::{ns, ns_i};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use serde::{Deserialize, Serialize};
use std::time::SystemTime;
use tickscope_system::clocks::{
    Access, ClockEntry, ClockKind, ClockMeasurement, ClockOutcome, ClocksConfig, ClocksResult,
    TscFrequency, TscFrequencySource,
};
use tickscope_system::system::SystemInfo;

/// The schema identifier written into every clocks document.
pub const CLOCKS_SCHEMA: &str = "tickscope.clocks/1";

/// A complete `tickscope clocks` result, as written by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClocksDocument {
    /// Always [`CLOCKS_SCHEMA`].
    pub schema: String,
    /// The program that wrote it.
    pub tool: ToolInfo,
    /// When measuring started (RFC 3339, UTC, ns precision).
    pub started_at: String,
    /// When measuring ended (RFC 3339, UTC, ns precision).
    pub ended_at: String,
    /// The machine.
    pub system: SystemInfo,
    /// The configuration as asked.
    pub config: ClocksConfig,
    /// What was measured.
    #[serde(flatten)]
    pub result: ClocksResult,
}

impl ClocksDocument {
    /// Assembles the document of a finished measurement that ran from `started` to `ended`.
    pub fn new(
        system: SystemInfo,
        config: ClocksConfig,
        result: ClocksResult,
        started: SystemTime,
        ended: SystemTime,
    ) -> Self {
        ClocksDocument {
            schema: CLOCKS_SCHEMA.into(),
            tool: ToolInfo::current(),
            started_at: rfc3339(started),
            ended_at: rfc3339(ended),
            system,
            config,
            result,
        }
    }

    /// The document as pretty-printed JSON.
    ///
    /// # Panics
    /// Never in practice: every field serializes (no maps with non-string keys).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("clocks documents always serialize")
    }
}

/// A cost per read: one decimal below 100 ns (`4.9 ns`), else as [`ns`].
pub fn cost(v: f64) -> String {
    if v.abs() < 100.0 {
        format!("{v:.1} ns")
    } else {
        ns(v)
    }
}

/// A range of costs with the unit once where both are below 1 µs (`22.6–26.8 ns`), else
/// each with its own unit.
pub fn cost_range(lo: f64, hi: f64) -> String {
    let bare = |v: f64| cost(v).trim_end_matches(" ns").to_string();
    if lo.abs().max(hi.abs()) < 1e3 {
        format!("{}–{} ns", bare(lo), bare(hi))
    } else {
        format!("{}–{}", cost(lo), cost(hi))
    }
}

/// How a read reaches the time: `vDSO`, `syscall`, `instruction`.
pub fn access(a: Access) -> &'static str {
    match a {
        Access::Vdso => "vDSO",
        Access::Syscall => "syscall",
        Access::Instruction => "instruction",
    }
}

/// Where the TSC frequency came from, in words.
pub fn tsc_source(s: TscFrequencySource) -> &'static str {
    match s {
        TscFrequencySource::Sysfs => "the kernel (sysfs)",
        TscFrequencySource::KernelLog => "the kernel log",
        TscFrequencySource::Cpuid15 => "CPUID leaf 0x15",
        TscFrequencySource::HypervisorCpuid => "the hypervisor's CPUID leaf",
        TscFrequencySource::Calibrated => "a calibration",
    }
}

/// The lines above the tables: what ran, on what machine, how costs are timed, the TSC rate.
pub fn header(system: &SystemInfo, cfg: &ClocksConfig, r: &ClocksResult) -> String {
    let pinned = match (r.cpu, &r.cpu_note) {
        (Some(c), Some(note)) => format!("pinned to CPU {c} ({note})"),
        (Some(c), None) => format!("pinned to CPU {c}"),
        (None, _) => "unpinned".to_string(),
    };
    let mut out = format!(
        "tickscope {} — clocks: resolution and cost of a read, budget {}, {}\n",
        env!("CARGO_PKG_VERSION"),
        ns_i(cfg.budget_ns),
        pinned
    );
    out += &system_line(system);
    out += &format!(
        "idle:    cpuidle driver {}\n",
        system.cpuidle_driver.as_deref().unwrap_or("unknown")
    );
    out += &format!(
        "cost:    median of the batch means (p10–p90), batches of {} reads timed with {}\n",
        tickscope_system::clocks::READS_PER_BATCH,
        r.batch_clock
    );
    if let Some(t) = &r.tsc {
        out += &tsc_line(t);
    }
    out
}

fn tsc_line(t: &TscFrequency) -> String {
    format!(
        "TSC:     {:.6} GHz ({:.3} ns a tick) from {}: {}{}\n",
        t.hz as f64 / 1e9,
        t.ns_per_tick(),
        tsc_source(t.source),
        t.detail,
        if t.invariant {
            "; invariant"
        } else {
            "; not invariant"
        }
    )
}

fn new_table(head: impl Into<comfy_table::Row>) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(head);
    table
}

fn right_align_from(table: &mut Table, first: usize) {
    for (i, col) in table.column_iter_mut().enumerate() {
        if i >= first {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// One row per clock: the clock's name, then `columns` of the measurement, or `unsupported`
/// and dashes.
fn clock_rows(
    table: &mut Table,
    clocks: &[ClockEntry],
    columns: usize,
    f: impl Fn(&ClockMeasurement) -> Vec<String>,
) {
    for c in clocks {
        let mut row = vec![c.name.clone()];
        match &c.outcome {
            ClockOutcome::Measured(m) => row.extend(f(m)),
            ClockOutcome::Unsupported { .. } => {
                row.push("unsupported".into());
                row.extend((1..columns).map(|_| "-".to_string()));
            }
        }
        table.add_row(row);
    }
}

/// The cost table: resolution, access path, cost of one read with its spread, and the cost
/// of the same read as a real system call.
pub fn cost_table(clocks: &[ClockEntry]) -> String {
    let mut t = new_table(vec![
        "clock",
        "resolution",
        "via",
        "cost/read",
        "p10–p90",
        "as syscall",
    ]);
    clock_rows(&mut t, clocks, 5, |m| {
        vec![
            match m.access {
                Access::Instruction => "1 tick".into(),
                _ => ns_i(m.resolution_ns),
            },
            access(m.access).into(),
            cost(m.cost.median_ns),
            cost_range(m.cost.p10_ns, m.cost.p90_ns),
            m.syscall_cost
                .as_ref()
                .map_or("-".into(), |s| cost(s.median_ns)),
        ]
    });
    right_align_from(&mut t, 1);
    crate::fit::table(&t)
}

/// The table of successive reads: back-to-back deltas, granularity, backward steps, and the
/// after-idle pairs (the clock_gettime 2010 post's measurement).
pub fn delta_table(clocks: &[ClockEntry]) -> String {
    let mut t = new_table(vec![
        "clock",
        "Δ min",
        "Δ p50",
        "Δ p99",
        "Δ max",
        "granularity",
        "backward",
        "after idle p50 (p90)",
    ]);
    clock_rows(&mut t, clocks, 7, |m| {
        let d = &m.deltas;
        vec![
            ns_i(d.min),
            ns_i(d.p50),
            ns_i(d.p99),
            ns_i(d.max),
            d.granularity.map_or("never moved".into(), ns_i),
            d.backward_steps.to_string(),
            format!("{} ({})", ns_i(m.after_idle.p50), ns_i(m.after_idle.p90)),
        ]
    });
    right_align_from(&mut t, 1);
    crate::fit::table(&t)
}

/// With `idle_compare`: per clock, the cost and the after-idle pair median under each
/// condition, then one line per condition saying what was applied or why it was skipped.
/// Empty without `idle_compare`.
pub fn idle_compare_table(r: &ClocksResult) -> String {
    if r.idle_compare.is_empty() {
        return String::new();
    }
    let mut conditions = vec![("as is", &r.clocks, None, None)];
    conditions.extend(r.idle_compare.iter().map(|p| {
        (
            p.condition.label(),
            &p.clocks,
            p.note.as_deref(),
            p.skipped.as_deref(),
        )
    }));
    let mut head = vec!["clock".to_string()];
    head.extend(conditions.iter().map(|c| format!("cost\n{}", c.0)));
    head.extend(
        conditions
            .iter()
            .map(|c| format!("after idle p50\n{}", c.0)),
    );
    let mut t = new_table(head);
    for (i, c) in r.clocks.iter().enumerate() {
        let cells = |f: fn(&ClockMeasurement) -> String| {
            conditions.iter().map(move |(_, clocks, _, skip)| {
                match clocks.get(i).and_then(ClockEntry::measured) {
                    Some(m) => f(m),
                    None if skip.is_some() => "skipped".to_string(),
                    None => "-".to_string(),
                }
            })
        };
        let mut row = vec![c.name.clone()];
        row.extend(cells(|m| cost(m.cost.median_ns)));
        row.extend(cells(|m| ns_i(m.after_idle.p50)));
        t.add_row(row);
    }
    right_align_from(&mut t, 1);
    let mut out = crate::fit::table(&t);
    for (label, _, note, skip) in &conditions[1..] {
        match (note, skip) {
            (_, Some(why)) => out += &format!("\n{label}: skipped — {why}"),
            (Some(n), None) => out += &format!("\n{label}: {n}"),
            (None, None) => {}
        }
    }
    out
}

/// The closing lines: why unsupported clocks are missing, and the floor this puts under
/// `tickscope run`'s numbers (one CLOCK_MONOTONIC read and its granularity).
pub fn notes(clocks: &[ClockEntry]) -> String {
    let mut out = Vec::new();
    for c in clocks {
        if let ClockOutcome::Unsupported { reason } = &c.outcome {
            out.push(format!("{}: unsupported — {reason}", c.name));
        }
        if let Some(m) = c.measured() {
            if c.monotonic && m.deltas.backward_steps > 0 {
                out.push(format!(
                    "{}: stepped back {} times although it is monotonic",
                    c.name, m.deltas.backward_steps
                ));
            }
        }
    }
    let mono = clocks
        .iter()
        .find(|c| c.clock == ClockKind::Monotonic)
        .and_then(ClockEntry::measured);
    if let Some(m) = mono {
        out.push(format!(
            "floor for 'tickscope run' (CLOCK_MONOTONIC): a read costs {}, and time is seen in \
             steps of {}",
            cost(m.cost.median_ns),
            m.deltas.granularity.map_or("-".into(), ns_i)
        ));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_system::clocks::{
        ClockMeasurement, ClocksPass, Condition, CostStats, DeltaStats, PairStats,
    };

    fn measured(source: ClockKind, median: f64, access: Access) -> ClockEntry {
        let c = CostStats {
            batches: 10,
            reads_per_batch: 1000,
            median_ns: median,
            p10_ns: median - 0.5,
            p90_ns: median + 0.5,
            min_ns: median - 1.0,
        };
        ClockEntry {
            clock: source,
            name: source.name().into(),
            monotonic: source.is_monotonic(),
            outcome: ClockOutcome::Measured(Box::new(ClockMeasurement {
                resolution_ns: 1,
                cost: c.clone(),
                syscall_cost: Some(CostStats {
                    median_ns: 251.0,
                    ..c
                }),
                access,
                deltas: DeltaStats {
                    samples: 9990,
                    min: 21,
                    p50: 23,
                    p99: 40,
                    max: 12_000,
                    zero: 0,
                    granularity: Some(21),
                    backward_steps: 0,
                },
                delta_ticks: None,
                after_idle: PairStats {
                    samples: 5,
                    gap_ns: 1_000_000,
                    min: 60,
                    p50: 113,
                    p90: 200,
                    max: 300,
                },
            })),
        }
    }

    fn result() -> ClocksResult {
        ClocksResult {
            cpu: Some(0),
            cpu_note: None,
            batch_clock: "CLOCK_MONOTONIC_RAW".into(),
            tsc: None,
            clocks: vec![
                measured(ClockKind::Monotonic, 22.9, Access::Vdso),
                ClockEntry {
                    clock: ClockKind::Tai,
                    name: "CLOCK_TAI".into(),
                    monotonic: false,
                    outcome: ClockOutcome::Unsupported {
                        reason: "not here".into(),
                    },
                },
            ],
            idle_compare: vec![ClocksPass {
                condition: Condition::PmQosZero,
                note: None,
                skipped: Some("permission denied".into()),
                clocks: vec![],
            }],
        }
    }

    #[test]
    fn tables_show_measured_and_unsupported_clocks() {
        let r = result();
        let costs = cost_table(&r.clocks);
        assert!(costs.contains("CLOCK_MONOTONIC") && costs.contains("22.9 ns"));
        assert!(costs.contains("vDSO") && costs.contains("251 ns"));
        assert!(costs.contains("22.4–23.4 ns"));
        assert!(costs.contains("unsupported"));
        let deltas = delta_table(&r.clocks);
        assert!(deltas.contains("12.0 µs") && deltas.contains("113 ns (200 ns)"));
        let idle = idle_compare_table(&r);
        assert!(idle.contains("skipped") && idle.contains("PM QoS 0: skipped — permission"));
        let notes = notes(&r.clocks);
        assert!(notes.contains("CLOCK_TAI: unsupported — not here"));
        assert!(notes.contains("a read costs 22.9 ns, and time is seen in steps of 21 ns"));
        assert_eq!(cost(4.94), "4.9 ns");
        assert_eq!(cost(545.2), "545 ns");
        assert_eq!(cost_range(22.64, 26.8), "22.6–26.8 ns");
        assert_eq!(cost_range(240.0, 1500.0), "240 ns–1.50 µs");
    }

    #[test]
    fn document_round_trips_through_json() {
        let cfg = ClocksConfig {
            cpu: Some(0),
            budget_ns: 300_000_000,
            idle_compare: true,
        };
        let now = SystemTime::now();
        let doc = ClocksDocument::new(SystemInfo::default(), cfg, result(), now, now);
        let json = doc.to_json();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["schema"], CLOCKS_SCHEMA);
        assert_eq!(v["clocks"][0]["status"], "measured");
        assert_eq!(v["clocks"][0]["clock"], "monotonic");
        assert_eq!(v["clocks"][0]["access"], "vdso");
        assert_eq!(v["clocks"][1]["status"], "unsupported");
        assert_eq!(v["idle_compare"][0]["condition"], "pm-qos-zero");
        let back: ClocksDocument = serde_json::from_str(&json).unwrap();
        assert_eq!(back, doc);
    }
}
