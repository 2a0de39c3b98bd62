//! Plots of a run, drawn by the program itself with `plotters` and an embedded font, as SVG
//! (inline in the HTML report, or files) and PNG. One file per kind of plot, each behind
//! [`Chart`]:
//!
//! * [`histogram`] — wake-ups per latency bin, counts on a log scale (the OSADL look), with
//!   percentiles marked;
//! * [`percentiles`] — latency against 1 − quantile on a log axis (the HdrHistogram look);
//! * [`timeline`] — p99 and maximum latency of every window (second) over the run;
//! * [`period`] — the distribution of period dt − interval (period jitter);
//! * [`bands`] — p50/p99/p99.9/max of every interval of an `--hlog` interval log;
//! * [`late_wakeup`] — the worst explained wake-up (`--explain`) from expiry to running.
//!
//! Plots only read statistics from the result document; they never measure.

pub mod axis;
pub mod bands;
pub mod draw;
pub mod font;
pub mod histogram;
pub mod late_wakeup;
pub mod percentiles;
pub mod period;
pub mod timeline;

use crate::document::RunDocument;
use crate::export::ExportError;
pub use draw::{
    color, frame, legend, panel_frame, series_style, spaced_ticks, Chart, Coords, Ticked, PALETTE,
    SIZE,
};
use plotters::coord::Shift;
use plotters::prelude::*;
use tickscope_engine::result::ThreadStats;

/// Options of the plot set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlotOptions {
    /// End of the histogram's linear part, ns (see [`histogram`]).
    pub range_ns: tickscope_engine::time::Nanos,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            range_ns: histogram::DEFAULT_RANGE_NS,
        }
    }
}

/// The line drawn under every plot so that an image cut out of its page still says where
/// it comes from (as OSADL's plots do): host, kernel, CPU, start time, tool.
pub fn stamp(doc: &RunDocument) -> String {
    let s = &doc.system;
    format!(
        "{} · Linux {} · {} × {} · {} · {} {}",
        s.hostname,
        s.kernel_release,
        s.cpu_count,
        s.cpu_model.as_deref().unwrap_or("unknown CPU"),
        doc.started_at().get(..19).unwrap_or(doc.started_at()),
        doc.tool.name,
        doc.tool.version
    )
}

/// Any plot of a report.
#[derive(Debug, Clone)]
pub enum Plot {
    /// A latency histogram.
    Histogram(histogram::HistogramChart),
    /// A percentile curve.
    Percentiles(percentiles::PercentileChart),
    /// Per-window p99 and maximum over time.
    Timeline(timeline::TimelineChart),
    /// The distribution of dt − interval.
    Period(period::PeriodChart),
    /// Per-interval percentiles from an interval log.
    Bands(bands::BandsChart),
    /// One late wake-up's breakdown on a time line.
    LateWakeup(late_wakeup::LateWakeupChart),
}

impl Plot {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        stamp: Option<&str>,
    ) -> Result<(), String> {
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = match stamp {
            Some(text) => {
                let (plot, foot) = root.split_vertically(root.dim_in_pixel().1 as i32 - 26);
                let style =
                    TextStyle::from((font::FAMILY, 15).into_font()).color(&RGBColor(110, 110, 110));
                foot.draw_text(text, &style, (20, 4))
                    .map_err(|e| e.to_string())?;
                plot
            }
            None => root.clone(),
        };
        let root = &root;
        match self {
            Plot::Histogram(c) => c.draw(root),
            Plot::Percentiles(c) => c.draw(root),
            Plot::Timeline(c) => c.draw(root),
            Plot::Period(c) => c.draw(root),
            Plot::Bands(c) => c.draw(root),
            Plot::LateWakeup(c) => c.draw(root),
        }?;
        root.present().map_err(|e| e.to_string())
    }

    /// The plot as a standalone SVG document.
    ///
    /// # Errors
    /// A drawing error (none is expected with in-memory output).
    pub fn svg(&self) -> Result<String, ExportError> {
        self.svg_stamped(None)
    }

    /// The plot as SVG with `stamp` (see [`stamp`]) drawn under it.
    ///
    /// # Errors
    /// A drawing error (none is expected with in-memory output).
    pub fn svg_stamped(&self, stamp: Option<&str>) -> Result<String, ExportError> {
        font::ensure();
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
            self.draw(&root, stamp).map_err(ExportError)?;
        }
        Ok(out)
    }

    /// The plot as a PNG image (RGB, 8 bits per channel).
    ///
    /// # Errors
    /// A drawing or encoding error.
    pub fn png(&self) -> Result<Vec<u8>, ExportError> {
        self.png_stamped(None)
    }

    /// The plot as PNG with `stamp` (see [`stamp`]) drawn under it.
    ///
    /// # Errors
    /// A drawing or encoding error.
    pub fn png_stamped(&self, stamp: Option<&str>) -> Result<Vec<u8>, ExportError> {
        font::ensure();
        let (w, h) = SIZE;
        let mut pixels = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
            self.draw(&root, stamp).map_err(ExportError)?;
        }
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let encoded = encoder
            .write_header()
            .and_then(|mut writer| writer.write_image_data(&pixels));
        encoded.map_err(|e| ExportError(format!("cannot encode PNG: {e}")))?;
        Ok(out)
    }
}

/// A plot with the file name it is written under and a sentence saying how to read it.
#[derive(Debug, Clone)]
pub struct NamedPlot {
    /// File name without extension (`histogram`, `02-timerfd-percentiles`).
    pub stem: String,
    /// How to read the plot, one or two sentences.
    pub caption: String,
    /// The plot.
    pub plot: Plot,
    /// The line under the plot naming host, kernel, CPU and time ([`stamp`]).
    pub stamp: String,
}

impl NamedPlot {
    /// The plot as SVG, with its stamp.
    ///
    /// # Errors
    /// A drawing error.
    pub fn svg(&self) -> Result<String, ExportError> {
        self.plot.svg_stamped(Some(&self.stamp))
    }

    /// The plot as PNG, with its stamp.
    ///
    /// # Errors
    /// A drawing or encoding error.
    pub fn png(&self) -> Result<Vec<u8>, ExportError> {
        self.plot.png_stamped(Some(&self.stamp))
    }
}

/// Threads up to which plots show every thread; beyond, only all threads merged.
pub const THREADS_SHOWN: usize = 4;

/// The plots of a document with the default [`PlotOptions`].
pub fn plots_of(doc: &RunDocument) -> Vec<NamedPlot> {
    plots_with(doc, &PlotOptions::default())
}

/// The plots of a document: for every run a histogram, a percentile curve, a period plot
/// and a timeline; with several runs also the runs' percentile curves and histograms side
/// by side.
pub fn plots_with(doc: &RunDocument, opts: &PlotOptions) -> Vec<NamedPlot> {
    let stamp = stamp(doc);
    let runs = doc.each_run();
    let rounds = runs.iter().map(|r| r.round).max().unwrap_or(1);
    let several = runs.len() > 1;
    let mut out = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let name = run.name(rounds);
        let prefix = if several {
            let safe: String = name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            format!("{i:02}-{}-", safe.trim_matches('-'))
        } else {
            String::new()
        };
        let all = ("all threads".to_string(), &run.summary);
        let (histogram_series, shown) = if run.threads.len() > THREADS_SHOWN {
            (vec![all.clone()], vec![all])
        } else {
            let each: Vec<(String, &ThreadStats)> = run
                .threads
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    // A task set's threads are its tasks: named as the tasks.
                    let task = doc.tasks.as_ref().and_then(|set| set.name_of(i));
                    match task {
                        Some(name) => (crate::escaped(name).into_owned(), t),
                        None => (format!("T{}", t.thread.unwrap_or(i)), t),
                    }
                })
                .collect();
            let mut with_all = each.clone();
            if run.threads.len() > 1 {
                with_all.push(all);
            }
            (each, with_all)
        };
        if let Some(c) = histogram::HistogramChart::new(
            format!("Latency histogram — {name}"),
            &histogram_series,
            &run.summary,
            opts.range_ns,
        ) {
            out.push(NamedPlot {
                stem: format!("{prefix}histogram"),
                caption: c.caption(),
                plot: Plot::Histogram(c),
                stamp: stamp.clone(),
            });
        }
        if let Some(c) =
            percentiles::PercentileChart::new(format!("Latency by percentile — {name}"), &shown)
        {
            out.push(NamedPlot {
                stem: format!("{prefix}percentiles"),
                caption: c.caption(),
                plot: Plot::Percentiles(c),
                stamp: stamp.clone(),
            });
        }
        let period_series = if run.threads.len() > THREADS_SHOWN {
            vec![("all threads".to_string(), &run.summary)]
        } else {
            histogram_series.clone()
        };
        if let Some(c) =
            period::PeriodChart::new(format!("Period dt − interval — {name}"), &period_series)
        {
            out.push(NamedPlot {
                stem: format!("{prefix}period"),
                caption: c.caption(),
                plot: Plot::Period(c),
                stamp: stamp.clone(),
            });
        }
        if let Some(c) =
            timeline::TimelineChart::new(format!("Latency per second — {name}"), &run.summary)
        {
            out.push(NamedPlot {
                stem: format!("{prefix}timeline"),
                caption: c.caption(),
                plot: Plot::Timeline(c),
                stamp: stamp.clone(),
            });
        }
    }
    if several {
        let merged: Vec<(String, &ThreadStats)> =
            runs.iter().map(|r| (r.name(rounds), &r.summary)).collect();
        if let Some(c) = percentiles::PercentileChart::new(
            "Methods side by side: latency by percentile".into(),
            &merged,
        ) {
            out.push(NamedPlot {
                stem: "methods-percentiles".into(),
                caption: c.caption(),
                plot: Plot::Percentiles(c),
                stamp: stamp.clone(),
            });
        }
        if let Some(c) = histogram::HistogramChart::new(
            "Methods side by side: latency histogram".into(),
            &merged,
            &runs[0].summary,
            opts.range_ns,
        )
        .map(histogram::HistogramChart::without_marks)
        {
            out.push(NamedPlot {
                stem: "methods-histogram".into(),
                caption: c.caption(),
                plot: Plot::Histogram(c),
                stamp: stamp.clone(),
            });
        }
    }
    if let Some(b) = doc.explain.as_ref().and_then(|e| e.breakdowns.first()) {
        let title = format!(
            "The worst explained wake-up: T{} #{}, {} late",
            b.sample.thread,
            b.sample.seq,
            crate::units::ns_i(b.latency_ns)
        );
        if let Some(c) = late_wakeup::LateWakeupChart::new(title, b) {
            out.push(NamedPlot {
                stem: "late-wakeup".into(),
                caption: c.caption(),
                plot: Plot::LateWakeup(c),
                stamp,
            });
        }
    }
    out
}
