//! Per-window percentile bands from an HdrHistogram interval log (`--hlog`): the p50,
//! p99, p99.9 and maximum of every interval of one tag (normally `all`, every thread
//! merged), as steps over the run. Unlike the result document's windows, which keep only
//! a p99 and a maximum per second, the log keeps each interval's whole histogram, so every
//! percentile is exact to the histogram's precision (Gil Tene, HdrHistogram,
//! <https://github.com/HdrHistogram/HdrHistogram>; the interval-log format is its
//! `HistogramLogWriter`'s). The latency axis is logarithmic ([`Axis::latency_log`]).

use super::axis::{number, Axis, Scale};
use super::{color, frame, legend, Chart};
use hdrhistogram::Histogram;
use plotters::coord::Shift;
use plotters::prelude::*;

/// The quantiles drawn, with their names; the maximum is drawn as well.
pub const QUANTILES: [(f64, &str); 3] = [(0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")];

/// One interval: its start and end (s; since the log's first interval once in a
/// [`BandsChart`]) and its p50, p99, p99.9 and maximum, ns — the few numbers a plot over time
/// keeps of an interval instead of its histogram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// Start, s.
    pub start_s: f64,
    /// End, s.
    pub end_s: f64,
    /// p50, p99, p99.9 and the maximum, ns.
    pub values: [u64; 4],
}

impl Band {
    /// The band of an interval starting at `start_s` (s), `length_s` long, holding `h`;
    /// `None` when `h` is empty.
    pub fn of(start_s: f64, length_s: f64, h: &Histogram<u64>) -> Option<Band> {
        if h.is_empty() {
            return None;
        }
        let q = |q: f64| h.value_at_quantile(q);
        Some(Band {
            start_s,
            end_s: start_s + length_s,
            values: [q(0.5), q(0.99), q(0.999), h.max()],
        })
    }
}

/// A bands chart, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct BandsChart {
    title: String,
    tag: String,
    bands: Vec<Band>,
}

impl BandsChart {
    /// The chart of `bands` (intervals of `tag` with values, in the log's order, times as the
    /// log gives them), times made relative to the earliest start; `None` when there are
    /// none.
    pub fn new(title: String, tag: &str, mut bands: Vec<Band>) -> Option<Self> {
        let origin = bands.iter().map(|b| b.start_s).reduce(f64::min)?;
        for b in &mut bands {
            b.start_s -= origin;
            b.end_s -= origin;
        }
        Some(BandsChart {
            title,
            tag: tag.to_string(),
            bands,
        })
    }

    /// The bands, in the log's order.
    pub fn bands(&self) -> &[Band] {
        &self.bands
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        let of = match self.tag.as_str() {
            "" => "untagged intervals; values taken as ns".to_string(),
            t => format!("tag {t}"),
        };
        format!(
            "From the interval log ({of}): p50, p99, p99.9 and maximum latency of each \
             interval on its own, exact to the histogram's precision; one step per interval."
        )
    }
}

impl Chart for BandsChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let t_end = self.bands.iter().map(|b| b.end_s).fold(1.0, f64::max);
        let x = Axis {
            scale: Scale::Linear,
            lo: 0.0,
            hi: t_end,
            desc: "time since the first interval [s]".into(),
            format: number,
        };
        let all = self.bands.iter().flat_map(|b| b.values);
        let y = Axis::latency_log(all.map(|v| v.max(1) as f64 / 1e3), "wake-up latency [µs]")
            .with_headroom(0.25);
        let mut chart = frame(root, &self.title, &x, &y)?;
        let names = [QUANTILES[0].1, QUANTILES[1].1, QUANTILES[2].1, "max"];
        let style = |k: usize| {
            ShapeStyle::from(color([0, 2, 4, 3][k])).stroke_width(if k == 3 { 2 } else { 3 })
        };
        let steps = |k: usize| -> Vec<(f64, f64)> {
            self.bands
                .iter()
                .flat_map(|b| {
                    let v = y.map(b.values[k].max(1) as f64 / 1e3);
                    [(b.start_s, v), (b.end_s, v)]
                })
                .collect()
        };
        // Top to bottom in the legend as on the plot (max first) ...
        for k in (0..4).rev() {
            let s = style(k);
            chart
                .draw_series(LineSeries::new(steps(k), s))
                .map_err(err)?
                .label(names[k])
                .legend(move |(px, py)| PathElement::new(vec![(px, py), (px + 22, py)], s));
        }
        // ... and the maximum drawn again, thinner, on top: where an interval's p99.9 is its
        // maximum (few wake-ups), both stay visible.
        chart
            .draw_series(LineSeries::new(steps(3), style(3)))
            .map_err(err)?;
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::hlog::new_histogram;

    fn band(start: f64, values: &[u64]) -> Option<Band> {
        let mut h = new_histogram();
        values.iter().for_each(|&v| h.record(v).unwrap());
        Band::of(start, 1.0, &h)
    }

    #[test]
    fn one_band_per_interval_of_the_tag_with_ordered_values() {
        let mut lots: Vec<u64> = (1..=1000).map(|k| k * 1_000).collect();
        lots.push(5_000_000);
        let all: Vec<Band> = [
            band(100.0, &lots),
            band(101.0, &[20_000, 30_000]),
            band(102.0, &[]),
        ]
        .into_iter()
        .flatten()
        .collect();
        let c = BandsChart::new("t".into(), "all", all).unwrap();
        assert_eq!(c.bands().len(), 2, "empty intervals left out");
        let b = c.bands()[0];
        assert_eq!((b.start_s, b.end_s), (0.0, 1.0));
        assert!(b.values.windows(2).all(|w| w[0] <= w[1]), "{:?}", b.values);
        assert!(b.values[3] >= 5_000_000 && b.values[1] < 1_100_000);
        assert_eq!(c.bands()[1].start_s, 1.0);
        assert!(BandsChart::new("t".into(), "T9", Vec::new()).is_none());
        let svg = super::super::draw::svg_of(&c);
        assert!(svg.contains("p99.9") && svg.contains("max"));
    }
}
