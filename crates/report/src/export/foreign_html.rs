//! The HTML report of another tool's result (`tickscope report cyclictest.json`): what the
//! file records — settings, figures and notes, as `tickscope compare` reads them — and its
//! latency histogram and percentile curve, drawn from the tool's own histogram, so a
//! cyclictest or jitterdebugger run gets the same pictures as a tickscope run. Self-contained
//! like [`super::html`].

use super::html_escape::escape;
use super::ExportError;
use crate::compare::Comparison;
use crate::import::{Measurement, Setting};
use crate::plot::histogram::HistogramChart;
use crate::plot::percentiles::PercentileChart;
use crate::plot::{NamedPlot, Plot, PlotOptions};
use std::fmt::Write;

/// The plots of another tool's measurement: a histogram and a percentile curve of its
/// threads (percentiles marked when it has one thread).
pub fn foreign_plots(m: &Measurement, opts: &PlotOptions) -> Vec<NamedPlot> {
    let series: Vec<(String, &tickscope_engine::result::ThreadStats)> =
        m.threads.iter().map(|(n, t)| (n.clone(), t)).collect();
    let stamp = format!(
        "{} · {} · {}",
        m.source,
        m.settings
            .get(&Setting::Tool)
            .map_or("another tool", String::as_str),
        m.settings
            .get(&Setting::Kernel)
            .map_or("kernel unknown".to_string(), |k| format!("Linux {k}"))
    );
    let mut out = Vec::new();
    let Some((_, first)) = series.first() else {
        return out;
    };
    let title = |what: &str| format!("{what} — {}", m.label);
    if let Some(c) = HistogramChart::new(title("Latency histogram"), &series, first, opts.range_ns)
    {
        let c = if series.len() > 1 {
            c.without_marks()
        } else {
            c
        };
        out.push(NamedPlot {
            stem: "histogram".into(),
            caption: c.caption(),
            plot: Plot::Histogram(c),
            stamp: stamp.clone(),
        });
    }
    if let Some(c) = PercentileChart::new(title("Latency by percentile"), &series) {
        out.push(NamedPlot {
            stem: "percentiles".into(),
            caption: c.caption(),
            plot: Plot::Percentiles(c),
            stamp,
        });
    }
    out
}

/// The report of the measurements read from one file of another tool.
///
/// # Errors
/// [`ExportError`] when a plot cannot be drawn or the measurements are empty.
pub fn render(
    measurements: &[Measurement],
    source: &str,
    opts: &PlotOptions,
) -> Result<Vec<u8>, ExportError> {
    render_with(measurements, source, opts, &[])
}

/// As [`render`], with `extra` plots after the measurements' own (the per-interval bands
/// of an interval log given as the report's input).
///
/// # Errors
/// As [`render`].
pub fn render_with(
    measurements: &[Measurement],
    source: &str,
    opts: &PlotOptions,
    extra: &[NamedPlot],
) -> Result<Vec<u8>, ExportError> {
    let first = measurements
        .first()
        .ok_or_else(|| ExportError("the file holds no measurement".into()))?;
    let title = format!("tickscope report — {} ({})", source, first.format.name());
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{t}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        super::html::STYLE,
        t = escape(&title)
    );
    let cmp = Comparison::new(measurements.to_vec(), &[]).map_err(ExportError)?;
    out += "<h2>What the file records</h2>\n<table>\n";
    // Several columns (a task set's interval log: one per task): each named.
    if cmp.columns.len() > 1 {
        out += "<tr><th></th>";
        for c in &cmp.columns {
            let _ = write!(out, "<th>{}</th>", escape(&c.label));
        }
        out += "</tr>\n";
    }
    for row in cmp.figure_rows().into_iter().chain(cmp.setting_rows(false)) {
        let cells: Vec<String> = row.cells.iter().map(|c| escape(&c.human())).collect();
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td class=\"n\">{}</td></tr>",
            escape(&row.name),
            cells.join("</td><td class=\"n\">")
        );
    }
    out += "</table>\n";
    for n in measurements.iter().flat_map(|m| &m.notes) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(n));
    }
    out += "<h2>Plots</h2>\n";
    let plots: Vec<NamedPlot> = measurements
        .iter()
        .flat_map(|m| foreign_plots(m, opts))
        .chain(extra.iter().cloned())
        .collect();
    out += &super::html::figures(&plots)?;
    let _ = writeln!(
        out,
        "<footer>Written by tickscope {} from <code>{}</code>. This page is self-contained: \
         no scripts, fonts or links.</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION"),
        escape(source)
    );
    Ok(out.into_bytes())
}
