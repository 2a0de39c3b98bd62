//! The drawing kit every plot shares: series colours, the [`Chart`] trait, the frame with
//! its axes and ticks, the legend.

use super::axis::Axis;
use super::font;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Size of every plot, pixels (SVG user units): width, height.
pub const SIZE: (u32, u32) = (1200, 600);

/// Series colours (Tableau 10, <https://www.tableau.com/blog/colors-upgrade-tableau-10-56782>),
/// in order.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The style of series `i`: its colour and whether its line is dashed. The first
/// [`PALETTE`]`.len()` series are solid, the next as many dashed, so no two of the first 20
/// series look alike (12 methods of `--method all` included).
pub fn series_style(i: usize) -> (RGBColor, bool) {
    (color(i), (i / PALETTE.len()) % 2 == 1)
}

/// A kind of plot: how to draw it on any plotters backend.
pub trait Chart {
    /// The title drawn above the plot.
    fn title(&self) -> &str;

    /// Draws the plot on `root` (already cleared to white).
    ///
    /// # Errors
    /// The backend's drawing error, as text.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// A linear f64 coordinate (in axis space) whose ticks are exactly the given values.
#[derive(Clone)]
pub struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(axis: &Axis) -> Self {
        Ticked {
            inner: axis.range().into(),
            ticks: axis.ticks(),
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// The coordinates every chart uses: linear f64 in axis space with chosen ticks.
pub type Coords = Cartesian2d<Ticked, Ticked>;

/// Builds the frame of a chart: title, axes with their ticks, labels and descriptions,
/// and a light grid.
///
/// # Errors
/// The backend's drawing error, as text.
pub fn frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    x: &Axis,
    y: &Axis,
) -> Result<ChartContext<'a, DB, Coords>, String> {
    frame_with(root, title, x, y, Ticked::new(x), 100, true)
}

/// Width of the label area left of a narrow panel that shares its count axis with the
/// panel on its left (and so draws no count labels), pixels.
const PANEL_LABEL_AREA: u32 = 12;

/// Characters' mean width in tick labels, as a share of the font size (the embedded font's
/// digits are about 0.55 em wide).
const DIGIT_EM: f64 = 0.6;

/// The frame of a narrow panel right of another (the histogram's tail): no count labels,
/// and only as many latency ticks as fit without their labels touching.
///
/// # Errors
/// The backend's drawing error, as text.
pub fn panel_frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    x: &Axis,
    y: &Axis,
) -> Result<ChartContext<'a, DB, Coords>, String> {
    let plot_px = f64::from(root.dim_in_pixel().0) - 20.0 - 40.0 - f64::from(PANEL_LABEL_AREA);
    let ticks = spaced_ticks(x, plot_px, 18.0);
    let ticked = Ticked {
        inner: x.range().into(),
        ticks,
    };
    frame_with(root, "", x, y, ticked, PANEL_LABEL_AREA, false)
}

/// The ticks of `x` (axis space) that can be labelled on `plot_px` pixels with a font of
/// `font_px` without two labels closer than one label's width apart: the lowest tick is
/// kept, each further one only if it clears the last kept.
pub fn spaced_ticks(x: &Axis, plot_px: f64, font_px: f64) -> Vec<f64> {
    let range = x.range();
    let span = (range.end - range.start).max(f64::MIN_POSITIVE);
    let px = |v: f64| (v - range.start) / span * plot_px.max(1.0);
    let width = |v: f64| x.label(v).chars().count() as f64 * font_px * DIGIT_EM;
    let mut kept: Vec<f64> = Vec::new();
    for t in x.ticks() {
        let clear = kept
            .last()
            .is_none_or(|&last| px(t) - px(last) >= (width(t) + width(last)) / 2.0 + font_px);
        if clear {
            kept.push(t);
        }
    }
    kept
}

fn frame_with<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    x: &Axis,
    y: &Axis,
    x_ticks: Ticked,
    y_label_area: u32,
    y_labels: bool,
) -> Result<ChartContext<'a, DB, Coords>, String> {
    let mut builder = ChartBuilder::on(root);
    if !title.is_empty() {
        builder.caption(title, (font::FAMILY, 28));
    }
    let mut chart = builder
        .margin(20)
        .margin_right(40)
        .x_label_area_size(70)
        .y_label_area_size(y_label_area)
        .build_cartesian_2d(x_ticks, Ticked::new(y))
        .map_err(|e| e.to_string())?;
    let x_fmt = |v: &f64| x.label(*v);
    let y_fmt = |v: &f64| match y_labels {
        true => y.label(*v),
        false => String::new(),
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x.desc.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((font::FAMILY, 18))
        .axis_desc_style((font::FAMILY, 20))
        .bold_line_style(RGBColor(225, 225, 225));
    if y_labels {
        mesh.y_desc(y.desc.as_str());
    }
    mesh.draw().map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Draws the legend box of the series that have labels, at `position`.
///
/// # Errors
/// The backend's drawing error, as text.
pub fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Coords>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .label_font((font::FAMILY, 18))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(|e| e.to_string())
}

/// `chart` drawn alone as SVG (no stamp), for the plots' tests.
#[cfg(test)]
pub(crate) fn svg_of(chart: &impl Chart) -> String {
    font::ensure();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).expect("white");
        chart.draw(&root).expect("drawn");
        root.present().expect("presented");
    }
    out
}
