//! cyclictest's `-q` summary: after the run, one line per thread,
//!
//! ```text
//! T: 0 ( 1234) P:90 I:1000 C:   1000 Min:      3 Act:    5 Avg:    4 Max:      21
//! ```
//!
//! in the layout of rt-tests' `print_stat()` (src/cyclictest/cyclictest.c, rt-tests 2.4:
//! `"T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld"`), so that scripts
//! that read cyclictest's last lines read tickscope's. cyclictest prints them only when no
//! histogram was asked for (`if (quiet && !histogram)`), which keeps `-h N -q > hist.txt`
//! the histogram alone; [`crate::cmd::sinks`] follows that rule.
//!
//! The values are cyclictest's: latencies in whole µs, each truncated toward zero as its
//! `calcdiff()` does; Min and Max are the extremes, Act the last wake-up's latency
//! ([`tickscope_engine::result::ThreadStats::last_latency_ns`], kept by the measuring loop
//! as one register move, so nothing is streamed per wake-up for it), Avg the mean truncated
//! to whole µs — cyclictest sums the truncated latencies instead, so its Avg can be up to
//! 1 µs lower; I is the interval in µs and P the real-time priority read back (0 for the
//! other policies).

use crate::console::Console;
use tickscope_engine::setup::Policy;
use tickscope_engine::time::NS_PER_US;
use tickscope_report::sink::terminal::Printer;
use tickscope_report::sink::{RunSink, SinkError};
use tickscope_report::RunDocument;

/// Prints cyclictest's per-thread lines when the (single) run ends.
pub struct StatLines {
    printer: Box<dyn Printer>,
}

impl StatLines {
    /// A sink printing through the console.
    pub fn new() -> Self {
        StatLines {
            printer: Box::new(Console),
        }
    }
}

/// A latency in whole µs, truncated toward zero (cyclictest's `calcdiff()`).
fn truncated_us(ns: i64) -> i64 {
    ns / NS_PER_US
}

/// The real-time priority cyclictest's `P:` shows: fifo's and rr's, else 0.
fn priority(policy: &Policy) -> u8 {
    match *policy {
        Policy::Fifo { priority } | Policy::Rr { priority } => priority,
        _ => 0,
    }
}

/// Thread `index`'s line in cyclictest's layout (µs; `interval_us` the interval).
fn line(index: usize, tid: i32, prio: u8, interval_us: i64, t: &ThreadLine) -> String {
    format!(
        "T:{index:2} ({tid:5}) P:{prio:2} I:{interval_us} C:{:7} Min:{:7} Act:{:5} Avg:{:5} \
         Max:{:8}",
        t.cycles, t.min, t.act, t.avg, t.max
    )
}

/// The numbers of one line, µs.
struct ThreadLine {
    cycles: u64,
    min: i64,
    act: i64,
    avg: i64,
    max: i64,
}

/// The lines of `doc`'s last run, one per thread, from its final statistics.
fn lines(doc: &RunDocument) -> Vec<String> {
    let Some(run) = doc.runs.last() else {
        return Vec::new();
    };
    let prio = priority(&run.applied.policy);
    let interval_us = truncated_us(doc.config.period_ns);
    run.threads
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let index = t.thread.unwrap_or(k);
            let (min, max, mean) = t
                .latency_ns
                .as_ref()
                .map_or((0, 0, 0.0), |l| (l.min, l.max, l.mean));
            let numbers = ThreadLine {
                cycles: t.samples,
                min: truncated_us(min),
                act: t.last_latency_ns.map_or(0, truncated_us),
                avg: (mean / NS_PER_US as f64) as i64,
                max: truncated_us(max),
            };
            line(index, t.tid.unwrap_or(0), prio, interval_us, &numbers)
        })
        .collect()
}

impl RunSink for StatLines {
    fn finish(&mut self, doc: &RunDocument, _notes: &mut Vec<String>) -> Result<(), SinkError> {
        for l in lines(doc) {
            self.printer.line(&l);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_cyclictests() {
        // As printed by rt-tests 2.4 `cyclictest -l100 -q -m -i1000 -p90`.
        let t = ThreadLine {
            cycles: 100,
            min: 13,
            act: 33,
            avg: 27,
            max: 51,
        };
        assert_eq!(
            line(0, 22256, 90, 1000, &t),
            "T: 0 (22256) P:90 I:1000 C:    100 Min:     13 Act:   33 Avg:   27 Max:      51"
        );
    }

    #[test]
    fn latencies_truncate_toward_zero() {
        assert_eq!(truncated_us(1999), 1);
        assert_eq!(truncated_us(-1999), -1);
        assert_eq!(priority(&Policy::Other { nice: 0 }), 0);
        assert_eq!(priority(&Policy::Rr { priority: 7 }), 7);
    }
}
