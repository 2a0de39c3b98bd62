//! The latency histogram: wake-ups per latency bin, counts on a log scale so single
//! outliers stay visible next to the bulk (the look of OSADL's latency plots), one step
//! line per thread or run, with the percentiles of all of them marked.
//!
//! Bins are fixed, so two plots compare bin for bin whatever their data: 1 µs wide from the
//! earliest wake-up (0, or below for early wake-ups) up to the range (default
//! [`DEFAULT_RANGE_NS`], `tickscope report --range`), as OSADL's plots are; a range longer
//! than [`LINEAR_BINS`] µs gets round wider bins (2, 5, 10 … µs) so the linear part never
//! has more than [`LINEAR_BINS`] bins. Beyond the range, the tail has
//! [`TAIL_BINS_PER_DECADE`] logarithmic bins per decade up to the maximum, drawn in a panel
//! of its own on the right with a logarithmic latency axis — so the maximum is always on
//! the plot.

use super::axis::{number, round_up, Axis, Scale};
use super::{font, frame, legend, panel_frame, series_style, Chart};
use crate::units::ns_i;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use tickscope_engine::result::{LatencyStats, ThreadStats};
use tickscope_engine::time::Nanos;

/// The linear part's default range, ns: 1 ms.
pub const DEFAULT_RANGE_NS: Nanos = 1_000_000;
/// The most bins of the linear part (1 µs each up to a 1 ms range).
pub const LINEAR_BINS: i64 = 1000;
/// Logarithmic bins per decade in the tail beyond the range.
pub const TAIL_BINS_PER_DECADE: f64 = 10.0;
/// Share of the plot's width the tail panel takes when there is a tail.
pub const TAIL_SHARE: f64 = 0.22;

/// One series: its name, its non-empty linear bins as `(bin index, count)` and its
/// non-empty tail bins as `(tail bin index, count)`, both ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Non-empty bins of the linear part, ascending.
    pub bins: Vec<(i64, u64)>,
    /// Non-empty bins of the tail, ascending.
    pub tail: Vec<(i64, u64)>,
}

/// A latency histogram, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramChart {
    title: String,
    series: Vec<Series>,
    lo_ns: Nanos,
    bin_ns: Nanos,
    range_ns: Nanos,
    max_ns: Nanos,
    marks: Vec<(String, Nanos)>,
}

/// The tail bin of a latency `v` > `range`: decade-fraction steps above the range.
fn tail_bin(v: Nanos, range: Nanos) -> i64 {
    ((v as f64 / range as f64).log10() * TAIL_BINS_PER_DECADE).floor() as i64
}

/// The lower edge of tail bin `b`, ns.
fn tail_edge(b: i64, range: Nanos) -> f64 {
    range as f64 * 10f64.powf(b as f64 / TAIL_BINS_PER_DECADE)
}

impl HistogramChart {
    /// Bins the latency histograms of `series` with a linear part up to `range_ns` (> 0);
    /// marks the percentiles and maximum of `marks_from`. `None` when no series has a
    /// wake-up.
    pub fn new(
        title: String,
        series: &[(String, &ThreadStats)],
        marks_from: &ThreadStats,
        range_ns: Nanos,
    ) -> Option<Self> {
        let lat: Vec<(&String, &LatencyStats)> = series
            .iter()
            .filter_map(|(n, t)| t.latency_ns.as_ref().map(|l| (n, l)))
            .collect();
        let min = lat.iter().map(|(_, l)| l.min).min()?;
        let max = lat.iter().map(|(_, l)| l.max).max()?;
        let range = range_ns.max(1_000);
        let lo = min.min(0);
        // From the range alone, so that plots of different runs share their bins.
        let bin = round_up((range as f64 / LINEAR_BINS as f64).max(1_000.0)) as Nanos;
        let binned = lat
            .iter()
            .map(|(name, l)| {
                let mut bins: Vec<(i64, u64)> = Vec::new();
                let mut tail: Vec<(i64, u64)> = Vec::new();
                for &(v, c) in &l.histogram.buckets {
                    // A bucket's upper bound can lie beyond the exact maximum.
                    let v = if v > l.max { l.max } else { v };
                    let (list, b) = if v >= range {
                        (&mut tail, tail_bin(v, range))
                    } else {
                        (&mut bins, (v.max(lo) - lo).div_euclid(bin))
                    };
                    match list.last_mut() {
                        Some(last) if last.0 == b => last.1 += c,
                        _ => list.push((b, c)),
                    }
                }
                Series {
                    name: name.to_string(),
                    bins,
                    tail,
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
            range_ns: range,
            max_ns: max,
            marks,
        })
    }

    /// The same histogram without percentile marks (for several runs side by side).
    pub fn without_marks(mut self) -> Self {
        self.marks.clear();
        self
    }

    /// Width of a bin of the linear part, ns.
    pub fn bin_ns(&self) -> Nanos {
        self.bin_ns
    }

    /// End of the linear part, ns.
    pub fn range_ns(&self) -> Nanos {
        self.range_ns
    }

    /// Wake-ups drawn in the tail panel (at or beyond the range).
    pub fn in_tail(&self) -> u64 {
        self.series
            .iter()
            .flat_map(|s| s.tail.iter().map(|b| b.1))
            .sum()
    }

    /// The series, as binned.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        let mut s = format!(
            "Wake-ups per {} bin of latency up to {}; counts on a log scale (the OSADL look), \
             one step line per {}.",
            ns_i(self.bin_ns),
            ns_i(self.range_ns),
            if self.series.len() > 1 && self.series[0].name.starts_with('T') {
                "thread"
            } else {
                "series"
            }
        );
        if !self.marks.is_empty() {
            s += " Dashed lines: p50, p99, p99.9 and the maximum of all threads.";
        }
        let tail = self.in_tail();
        if tail > 0 {
            s += &format!(
                " {tail} {} at or above {} (up to {}) in the right panel, on a log latency \
                 axis with {} bins per decade.",
                if tail == 1 {
                    "wake-up lies"
                } else {
                    "wake-ups lie"
                },
                ns_i(self.range_ns),
                ns_i(self.max_ns),
                TAIL_BINS_PER_DECADE
            );
        }
        s
    }

    /// The shared count axis.
    fn count_axis(&self) -> Axis {
        let top = self
            .series
            .iter()
            .flat_map(|s| s.bins.iter().chain(&s.tail).map(|b| b.1))
            .max()
            .unwrap_or(1);
        Axis {
            scale: Scale::Log10,
            lo: 0.7,
            hi: round_up(top as f64 * 8.0),
            desc: "wake-ups per bin (log scale)".into(),
            format: number,
        }
    }

    fn draw_linear<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        y: &Axis,
    ) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let x = Axis {
            scale: Scale::Linear,
            lo: self.lo_ns as f64 / 1e3,
            hi: self.range_ns as f64 / 1e3,
            desc: "wake-up latency [µs]".into(),
            format: number,
        };
        let mut chart = frame(area, &self.title, &x, y)?;
        let base = y.map(y.lo);
        let (lo, bin) = (self.lo_ns, self.bin_ns);
        for (i, s) in self.series.iter().enumerate() {
            let edges = s.bins.iter().map(|&(b, n)| {
                (
                    (lo + b * bin) as f64 / 1e3,
                    (lo + (b + 1) * bin) as f64 / 1e3,
                    y.map(n as f64),
                )
            });
            draw_steps(&mut chart, edges, base, i, &s.name)?;
        }
        let (y_lo, y_hi) = (y.range().start, y.range().end);
        let mark_style = ShapeStyle::from(BLACK.mix(0.75)).stroke_width(2);
        for (k, (label, v)) in self.marks.iter().enumerate() {
            if *v >= self.range_ns {
                continue; // drawn in the tail panel
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
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }

    fn draw_tail<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        y: &Axis,
    ) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let top_bin = tail_bin(self.max_ns, self.range_ns) + 1;
        let x = Axis {
            scale: Scale::Log10,
            lo: self.range_ns as f64 / 1e3,
            hi: tail_edge(top_bin, self.range_ns) / 1e3,
            desc: "tail [µs], log".into(),
            format: number,
        };
        let mut chart = panel_frame(area, &x, y)?;
        let base = y.map(y.lo);
        let range = self.range_ns;
        for (i, s) in self.series.iter().enumerate() {
            let edges = s.tail.iter().map(|&(b, n)| {
                (
                    x.map(tail_edge(b, range) / 1e3),
                    x.map(tail_edge(b + 1, range) / 1e3),
                    y.map(n as f64),
                )
            });
            draw_steps(&mut chart, edges, base, i, "")?;
        }
        let (y_lo, y_hi) = (y.range().start, y.range().end);
        let (x_lo, x_hi) = (x.range().start, x.range().end);
        // One row per label, top down, so that close marks (p99.9 and the maximum) never
        // print over each other.
        for (k, (label, v)) in self.marks.iter().filter(|(_, v)| *v >= range).enumerate() {
            let xv = x.map(*v as f64 / 1e3);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(xv, y_lo), (xv, y_hi)],
                    8,
                    5,
                    ShapeStyle::from(BLACK.mix(0.75)).stroke_width(2),
                ))
                .map_err(err)?;
            // Labels of lines in the panel's left half go to their right, so they stay
            // inside the panel.
            let left = xv < (x_lo + x_hi) / 2.0;
            let anchor = Pos::new(if left { HPos::Left } else { HPos::Right }, VPos::Center);
            let style = TextStyle::from((font::FAMILY, 16).into_font()).pos(anchor);
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((xv, y_hi - (y_hi - y_lo) * (0.04 + 0.07 * k as f64)))
                        + Text::new(
                            format!("{label} {}", ns_i(*v)),
                            (if left { 6 } else { -6 }, 0),
                            style,
                        ),
                ))
                .map_err(err)?;
        }
        Ok(())
    }
}

/// Opacity of a series' outline, so that where two series' outlines coincide both colours
/// still show.
pub const SERIES_OPACITY: f64 = 0.75;

/// The outline of a series' bins (`(left, right, count)` in axis space, ascending): up at
/// the left edge of a run of adjacent bins, across each count, straight from one count to
/// the next where bins touch, and down to `base` only where the run ends — an outline with
/// no inner strokes, which hides no other series under it.
pub fn step_outline(bins: impl Iterator<Item = (f64, f64, f64)>, base: f64) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    let mut end: Option<f64> = None;
    for (x0, x1, h) in bins {
        match end {
            Some(e) if (e - x0).abs() <= 1e-9 * x0.abs().max(1.0) => {}
            Some(e) => points.extend([(e, base), (x0, base)]),
            None => points.push((x0, base)),
        }
        points.extend([(x0, h), (x1, h)]);
        end = Some(x1);
    }
    if let Some(e) = end {
        points.push((e, base));
    }
    points
}

/// Draws one series as a step outline ([`step_outline`]) in series `i`'s style, slightly
/// transparent ([`SERIES_OPACITY`]).
fn draw_steps<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, super::Coords>,
    bins: impl Iterator<Item = (f64, f64, f64)>,
    base: f64,
    i: usize,
    name: &str,
) -> Result<(), String> {
    let points = step_outline(bins, base);
    let (color, dashed) = series_style(i);
    let style = ShapeStyle::from(color.mix(SERIES_OPACITY)).stroke_width(2);
    let anno = if dashed {
        chart.draw_series(DashedLineSeries::new(points, 6, 4, style))
    } else {
        chart.draw_series(LineSeries::new(points, style))
    }
    .map_err(|e| e.to_string())?;
    if !name.is_empty() {
        anno.label(name.to_string()).legend(move |(px, py)| {
            PathElement::new([(px, py), (px + 18, py)], color.stroke_width(3))
        });
    }
    Ok(())
}

impl Chart for HistogramChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let y = self.count_axis();
        if self.max_ns < self.range_ns {
            return self.draw_linear(root, &y);
        }
        let width = root.dim_in_pixel().0 as f64;
        let split = (width * (1.0 - TAIL_SHARE)) as i32;
        let (left, right) = root.split_horizontally(split);
        self.draw_linear(&left, &y)?;
        self.draw_tail(&right, &y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_bins_share_one_outline_with_no_inner_strokes() {
        let bins = [(0.0, 1.0, 5.0), (1.0, 2.0, 3.0), (4.0, 5.0, 2.0)];
        assert_eq!(
            step_outline(bins.into_iter(), 0.0),
            [
                (0.0, 0.0),
                (0.0, 5.0),
                (1.0, 5.0),
                (1.0, 3.0),
                (2.0, 3.0),
                (2.0, 0.0),
                (4.0, 0.0),
                (4.0, 2.0),
                (5.0, 2.0),
                (5.0, 0.0)
            ]
        );
        assert!(step_outline(std::iter::empty(), 0.0).is_empty());
    }
}
