//! The period plot: how far each period dt strayed from the interval — the distribution of
//! dt − T, counts on a log scale, one step line per thread (or all threads merged) — so
//! period jitter, a headline figure of the summary, has a picture as latency does. Negative
//! values are periods shorter than the interval (a late wake-up followed by a timely one).
//!
//! Bins are a round width (1, 2, 5 × 10^k ns) giving about [`BINS`] bins between the
//! smallest and the largest deviation; the whole range is always drawn.

use super::axis::{number, round_up, Axis, Scale};
use super::{color, frame, legend, Chart};
use crate::units::ns_i;
use plotters::coord::Shift;
use plotters::prelude::*;
use tickscope_engine::result::ThreadStats;
use tickscope_engine::time::Nanos;

/// How many bins the x range is divided into, about.
pub const BINS: i64 = 200;

/// The distribution of dt − T, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodChart {
    title: String,
    /// Per series: its name and `(bin index, count)` of its non-empty bins, ascending.
    series: Vec<(String, Vec<(i64, u64)>)>,
    lo_ns: Nanos,
    hi_ns: Nanos,
    bin_ns: Nanos,
}

impl PeriodChart {
    /// Bins the dt − T histograms of `series`; `None` when none has two wake-ups.
    pub fn new(title: String, series: &[(String, &ThreadStats)]) -> Option<Self> {
        let hists: Vec<(&String, &[(Nanos, u64)])> = series
            .iter()
            .filter_map(|(n, t)| {
                let p = t.period_ns.as_ref()?;
                let b = p.deviation_histogram.buckets.as_slice();
                (!b.is_empty()).then_some((n, b))
            })
            .collect();
        let lo = hists
            .iter()
            .filter_map(|(_, b)| b.first())
            .map(|b| b.0)
            .min()?;
        let hi = hists
            .iter()
            .filter_map(|(_, b)| b.last())
            .map(|b| b.0)
            .max()?;
        let (lo, hi) = (lo.min(0), hi.max(0));
        let bin = (round_up(((hi - lo) as f64 / BINS as f64).max(1.0)) as Nanos).max(1);
        let series = hists
            .iter()
            .map(|(name, buckets)| {
                let mut bins: Vec<(i64, u64)> = Vec::new();
                for &(v, c) in buckets.iter() {
                    let b = (v.max(lo).min(hi) - lo).div_euclid(bin);
                    match bins.last_mut() {
                        Some(last) if last.0 == b => last.1 += c,
                        _ => bins.push((b, c)),
                    }
                }
                (name.to_string(), bins)
            })
            .collect();
        Some(PeriodChart {
            title,
            series,
            lo_ns: lo,
            hi_ns: hi,
            bin_ns: bin,
        })
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        format!(
            "Periods per {} bin of dt − interval, from {} to {}; counts on a log scale, one \
             step line per {}. Left of 0: periods shorter than the interval.",
            ns_i(self.bin_ns),
            ns_i(self.lo_ns),
            ns_i(self.hi_ns),
            if self.series.len() > 1 {
                "thread"
            } else {
                "series"
            }
        )
    }
}

impl Chart for PeriodChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let top = self
            .series
            .iter()
            .flat_map(|(_, b)| b.iter().map(|x| x.1))
            .max()
            .unwrap_or(1);
        let span = (self.hi_ns - self.lo_ns + self.bin_ns) as f64 / 1e3;
        let x = Axis {
            scale: Scale::Linear,
            lo: self.lo_ns as f64 / 1e3 - span * 0.02,
            hi: (self.hi_ns + self.bin_ns) as f64 / 1e3 + span * 0.02,
            desc: "period dt − interval [µs]".into(),
            format: number,
        };
        let y = Axis {
            scale: Scale::Log10,
            lo: 0.7,
            hi: round_up(top as f64 * 8.0),
            desc: "periods per bin (log scale)".into(),
            format: number,
        };
        let mut chart = frame(root, &self.title, &x, &y)?;
        let base = y.map(y.lo);
        let (lo, bin) = (self.lo_ns, self.bin_ns);
        for (i, (name, bins)) in self.series.iter().enumerate() {
            let c = color(i);
            // A step line: up at each bin's left edge, across, down at its right edge.
            let mut points = Vec::with_capacity(bins.len() * 4);
            for &(b, n) in bins {
                let x0 = (lo + b * bin) as f64 / 1e3;
                let x1 = (lo + (b + 1) * bin) as f64 / 1e3;
                let h = y.map(n as f64);
                points.extend([(x0, base), (x0, h), (x1, h), (x1, base)]);
            }
            chart
                .draw_series(LineSeries::new(points, c.stroke_width(2)))
                .map_err(err)?
                .label(name.clone())
                .legend(move |(px, py)| {
                    PathElement::new([(px, py), (px + 18, py)], c.stroke_width(3))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}
