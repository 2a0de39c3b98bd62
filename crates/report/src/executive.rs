//! The multi-rate executive on the terminal: the plan of a task set (`tickscope plan`) and
//! the per-task statistics of a run (`tickscope run --tasks`).
//!
//! The rows are plain data filled by the caller from the `tickscope` library (crates/periodic)'s
//! `Plan` and `TaskStats`, so this crate does not depend on the library. Task names are printed
//! with their control characters escaped ([`escaped`]).

use crate::quote::escaped;
use crate::units::{interval, ns_i};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use tickscope_engine::result::{LatencyStats, PeriodStats};
use tickscope_engine::time::Nanos;

/// One task of a plan, in dispatch order. Times in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRow {
    /// Task name.
    pub name: String,
    /// Period.
    pub period_ns: Nanos,
    /// Relative deadline.
    pub deadline_ns: Nanos,
    /// Declared budget (`None`: counted as 0).
    pub budget_ns: Option<Nanos>,
    /// Blocking by a lower-priority release.
    pub blocking_ns: Nanos,
    /// Worst-case response time; `None`: unbounded.
    pub response_ns: Option<Nanos>,
}

/// A whole plan, ready to print.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanView {
    /// Tasks in dispatch order.
    pub rows: Vec<PlanRow>,
    /// Σ budget / period.
    pub utilisation: f64,
    /// Liu & Layland's bound n(2^{1/n} − 1).
    pub liu_layland_bound: f64,
    /// Least common multiple of the periods, when enumerated.
    pub hyperperiod_ns: Option<Nanos>,
    /// Why it was not, when it was not.
    pub hyperperiod_refused: Option<String>,
    /// Instants (offset from t0, ns) releasing several tasks, with their names in run order.
    pub coincidences: Vec<(Nanos, Vec<String>)>,
}

/// Coincidence rows printed before "… and N more".
pub const COINCIDENCE_ROWS: usize = 12;

fn opt(v: Option<Nanos>, none: &str) -> String {
    v.map_or(none.into(), ns_i)
}

/// The plan: a summary line, a table of tasks with their worst-case response, and the
/// coincidence table (grouped by the set of tasks, first rows listed), fitted to the
/// terminal's width ([`crate::fit::width`]).
pub fn plan_text(p: &PlanView) -> String {
    plan_text_within(p, crate::fit::width())
}

/// [`plan_text`] fitted to `width` columns (`None`: tables whole, lines unwrapped).
pub fn plan_text_within(p: &PlanView, width: Option<usize>) -> String {
    let mut out = String::new();
    let n = p.rows.len();
    out.push_str(&format!(
        "{n} tasks, utilisation {:.3} (Liu & Layland bound for {n}: {:.3}, {}), hyperperiod {}\n",
        p.utilisation,
        p.liu_layland_bound,
        if p.utilisation <= p.liu_layland_bound {
            "within"
        } else {
            "above"
        },
        match (&p.hyperperiod_ns, &p.hyperperiod_refused) {
            (Some(h), _) => ns_i(*h),
            (None, Some(why)) => format!("not enumerated: {why}"),
            (None, None) => "-".into(),
        }
    ));
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "rank",
        "task",
        "period",
        "deadline",
        "budget",
        "blocking",
        "worst response",
        "",
    ]);
    for (rank, r) in p.rows.iter().enumerate() {
        let ok = r.response_ns.is_some_and(|x| x <= r.deadline_ns);
        t.add_row(vec![
            rank.to_string(),
            escaped(&r.name).into_owned(),
            interval(r.period_ns),
            ns_i(r.deadline_ns),
            opt(r.budget_ns, "- (0)"),
            ns_i(r.blocking_ns),
            opt(r.response_ns, "unbounded"),
            if ok { "ok" } else { "MISS" }.into(),
        ]);
    }
    for c in 2..7 {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    out.push_str(&crate::fit::table_within(&t, width));
    out.push('\n');
    out.push_str(
        "worst response: non-preemptive fixed-priority response-time analysis from the \
         budgets (one thread: a started task is never preempted), with blocking by the \
         longest lower-priority budget; wake-up latency and dispatch overhead not included.\n",
    );
    if p.hyperperiod_ns.is_some() {
        out.push_str(&coincidence_text(p, width));
    }
    crate::fit::wrap_within(&out, width)
}

fn coincidence_text(p: &PlanView, width: Option<usize>) -> String {
    if p.coincidences.is_empty() {
        return "no two tasks are ever due at the same instant\n".into();
    }
    // Group by the set of tasks due together.
    let mut groups: Vec<(Vec<String>, Vec<Nanos>)> = Vec::new();
    for (at, names) in &p.coincidences {
        match groups.iter_mut().find(|g| &g.0 == names) {
            Some(g) => g.1.push(*at),
            None => groups.push((names.clone(), vec![*at])),
        }
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "tasks due together (run order)",
        "per hyperperiod",
        "at",
    ]);
    for (names, at) in groups.iter().take(COINCIDENCE_ROWS) {
        let mut shown: Vec<String> = at.iter().take(6).map(|&a| ns_i(a)).collect();
        if at.len() > 6 {
            shown.push("…".into());
        }
        t.add_row(vec![
            escaped(&names.join(" → ")).into_owned(),
            at.len().to_string(),
            shown.join(", "),
        ]);
    }
    let mut out = format!(
        "coincidences: {} instants per hyperperiod release several tasks\n{}\n",
        p.coincidences.len(),
        crate::fit::text_table_within(&t, width)
    );
    if groups.len() > COINCIDENCE_ROWS {
        out.push_str(&format!(
            "… and {} more sets of tasks\n",
            groups.len() - COINCIDENCE_ROWS
        ));
    }
    out
}

/// One task's statistics after a run. Times in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// Task name.
    pub name: String,
    /// Period.
    pub period_ns: Nanos,
    /// Synthetic work per release, if any.
    pub work_ns: Option<Nanos>,
    /// Releases run.
    pub releases: u64,
    /// Missed releases.
    pub overruns: u64,
    /// Deadline misses.
    pub deadline_misses: u64,
    /// Budget overruns.
    pub budget_overruns: u64,
    /// Release latency (start − expiry).
    pub latency: Option<LatencyStats>,
    /// Largest latency of the releases that started straight from a wake-up.
    pub wakeup_max: Option<Nanos>,
    /// Response time (end − expiry).
    pub response: Option<LatencyStats>,
    /// Intervals between consecutive starts against the period.
    pub start_period: Option<PeriodStats>,
}

/// The per-task table of `tickscope run --tasks`: latency and response percentiles, start
/// jitter, misses — fitted to the terminal's width ([`crate::fit::width`]).
pub fn tasks_table(rows: &[TaskRow]) -> String {
    tasks_table_within(rows, crate::fit::width())
}

/// [`tasks_table`] fitted to `width` columns: whole when it fits or for `None`; else cut
/// into stacked tables that each repeat the task column ([`crate::fit::table_within`]), and
/// the legend wrapped.
pub fn tasks_table_within(rows: &[TaskRow], width: Option<usize>) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "task",
        "work",
        "releases",
        "lat p50",
        "lat p99",
        "lat max",
        "wake-up max",
        "resp p99",
        "resp max",
        "start jitter SD",
        "overruns",
        "deadline misses",
        "budget overruns",
    ]);
    let l = |s: &Option<LatencyStats>, f: fn(&LatencyStats) -> i64| {
        s.as_ref().map_or("-".into(), |s| ns_i(f(s)))
    };
    for r in rows {
        t.add_row(vec![
            format!("{} ({})", escaped(&r.name), interval(r.period_ns)),
            opt(r.work_ns, "-"),
            r.releases.to_string(),
            l(&r.latency, |s| s.p50),
            l(&r.latency, |s| s.p99),
            l(&r.latency, |s| s.max),
            opt(r.wakeup_max, "-"),
            l(&r.response, |s| s.p99),
            l(&r.response, |s| s.max),
            r.start_period
                .as_ref()
                .map_or("-".into(), |p| crate::units::ns(p.stddev)),
            r.overruns.to_string(),
            r.deadline_misses.to_string(),
            r.budget_overruns.to_string(),
        ]);
    }
    for c in 1..13 {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let legend = crate::fit::wrap_within(
        "lat = start − expiry (wake-up latency, plus queueing behind tasks due at the same \
         instant); wake-up max = the largest latency of releases that started straight from a \
         wake-up; resp = end − expiry; a task's deadline is its period unless given",
        width,
    );
    format!("{}\n{legend}\n", crate::fit::table_within(&t, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_lists_tasks_and_groups_coincidences() {
        let p = PlanView {
            rows: vec![
                PlanRow {
                    name: "1ms".into(),
                    period_ns: 1_000_000,
                    deadline_ns: 1_000_000,
                    budget_ns: Some(50_000),
                    blocking_ns: 200_000,
                    response_ns: Some(250_000),
                },
                PlanRow {
                    name: "10ms".into(),
                    period_ns: 10_000_000,
                    deadline_ns: 10_000_000,
                    budget_ns: None,
                    blocking_ns: 0,
                    response_ns: None,
                },
            ],
            utilisation: 0.13,
            liu_layland_bound: 0.828,
            hyperperiod_ns: Some(10_000_000),
            hyperperiod_refused: None,
            coincidences: vec![
                (0, vec!["1ms".into(), "10ms".into()]),
                (5_000_000, vec!["1ms".into(), "10ms".into()]),
            ],
        };
        let s = plan_text(&p);
        assert!(s.starts_with("2 tasks, utilisation 0.130 (Liu & Layland bound for 2: 0.828, within), hyperperiod 10.0 ms"), "{s}");
        assert!(
            s.contains("250 µs") && s.contains("unbounded") && s.contains("MISS"),
            "{s}"
        );
        assert!(
            s.contains("1ms → 10ms") && s.contains("0 ns, 5.00 ms"),
            "{s}"
        );
    }

    #[test]
    fn the_task_table_has_a_row_per_task() {
        let row = TaskRow {
            name: "1ms".into(),
            period_ns: 1_000_000,
            work_ns: Some(50_000),
            releases: 10,
            overruns: 1,
            deadline_misses: 2,
            budget_overruns: 3,
            latency: None,
            wakeup_max: Some(12_000),
            response: None,
            start_period: None,
        };
        let s = tasks_table(&[
            row.clone(),
            TaskRow {
                name: "2\u{1b}[2J".into(),
                ..row
            },
        ]);
        assert!(
            s.contains("2\\u{1b}[2J (1.00 ms)") && !s.contains('\u{1b}'),
            "{s}"
        );
        assert!(
            s.contains("1ms (1.00 ms)") && s.contains("12.0 µs") && s.contains("50.0 µs"),
            "{s}"
        );
        assert_eq!(s.lines().filter(|l| l.contains(" 10 ┆")).count(), 2, "{s}");
    }

    fn stats(base: i64) -> LatencyStats {
        LatencyStats {
            min: base / 2,
            max: base * 40 + 11,
            mean: base as f64,
            stddev: 1.0,
            p50: base,
            p90: base * 2,
            p99: base * 3 + 7,
            p99_9: base * 4,
            p99_99: base * 5,
            early: 0,
            histogram: Default::default(),
        }
    }

    /// `n` tasks with every column filled, names like a real set's (`1ms`, `2.5ms`, `30Hz`).
    fn rows(n: usize) -> Vec<TaskRow> {
        (0..n)
            .map(|i| {
                let k = i as i64 + 1;
                TaskRow {
                    name: format!("{}ms-task{i}", k * 5 / 2),
                    period_ns: k * 2_500_000,
                    work_ns: Some(k * 31_000),
                    releases: 4000 / (i as u64 + 1),
                    overruns: i as u64,
                    deadline_misses: 2 * i as u64,
                    budget_overruns: 3 * i as u64,
                    latency: Some(stats(k * 1_234)),
                    wakeup_max: Some(k * 77_777),
                    response: Some(stats(k * 45_678)),
                    start_period: Some(PeriodStats {
                        nominal: k * 2_500_000,
                        samples: 10,
                        mean: 0.0,
                        stddev: k as f64 * 8_512.0,
                        rms_jitter: 0.0,
                        min: 0,
                        max: 0,
                        abs_deviation_p50: 0,
                        abs_deviation_p99: 0,
                        abs_deviation_p99_9: 0,
                        deviation_histogram: Default::default(),
                    }),
                }
            })
            .collect()
    }

    fn line_widths_at_most(text: &str, width: usize) {
        for line in text.lines() {
            let w = textwrap::core::display_width(line);
            assert!(w <= width, "{w} > {width}: {line}\n{text}");
        }
    }

    #[test]
    fn the_task_table_fits_80_100_and_120_columns_without_losing_a_figure() {
        for n in [1, 3, 12] {
            let rows = rows(n);
            let whole = tasks_table_within(&rows, None);
            assert!(
                crate::fit::text_width(&whole) > 120,
                "wide enough to test: {whole}"
            );
            assert_eq!(whole, tasks_table(&rows), "no width set: the wide layout");
            let widest = crate::fit::text_width(&whole) + 20;
            assert_eq!(
                tasks_table_within(&rows, Some(widest)),
                whole,
                "fits: unchanged"
            );
            for width in [80, 100, 120] {
                let fitted = tasks_table_within(&rows, Some(width));
                line_widths_at_most(&fitted, width);
                for r in &rows {
                    let figures = [
                        format!("{} ({})", r.name, interval(r.period_ns)),
                        opt(r.work_ns, "-"),
                        r.releases.to_string(),
                        ns_i(r.latency.as_ref().map_or(0, |l| l.max)),
                        ns_i(r.response.as_ref().map_or(0, |l| l.p99)),
                        opt(r.wakeup_max, "-"),
                        crate::units::ns(r.start_period.as_ref().map_or(0.0, |p| p.stddev)),
                    ];
                    for f in figures {
                        assert!(fitted.contains(&f), "{f} lost at {width} for {n}: {fitted}");
                    }
                    // Each part repeats the task's name: its counts are on its lines.
                    let label = format!("{} (", r.name);
                    let task_lines: Vec<&str> =
                        fitted.lines().filter(|l| l.contains(&label)).collect();
                    assert!(task_lines.len() >= 2, "{width}/{n}: {fitted}");
                    let joined = task_lines.join(" ");
                    let words: Vec<&str> = joined.split_whitespace().collect();
                    for count in [r.overruns, r.deadline_misses, r.budget_overruns] {
                        let count = count.to_string();
                        assert!(words.contains(&count.as_str()), "{count}: {fitted}");
                    }
                }
                assert!(fitted.contains("deadline is its period"), "{fitted}");
            }
        }
    }

    #[test]
    fn a_task_table_with_the_longest_names_still_fits() {
        let mut rows = rows(3);
        rows[1].name = "n".repeat(100);
        for width in [80, 100, 120] {
            line_widths_at_most(&tasks_table_within(&rows, Some(width)), width);
        }
    }

    #[test]
    fn the_plan_fits_80_100_and_120_columns() {
        for n in [1, 3, 12] {
            let names: Vec<String> = rows(n).into_iter().map(|r| r.name).collect();
            let p = PlanView {
                rows: rows(n)
                    .into_iter()
                    .map(|r| PlanRow {
                        name: r.name,
                        period_ns: r.period_ns,
                        deadline_ns: r.period_ns,
                        budget_ns: r.work_ns,
                        blocking_ns: 12_345,
                        response_ns: Some(r.period_ns / 3),
                    })
                    .collect(),
                utilisation: 0.5,
                liu_layland_bound: 0.7,
                hyperperiod_ns: Some(60_000_000),
                hyperperiod_refused: None,
                coincidences: (0..20).map(|k| (k * 2_500_000, names.clone())).collect(),
            };
            let whole = plan_text_within(&p, None);
            assert_eq!(whole, plan_text(&p), "no width set: as it was");
            for width in [80, 100, 120] {
                let fitted = plan_text_within(&p, Some(width));
                line_widths_at_most(&fitted, width);
                for name in &names {
                    assert!(
                        fitted.contains(name.as_str()),
                        "{name} at {width}: {fitted}"
                    );
                }
            }
        }
    }
}
