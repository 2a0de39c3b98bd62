//! The latency histogram in cyclictest's `-h`/`--histfile` text format, so scripts written
//! for cyclictest (OSADL's latency plots among them) read tickscope's results unchanged.
//!
//! Format (rt-tests `cyclictest.c`, `print_hist`): a `# Histogram` line, then one line per
//! 1 µs bucket, `%06d` bucket followed by one `%06lu` count per thread separated by tabs;
//! then `# Total:` (samples in the histogram), `# Min Latencies:`, `# Avg Latencies:`,
//! `# Max Latencies:` (µs, `%05lu`), `# Histogram Overflows:` and
//! `# Histogram Overflow at cycle number:` with one `# Thread N:` line each.
//!
//! Bucket k counts latencies in [k, k+1) µs (cyclictest truncates to whole µs). tickscope's
//! histogram keeps values to a relative precision (`tickscope_engine::histogram::
//! SIGNIFICANT_FIGURES`); each of its buckets is assigned by its upper bound, so a value
//! within one bucket width below a whole µs may be counted one µs higher. The buckets run
//! up to the largest latency, at most [`MAX_BUCKETS`] µs; beyond, values are overflows.
//! With a range ([`HistogramOptions::range_us`], cyclictest's `-h N`) the buckets are
//! 0 … N−1 µs and every latency of N µs or more is an overflow, excluded from `# Total` as
//! in cyclictest; the overflows' cycle numbers (wake-up numbers from 0) are listed when the
//! caller collected them (the first [`CYCLES_KEPT`] per thread — with a range, the first N,
//! as many as cyclictest keeps — then `# NNNNN others` as cyclictest does when its list is
//! full). With [`HistogramOptions::all_column`]
//! (cyclictest's `-H`) a last column sums every thread. Latencies below zero (early
//! wake-ups, which cyclictest cannot represent) are counted in bucket 0 and reported in a
//! comment line. A document with several runs has one column per thread of each run.

use super::{ExportError, Exporter};
use crate::document::RunDocument;
use std::fmt::Write;
use tickscope_engine::result::ThreadStats;

/// The most 1 µs buckets written (100 ms); larger latencies are counted as overflows.
pub const MAX_BUCKETS: usize = 100_000;

/// Overflow cycle numbers listed per thread; beyond, `# NNNNN others`.
pub const CYCLES_KEPT: usize = 1000;

/// cyclictest `-h` histogram text, buckets up to the largest latency.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistogramFile;

/// How the histogram is laid out beyond the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistogramOptions {
    /// Buckets 0 … N−1 µs (cyclictest `-h N`); `None`: up to the largest latency.
    pub range_us: Option<usize>,
    /// A last column with every thread summed (cyclictest `-H`).
    pub all_column: bool,
    /// Per column (thread), the cycle numbers of overflows collected, at most
    /// [`CYCLES_KEPT`] each; empty when not collected.
    pub overflow_cycles: Vec<Vec<u64>>,
}

struct Column {
    name: String,
    counts: Vec<u64>,
    overflows: u64,
    early: u64,
    min_us: i64,
    avg_us: i64,
    max_us: i64,
}

fn column(name: String, t: &ThreadStats, buckets: usize) -> Column {
    let mut c = Column {
        name,
        counts: vec![0; buckets],
        overflows: 0,
        early: 0,
        min_us: 0,
        avg_us: 0,
        max_us: 0,
    };
    if let Some(l) = &t.latency_ns {
        for &(v, n) in &l.histogram.buckets {
            // A bucket's upper bound can lie beyond the exact maximum; clamp to it.
            let v = v.min(l.max);
            if v < 0 {
                c.early += n;
                c.counts[0] += n;
            } else if let Some(slot) = c.counts.get_mut((v / 1000) as usize) {
                *slot += n;
            } else {
                c.overflows += n;
            }
        }
        c.min_us = l.min / 1000;
        c.avg_us = (l.mean / 1000.0) as i64;
        c.max_us = l.max / 1000;
    }
    c
}

impl Exporter for HistogramFile {
    fn what(&self) -> &'static str {
        "histogram file"
    }

    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError> {
        Ok(render_with(doc, &HistogramOptions::default()).into_bytes())
    }
}

/// The histogram text of `doc` laid out by `opts`.
///
/// # Panics
/// Never.
pub fn render_with(doc: &RunDocument, opts: &HistogramOptions) -> String {
    {
        let runs = doc.each_run();
        let rounds = runs.iter().map(|r| r.round).max().unwrap_or(1);
        let threads: Vec<(String, &ThreadStats)> = runs
            .iter()
            .flat_map(|r| {
                let prefix = if runs.len() > 1 {
                    format!("{} ", r.name(rounds))
                } else {
                    String::new()
                };
                r.threads
                    .iter()
                    .enumerate()
                    .map(move |(i, t)| (format!("{prefix}T{}", t.thread.unwrap_or(i)), t))
            })
            .collect();
        let largest = threads
            .iter()
            .filter_map(|(_, t)| t.latency_ns.as_ref().map(|l| l.max))
            .max()
            .unwrap_or(0);
        let buckets = opts
            .range_us
            .unwrap_or((largest.max(0) / 1000) as usize + 1)
            .clamp(1, MAX_BUCKETS);
        let mut cols: Vec<Column> = threads
            .into_iter()
            .map(|(n, t)| column(n, t, buckets))
            .collect();
        if opts.all_column && cols.len() > 1 {
            let all = all_column(&cols);
            cols.push(all);
        }

        let mut out = String::new();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        let _ = writeln!(
            out,
            "# {} {}: wake-up latency histogram in cyclictest -h format",
            doc.tool.name, doc.tool.version
        );
        let _ = writeln!(
            out,
            "# 1 us buckets (latency truncated to whole us); columns: {}",
            names.join(", ")
        );
        out += "# Histogram\n";
        for b in 0..buckets {
            let counts: Vec<String> = cols.iter().map(|c| format!("{:06}", c.counts[b])).collect();
            let _ = writeln!(out, "{b:06} {}", counts.join("\t"));
        }
        let line = |label: &str, f: &dyn Fn(&Column) -> String| {
            let values: Vec<String> = cols.iter().map(|c| format!(" {}", f(c))).collect();
            format!("# {label}:{}\n", values.concat())
        };
        out += &line("Total", &|c| format!("{:09}", c.counts.iter().sum::<u64>()));
        out += &line("Min Latencies", &|c| format!("{:05}", c.min_us));
        out += &line("Avg Latencies", &|c| format!("{:05}", c.avg_us));
        out += &line("Max Latencies", &|c| format!("{:05}", c.max_us));
        out += &line("Histogram Overflows", &|c| format!("{:05}", c.overflows));
        out += "# Histogram Overflow at cycle number:\n";
        // Cycle numbers belong to threads; the summed column (-H) has none.
        for (i, c) in cols.iter().enumerate().filter(|(_, c)| c.name != "all") {
            let _ = write!(out, "# Thread {i}:");
            let listed = opts.overflow_cycles.get(i).map_or(&[][..], Vec::as_slice);
            // cyclictest keeps as many cycle numbers as it has buckets (its `outliers`
            // array has `histogram` entries); the rest are counted as `others`.
            let listed = &listed[..listed.len().min(opts.range_us.unwrap_or(CYCLES_KEPT))];
            for cycle in listed {
                let _ = write!(out, " {cycle:05}");
            }
            let others = c.overflows.saturating_sub(listed.len() as u64);
            if others > 0 {
                let _ = write!(out, " # {others:05} others");
            }
            out += "\n";
        }
        if cols.iter().any(|c| c.early > 0) {
            out += &line("Early wake-ups (latency < 0, counted in bucket 0)", &|c| {
                format!("{:05}", c.early)
            });
        }
        out += "\n";
        out
    }
}

/// Every thread's column summed (cyclictest `-H`): counts and overflows added, the smallest
/// minimum, the largest maximum, the sample-weighted mean.
fn all_column(cols: &[Column]) -> Column {
    let n = |c: &Column| c.counts.iter().sum::<u64>() as f64;
    let total: f64 = cols.iter().map(n).sum();
    Column {
        name: "all".into(),
        counts: (0..cols[0].counts.len())
            .map(|b| cols.iter().map(|c| c.counts[b]).sum())
            .collect(),
        overflows: cols.iter().map(|c| c.overflows).sum(),
        early: cols.iter().map(|c| c.early).sum(),
        min_us: cols.iter().map(|c| c.min_us).min().unwrap_or(0),
        avg_us: if total > 0.0 {
            (cols.iter().map(|c| c.avg_us as f64 * n(c)).sum::<f64>() / total) as i64
        } else {
            0
        },
        max_us: cols.iter().map(|c| c.max_us).max().unwrap_or(0),
    }
}
