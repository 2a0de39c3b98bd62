//! `tickscope report`: a self-contained HTML report of a result file, and optionally every
//! plot as PNG and SVG files.

use crate::cli::ReportArgs;
use crate::console;
use crate::exit::Failure;
use crate::output_path::{finish, prepare_outputs};
use std::path::{Path, PathBuf};
use tickscope_report::export::html::HtmlReport;
use tickscope_report::export::Exporter;
use tickscope_report::import::ImportError;
use tickscope_report::plot::{plots_with, PlotOptions};
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
    let text =
        tickscope_report::import::read_input(path).map_err(|e| Failure::Usage(e.to_string()))?;
    // The importers recognise any known format and explain what is wrong with it.
    let stem = path
        .file_stem()
        .map_or_else(|| "run".to_string(), |s| s.to_string_lossy().into_owned());
    let found = tickscope_report::import::parse(&name, &stem, &text)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    if found
        .first()
        .is_some_and(|m| m.format != tickscope_report::import::SourceFormat::Tickscope)
    {
        return Ok(Input::Foreign(found));
    }
    serde_json::from_str(&text)
        .map(|d| Input::Run(Box::new(d)))
        .map_err(|e| usage(format!("not a {RUN_SCHEMA} document: {e}")))
}

/// Writes the report of one result file: every output (the HTML, each plot file) is
/// prepared and checked against the others and the input before anything is written.
///
/// # Errors
/// [`Failure::Usage`] when the result file cannot be read or is not a tickscope result, or
/// an output cannot be written or names the input; [`Failure::Runtime`] when writing fails.
pub fn execute(args: &ReportArgs) -> Result<(), Failure> {
    let range_ns =
        crate::options::parse_duration(&args.range, "--range", 1_000).map_err(Failure::Usage)?;
    let plot_options = PlotOptions { range_ns };
    if args.result.as_os_str() == "-" && args.output.is_none() {
        return Err(Failure::Usage(
            "a result read from standard input has no name to derive the report's from: \
             give -o FILE"
                .into(),
        ));
    }
    let mut doc = match read_document(&args.result)? {
        Input::Run(doc) => *doc,
        Input::Foreign(found) => return foreign(args, &found, &plot_options),
    };
    if args.redact {
        doc.redact();
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.result.with_extension("html"));
    let plots = if args.png.is_some() || args.svg.is_some() {
        plots_with(&doc, &plot_options)
    } else {
        Vec::new()
    };
    // The report itself is checked before a plot directory is created.
    drop(prepare_outputs(&[("-o", &output)], &[&args.result])?);
    let mut names: Vec<(String, PathBuf)> = vec![("-o".into(), output.clone())];
    for (dir, ext, flag) in [(&args.png, "png", "--png"), (&args.svg, "svg", "--svg")] {
        let Some(dir) = dir else { continue };
        plot_dir(flag, dir)?;
        for p in &plots {
            names.push((flag.into(), dir.join(format!("{}.{ext}", p.stem))));
        }
    }
    let wanted: Vec<(&str, &Path)> = names
        .iter()
        .map(|(f, p)| (f.as_str(), p.as_path()))
        .collect();
    let mut outputs = prepare_outputs(&wanted, &[&args.result])?.into_iter();
    let html = HtmlReport {
        source: args.result.display().to_string(),
        plots: plot_options,
    }
    .render(&doc)
    .map_err(|e| Failure::Runtime(format!("cannot render the report: {e}")))?;
    let html_out = outputs.next().expect("the HTML output is first");
    let to = html_out.shown();
    finish(html_out, &html)?;
    console::line(format!("report written to {to}"));
    for (dir, ext) in [(&args.png, "png"), (&args.svg, "svg")] {
        let Some(dir) = dir else { continue };
        for p in &plots {
            let bytes = if ext == "png" {
                p.png()
            } else {
                p.svg().map(String::into_bytes)
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

/// The report of another tool's result: the HTML page and, when asked, its plots.
///
/// # Errors
/// As [`execute`].
fn foreign(
    args: &ReportArgs,
    found: &[tickscope_report::import::Measurement],
    opts: &PlotOptions,
) -> Result<(), Failure> {
    use tickscope_report::export::foreign_html;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.result.with_extension("html"));
    let plots: Vec<_> = found
        .iter()
        .flat_map(|m| foreign_html::foreign_plots(m, opts))
        .collect();
    let mut names: Vec<(String, PathBuf)> = vec![("-o".into(), output)];
    for (dir, ext, flag) in [(&args.png, "png", "--png"), (&args.svg, "svg", "--svg")] {
        let Some(dir) = dir else { continue };
        plot_dir(flag, dir)?;
        for p in &plots {
            names.push((flag.into(), dir.join(format!("{}.{ext}", p.stem))));
        }
    }
    let wanted: Vec<(&str, &Path)> = names
        .iter()
        .map(|(f, p)| (f.as_str(), p.as_path()))
        .collect();
    let mut outputs = prepare_outputs(&wanted, &[&args.result])?.into_iter();
    let source = args.result.display().to_string();
    let html = foreign_html::render(found, &source, opts)
        .map_err(|e| Failure::Runtime(format!("cannot render the report: {e}")))?;
    let html_out = outputs.next().expect("the HTML output is first");
    let to = html_out.shown();
    finish(html_out, &html)?;
    console::line(format!(
        "report of a {} result written to {to}",
        found[0].format.name()
    ));
    for (dir, ext) in [(&args.png, "png"), (&args.svg, "svg")] {
        if dir.is_none() {
            continue;
        }
        for p in &plots {
            let bytes = if ext == "png" {
                p.png()
            } else {
                p.svg().map(String::into_bytes)
            }
            .map_err(|e| Failure::Runtime(format!("cannot draw {}: {e}", p.stem)))?;
            finish(outputs.next().expect("one output per plot"), &bytes)?;
        }
    }
    Ok(())
}
