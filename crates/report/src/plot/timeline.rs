//! Latency over the run: the p99 and the maximum of every window (normally one second) of
//! all threads merged, so spikes — and the effect of a change made while the run goes on,
//! such as `chrt -f -p 1 TID` from another shell — show where they happened. Windows with
//! overruns are marked. The latency axis is always logarithmic
//! ([`Axis::latency_log`]).

use super::axis::{number, Axis, Scale};
use super::{color, frame, legend, Chart};
use plotters::coord::Shift;
use plotters::prelude::*;
use tickscope_engine::result::{ThreadStats, WindowStats};
use tickscope_engine::time::Nanos;

/// A window of the timeline: its start and end (s since the first expiry), p99 and maximum
/// latency (ns) and overruns in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowPoint {
    /// Start of the window, s since the first expiry.
    pub start_s: f64,
    /// End of the window, s since the first expiry.
    pub t_s: f64,
    /// p99 latency in the window, ns.
    pub p99: Nanos,
    /// Largest latency in the window, ns.
    pub max: Nanos,
    /// Overruns in the window.
    pub overruns: u64,
}

/// A timeline chart, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineChart {
    title: String,
    points: Vec<WindowPoint>,
}

fn point(w: &WindowStats, window_ns: Nanos) -> Option<WindowPoint> {
    Some(WindowPoint {
        start_s: w.start_ns as f64 / 1e9,
        t_s: (w.start_ns + w.span as Nanos * window_ns) as f64 / 1e9,
        p99: w.latency_p99?,
        max: w.latency_max?,
        overruns: w.overruns,
    })
}

impl TimelineChart {
    /// The windows of `summary` that have wake-ups; `None` when there are none.
    pub fn new(title: String, summary: &ThreadStats) -> Option<Self> {
        // Window length from consecutive starts; one second when there is only one.
        let window_ns = summary
            .windows
            .windows(2)
            .find_map(|w| {
                let (a, b) = (&w[0], &w[1]);
                (b.index > a.index)
                    .then(|| (b.start_ns - a.start_ns) / (b.index - a.index) as Nanos)
            })
            .unwrap_or(1_000_000_000);
        let points: Vec<WindowPoint> = summary
            .windows
            .iter()
            .filter_map(|w| point(w, window_ns))
            .collect();
        (!points.is_empty()).then_some(TimelineChart { title, points })
    }

    /// The points.
    pub fn points(&self) -> &[WindowPoint] {
        &self.points
    }

    /// How to read the plot.
    pub fn caption(&self) -> String {
        let overruns: u64 = self.points.iter().map(|p| p.overruns).sum();
        let mut s = "p99 and maximum latency of each second on its own (all threads), over the \
                     run: one step per second."
            .to_string();
        if overruns > 0 {
            s += &format!(" Triangles: seconds with overruns ({overruns} in all).");
        }
        s
    }
}

impl Chart for TimelineChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let t_end = self.points.last().map_or(1.0, |p| p.t_s);
        let x = Axis {
            scale: Scale::Linear,
            lo: 0.0,
            hi: t_end.max(1.0),
            desc: "time since the first expiry [s]".into(),
            format: number,
        };
        let values = self.points.iter().flat_map(|p| [p.p99, p.max]);
        let y = Axis::latency_log(values.map(|v| v as f64 / 1e3), "wake-up latency [µs]")
            .with_headroom(0.25);
        let mut chart = frame(root, &self.title, &x, &y)?;
        let map = |t: f64, v: Nanos| (t, y.map(v as f64 / 1e3));
        for (i, (name, get)) in [
            (
                "max",
                (|p: &WindowPoint| p.max) as fn(&WindowPoint) -> Nanos,
            ),
            ("p99", |p: &WindowPoint| p.p99),
        ]
        .into_iter()
        .enumerate()
        {
            let c = color(if i == 0 { 3 } else { 0 });
            let style = ShapeStyle::from(c).stroke_width(3);
            // A step per window: flat across the window, vertical between windows.
            let pts: Vec<(f64, f64)> = self
                .points
                .iter()
                .flat_map(|p| [map(p.start_s, get(p)), map(p.t_s, get(p))])
                .collect();
            chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?
                .label(name)
                .legend(move |(px, py)| PathElement::new(vec![(px, py), (px + 22, py)], style));
        }
        let overran: Vec<&WindowPoint> = self.points.iter().filter(|p| p.overruns > 0).collect();
        if !overran.is_empty() {
            chart
                .draw_series(overran.into_iter().map(|p| {
                    TriangleMarker::new(map((p.start_s + p.t_s) / 2.0, p.max), 9, BLACK.filled())
                }))
                .map_err(err)?
                .label("second with overruns")
                .legend(|(px, py)| TriangleMarker::new((px + 10, py), 8, BLACK.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}
