//! The interval log beside a result (`tickscope run --hlog`), found and drawn for the report:
//! per-interval p50/p99/p99.9/max bands ([`crate::plot::bands`]).

use crate::document::RunDocument;
use crate::import::hlog::{looks_like_hlog, parse};
use crate::plot::bands::BandsChart;
use crate::plot::{stamp, NamedPlot, Plot};
use std::path::{Path, PathBuf};

/// Where to look for the interval log of `doc`, read from `result`: `explicit` when given;
/// else, from the document's `hlog` section, the absolute path recorded at the run, the
/// path as given relative to the result's directory, and as given. Empty without either.
pub fn candidates(doc: &RunDocument, result: &Path, explicit: Option<&Path>) -> Vec<PathBuf> {
    if let Some(p) = explicit {
        return vec![p.to_path_buf()];
    }
    let Some(h) = doc.hlog.as_ref().filter(|h| h.path != "-") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = h.absolute.iter().map(PathBuf::from).collect();
    let given = PathBuf::from(&h.path);
    if given.is_relative() {
        if let Some(dir) = result.parent() {
            out.push(dir.join(&given));
        }
    }
    out.push(given);
    out.dedup();
    out
}

/// The bands plot of the first readable candidate, or why none could be drawn (`None`
/// when there is no candidate at all).
pub fn bands_plot(
    doc: &RunDocument,
    result: &Path,
    explicit: Option<&Path>,
) -> Option<Result<NamedPlot, String>> {
    let paths = candidates(doc, result, explicit);
    let mut why = None;
    for path in &paths {
        let text = match crate::import::read_input(path) {
            Ok(t) => t,
            Err(e) => {
                why.get_or_insert(e.to_string());
                continue;
            }
        };
        let q = crate::quoted(path);
        if !looks_like_hlog(&text) {
            return Some(Err(format!("{q} is not an interval log")));
        }
        let log = match parse(&text) {
            Ok(l) => l,
            Err(e) => return Some(Err(format!("{q}: {e}"))),
        };
        let tag = ["all", "T0", crate::import::hlog::UNTAGGED]
            .into_iter()
            .find(|t| log.intervals.iter().any(|i| i.tag == *t))
            .unwrap_or("all");
        let name = path
            .file_name()
            .unwrap_or(path.as_os_str())
            .to_string_lossy();
        let title = format!("Latency per interval, from {name} (tag {tag})");
        return Some(match BandsChart::new(title, &log, tag) {
            Some(c) => Ok(NamedPlot {
                stem: "bands".into(),
                caption: c.caption(),
                plot: Plot::Bands(c),
                stamp: stamp(doc),
            }),
            None => Err(format!("{q} holds no interval with values")),
        });
    }
    why.map(Err)
}
