//! The HTML report (`tickscope report`): one self-contained file — no scripts, no fonts,
//! no links, no network — with what was measured and on what, the settings as applied, the
//! summary tables, the runs side by side when there are several, and every plot of
//! [`crate::plot`] inline as SVG.

use super::html_escape::escape;
use super::{ExportError, Exporter};
use crate::compare::Comparison;
use crate::document::RunDocument;
use crate::import::tickscope::measurements;
use crate::methods_table::MethodsTable;
use crate::plot::plots_with;
use crate::terminal::{policy, summary_columns, summary_rows};
use crate::units::{interval, ns_i};
use std::fmt::Write;

/// The HTML report of a run document.
#[derive(Debug, Clone, Default)]
pub struct HtmlReport {
    /// The result file's name, shown in the report and used to label runs.
    pub source: String,
    /// How the plots are drawn.
    pub plots: crate::plot::PlotOptions,
    /// Plots drawn from files beside the document (the interval log's bands), placed after
    /// the document's own.
    pub extra: Vec<crate::plot::NamedPlot>,
    /// Why a plot from a file beside the document is missing (an interval log the document
    /// names that cannot be read), shown under the plots' heading.
    pub notes: Vec<String>,
}

/// An SVG document made fit for inlining in HTML: the XML namespace declaration, which
/// HTML does not need, is dropped (so the page holds no URL at all).
pub fn inline_svg(svg: &str) -> String {
    svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
}

/// The page's style sheet, shared with [`super::foreign_html`].
pub const STYLE: &str =
    "body{font-family:sans-serif;margin:2em auto;max-width:1250px;padding:0 1em;\
color:#222;line-height:1.4}h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:.25em .6em;\
vertical-align:top}th{background:#f3f3f3;text-align:left}td.n{text-align:right;\
font-variant-numeric:tabular-nums;white-space:nowrap}table.kv th{width:13em}\
figure{margin:1.2em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{color:#555;font-size:.95em}.note{color:#555}footer{margin-top:3em;color:#777;\
font-size:.9em}.verdict{font-size:1.3em;font-weight:bold;margin:.3em 0}\
.wide{overflow-x:auto}details{margin:.6em 0}summary{cursor:pointer;font-weight:bold}";

fn kv_table(rows: &[(&str, String)]) -> String {
    let mut out = String::from("<table class=\"kv\">\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    out + "</table>\n"
}

/// A table with a row name and one numeric cell per column; numeric cells never wrap, so a
/// value stays on one line with its unit, and a table wider than the page scrolls
/// sideways in its own box.
fn grid_table(head: &[String], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<div class=\"wide\"><table>\n<tr><th></th>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out += "</tr>\n";
    for r in rows {
        let _ = write!(out, "<tr><th>{}</th>", escape(&r[0]));
        for c in &r[1..] {
            let _ = write!(out, "<td class=\"n\">{}</td>", escape(c));
        }
        out += "</tr>\n";
    }
    out + "</table></div>\n"
}

fn with_note(value: String, note: &Option<String>) -> String {
    match note {
        Some(n) => format!("{value} — {n}"),
        None => value,
    }
}

fn measured(doc: &RunDocument) -> Vec<(&'static str, String)> {
    let cfg = &doc.config;
    let runs = doc.each_run();
    let rounds = runs.iter().map(|r| r.round).max().unwrap_or(1);
    let methods: Vec<String> = runs
        .iter()
        .map(|r| format!("{} ({})", r.name(rounds), r.applied.interface))
        .collect();
    let stop = match (cfg.loops, cfg.duration_ns) {
        (Some(l), Some(d)) => format!("{l} wake-ups per thread or {}", ns_i(d)),
        (Some(l), None) => format!("{l} wake-ups per thread"),
        (None, Some(d)) => ns_i(d),
        (None, None) => "until interrupted".into(),
    };
    let mut rows = vec![
        ("started", doc.started_at().to_string()),
        ("ended", doc.ended_at().to_string()),
        (
            if runs.len() > 1 { "methods" } else { "method" },
            methods.join(", "),
        ),
        (
            "clock",
            format!("CLOCK_{}", doc.first().applied.clock.name().to_uppercase()),
        ),
        ("interval", interval(cfg.period_ns)),
        ("length", stop),
        ("measuring threads", cfg.cpus.len().to_string()),
        ("after an overrun", cfg.overrun.name().to_string()),
        ("statistics window", ns_i(cfg.window_ns)),
    ];
    if doc.interrupted() {
        rows.push(("interrupted", "yes: the statistics cover what ran".into()));
    }
    if let Some(e) = &doc.error {
        rows.push(("error", e.clone()));
    }
    rows
}

fn system(doc: &RunDocument) -> Vec<(&'static str, String)> {
    let s = &doc.system;
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    vec![
        ("host", s.hostname.clone()),
        (
            "kernel",
            format!("Linux {} {}", s.kernel_release, s.kernel_version),
        ),
        ("machine", s.machine.clone()),
        ("CPU", format!("{} × {}", s.cpu_count, or(&s.cpu_model))),
        ("clocksource", or(&s.clocksource)),
        ("preemption model", or(&s.preemption_model)),
        ("virtualization", or(&s.virtualization)),
        ("cpuidle driver", or(&s.cpuidle_driver)),
        (
            "default timer slack",
            format!("{} ns", s.default_timer_slack_ns),
        ),
        (
            "RT throttling",
            match (s.rt_runtime_us, s.rt_period_us) {
                (Some(-1), _) => "off".into(),
                (Some(r), Some(p)) => format!("{r} µs of every {p} µs"),
                _ => "unknown".into(),
            },
        ),
        (
            "kernel command line",
            match (&s.cmdline, doc.redacted) {
                (_, true) => "redacted".into(),
                (c, false) => or(c),
            },
        ),
        (
            "tickscope command line",
            match doc.command_line.is_empty() {
                true => "not recorded".into(),
                false => doc.command_line.join(" "),
            },
        ),
    ]
}

fn applied(doc: &RunDocument) -> Vec<(&'static str, String)> {
    let a = &doc.first().applied;
    let onoff = |b: bool| if b { "on" } else { "off" }.to_string();
    let threads: Vec<String> = a
        .threads
        .iter()
        .map(|t| {
            format!(
                "T{} tid {} {}",
                t.thread,
                t.tid,
                t.cpu.map_or("unpinned".into(), |c| format!("on CPU {c}"))
            )
        })
        .collect();
    vec![
        ("policy", with_note(policy(&a.policy), &a.policy_note)),
        ("memory lock", with_note(onoff(a.mlock), &a.mlock_note)),
        (
            "PM QoS",
            with_note(
                a.pm_qos_us
                    .map_or("not held".into(), |v| format!("{v} µs held")),
                &a.pm_qos_note,
            ),
        ),
        (
            "timer slack",
            with_note(format!("{} ns", a.timer_slack_ns), &a.timer_slack_note),
        ),
        ("timeout granularity", ns_i(a.granularity_ns)),
        ("threads", threads.join(", ")),
    ]
}

/// Plots as inline SVG figures with their captions (shared with [`super::foreign_html`]).
///
/// # Errors
/// [`ExportError`] when a plot cannot be drawn.
pub fn figures(plots: &[crate::plot::NamedPlot]) -> Result<String, ExportError> {
    let mut out = String::new();
    for p in plots {
        let _ = write!(
            out,
            "<figure id=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
            escape(&p.stem),
            inline_svg(&p.svg()?),
            escape(&p.caption)
        );
    }
    Ok(out)
}

/// A thread-per-column summary table; a task set's threads are headed by their tasks'
/// names (`1ms`, `all tasks`).
fn summary_table(
    threads: &[tickscope_engine::result::ThreadStats],
    summary: &tickscope_engine::result::ThreadStats,
    tasks: Option<&crate::task_set::TaskSet>,
) -> String {
    let mut cols = summary_columns(threads, summary);
    if let Some(set) = tasks {
        for (i, (name, _)) in cols.iter_mut().enumerate() {
            *name = match set.name_of(i) {
                Some(task) if i < threads.len() => crate::escaped(task).into_owned(),
                _ => "all tasks".into(),
            };
        }
    }
    let head: Vec<String> = cols.iter().map(|(n, _)| n.clone()).collect();
    let rows: Vec<Vec<String>> = summary_rows()
        .into_iter()
        .map(|(name, f)| {
            std::iter::once(name.to_string())
                .chain(cols.iter().map(|(_, t)| f(t)))
                .collect()
        })
        .collect();
    grid_table(&head, &rows)
}

/// The terminal's comparison of methods, with its notes and warnings.
fn methods_comparison(doc: &RunDocument) -> String {
    let t = MethodsTable::of(&doc.runs);
    let head: Vec<String> = t.head[1..].iter().map(|h| h.to_string()).collect();
    let mut out = grid_table(&head, &t.rows);
    for n in &t.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(n));
    }
    out
}

/// Every figure and the settings that differ, one column per run (as `tickscope compare`).
fn figures_side_by_side(
    doc: &RunDocument,
    source: &str,
    rounds: u32,
) -> Result<String, ExportError> {
    let stem = std::path::Path::new(source)
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().into_owned());
    let mut cols = measurements(doc, &stem);
    for (c, r) in cols.iter_mut().zip(doc.each_run()) {
        c.label = r.name(rounds);
    }
    let cmp = Comparison::new(cols, &[]).map_err(ExportError)?;
    let head: Vec<String> = cmp.columns.iter().map(|c| c.label.clone()).collect();
    let rows: Vec<Vec<String>> = cmp
        .figure_rows()
        .into_iter()
        .chain(cmp.setting_rows(true))
        .map(|r| {
            std::iter::once(r.name)
                .chain(r.cells.iter().map(|c| c.human()))
                .collect()
        })
        .collect();
    Ok(format!(
        "<details><summary>every figure, run by run</summary>\n{}</details>\n",
        grid_table(&head, &rows)
    ))
}

/// One row per second of all threads merged: the statistics of that second alone.
fn windows_table(windows: &[tickscope_engine::result::WindowStats]) -> String {
    use crate::statistics::{Figure, Statistic as S};
    const COLUMNS: [(&str, S); 8] = [
        ("samples", S::Samples),
        ("overruns", S::Overruns),
        ("lat min", S::LatencyMin),
        ("lat mean", S::LatencyMean),
        ("lat p99", S::LatencyP99),
        ("lat max", S::LatencyMax),
        ("dt SD", S::DtSd),
        ("CPU %", S::CpuPercent),
    ];
    let head: Vec<String> = COLUMNS.iter().map(|(h, _)| h.to_string()).collect();
    let rows: Vec<Vec<String>> = windows
        .iter()
        .map(|w| {
            std::iter::once(format!("{} s", w.index + w.span))
                .chain(COLUMNS.iter().map(|(_, s)| match s.of_window(w) {
                    Figure::Percent(c) => format!("{c:.1}"),
                    f => crate::terminal::human(f),
                }))
                .collect()
        })
        .collect();
    format!(
        "<details><summary>Second by second: {} windows of one second, all threads \
         merged</summary>\n{}</details>\n",
        windows.len(),
        grid_table(&head, &rows)
    )
}

/// The policy as the verdict names it: `FIFO 90`, `RR 50`, `SCHED_OTHER`, `DEADLINE`.
fn policy_short(p: &tickscope_engine::setup::Policy) -> String {
    use tickscope_engine::setup::Policy;
    match p {
        Policy::Other { nice: 0 } => "SCHED_OTHER".into(),
        Policy::Other { nice } => format!("SCHED_OTHER nice {nice}"),
        Policy::Batch { .. } => "SCHED_BATCH".into(),
        Policy::Idle => "SCHED_IDLE".into(),
        Policy::Fifo { priority } => format!("FIFO {priority}"),
        Policy::Rr { priority } => format!("RR {priority}"),
        Policy::Deadline { .. } => "DEADLINE".into(),
    }
}

/// Where the run ran, as the verdict says it: `a KVM guest without PREEMPT_RT`, `bare
/// metal with PREEMPT_RT`; empty when the document does not say.
fn machine_short(s: &tickscope_system::system::SystemInfo) -> String {
    let machine = match s.virtualization.as_deref() {
        Some("none") => Some("bare metal".to_string()),
        Some("unknown hypervisor") => Some("a virtual machine".to_string()),
        Some(h) => Some(format!("a {h} guest")),
        None => None,
    };
    let rt = s
        .preemption_model
        .as_deref()
        .map(|m| match m.starts_with("rt") {
            true => "with PREEMPT_RT",
            false => "without PREEMPT_RT",
        });
    match (machine, rt) {
        (Some(m), Some(r)) => format!("{m} {r}"),
        (Some(m), None) => m,
        (None, Some(r)) => format!("a kernel {r}"),
        (None, None) => String::new(),
    }
}

/// The report's answer in one line: for one run `p99 502 µs, max 7.23 ms, 43 overruns in
/// 5.00 s — FIFO 90 on a KVM guest without PREEMPT_RT`; for several methods the best and
/// the worst p99 and the largest maximum; then the commonest cause of late wake-ups when
/// the run was explained (`--explain`).
pub fn verdict(doc: &RunDocument) -> String {
    let runs = doc.each_run();
    let rounds = runs.iter().map(|r| r.round).max().unwrap_or(1);
    let seconds = runs
        .iter()
        .map(|r| {
            r.threads
                .iter()
                .map(|t| t.wall_time_ns)
                .max()
                .unwrap_or(r.summary.wall_time_ns)
        })
        .sum::<i64>();
    let overruns: u64 = runs.iter().map(|r| r.summary.overruns).sum();
    let overruns = format!(
        "{overruns} overrun{} in {}",
        if overruns == 1 { "" } else { "s" },
        ns_i(seconds)
    );
    let figures = if runs.len() == 1 {
        match &runs[0].summary.latency_ns {
            Some(l) => format!("p99 {}, max {}, {overruns}", ns_i(l.p99), ns_i(l.max)),
            None => "no wake-up measured".into(),
        }
    } else {
        let mut by_p99: Vec<(String, i64, i64)> = runs
            .iter()
            .filter_map(|r| {
                r.summary
                    .latency_ns
                    .as_ref()
                    .map(|l| (r.name(rounds), l.p99, l.max))
            })
            .collect();
        by_p99.sort_by_key(|r| r.1);
        match (by_p99.first(), by_p99.last()) {
            (Some(best), Some(worst)) => {
                let max = by_p99.iter().map(|r| r.2).max().unwrap_or(best.2);
                format!(
                    "best p99 {} ({}), worst p99 {} ({}), max {}, {overruns} over {} runs",
                    ns_i(best.1),
                    best.0,
                    ns_i(worst.1),
                    worst.0,
                    ns_i(max),
                    runs.len()
                )
            }
            _ => "no wake-up measured".into(),
        }
    };
    let machine = machine_short(&doc.system);
    let mut out = format!("{figures} — {}", policy_short(&doc.first().applied.policy));
    if !machine.is_empty() {
        out += &format!(" on {machine}");
    }
    if let Some(e) = &doc.explain {
        let mut all = tickscope_explain::table::CauseTable::default();
        for t in &e.threads {
            all.merge(&t.causes);
        }
        if let Some((cause, row)) = all.ranked().first() {
            out += &format!(
                "; late wake-ups mostly: {cause} ({} of {})",
                row.count,
                all.total()
            );
        }
    }
    if doc.interrupted() {
        out += " (interrupted)";
    }
    out
}

/// The plots that answer first: for one run its histogram and per-second timeline; for
/// several runs the overlays of all runs (percentile curves, histograms). The rest follow
/// under "More plots".
fn is_key_plot(stem: &str, several: bool) -> bool {
    match several {
        true => stem.starts_with("methods-"),
        false => stem == "histogram" || stem == "timeline",
    }
}

impl Exporter for HtmlReport {
    fn what(&self) -> &'static str {
        "HTML report"
    }

    /// The page leads with its answer — the [`verdict`], the key plots, the methods table
    /// and the "why was it late" section — and folds the details (what was measured, the
    /// system, the settings, the full summary, the doctor's findings) below.
    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError> {
        let runs = doc.each_run();
        let several = runs.len() > 1;
        let rounds = runs.iter().map(|r| r.round).max().unwrap_or(1);
        let title = format!(
            "tickscope report — {}, {}",
            doc.system.hostname,
            doc.started_at()
        );
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
            escape(&title),
            escape(&title)
        );
        let _ = writeln!(
            out,
            "<p class=\"verdict\" id=\"verdict\">{}</p>",
            escape(&verdict(doc))
        );
        let samples: u64 = runs.iter().map(|r| r.summary.samples).sum();
        match &doc.tasks {
            Some(set) => {
                let periods: Vec<String> =
                    set.tasks.iter().map(|t| interval(t.period_ns)).collect();
                let _ = writeln!(
                    out,
                    "<p class=\"note\">Release latency (start − expiry), response and \
                     execution times of {} periodic tasks in one thread (every {}): {} \
                     releases, from <code>{}</code>.</p>",
                    set.tasks.len(),
                    escape(&periods.join(", ")),
                    samples,
                    escape(&self.source)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "<p class=\"note\">Timer wake-up latency (woke − expiry) and period \
                     jitter of {} periodic thread(s) every {}: {} wake-ups in {} run(s), \
                     from <code>{}</code>.</p>",
                    doc.config.cpus.len(),
                    escape(&interval(doc.config.period_ns)),
                    samples,
                    runs.len(),
                    escape(&self.source)
                );
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(n));
        }
        let mut plots = plots_with(doc, &self.plots);
        plots.extend(self.extra.iter().cloned());
        let (key, rest): (Vec<_>, Vec<_>) = plots
            .into_iter()
            .partition(|p| is_key_plot(&p.stem, several));
        let (why, rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(|p| p.stem == "late-wakeup");
        out += &figures(&key)?;
        if let Some(set) = &doc.tasks {
            let t = super::html_tasks::TaskTable::of(doc, set);
            out += "<h2>Tasks</h2>\n";
            let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&t.note));
            out += &grid_table(&t.head, &t.rows);
            out += &figures(&super::html_tasks::plots(doc, set))?;
        }
        if several {
            out += "<h2>Methods side by side</h2>\n";
            out += &methods_comparison(doc);
            out += &figures_side_by_side(doc, &self.source, rounds)?;
        }
        if let Some(e) = &doc.explain {
            out += &super::html_explain::section(e);
        }
        out += &figures(&why)?;
        if !rest.is_empty() {
            out += if several {
                "<h2>Each method's plots</h2>\n"
            } else {
                "<h2>More plots</h2>\n"
            };
            out += &figures(&rest)?;
        }
        out += "<h2>Details</h2>\n";
        out += "<details><summary>What was measured, system, settings</summary>\n";
        out += "<h3>What was measured</h3>\n";
        out += &kv_table(&measured(doc));
        out += "<h3>System</h3>\n";
        out += &kv_table(&system(doc));
        out += "<h3>Settings applied</h3>\n";
        out += &kv_table(&applied(doc));
        out += "</details>\n";
        out += match doc.tasks {
            Some(_) => "<details><summary>Summary: every statistic, task by task</summary>\n",
            None => "<details><summary>Summary: every statistic, thread by thread</summary>\n",
        };
        for run in runs {
            let table = summary_table(&run.threads, &run.summary, doc.tasks.as_ref());
            if several {
                let _ = writeln!(out, "<h3>{}</h3>\n{table}", escape(&run.name(rounds)));
            } else {
                out += &table;
            }
        }
        out += "</details>\n";
        if !several {
            out += &windows_table(&doc.first().summary.windows);
        }
        if let Some(findings) = doc.doctor.as_ref().filter(|f| !f.is_empty()) {
            let _ = writeln!(
                out,
                "<details><summary>What on this machine bears on the run (tickscope doctor, \
                 {} findings)</summary>",
                findings.len()
            );
            let rows: Vec<(String, String)> = findings
                .iter()
                .map(|f| {
                    let fix = f.fix.as_deref().unwrap_or("-");
                    (
                        format!("{:?} {}", f.severity, f.id).to_lowercase(),
                        format!("{} — found: {}; fix: {fix}", f.title, f.found),
                    )
                })
                .collect();
            let rows: Vec<(&str, String)> =
                rows.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            out += &kv_table(&rows);
            out += "</details>\n";
        }
        let _ = writeln!(
            out,
            "<footer>Written by {} {} from <code>{}</code>. This page is self-contained: \
             no scripts, fonts or links.</footer>\n</body>\n</html>",
            escape(&doc.tool.name),
            escape(&doc.tool.version),
            escape(&self.source)
        );
        Ok(out.into_bytes())
    }
}
