//! What a person sees on the terminal during and after `tickscope run`.
//!
//! Functions return text; the caller prints it. The per-second lines are in
//! [`crate::live`]; the summary is one column per thread plus the merged column, or, with
//! more than [`crate::live::PER_THREAD_LINES_UP_TO`] threads, one row per thread.

use crate::live::PER_THREAD_LINES_UP_TO;
use crate::statistics::{Figure, Statistic};
use crate::units::{interval, ns, ns_i, signed_percent};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use tickscope_engine::result::ThreadStats;
use tickscope_engine::run::{Applied, RunConfig};
use tickscope_engine::setup::Policy;
use tickscope_engine::wait::{MarginStats, MethodObservations};
use tickscope_system::system::SystemInfo;

/// A policy as a person writes it: `fifo 90`, `other nice 0`, `deadline 100 µs/1.00 ms`.
pub fn policy(p: &Policy) -> String {
    match p {
        Policy::Other { nice } => format!("other (nice {nice})"),
        Policy::Batch { nice } => format!("batch (nice {nice})"),
        Policy::Idle => "idle".into(),
        Policy::Fifo { priority } => format!("fifo {priority}"),
        Policy::Rr { priority } => format!("rr {priority}"),
        Policy::Deadline {
            runtime_ns,
            period_ns,
            ..
        } => format!(
            "deadline (runtime {} / period {})",
            ns_i(*runtime_ns),
            ns_i(*period_ns)
        ),
    }
}

/// How a run stops, as a person says it: `10.0 s`, `1000 loops`, `1000 loops or 10.0 s`.
pub fn stop_rule(cfg: &RunConfig) -> String {
    match (cfg.loops, cfg.duration_ns) {
        (Some(l), Some(d)) => format!("{l} loops or {}", ns_i(d)),
        (Some(l), None) => format!("{l} loops"),
        (None, Some(d)) => ns_i(d),
        (None, None) => "until interrupted".into(),
    }
}

/// The header: what runs, on what machine, with which settings, and the thread ids.
pub fn header(system: &SystemInfo, cfg: &RunConfig, applied: &Applied) -> String {
    let mut out = format!(
        "tickscope {} — {} ({}) on CLOCK_{}, interval {}, {}, overrun: {}\n",
        env!("CARGO_PKG_VERSION"),
        applied.method.name(),
        applied.interface,
        applied.clock.name().to_uppercase(),
        interval(cfg.period_ns),
        stop_rule(cfg),
        cfg.overrun.name(),
    );
    out += &settings(system, applied);
    for t in &applied.threads {
        out += &format!(
            "thread:  T{} tid {} {}\n",
            t.thread,
            t.tid,
            t.cpu
                .map_or("unpinned".to_string(), |c| format!("on CPU {c}")),
        );
    }
    if let Some(t) = applied.threads.first() {
        out += &format!(
            "         (change a thread mid-run from another shell, e.g. 'chrt -f -p 1 {}')\n",
            t.tid
        );
    }
    out
}

/// The lines that say on what machine and with which settings a run measures: system,
/// policy, memory, PM QoS, timer slack.
pub fn settings(system: &SystemInfo, applied: &Applied) -> String {
    let mut out = String::new();
    out += &system_line(system);
    out += &format!("policy:  {}", policy(&applied.policy));
    if let Some(note) = &applied.policy_note {
        out += &format!(" — {note}");
    }
    out += "\n";
    let onoff = |b: bool| if b { "on" } else { "off" };
    out += &format!(
        "memory:  mlock {}{}\n",
        onoff(applied.mlock),
        applied
            .mlock_note
            .as_ref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default()
    );
    out += &format!(
        "PM QoS:  {}{}\n",
        applied
            .pm_qos_us
            .map_or("not held".to_string(), |v| format!(
                "{v} µs held on /dev/cpu_dma_latency"
            )),
        applied
            .pm_qos_note
            .as_ref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default()
    );
    out += &format!(
        "slack:   timer slack {} ns (default {} ns){}\n",
        applied.timer_slack_ns,
        system.default_timer_slack_ns,
        applied
            .timer_slack_note
            .as_ref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default()
    );
    if let Some(h) = &applied.housekeeping {
        out += &format!("housekeeping: {h}\n");
    }
    out
}

/// The `system:` line of a header: kernel, CPUs, clocksource, preemption, hypervisor.
pub fn system_line(system: &SystemInfo) -> String {
    format!(
        "system:  Linux {} {}, {} × {}, clocksource {}, preemption {}, virtualization {}\n",
        system.kernel_release,
        system.machine,
        system.cpu_count,
        system.cpu_model.as_deref().unwrap_or("unknown CPU"),
        system.clocksource.as_deref().unwrap_or("unknown"),
        system.preemption_model.as_deref().unwrap_or("unknown"),
        system.virtualization.as_deref().unwrap_or("unknown"),
    )
}

/// How far `value` is from `nominal`, in % of `nominal` (signed: negative when shorter).
fn deviation_percent(value: i64, nominal: i64) -> f64 {
    100.0 * (value as f64 - nominal as f64) / nominal as f64
}

fn method_report(t: &ThreadStats) -> Option<&MethodObservations> {
    t.method_report.as_ref()
}

/// The hybrid's margin in one cell: the final value, how it was chosen, its mean, and how
/// many sleeps overshot it, e.g. `27.0 µs auto (mean 29.1 µs, 3 of 9000 sleeps overshot)`.
pub fn margin(m: &MarginStats) -> String {
    format!(
        "{} {} (mean {}, {} of {} sleeps overshot)",
        ns_i(m.final_ns),
        m.mode,
        ns(m.mean_ns),
        m.overshot,
        m.sleeps
    )
}

/// The summary's columns: one per thread (`T0 tid 1234 CPU 0`) and, with several threads,
/// the merged one (`all threads`).
pub fn summary_columns<'a>(
    threads: &'a [ThreadStats],
    merged: &'a ThreadStats,
) -> Vec<(String, &'a ThreadStats)> {
    let mut cols: Vec<(String, &ThreadStats)> = threads
        .iter()
        .map(|t| {
            let name = format!(
                "T{} tid {}{}",
                t.thread.unwrap_or(0),
                t.tid.unwrap_or(0),
                t.cpu.map(|c| format!(" CPU {c}")).unwrap_or_default()
            );
            (name, t)
        })
        .collect();
    if threads.len() > 1 {
        cols.push(("all threads".into(), merged));
    }
    cols
}

/// A row of the summary: its label and how a column's cell is written.
pub type SummaryRow = (&'static str, Box<dyn Fn(&ThreadStats) -> String>);

/// The final summary: one column per thread and, with several threads, the merged one; with
/// more than [`PER_THREAD_LINES_UP_TO`] threads, one row per thread ([`summary_by_thread`]),
/// so that the table's width does not grow with the number of CPUs.
pub fn summary(threads: &[ThreadStats], merged: &ThreadStats) -> String {
    if threads.len() > PER_THREAD_LINES_UP_TO {
        return summary_by_thread(threads, merged);
    }
    let cols = summary_columns(threads, merged);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    let mut head = vec!["".to_string()];
    head.extend(cols.iter().map(|(n, _)| n.clone()));
    table.set_header(head);
    for (name, f) in summary_rows() {
        let mut row = vec![name.to_string()];
        row.extend(cols.iter().map(|(_, t)| f(t)));
        table.add_row(row);
    }
    for (name, cells) in method_rows(&cols) {
        let mut row = vec![name.to_string()];
        row.extend(cells);
        table.add_row(row);
    }
    for (i, col) in table.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    crate::fit::table(&table)
}

/// How the terminal writes a statistic: its label and value from [`crate::statistics`], or
/// its own label and text where it says more (dt in µs with three decimals, dt's spread as a
/// share of the period).
enum Shown {
    Value(Statistic),
    Own(&'static str, CellOf),
}

/// How one column's cell of a row is written.
type CellOf = fn(&ThreadStats) -> String;

/// The summary's rows, in order: counts, latency, period dt, CPU.
const SUMMARY: [Shown; 18] = [
    Shown::Value(Statistic::Samples),
    Shown::Value(Statistic::Overruns),
    Shown::Value(Statistic::LatencyMin),
    Shown::Value(Statistic::LatencyMean),
    Shown::Value(Statistic::LatencySd),
    Shown::Value(Statistic::LatencyP50),
    Shown::Value(Statistic::LatencyP90),
    Shown::Value(Statistic::LatencyP99),
    Shown::Value(Statistic::LatencyP99_9),
    Shown::Value(Statistic::LatencyP99_99),
    Shown::Value(Statistic::LatencyMax),
    Shown::Value(Statistic::Early),
    Shown::Own("dt mean", |t| {
        // Three decimals of µs, so that a drift of a few ns per period stays visible.
        t.period_ns
            .as_ref()
            .map_or("-".into(), |p| format!("{:.3} µs", p.mean / 1e3))
    }),
    Shown::Own("dt SD (about mean)", |t| {
        t.period_ns.as_ref().map_or("-".into(), |p| {
            format!(
                "{} ({:.3} %)",
                ns(p.stddev),
                100.0 * p.stddev / p.nominal as f64
            )
        })
    }),
    Shown::Own("dt min", |t| {
        t.period_ns.as_ref().map_or("-".into(), |p| {
            format!(
                "{} ({})",
                ns_i(p.min),
                signed_percent(deviation_percent(p.min, p.nominal), 2)
            )
        })
    }),
    Shown::Own("dt max", |t| {
        t.period_ns.as_ref().map_or("-".into(), |p| {
            format!(
                "{} ({})",
                ns_i(p.max),
                signed_percent(deviation_percent(p.max, p.nominal), 2)
            )
        })
    }),
    Shown::Value(Statistic::DtAbsDeviationP99),
    Shown::Value(Statistic::CpuPercent),
];

/// A statistic's value for people: times with units, counts as numbers, percentages with
/// two decimals, `-` when missing.
pub fn human(f: Figure) -> String {
    match f {
        Figure::Nanos(v) => ns_i(v),
        Figure::NanosF(v) => ns(v),
        Figure::Count(n) => n.to_string(),
        Figure::Percent(p) => format!("{p:.2} %"),
        Figure::Missing => "-".into(),
    }
}

/// The rows of the summary, in order: counts, latency, period dt, CPU; times with units.
pub fn summary_rows() -> Vec<SummaryRow> {
    SUMMARY
        .iter()
        .map(|row| -> SummaryRow {
            match *row {
                Shown::Value(stat) => (stat.label(), Box::new(move |t| human(stat.of_thread(t)))),
                Shown::Own(label, f) => (label, Box::new(f)),
            }
        })
        .collect()
}

/// The rows only some methods have (the hybrid's margin, the busy wait's naps), with their
/// cells for `cols`; a row is left out when no column has a value.
pub fn method_rows(cols: &[(String, &ThreadStats)]) -> Vec<(&'static str, Vec<String>)> {
    let rows: [(&str, CellOf); 2] = [
        ("margin (hybrid)", |t| {
            method_report(t)
                .and_then(|r| r.margin.as_ref())
                .map_or(String::new(), margin)
        }),
        ("naps (busy)", |t| {
            method_report(t)
                .and_then(|r| r.naps)
                .map_or(String::new(), |n| n.to_string())
        }),
    ];
    rows.into_iter()
        .map(|(name, f)| (name, cols.iter().map(|(_, t)| f(t)).collect::<Vec<_>>()))
        .filter(|(_, cells)| cells.iter().any(|c| !c.is_empty()))
        .collect()
}

/// The summary as one row per thread and a last row for all threads: samples, overruns, latency min/p50/p99/p99.9/max, dt SD and CPU — about 100 columns whatever the
/// number of threads.
pub fn summary_by_thread(threads: &[ThreadStats], merged: &ThreadStats) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "thread", "CPU", "samples", "overruns", "lat min", "p50", "p99", "p99.9", "max", "dt SD",
        "CPU %",
    ]);
    let row = |name: String, t: &ThreadStats| {
        let lat = |f: fn(&tickscope_engine::result::LatencyStats) -> i64| {
            t.latency_ns
                .as_ref()
                .map_or("-".to_string(), |l| ns_i(f(l)))
        };
        vec![
            name,
            t.cpu.map_or("-".into(), |c| c.to_string()),
            t.samples.to_string(),
            t.overruns.to_string(),
            lat(|l| l.min),
            lat(|l| l.p50),
            lat(|l| l.p99),
            lat(|l| l.p99_9),
            lat(|l| l.max),
            t.period_ns.as_ref().map_or("-".into(), |p| ns(p.stddev)),
            format!("{:.1}", t.cpu_percent),
        ]
    };
    for (i, t) in threads.iter().enumerate() {
        table.add_row(row(format!("T{}", t.thread.unwrap_or(i)), t));
    }
    table.add_row(row("all".into(), merged));
    for (i, col) in table.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    crate::fit::table(&table)
}

/// The settings in force as one line, for `-q` and under the summary:
/// `settings: fifo 90 · mlock on · PM QoS 0 µs · timer slack 0 ns · 2 threads, unpinned`.
pub fn settings_line(applied: &Applied) -> String {
    let pinned: Vec<String> = applied
        .threads
        .iter()
        .filter_map(|t| t.cpu.map(|c| c.to_string()))
        .collect();
    let placement = if pinned.is_empty() {
        "unpinned".to_string()
    } else {
        format!("on CPU {}", pinned.join(","))
    };
    format!(
        "settings: {} · mlock {} · PM QoS {} · timer slack {} ns · {} thread{}, {}",
        policy(&applied.policy),
        if applied.mlock { "on" } else { "off" },
        applied
            .pm_qos_us
            .map_or("not held".to_string(), |v| format!("{v} µs")),
        applied.timer_slack_ns,
        applied.threads.len(),
        if applied.threads.len() == 1 { "" } else { "s" },
        placement
    )
}

/// Share of overruns (periods missed) above which a run is said not to have kept up: 1 %.
pub const KEEP_UP_LIMIT: f64 = 0.01;

/// A sentence when the machine did not keep up with the period — more than
/// [`KEEP_UP_LIMIT`] of the periods were overruns — with what to try; `None` otherwise.
/// `ended` is the policy a thread ended under when it was changed from outside during the
/// run (`fifo:1`, as read back): the advice then goes by it, not by the policy applied.
pub fn keep_up_warning(
    summary: &ThreadStats,
    period_ns: i64,
    applied: &Applied,
    ended: Option<&str>,
) -> Option<String> {
    let expected = summary.samples + summary.overruns;
    if expected == 0 {
        return None;
    }
    let share = summary.overruns as f64 / expected as f64;
    if share <= KEEP_UP_LIMIT {
        return None;
    }
    let realtime = match ended {
        Some(p) => ["fifo", "rr", "deadline"]
            .iter()
            .any(|rt| p.starts_with(rt)),
        None => applied.policy.is_realtime(),
    };
    let under = match ended {
        Some(p) => format!(
            "{} (changed to {p} during the run)",
            policy(&applied.policy)
        ),
        None => policy(&applied.policy),
    };
    let try_this = if realtime {
        "a longer interval, fewer threads, or pinning the threads (-a) away from busy CPUs"
    } else {
        "a real-time policy (--policy fifo, as root) or a longer interval"
    };
    Some(format!(
        "the machine did not keep up with the {} period under {}: {} overruns in {} periods \
         ({:.1} %); try {try_this}",
        interval(period_ns),
        under,
        summary.overruns,
        expected,
        100.0 * share
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_goes_by_the_policy_the_thread_ended_under() {
        let summary = ThreadStats {
            samples: 900,
            overruns: 100,
            ..thread_with_dt(900_000, 1_100_000)
        };
        let applied = Applied {
            policy: Policy::Other { nice: 0 },
            ..crate::sink::synthetic::run(1, 1, 1).applied
        };
        let as_applied = keep_up_warning(&summary, 1_000_000, &applied, None).unwrap();
        assert!(
            as_applied.contains("try a real-time policy"),
            "{as_applied}"
        );
        let changed = keep_up_warning(&summary, 1_000_000, &applied, Some("fifo:1")).unwrap();
        assert!(!changed.contains("real-time policy"), "{changed}");
        assert!(
            changed.contains("(changed to fifo:1 during the run)"),
            "{changed}"
        );
    }

    /// A thread whose shortest and longest dt are `min` and `max` at a 1 ms period.
    fn thread_with_dt(min: i64, max: i64) -> ThreadStats {
        use tickscope_engine::histogram::HistogramBuckets;
        use tickscope_engine::result::PeriodStats;
        ThreadStats {
            thread: Some(0),
            tid: Some(1),
            cpu: None,
            samples: 3,
            overruns: 0,
            samples_dropped: 0,
            latency_ns: None,
            period_ns: Some(PeriodStats {
                nominal: 1_000_000,
                samples: 2,
                mean: (min + max) as f64 / 2.0,
                stddev: 0.0,
                rms_jitter: 0.0,
                min,
                max,
                abs_deviation_p50: 0,
                abs_deviation_p99: 0,
                abs_deviation_p99_9: 0,
                deviation_histogram: HistogramBuckets::default(),
            }),
            cpu_time_ns: 0,
            wall_time_ns: 1,
            cpu_percent: 0.0,
            last_latency_ns: None,
            method_report: None,
            windows: Vec::new(),
        }
    }

    fn row(name: &str, t: &ThreadStats) -> String {
        let (_, f) = summary_rows()
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap();
        f(t)
    }

    #[test]
    fn dt_min_and_max_carry_one_sign_whichever_side_of_the_period_they_are() {
        // The usual case: shortest dt below the period, longest above.
        let t = thread_with_dt(990_000, 1_010_000);
        assert_eq!(row("dt min", &t), "990 µs (−1.00 %)");
        assert_eq!(row("dt max", &t), "1.01 ms (+1.00 %)");
        // Every dt longer than the period (a late machine): the shortest is above it too.
        let t = thread_with_dt(3_010_000, 3_020_000);
        assert_eq!(row("dt min", &t), "3.01 ms (+201.00 %)");
        // Every dt shorter: the longest is below it.
        let t = thread_with_dt(500_000, 900_000);
        assert_eq!(row("dt max", &t), "900 µs (−10.00 %)");
        for name in ["dt min", "dt max"] {
            let cell = row(name, &thread_with_dt(3_010_000, 3_020_000));
            assert!(!cell.contains("−-") && !cell.contains("+-"), "{cell}");
        }
    }
}
