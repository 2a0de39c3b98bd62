//! What the gate compares: one run (or a fleet's merged runs) as a sequence of windows —
//! normally one second each — plus the whole run's latency distribution.
//!
//! The window is the sampling unit of every windowed test: wake-ups within a second are not
//! independent (periodic interference and hypervisor stalls move many of them together), so
//! the statistics resample and compare windows, never single wake-ups.

use serde::Serialize;
use tickscope_engine::time::Nanos;

/// How much a series knows about each of its windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    /// Every window carries its full latency histogram (interval logs): tail quantiles of the
    /// run are resampled window by window (block bootstrap).
    Histograms,
    /// Windows carry a summary only — wake-ups, overruns, p99, max (tickscope JSON): the
    /// shape test compares the windows' p99s; tail quantiles come from the run's histogram
    /// with wake-ups taken as independent (reduced power, see `docs/gate.md`).
    Summaries,
    /// No windows (cyclictest, jitterdebugger): every test takes wake-ups as independent and
    /// decides at a stricter level (reduced power).
    None,
}

/// One window of a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Window {
    /// Wake-ups in the window.
    pub samples: u64,
    /// Overruns in the window, when the source counts them.
    pub overruns: Option<u64>,
    /// The window's 99th percentile of latency, ns, when known.
    pub p99: Option<Nanos>,
    /// The window's latency histogram, ascending `(value, count)`, value the top of the
    /// bucket (ns for tickscope); empty for [`WindowKind::Summaries`].
    pub histogram: Vec<(Nanos, u64)>,
}

/// A run as the gate reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The file it came from (for messages).
    pub source: String,
    /// The format, by name (`tickscope`, `hlog`, `cyclictest`, `jitterdebugger`).
    pub format: &'static str,
    /// The whole run's latency histogram, ascending `(value, count)`.
    pub total: Vec<(Nanos, u64)>,
    /// Wake-ups in the whole run (equal to the sum of `total`'s counts).
    pub samples: u64,
    /// Overruns in the whole run, when the source counts them.
    pub overruns: Option<u64>,
    /// The windows, in time order (empty for [`WindowKind::None`]).
    pub windows: Vec<Window>,
    /// What the windows hold.
    pub window_kind: WindowKind,
    /// Remarks on how the input was read (histogram overflow, the tag used, …).
    pub notes: Vec<String>,
}

/// The value at quantile `q` (0 ..= 1) of ascending `(value, count)` pairs: the value of the
/// bucket holding the wake-up of rank `max(1, ⌈q·n⌉)`, tickscope's rank rule. `None` when
/// empty.
pub fn quantile_of(buckets: &[(Nanos, u64)], q: f64) -> Option<Nanos> {
    tickscope_report::import::bucket_quantile(buckets, q)
}

impl Series {
    /// Builds the window-derived fields of a series from its windows: the total histogram,
    /// wake-ups and overruns (when every window counts them), and each window's p99.
    pub fn from_histogram_windows(
        source: String,
        format: &'static str,
        mut windows: Vec<Window>,
        notes: Vec<String>,
    ) -> Series {
        let mut total = std::collections::BTreeMap::<Nanos, u64>::new();
        for w in &mut windows {
            for &(v, c) in &w.histogram {
                *total.entry(v).or_default() += c;
            }
            w.samples = w.histogram.iter().map(|b| b.1).sum();
            w.p99 = quantile_of(&w.histogram, 0.99);
        }
        windows.retain(|w| w.samples > 0);
        let overruns = windows
            .iter()
            .map(|w| w.overruns)
            .sum::<Option<u64>>()
            .filter(|_| !windows.is_empty());
        let total: Vec<(Nanos, u64)> = total.into_iter().collect();
        Series {
            source,
            format,
            samples: total.iter().map(|b| b.1).sum(),
            total,
            overruns,
            windows,
            window_kind: WindowKind::Histograms,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_from_windows_sums_them_and_drops_empty_ones() {
        let w = |h: Vec<(Nanos, u64)>| Window {
            histogram: h,
            ..Window::default()
        };
        let s = Series::from_histogram_windows(
            "x".into(),
            "hlog",
            vec![
                w(vec![(10, 99), (50, 1)]),
                w(vec![]),
                w(vec![(10, 1), (20, 3)]),
            ],
            vec![],
        );
        assert_eq!(s.windows.len(), 2);
        assert_eq!(s.samples, 104);
        assert_eq!(s.total, vec![(10, 100), (20, 3), (50, 1)]);
        assert_eq!(s.windows[0].p99, Some(10));
        assert_eq!(s.windows[1].p99, Some(20));
        assert_eq!(s.overruns, None);
    }
}
