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
use tickscope_report::plot::plots_of;
use tickscope_report::{quoted, RunDocument, RUN_SCHEMA};

/// Reads a tickscope result file.
///
/// # Errors
/// [`Failure::Usage`] naming the file: unreadable, not JSON, truncated, another tool's
/// result, or not a `tickscope.run/1` document.
fn read_document(path: &Path) -> Result<RunDocument, Failure> {
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
    let text = std::fs::read_to_string(path).map_err(|e| usage(format!("cannot read: {e}")))?;
    // The importers recognise any known format and explain what is wrong with it.
    let found = tickscope_report::import::parse(&name, "run", &text)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    if found
        .first()
        .is_some_and(|m| m.format != tickscope_report::import::SourceFormat::Tickscope)
    {
        return Err(usage(format!(
            "a {} result; report reads tickscope result files ({RUN_SCHEMA}) — use \
             'tickscope compare' for it",
            found[0].format.name()
        )));
    }
    serde_json::from_str(&text).map_err(|e| usage(e.to_string()))
}

/// Writes the report of one result file: every output (the HTML, each plot file) is
/// prepared and checked against the others and the input before anything is written.
///
/// # Errors
/// [`Failure::Usage`] when the result file cannot be read or is not a tickscope result, or
/// an output cannot be written or names the input; [`Failure::Runtime`] when writing fails.
pub fn execute(args: &ReportArgs) -> Result<(), Failure> {
    let mut doc = read_document(&args.result)?;
    if args.redact {
        doc.redact();
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.result.with_extension("html"));
    let plots = if args.png.is_some() || args.svg.is_some() {
        plots_of(&doc)
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
                p.plot.png()
            } else {
                p.plot.svg().map(String::into_bytes)
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
