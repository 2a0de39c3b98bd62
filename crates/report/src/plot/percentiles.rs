//! The percentile curve: latency against the fraction of wake-ups that were later, on a
//! log axis labelled as percentiles (90 %, 99 %, 99.9 %, …) — the HdrHistogram look. A flat
//! curve that shoots up at the right end shows a rare tail; the last point is the maximum.
//!
//! Values come from the recorded histograms (`SignedHistogram::value_at_quantile`, clamped
//! to the exact minimum and maximum); nothing is re-measured.

use super::axis::{Axis, Scale};
use super::{color, frame, legend, Chart};
use plotters::coord::Shift;
use plotters::prelude::*;
use tickscope_engine::histogram::SignedHistogram;
use tickscope_engine::result::{LatencyStats, ThreadStats};
use tickscope_engine::time::Nanos;

/// Points per decade of 1/(1 − q).
pub const STEPS_PER_DECADE: u32 = 20;

/// One curve: its name and `(1/(1 − q), latency ns)` points, ascending; it ends at
/// `1/(1 − q) = n`, the maximum of its n samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Legend label.
    pub name: String,
    /// Points `(1/(1 − q), latency ns)`; the last is the maximum.
    pub points: Vec<(f64, Nanos)>,
}

/// A percentile chart, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct PercentileChart {
    title: String,
    curves: Vec<Curve>,
    decades: u32,
    /// What is measured, for the axes and caption (`wake-up latency`, `response time`).
    value: String,
    /// What one sample is, plural (`wake-ups`, `releases`).
    samples: String,
}

/// One distribution to draw: its legend label, its statistics (with histogram) and its
/// number of samples.
pub type Distribution<'a> = (String, &'a LatencyStats, u64);

/// The curve of one distribution of `n` samples, up to `10^decades`.
fn curve(name: &str, l: &LatencyStats, n: u64, decades: u32) -> Option<Curve> {
    let h = SignedHistogram::from_buckets(&l.histogram);
    let n = n.max(1) as f64;
    let mut points = Vec::new();
    for i in 0..=decades * STEPS_PER_DECADE {
        let x = 10f64.powf(i as f64 / STEPS_PER_DECADE as f64);
        if x > n {
            break;
        }
        // q = 0 is the exact minimum; above, the histogram's bucket values, kept within the
        // exact extremes.
        let v = if i == 0 {
            l.min
        } else {
            h.value_at_quantile(1.0 - 1.0 / x)?.min(l.max).max(l.min)
        };
        // A flat stretch needs only its two ends (collinear points draw badly when thick).
        match points.as_slice() {
            [.., (_, a), (_, b)] if *a == v && *b == v => *points.last_mut().expect("two") = (x, v),
            _ => points.push((x, v)),
        }
    }
    // The maximum is the last of n samples: 1/(1 − q) = n.
    points.push((n.max(points.last().map_or(1.0, |p| p.0)), l.max));
    Some(Curve {
        name: name.to_string(),
        points,
    })
}

/// A percentile such as `99.9 %` for `x = 1/(1 − q)`.
pub fn percent_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / x);
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

impl PercentileChart {
    /// Wake-up latency curves for every series that has wake-ups; `None` when none has.
    pub fn new(title: String, series: &[(String, &ThreadStats)]) -> Option<Self> {
        let series: Vec<Distribution<'_>> = series
            .iter()
            .filter_map(|(name, t)| Some((name.clone(), t.latency_ns.as_ref()?, t.samples)))
            .collect();
        Self::of(title, &series, "wake-up latency", "wake-ups")
    }

    /// Curves of any distributions of times, `value` naming what they measure (`response
    /// time`) and `samples` what one sample is, plural (`releases`); `None` when there is no
    /// series.
    pub fn of(
        title: String,
        series: &[Distribution<'_>],
        value: &str,
        samples: &str,
    ) -> Option<Self> {
        let n = series.iter().map(|(_, _, n)| *n).max()?;
        let decades = ((n.max(10) as f64).log10().ceil() as u32).max(1);
        let curves: Vec<Curve> = series
            .iter()
            .filter_map(|(name, l, n)| curve(name, l, *n, decades))
            .collect();
        if curves.is_empty() {
            return None;
        }
        Some(PercentileChart {
            title,
            curves,
            decades,
            value: value.into(),
            samples: samples.into(),
        })
    }

    /// The curves.
    pub fn curves(&self) -> &[Curve] {
        &self.curves
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        if self.value == "wake-up latency" {
            return "Latency (y) that the given share of wake-ups stayed within (x, log scale): \
                    at 99% one wake-up in 100 was later. Each curve ends at its maximum."
                .into();
        }
        let mut value = self.value.clone();
        if let Some(first) = value.get(..1) {
            value = first.to_uppercase() + &value[1..];
        }
        format!(
            "{value} (y) that the given share of {} stayed within (x, log scale): at 99% one \
             in 100 was later. Each curve ends at its maximum.",
            self.samples
        )
    }
}

impl Chart for PercentileChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let x = Axis {
            scale: Scale::Log10,
            lo: 1.0,
            hi: 10f64.powi(self.decades as i32),
            desc: format!(
                "share of {} at or below the {} (percentile, log scale)",
                self.samples,
                match self.value.as_str() {
                    "wake-up latency" => "latency",
                    other => other,
                }
            ),
            format: percent_label,
        };
        let values = self.curves.iter().flat_map(|c| c.points.iter());
        let y = Axis::latency(
            values.map(|p| p.1 as f64 / 1e3),
            &format!("{} [µs]", self.value),
        );
        let mut chart = frame(root, &self.title, &x, &y)?;
        for (i, c) in self.curves.iter().enumerate() {
            let style = ShapeStyle::from(color(i)).stroke_width(3);
            let pts: Vec<(f64, f64)> = c
                .points
                .iter()
                .map(|&(px, v)| (x.map(px), y.map(v as f64 / 1e3)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?
                .label(c.name.clone())
                .legend(move |(px, py)| PathElement::new(vec![(px, py), (px + 22, py)], style));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}
