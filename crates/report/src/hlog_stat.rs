//! `hlog stat`'s selection and table: which intervals of one or more logs count (a tag, a
//! time range on one axis for a whole fleet), and the percentiles of what they add up to.
//!
//! Percentiles are read at the tops of HdrHistogram's buckets (`highest_equivalent`), the
//! value every wake-up in the bucket is at most (HdrHistogram, Gil Tene,
//! <https://hdrhistogram.github.io/HdrHistogram/>).

use crate::import::hlog::{Head, Totals};

/// A time range over the logs, seconds from `origin` (the earliest log's start, so that the
/// hosts of a fleet share one axis). An interval counts when its start is in `[from, to)`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeRange {
    /// First second kept; `None`: from the start.
    pub from: Option<f64>,
    /// First second not kept; `None`: to the end.
    pub to: Option<f64>,
    /// Seconds since the Unix epoch that second 0 of the range stands for.
    pub origin: f64,
}

impl TimeRange {
    /// The range `[from, to)` (seconds; `None`: open on that side), origin 0 until the logs
    /// are read.
    ///
    /// # Errors
    /// One sentence when both ends are given and `to` is not after `from`.
    pub fn new(from: Option<f64>, to: Option<f64>) -> Result<TimeRange, String> {
        if let (Some(f), Some(t)) = (from, to) {
            if t <= f {
                return Err(format!("the end ({t} s) must be after the start ({f} s)"));
            }
        }
        Ok(TimeRange {
            from,
            to,
            origin: 0.0,
        })
    }

    /// Whether a range was given at all (only then is an origin needed).
    pub fn is_bounded(&self) -> bool {
        self.from.is_some() || self.to.is_some()
    }

    /// Whether an interval starting at `start` (seconds since the epoch) is in the range; a
    /// nanosecond of tolerance absorbs the log's millisecond rounding.
    pub fn contains(&self, start: f64) -> bool {
        let t = start - self.origin;
        !(self.from.is_some_and(|f| t < f - 1e-9) || self.to.is_some_and(|e| t >= e - 1e-9))
    }

    /// Whether `head` is kept: its tag is `tag` (any tag when `None`) and it starts in range.
    pub fn keeps(&self, tag: Option<&str>, head: &Head) -> bool {
        tag.is_none_or(|t| t == head.tag) && self.contains(head.start)
    }
}

/// The table `hlog stat` prints: per tag, intervals, count, min, p50, p90, p99, p99.9,
/// p99.99 and max in µs with three decimals (the log holds ns), then a line saying so.
/// Tags with no interval kept are left out; the untagged intervals show as `(none)`.
pub fn stat_table(totals: &Totals) -> String {
    let mut out = format!(
        "{:<10} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "tag", "intervals", "count", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max"
    );
    for (tag, total) in &totals.tags {
        let Some(h) = &total.histogram else { continue };
        let us = |v: u64| format!("{:.3}", v as f64 / 1e3);
        let q = |p: f64| us(h.highest_equivalent(h.value_at_quantile(p)));
        let name = if tag.is_empty() { "(none)" } else { tag };
        out.push_str(&format!(
            "{:<10} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            name,
            total.intervals,
            h.len(),
            us(h.min()),
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            q(0.9999),
            us(h.max())
        ));
    }
    out.push_str("values in µs (ns in the log), percentiles at HdrHistogram's bucket tops");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_keeps_starts_from_its_first_second_up_to_but_not_its_last() {
        let r = TimeRange {
            from: Some(1.0),
            to: Some(3.0),
            origin: 100.0,
        };
        assert!(r.is_bounded());
        assert!(!r.contains(100.5));
        assert!(r.contains(101.0));
        assert!(r.contains(102.999));
        assert!(!r.contains(103.0));
        assert!(TimeRange::default().contains(-5.0));
        assert!(TimeRange::new(Some(2.0), Some(2.0)).is_err());
    }

    #[test]
    fn an_empty_total_is_the_heading_and_the_unit_line() {
        let t = stat_table(&Totals::default());
        assert_eq!(t.lines().count(), 2);
        assert!(t.starts_with("tag "));
    }
}
