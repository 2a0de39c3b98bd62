//! The comparison of wake-up methods on the terminal: a header, one line per finished run,
//! and one table with a row per method — what each costs in precision and in CPU.
//!
//! With several rounds, a method's row combines its runs: latency percentiles, dt SD,
//! |dt − period| p99, CPU and the hybrid's final margin are medians over the rounds (robust
//! to one noisy round); samples, overruns and late sleeps are totals; the maximum is
//! the largest. The margin note reads `margin 127 µs (auto 56.0 µs–373 µs), 51/9996 sleeps
//! late`: the mean margin over the sleeps (median over rounds), how it was chosen, the
//! smallest and largest margin used (warm-up included), and how many sleeps ended after
//! the margin in force.

use crate::document::MethodRun;
use crate::terminal::{settings, stop_rule};
use crate::units::{interval, ns, ns_i};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use tickscope_engine::result::ThreadStats;
use tickscope_engine::run::{Applied, RunConfig};
use tickscope_engine::wait::MethodKind;
use tickscope_system::system::SystemInfo;

/// The header of a comparison: the methods and rounds, then the settings every run shares.
pub fn comparison_header(
    system: &SystemInfo,
    cfg: &RunConfig,
    applied: &Applied,
    methods: &[MethodKind],
    rounds: u32,
) -> String {
    let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
    let rounds_text = match rounds {
        1 => "1 round".to_string(),
        n => format!("{n} rounds, each starting one method further along"),
    };
    format!(
        "tickscope {} — comparing {} methods ({}), {}\n\
         each: CLOCK_{}, interval {}, {}, overrun: {}, same settings, nothing discarded\n{}",
        env!("CARGO_PKG_VERSION"),
        methods.len(),
        names.join(", "),
        rounds_text,
        applied.clock.name().to_uppercase(),
        interval(cfg.period_ns),
        stop_rule(cfg),
        cfg.overrun.name(),
        settings(system, applied),
    )
}

/// One line for a finished run: `[3/22] timerfd, round 1: 10000 samples, …`.
pub fn run_line(run: &MethodRun, total: usize) -> String {
    let s = &run.summary;
    let lat = |f: fn(&tickscope_engine::result::LatencyStats) -> i64| {
        s.latency_ns.as_ref().map_or("-".into(), |l| ns_i(f(l)))
    };
    format!(
        "[{}/{}] {}, round {}: {} samples, latency p50 {} p99 {} max {}, overruns {}, CPU {:.1} %{}",
        run.order + 1,
        total,
        run.method,
        run.round,
        s.samples,
        lat(|l| l.p50),
        lat(|l| l.p99),
        lat(|l| l.max),
        s.overruns,
        s.cpu_percent,
        if run.interrupted {
            " (interrupted)"
        } else {
            ""
        },
    )
}

/// The median of `v` (mean of the two middle values for an even count); `None` if empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The runs of one method, in the order they ran.
struct MethodRows<'a> {
    method: &'a str,
    runs: Vec<&'a MethodRun>,
}

impl MethodRows<'_> {
    fn summaries(&self) -> impl Iterator<Item = &ThreadStats> {
        self.runs.iter().map(|r| &r.summary)
    }

    /// The median over the runs of a value each run may have, as a duration.
    fn median_ns(&self, f: impl Fn(&ThreadStats) -> Option<f64>) -> String {
        median(self.summaries().filter_map(f).collect()).map_or("-".into(), ns)
    }

    fn cells(&self) -> Vec<String> {
        let lat = |f: fn(&tickscope_engine::result::LatencyStats) -> i64| {
            move |t: &ThreadStats| t.latency_ns.as_ref().map(|l| f(l) as f64)
        };
        let samples: u64 = self.summaries().map(|t| t.samples).sum();
        let overruns: u64 = self.summaries().map(|t| t.overruns).sum();
        let max = self
            .summaries()
            .filter_map(|t| t.latency_ns.as_ref().map(|l| l.max))
            .max()
            .map_or("-".into(), ns_i);
        let cpu = median(self.summaries().map(|t| t.cpu_percent).collect())
            .map_or("-".into(), |c| format!("{c:.1} %"));
        let step = self
            .runs
            .first()
            .map(|r| r.applied.granularity_ns)
            .filter(|&g| g > 1)
            .map_or(String::new(), ns_i);
        vec![
            self.method.to_string(),
            samples.to_string(),
            self.median_ns(lat(|l| l.p50)),
            self.median_ns(lat(|l| l.p99)),
            self.median_ns(lat(|l| l.p99_9)),
            max,
            self.median_ns(|t| t.period_ns.as_ref().map(|p| p.stddev)),
            self.median_ns(|t| t.period_ns.as_ref().map(|p| p.abs_deviation_p99 as f64)),
            overruns.to_string(),
            cpu,
            step,
            self.notes(),
        ]
    }

    /// What the method said about itself: the hybrid's margin, the busy-wait's naps, the
    /// kernel's own count of overruns.
    fn notes(&self) -> String {
        let reports: Vec<_> = self
            .summaries()
            .filter_map(|t| t.method_report.as_ref())
            .collect();
        let mut notes = Vec::new();
        let margins: Vec<_> = reports.iter().filter_map(|r| r.margin.as_ref()).collect();
        if let Some(mean) = median(margins.iter().map(|m| m.mean_ns).collect()) {
            let overshot: u64 = margins.iter().map(|m| m.overshot).sum();
            let sleeps: u64 = margins.iter().map(|m| m.sleeps).sum();
            let lo = margins.iter().map(|m| m.min_ns).min().unwrap_or(0);
            let hi = margins.iter().map(|m| m.max_ns).max().unwrap_or(0);
            let range = if lo == hi {
                String::new()
            } else {
                format!(" {}–{}", ns_i(lo), ns_i(hi))
            };
            notes.push(format!(
                "margin {} ({}{range}), {overshot}/{sleeps} sleeps late",
                ns(mean),
                margins[0].mode
            ));
        }
        let naps: Option<u64> = reports.iter().filter_map(|r| r.naps).reduce(|a, b| a + b);
        if let Some(n) = naps.filter(|&n| n > 0) {
            notes.push(format!("{n} naps"));
        }
        if let Some(k) = reports
            .iter()
            .filter_map(|r| r.timer_overruns)
            .reduce(|a, b| a + b)
        {
            notes.push(format!("kernel: {k} overruns"));
        }
        if self.runs.iter().any(|r| r.applied.method_note.is_some()) {
            notes.push("see warning".into());
        }
        if self.runs.iter().any(|r| r.interrupted) {
            notes.push("interrupted".into());
        }
        notes.join("; ")
    }
}

/// The comparison as data: the column heads, one row of cells per method (in the order of
/// the first round), and the notes that go below it — how rounds combine and the warnings
/// the runs gave. The terminal ([`methods_table`]) and the HTML report render the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodsTable {
    /// Column heads, `method` first.
    pub head: Vec<&'static str>,
    /// One row per method.
    pub rows: Vec<Vec<String>>,
    /// Lines of explanation and warnings.
    pub notes: Vec<String>,
}

impl MethodsTable {
    /// The comparison of `runs`.
    pub fn of(runs: &[MethodRun]) -> MethodsTable {
        let mut methods: Vec<MethodRows<'_>> = Vec::new();
        for r in runs {
            match methods.iter_mut().find(|m| m.method == r.method) {
                Some(m) => m.runs.push(r),
                None => methods.push(MethodRows {
                    method: &r.method,
                    runs: vec![r],
                }),
            }
        }
        let mut notes = vec![
            "lat: wake-up latency (woke − expiry). dt SD: period about its mean. |dt−T| p99: \
             period deviation from the interval."
                .to_string(),
            "CPU: the measuring thread(s), % of one core. step: the coarsest timeout the \
             method can express (blank: 1 ns)."
                .to_string(),
        ];
        let rounds = runs.iter().map(|r| r.round).max().unwrap_or(1);
        if rounds > 1 {
            notes.push(format!(
                "{rounds} rounds: percentiles, dt SD, |dt−T| p99, CPU and margin are medians \
                 over the rounds; samples and overruns are totals; lat max is the largest."
            ));
        }
        let mut warned: Vec<&str> = Vec::new();
        for r in runs {
            if let Some(w) = r.applied.method_note.as_deref() {
                if !warned.contains(&w) {
                    warned.push(w);
                    notes.push(format!("warning: {w}"));
                }
            }
        }
        MethodsTable {
            head: vec![
                "method",
                "samples",
                "lat p50",
                "lat p99",
                "lat p99.9",
                "lat max",
                "dt SD",
                "|dt−T| p99",
                "overruns",
                "CPU",
                "step",
                "notes",
            ],
            rows: methods.iter().map(MethodRows::cells).collect(),
            notes,
        }
    }
}

/// The comparison table for the terminal: one row per method, and the notes below it.
pub fn methods_table(runs: &[MethodRun]) -> String {
    let t = MethodsTable::of(runs);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(t.head.clone());
    for row in &t.rows {
        table.add_row(row.clone());
    }
    for (i, col) in table.column_iter_mut().enumerate() {
        if (1..=10).contains(&i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    format!("{}\n{}", crate::fit::table(&table), t.notes.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
