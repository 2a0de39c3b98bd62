//! The per-second lines of `tickscope run`: statistics of that second alone (the rt 2013
//! post's idea, with percent-of-period columns for dt), wake-up latency, and each thread's
//! worst latency so far — the running maximum cyclictest's and rtla's live views keep, so a
//! long run's worst needs no scanning.
//!
//! Two layouts, chosen by the terminal's width: [`Layout::Wide`] (123 columns: every
//! column) where it fits or when the output is not a terminal, [`Layout::Compact`] (under
//! 80 columns) otherwise: latency min/avg/p99/max, the maximum so far, dt SD, the largest
//! |dt − period| in % of the period, overruns (the header's "over runs") and CPU.

use crate::units::us;
use tickscope_engine::result::WindowStats;
use tickscope_engine::run::SecondWindows;

/// Threads up to which every thread gets its own per-second line; beyond, one merged line
/// and the worst thread.
pub const PER_THREAD_LINES_UP_TO: usize = 4;

/// Columns the wide layout needs.
pub const WIDE_COLUMNS: usize = 123;

/// Which per-second layout to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Every column (123 characters).
    Wide,
    /// The columns that matter most, under 80 characters.
    Compact,
}

impl Layout {
    /// The layout for a terminal `width` columns wide; `None` (not a terminal, e.g. a file
    /// or a pipe) gets the wide layout.
    pub fn for_width(width: Option<usize>) -> Layout {
        match width {
            Some(w) if w < WIDE_COLUMNS => Layout::Compact,
            _ => Layout::Wide,
        }
    }
}

/// Each thread's largest latency so far, ns, and all threads' (`merged`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunningMax {
    per_thread: Vec<Option<i64>>,
    merged: Option<i64>,
}

impl RunningMax {
    /// Takes in one window.
    pub fn update(&mut self, r: &SecondWindows) {
        for (t, w) in &r.threads {
            if self.per_thread.len() <= *t {
                self.per_thread.resize(t + 1, None);
            }
            self.per_thread[*t] = self.per_thread[*t].max(w.latency_max);
        }
        self.merged = self.merged.max(r.merged.latency_max);
    }

    /// Thread `t`'s maximum so far, ns.
    pub fn thread(&self, t: usize) -> Option<i64> {
        self.per_thread.get(t).copied().flatten()
    }

    /// All threads' maximum so far, ns.
    pub fn merged(&self) -> Option<i64> {
        self.merged
    }
}

/// The column header of the per-second lines (two lines).
pub fn header(layout: Layout) -> String {
    match layout {
        Layout::Wide => format!(
            "{:>6} {:>4} {:>6} │{:>8} {:>8} {:>8} {:>9} │{:>10} │{:>10} {:>8} {:>6} {:>6} {:>6} │{:>6} {:>5}\n\
             {:>6} {:>4} {:>6} │{:>35} │{:>10} │{:>40} │{:>6} {:>5}",
            "time", "T", "n", "lat min", "avg", "p99", "max", "max so far", "dt mean", "SD",
            "SD%", "min%", "max%", "over", "cpu%", "[s]", "", "",
            "wake-up latency [µs]", "[µs]", "period dt [µs], % of period", "runs", "",
        ),
        Layout::Compact => format!(
            "{:>5} {:>3} {:>5}│{:>6} {:>6} {:>6} {:>7}│{:>8}│{:>6} {:>6}│{:>5} {:>4}\n\
             {:>5} {:>3} {:>5}│{:>27}│{:>8}│{:>13}│{:>5} {:>4}",
            "time", "T", "n", "min", "avg", "p99", "max", "so far", "dt SD", "|dt-T|", "over",
            "cpu%", "[s]", "", "", "latency [µs]", "[µs]", "[µs]  [%]", "runs", "",
        ),
    }
}

/// The second a window's line is printed under (its `time [s]` column): the end of the
/// window, in whole seconds since the first expiry — 1 for the first window (index 0). Every
/// message about a window names it by this number, as the per-second table and the HTML
/// report's "Second by second" table do.
pub fn second_of(w: &WindowStats) -> u64 {
    let end_ns = w.start_ns + w.span as i64 * 1_000_000_000;
    (end_ns as f64 / 1e9).round().max(0.0) as u64
}

/// The per-second line(s) of one window: one per thread up to [`PER_THREAD_LINES_UP_TO`]
/// threads, else the merged line and the thread with the largest maximum latency. `worst`
/// must already include this window.
pub fn lines(
    r: &SecondWindows,
    period_ns: i64,
    thread_count: usize,
    worst: &RunningMax,
    layout: Layout,
) -> String {
    let t_end = second_of(&r.merged);
    let line = |who: &str, w: &WindowStats, so_far: Option<i64>| match layout {
        Layout::Wide => wide(t_end, who, w, so_far, period_ns),
        Layout::Compact => compact(t_end, who, w, so_far, period_ns),
    };
    if thread_count <= PER_THREAD_LINES_UP_TO {
        return r
            .threads
            .iter()
            .map(|(t, w)| line(&format!("T{t}"), w, worst.thread(*t)))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let mut out = line("all", &r.merged, worst.merged());
    if let Some((t, w)) = r
        .threads
        .iter()
        .max_by_key(|(_, w)| w.latency_max.unwrap_or(i64::MIN))
    {
        out += "\n";
        out += &line(&format!("T{t}"), w, worst.thread(*t));
        out += " ← worst";
    }
    out
}

/// The per-second `lines` with the window's compact `/proc` context (`--explain`): after
/// the line in the wide layout, on a line of its own under it in the compact one (which
/// must stay within 80 columns).
pub fn with_context(lines: String, context: &str, layout: Layout) -> String {
    match layout {
        Layout::Wide => format!("{lines} │ {context}"),
        Layout::Compact => {
            let room = 80 - 19;
            let text: String = match context.chars().count() > room {
                true => context.chars().take(room - 1).chain(['…']).collect(),
                false => context.to_string(),
            };
            format!("{lines}\n{:>17}└ {text}", "")
        }
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".to_string(), us)
}

fn opt_i(v: Option<i64>) -> String {
    opt(v.map(|x| x as f64))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.2}"))
}

fn wide(t_end: u64, who: &str, w: &WindowStats, so_far: Option<i64>, period_ns: i64) -> String {
    let t = period_ns as f64;
    format!(
        "{:>6} {:>4} {:>6} │{:>8} {:>8} {:>8} {:>9} │{:>10} │{:>10} {:>8} {:>6} {:>6} {:>6} │{:>6} {:>5}",
        t_end,
        who,
        w.samples,
        opt_i(w.latency_min),
        opt(w.latency_mean),
        opt_i(w.latency_p99),
        opt_i(w.latency_max),
        opt_i(so_far),
        w.period_mean
            .map_or("-".to_string(), |v| format!("{:.3}", v / 1e3)),
        opt(w.period_stddev),
        pct(w.period_stddev.map(|s| 100.0 * s / t)),
        pct(w.period_min.map(|m| 100.0 * (t - m as f64) / t)),
        pct(w.period_max.map(|m| 100.0 * (m as f64 - t) / t)),
        w.overruns,
        w.cpu_percent.map_or("-".to_string(), |c| format!("{c:.1}")),
    )
}

fn compact(t_end: u64, who: &str, w: &WindowStats, so_far: Option<i64>, period_ns: i64) -> String {
    let t = period_ns as f64;
    let deviation = match (w.period_min, w.period_max) {
        (Some(lo), Some(hi)) => Some(100.0 * (t - lo as f64).max(hi as f64 - t) / t),
        _ => None,
    };
    format!(
        "{:>5} {:>3} {:>5}│{:>6} {:>6} {:>6} {:>7}│{:>8}│{:>6} {:>6}│{:>5} {:>4}",
        t_end,
        who,
        w.samples,
        opt_i(w.latency_min),
        opt(w.latency_mean),
        opt_i(w.latency_p99),
        opt_i(w.latency_max),
        opt_i(so_far),
        opt(w.period_stddev),
        pct(deviation),
        w.overruns,
        w.cpu_percent.map_or("-".to_string(), |c| format!("{c:.0}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_follows_the_line_and_the_compact_layout_stays_under_80_columns() {
        let ctx = "steal 3 ticks · T0 policy fifo:1 · T0 preempted 12× · virtio1-req.0 412 · NET_RX 97 · and more";
        let wide = with_context("line".into(), ctx, Layout::Wide);
        assert_eq!(wide, format!("line │ {ctx}"));
        let compact = with_context("line".into(), ctx, Layout::Compact);
        let second = compact.lines().nth(1).unwrap();
        assert!(second.trim_start().starts_with("└ steal 3 ticks"));
        assert!(second.chars().count() <= 80, "{}", second.chars().count());
        assert!(second.ends_with('…'));
    }
    use tickscope_engine::record::WindowRecord;
    use tickscope_engine::stats::window_stats;

    fn window(index: u64, base: i64) -> WindowStats {
        let mut r = WindowRecord::new();
        r.begin(index);
        let mut last = None;
        for k in 0..1000i64 {
            let lat = base + (k % 7) * 1_000;
            let woke = k * 1_000_000 + lat;
            r.record(lat, last.map(|l: i64| (woke - l, 1_000_000)));
            last = Some(woke);
        }
        r.overruns = (base / 10_000) as u64;
        window_stats(&r, 1_000_000_000, 1_000_000, Some(1.5))
    }

    fn report(threads: usize) -> SecondWindows {
        let per: Vec<(usize, WindowStats)> = (0..threads)
            .map(|t| (t, window(2, 10_000 + 5_000 * t as i64)))
            .collect();
        SecondWindows {
            index: 2,
            first_expiry: 0,
            merged: per[0].1.clone(),
            threads: per,
        }
    }

    /// The lines of a window with the running maximum taken in.
    fn with_max(r: &SecondWindows, layout: Layout) -> String {
        let mut worst = RunningMax::default();
        worst.update(r);
        lines(r, 1_000_000, r.threads.len(), &worst, layout)
    }

    #[test]
    fn compact_layout_fits_80_columns() {
        let text = format!(
            "{}\n{}",
            header(Layout::Compact),
            with_max(&report(2), Layout::Compact)
        );
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_running_maximum_keeps_the_worst_window() {
        let mut worst = RunningMax::default();
        worst.update(&report(2));
        let mut calm = report(2);
        for (_, w) in &mut calm.threads {
            w.latency_max = Some(1);
        }
        calm.merged.latency_max = Some(1);
        worst.update(&calm);
        assert_eq!(worst.thread(1), report(2).threads[1].1.latency_max);
        assert_eq!(worst.merged(), report(2).merged.latency_max);
        assert_eq!(Layout::for_width(Some(80)), Layout::Compact);
        assert_eq!(Layout::for_width(None), Layout::Wide);
        assert_eq!(Layout::for_width(Some(200)), Layout::Wide);
    }

    #[test]
    fn per_thread_lines_up_to_four_threads() {
        insta::assert_snapshot!(with_max(&report(2), Layout::Wide));
    }

    #[test]
    fn merged_line_and_worst_thread_beyond_four() {
        let text = with_max(&report(8), Layout::Wide);
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().next().unwrap().contains(" all "));
        assert!(text.ends_with("← worst"));
        assert!(
            text.contains(" T7 "),
            "the thread with the largest max: {text}"
        );
    }

    #[test]
    fn header_lines() {
        insta::assert_snapshot!(header(Layout::Wide));
    }
}
