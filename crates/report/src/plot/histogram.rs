//! The latency histogram: wake-ups per latency bin, counts on a log scale so single
//! outliers stay visible next to the bulk (the look of OSADL's latency plots), one colour
//! per thread or run, with the percentiles of all of them marked.
//!
//! Bins are a round width (1, 2, 5 × 10^k ns) chosen to give about 300 bins. The x axis
//! runs from 0 (or the earliest wake-up) to the maximum — unless the maximum is more than
//! four times the p99.9, in which case it ends at a round value near four times the p99.9
//! so the bulk stays readable, and the wake-ups beyond are counted on the plot.

use super::axis::{number, round_up, Axis, Scale};
use super::{color, font, frame, legend, Chart};
use crate::units::ns_i;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use tickscope_engine::result::ThreadStats;
use tickscope_engine::time::Nanos;

/// How many bins the x range is divided into, about.
pub const BINS: i64 = 300;

/// One series: its name and its non-empty bins as `(bin index, count)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Non-empty bins, ascending.
    pub bins: Vec<(i64, u64)>,
}

/// A latency histogram, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramChart {
    title: String,
    series: Vec<Series>,
    lo_ns: Nanos,
    bin_ns: Nanos,
    hi_ns: Nanos,
    max_ns: Nanos,
    hidden: u64,
    marks: Vec<(String, Nanos)>,
}

impl HistogramChart {
    /// Bins the latency histograms of `series`; marks the percentiles and maximum of
    /// `marks_from`. `None` when no series has a wake-up.
    pub fn new(
        title: String,
        series: &[(String, &ThreadStats)],
        marks_from: &ThreadStats,
    ) -> Option<Self> {
        let lat: Vec<(&String, &tickscope_engine::result::LatencyStats)> = series
            .iter()
            .filter_map(|(n, t)| t.latency_ns.as_ref().map(|l| (n, l)))
            .collect();
        let min = lat.iter().map(|(_, l)| l.min).min()?;
        let max = lat.iter().map(|(_, l)| l.max).max()?;
        let p999 = lat.iter().map(|(_, l)| l.p99_9).max()?;
        let lo = min.min(0);
        let hi = if p999 > 0 && max > 4 * p999 {
            round_up((4 * p999) as f64) as Nanos
        } else {
            max
        };
        let bin = (round_up(((hi - lo) as f64 / BINS as f64).max(1.0)) as Nanos).max(1);
        let mut hidden = 0;
        let binned = lat
            .iter()
            .map(|(name, l)| {
                let mut bins: Vec<(i64, u64)> = Vec::new();
                for &(v, c) in &l.histogram.buckets {
                    let v = v.clamp(l.min, l.max);
                    if v > hi {
                        hidden += c;
                        continue;
                    }
                    let b = (v - lo).div_euclid(bin);
                    match bins.last_mut() {
                        Some(last) if last.0 == b => last.1 += c,
                        _ => bins.push((b, c)),
                    }
                }
                Series {
                    name: name.to_string(),
                    bins,
                }
            })
            .collect();
        // Equal values share one line: `p99.9 = max`.
        let mut marks: Vec<(String, Nanos)> = Vec::new();
        if let Some(l) = &marks_from.latency_ns {
            for (name, v) in [
                ("p50", l.p50),
                ("p99", l.p99),
                ("p99.9", l.p99_9),
                ("max", l.max),
            ] {
                match marks.last_mut() {
                    Some(last) if last.1 == v => last.0 = format!("{} = {name}", last.0),
                    _ => marks.push((name.to_string(), v)),
                }
            }
        }
        Some(HistogramChart {
            title,
            series: binned,
            lo_ns: lo,
            bin_ns: bin,
            hi_ns: hi,
            max_ns: max,
            hidden,
            marks,
        })
    }

    /// The same histogram without percentile marks (for several runs side by side).
    pub fn without_marks(mut self) -> Self {
        self.marks.clear();
        self
    }

    /// Width of a bin, ns.
    pub fn bin_ns(&self) -> Nanos {
        self.bin_ns
    }

    /// Wake-ups beyond the right edge of the plot.
    pub fn hidden(&self) -> u64 {
        self.hidden
    }

    /// The series, as binned.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        let mut s = format!(
            "Wake-ups per {} bin of latency; counts on a log scale (the OSADL look), one \
             colour per {}.",
            ns_i(self.bin_ns),
            if self.series.len() > 1 && self.series[0].name.starts_with('T') {
                "thread"
            } else {
                "series"
            }
        );
        if !self.marks.is_empty() {
            s += " Dashed lines: p50, p99, p99.9 and the maximum of all threads.";
        }
        if self.hidden > 0 {
            s += &format!(
                " {} {} above {} (up to {}) beyond the right edge.",
                self.hidden,
                if self.hidden == 1 {
                    "wake-up lies"
                } else {
                    "wake-ups lie"
                },
                ns_i(self.hi_ns),
                ns_i(self.max_ns)
            );
        }
        s
    }
}

impl Chart for HistogramChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let top = self
            .series
            .iter()
            .flat_map(|s| s.bins.iter().map(|b| b.1))
            .max()
            .unwrap_or(1);
        let x = Axis {
            scale: Scale::Linear,
            lo: self.lo_ns as f64 / 1e3,
            hi: (self.hi_ns + self.bin_ns) as f64 / 1e3
                + (self.hi_ns - self.lo_ns) as f64 / 1e3 * 0.03,
            desc: "wake-up latency [µs]".into(),
            format: number,
        };
        let y = Axis {
            scale: Scale::Log10,
            lo: 0.7,
            hi: round_up(top as f64 * 8.0),
            desc: "wake-ups per bin (log scale)".into(),
            format: number,
        };
        let mut chart = frame(root, &self.title, &x, &y)?;
        let base = y.map(y.lo);
        let (lo, bin) = (self.lo_ns, self.bin_ns);
        for (i, s) in self.series.iter().enumerate() {
            let c = color(i);
            let style = c.mix(0.6).filled();
            let anno = chart
                .draw_series(s.bins.iter().map(|&(b, n)| {
                    let x0 = (lo + b * bin) as f64 / 1e3;
                    let x1 = (lo + (b + 1) * bin) as f64 / 1e3;
                    Rectangle::new([(x0, base), (x1, y.map(n as f64))], style)
                }))
                .map_err(err)?;
            anno.label(s.name.clone()).legend(move |(px, py)| {
                Rectangle::new([(px, py - 7), (px + 18, py + 7)], c.filled())
            });
        }
        let (y_lo, y_hi) = (y.range().start, y.range().end);
        let mark_style = ShapeStyle::from(BLACK.mix(0.75)).stroke_width(2);
        for (k, (label, v)) in self.marks.iter().enumerate() {
            if *v > self.hi_ns {
                continue;
            }
            let xv = *v as f64 / 1e3;
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(xv, y_lo), (xv, y_hi)],
                    8,
                    5,
                    mark_style,
                ))
                .map_err(err)?;
            let ty = y_hi - (y_hi - y_lo) * (0.04 + 0.07 * k as f64);
            // Labels of lines in the right third go to their left, so they stay inside.
            let right = xv > x.lo + (x.hi - x.lo) * 0.67;
            let anchor = Pos::new(if right { HPos::Right } else { HPos::Left }, VPos::Center);
            let style = TextStyle::from((font::FAMILY, 18).into_font()).pos(anchor);
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((xv, ty))
                        + Text::new(
                            format!("{label} {}", ns_i(*v)),
                            (if right { -6 } else { 6 }, 0),
                            style,
                        ),
                ))
                .map_err(err)?;
        }
        if self.hidden > 0 {
            let note = format!(
                "{} wake-up{} above {} (max {}) not shown →",
                self.hidden,
                if self.hidden == 1 { "" } else { "s" },
                ns_i(self.hi_ns),
                ns_i(self.max_ns)
            );
            let style = TextStyle::from((font::FAMILY, 18).into_font())
                .color(&RGBColor(180, 30, 30))
                .pos(Pos::new(HPos::Right, VPos::Center));
            chart
                .draw_series(std::iter::once(Text::new(
                    note,
                    (x.hi, y_lo + (y_hi - y_lo) * 0.45),
                    style,
                )))
                .map_err(err)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}
