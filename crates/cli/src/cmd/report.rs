//! `tickscope report`: a self-contained HTML report of a result file, and optionally every
//! plot as PNG and SVG files.

use crate::cli::ReportArgs;
use crate::console;
use crate::exit::Failure;
use crate::output_path::{finish, prepare_outputs};
use std::path::{Path, PathBuf};
use tickscope_report::export::html::HtmlReport;
use tickscope_report::export::ExportError;
use tickscope_report::export::Exporter;
use tickscope_report::export::{foreign_html, hlog_bands};
use tickscope_report::import::{ImportError, Measurement, SourceFormat};
use tickscope_report::plot::{plots_with, NamedPlot, PlotOptions};
use tickscope_report::{quoted, RunDocument, RUN_SCHEMA};

/// What a result file holds.
enum Input {
    /// A tickscope result.
    Run(Box<RunDocument>),
    /// Another tool's result (cyclictest, jitterdebugger), as `compare` reads it.
    Foreign(Vec<tickscope_report::import::Measurement>),
}

/// Reads a result file of any known format.
///
/// # Errors
/// [`Failure::Usage`] naming the file: unreadable, not JSON, truncated, or no known result.
fn read_document(path: &Path) -> Result<Input, Failure> {
    let name = path.display().to_string();
    let usage = |problem: String| {
        Failure::Usage(
            ImportError {
                path: name.clone(),
                problem,
            }
            .to_string(),
        )
    };
    let stem = path
        .file_stem()
        .map_or_else(|| "run".to_string(), |s| s.to_string_lossy().into_owned());
    let failed = |e: ImportError| Failure::Usage(e.to_string());
    let mut input = tickscope_report::import::open_input(path).map_err(failed)?;
    // An interval log is read as it streams, never whole.
    if input.is_hlog().map_err(failed)? {
        return Ok(Input::Foreign(input.import_hlog(&stem).map_err(failed)?));
    }
    let text = input.into_text().map_err(failed)?;
    // The importers recognise any known format and explain what is wrong with it.
    let found = tickscope_report::import::parse(&name, &stem, &text)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    if found
        .first()
        .is_some_and(|m| m.format != tickscope_report::import::SourceFormat::Tickscope)
    {
        return Ok(Input::Foreign(found));
    }
    RunDocument::from_json(&text)
        .map(|d| Input::Run(Box::new(d)))
        .map_err(|e| usage(format!("not a {RUN_SCHEMA} document: {e}")))
}

/// Writes the report of one result file: every output (the HTML, each plot file) is
/// prepared and checked against the others and the input before anything is written.
///
/// # Errors
/// [`Failure::Usage`] when the result file cannot be read or is not a known result, or
/// an output cannot be written or names the input; [`Failure::Runtime`] when writing fails.
pub fn execute(args: &ReportArgs) -> Result<(), Failure> {
    let range_ns =
        crate::options::parse_duration(&args.range, "--range", 1_000).map_err(Failure::Usage)?;
    let opts = PlotOptions { range_ns };
    if args.result.as_os_str() == "-" && args.output.is_none() {
        return Err(Failure::Usage(
            "a result read from standard input has no name to derive the report's from: \
             give -o FILE"
                .into(),
        ));
    }
    let source = args.result.display().to_string();
    let built = match read_document(&args.result)? {
        Input::Run(doc) => run_report(args, *doc, source, opts)?,
        Input::Foreign(found) => foreign_report(args, &found, &source, &opts)?,
    };
    let html = built
        .html
        .map_err(|e| Failure::Runtime(format!("cannot render the report: {e}")))?;
    write_report(args, &html, &built.plots, &built.what)
}

/// A report as rendered, before it is written.
struct Built {
    /// The HTML page, or why it could not be rendered.
    html: Result<Vec<u8>, ExportError>,
    /// The plots, also written beside the page.
    plots: Vec<NamedPlot>,
    /// What the page is, for the line that says where it went.
    what: String,
}

/// The report of a tickscope result: its plots, the bands of the interval log it names
/// (or `--hlog`), notes on what could not be drawn.
///
/// # Errors
/// [`Failure::Usage`] when the `--hlog` given cannot be drawn.
fn run_report(
    args: &ReportArgs,
    mut doc: RunDocument,
    source: String,
    opts: PlotOptions,
) -> Result<Built, Failure> {
    if args.redact {
        doc.redact();
    }
    let mut plots = plots_with(&doc, &opts);
    // A task set's own plots (drawn in the page's task section) are written as files too.
    if let Some(set) = &doc.tasks {
        plots.extend(tickscope_report::export::html_tasks::plots(&doc, set));
    }
    let mut notes = Vec::new();
    let bands = hlog_bands::bands_plot(&doc, &args.result, args.hlog.as_deref());
    match bands {
        Some(Ok(p)) => plots.push(p),
        Some(Err(why)) if args.hlog.is_some() => {
            return Err(Failure::Usage(format!("--hlog: {why}")))
        }
        Some(Err(why)) => {
            let note = format!(
                "the interval log the result names cannot be drawn ({why}); the \
                 report has no per-interval bands"
            );
            eprintln!("tickscope: note: {note}");
            notes.push(format!("Note: {note}."));
        }
        None => {}
    }
    let extra = plots
        .iter()
        .filter(|p| p.stem == "bands")
        .cloned()
        .collect();
    let html = HtmlReport {
        source,
        plots: opts,
        extra,
        notes,
    }
    .render(&doc);
    Ok(Built {
        html,
        plots,
        what: "report".to_string(),
    })
}

/// The report of a foreign result (cyclictest, rtla, an interval log): its plots and the
/// bands of `--hlog` or of the interval log itself.
///
/// # Errors
/// [`Failure::Usage`] when the `--hlog` given cannot be drawn.
fn foreign_report(
    args: &ReportArgs,
    found: &[Measurement],
    source: &str,
    opts: &PlotOptions,
) -> Result<Built, Failure> {
    let mut plots: Vec<NamedPlot> = found
        .iter()
        .flat_map(|m| foreign_html::foreign_plots(m, opts))
        .collect();
    // The bands of `--hlog FILE`, or of an interval log given on its own.
    let stamp = |p: &Path| format!("{} · interval log", p.display());
    let extra: Vec<NamedPlot> = match (&args.hlog, found[0].format) {
        (Some(h), _) => vec![hlog_bands::log_bands(h, stamp(h))
            .map_err(|why| Failure::Usage(format!("--hlog: {why}")))?],
        (None, SourceFormat::Hlog) if args.result.as_os_str() != "-" => {
            match hlog_bands::log_bands(&args.result, stamp(&args.result)) {
                Ok(p) => vec![p],
                Err(why) => {
                    eprintln!("tickscope: note: no per-interval bands: {why}");
                    Vec::new()
                }
            }
        }
        _ => Vec::new(),
    };
    plots.extend(extra.iter().cloned());
    let html = foreign_html::render_with(found, source, opts, &extra);
    let what = format!("report of a {} result", found[0].format.name());
    Ok(Built { html, plots, what })
}

/// Prepares every output (the report first, checked before a plot directory is created),
/// then writes the page and the plot files asked for.
///
/// # Errors
/// As [`execute`].
fn write_report(
    args: &ReportArgs,
    html: &[u8],
    plots: &[NamedPlot],
    what: &str,
) -> Result<(), Failure> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.result.with_extension("html"));
    drop(prepare_outputs(&[("-o", &output)], &[&args.result])?);
    let dirs: Vec<(&PathBuf, &str, &str)> =
        [(&args.png, "png", "--png"), (&args.svg, "svg", "--svg")]
            .into_iter()
            .filter_map(|(d, ext, flag)| d.as_ref().map(|d| (d, ext, flag)))
            .collect();
    let mut names: Vec<(String, PathBuf)> = vec![("-o".into(), output)];
    for (dir, ext, flag) in &dirs {
        plot_dir(flag, dir)?;
        for p in plots {
            names.push((flag.to_string(), dir.join(format!("{}.{ext}", p.stem))));
        }
    }
    let wanted: Vec<(&str, &Path)> = names
        .iter()
        .map(|(f, p)| (f.as_str(), p.as_path()))
        .collect();
    let mut outputs = prepare_outputs(&wanted, &[&args.result])?.into_iter();
    let html_out = outputs.next().expect("the HTML output is first");
    let to = html_out.shown();
    finish(html_out, html)?;
    console::line(format!("{what} written to {to}"));
    for (dir, ext, _) in dirs {
        for p in plots {
            let bytes = match ext {
                "png" => p.png(),
                _ => p.svg().map(String::into_bytes),
            }
            .map_err(|e| Failure::Runtime(format!("cannot draw {}: {e}", p.stem)))?;
            finish(outputs.next().expect("one output per plot"), &bytes)?;
        }
        console::line(format!(
            "{} plots written to {} as {ext}",
            plots.len(),
            dir.display()
        ));
    }
    Ok(())
}

/// Creates a plot directory (and its parents) if missing.
///
/// # Errors
/// [`Failure::Usage`] naming the flag when it cannot be created or is not a directory.
fn plot_dir(flag: &str, dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::Usage(format!(
            "{flag}: cannot create the directory {}: {e}",
            quoted(dir)
        ))
    })
}
