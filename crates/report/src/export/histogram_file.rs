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
//! tickscope does not keep the cycle numbers of overflows, so each thread's line says
//! `# NNNNN others` as cyclictest does when its list is full. Latencies below zero (early
//! wake-ups, which cyclictest cannot represent) are counted in bucket 0 and reported in a
//! comment line. A document with several runs has one column per thread of each run.

use super::{ExportError, Exporter};
use crate::document::RunDocument;
use std::fmt::Write;
use tickscope_engine::result::ThreadStats;

/// The most 1 µs buckets written (100 ms); larger latencies are counted as overflows.
pub const MAX_BUCKETS: usize = 100_000;

/// cyclictest `-h` histogram text.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistogramFile;

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
        let buckets = ((largest.max(0) / 1000) as usize + 1).min(MAX_BUCKETS);
        let cols: Vec<Column> = threads
            .into_iter()
            .map(|(n, t)| column(n, t, buckets))
            .collect();

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
        for (i, c) in cols.iter().enumerate() {
            let _ = write!(out, "# Thread {i}:");
            if c.overflows > 0 {
                let _ = write!(out, " # {:05} others", c.overflows);
            }
            out += "\n";
        }
        if cols.iter().any(|c| c.early > 0) {
            out += &line("Early wake-ups (latency < 0, counted in bucket 0)", &|c| {
                format!("{:05}", c.early)
            });
        }
        out += "\n";
        Ok(out.into_bytes())
    }
}
