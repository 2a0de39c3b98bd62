//! `tickscope report`: a self-contained HTML report of a result file, and optionally every
//! plot as PNG and SVG files.

use crate::cli::ReportArgs;
use crate::exit::Failure;
use std::path::{Path, PathBuf};
use tickscope_report::export::html::HtmlReport;
use tickscope_report::export::Exporter;
use tickscope_report::import::ImportError;
use tickscope_report::plot::plots_of;
use tickscope_report::{write_atomic, RunDocument, RUN_SCHEMA};

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

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    write_atomic(path, bytes)
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))
}

fn plot_dir(dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", dir.display())))
}

/// Writes the report of one result file.
///
/// # Errors
/// [`Failure::Usage`] when the result file cannot be read or is not a tickscope result;
/// [`Failure::Runtime`] when an output cannot be written.
pub fn execute(args: &ReportArgs) -> Result<(), Failure> {
    let doc = read_document(&args.result)?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.result.with_extension("html"));
    let html = HtmlReport {
        source: args.result.display().to_string(),
    }
    .render(&doc)
    .map_err(|e| Failure::Runtime(format!("cannot render the report: {e}")))?;
    write(&output, &html)?;
    println!("report written to {}", output.display());
    let dirs: Vec<(&PathBuf, &str)> = [(&args.png, "png"), (&args.svg, "svg")]
        .into_iter()
        .filter_map(|(d, ext)| d.as_ref().map(|d| (d, ext)))
        .collect();
    if dirs.is_empty() {
        return Ok(());
    }
    let plots = plots_of(&doc);
    for (dir, ext) in dirs {
        plot_dir(dir)?;
        for p in &plots {
            let bytes = if ext == "png" {
                p.plot.png()
            } else {
                p.plot.svg().map(String::into_bytes)
            }
            .map_err(|e| Failure::Runtime(format!("cannot draw {}: {e}", p.stem)))?;
            write(&dir.join(format!("{}.{ext}", p.stem)), &bytes)?;
        }
        println!(
            "{} plots written to {} as {ext}",
            plots.len(),
            dir.display()
        );
    }
    Ok(())
}
