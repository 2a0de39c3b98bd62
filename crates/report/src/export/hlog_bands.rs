//! The interval log beside a result (`tickscope run --hlog`), found and drawn for the report:
//! per-interval p50/p99/p99.9/max bands ([`crate::plot::bands`]).

use crate::document::RunDocument;
use crate::import::hlog::Reader;
use crate::plot::bands::{Band, BandsChart};
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

/// Whether `log` is the one `doc` names: its StartTime equals the section's `start_time`
/// (to the ms the log gives). A log or section without one is taken as it is (older files,
/// foreign logs).
fn same_run(doc: &RunDocument, log: &Bands) -> Result<(), String> {
    let named = doc
        .hlog
        .as_ref()
        .and_then(|h| h.start_time.as_deref())
        .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
        .and_then(|t| t.duration_since(std::time::SystemTime::UNIX_EPOCH).ok());
    match (named, log.start_time) {
        (Some(want), Some(got)) if (want.as_secs_f64() - got).abs() > 0.0015 => Err(format!(
            "it started at {}, the run at {}: another run's log",
            humantime::format_rfc3339_millis(
                std::time::SystemTime::UNIX_EPOCH
                    + std::time::Duration::from_secs_f64(got.max(0.0))
            ),
            humantime::format_rfc3339_millis(std::time::SystemTime::UNIX_EPOCH + want)
        )),
        _ => Ok(()),
    }
}

/// The bands plot of the first readable candidate, or why none could be drawn (`None`
/// when there is no candidate at all). A log found through the document's `hlog` section
/// must be that run's ([`HlogSection::start_time`](crate::sink::hlog::HlogSection)); one
/// given explicitly is drawn whatever run it is from.
pub fn bands_plot(
    doc: &RunDocument,
    result: &Path,
    explicit: Option<&Path>,
) -> Option<Result<NamedPlot, String>> {
    let paths = candidates(doc, result, explicit);
    let mut why = None;
    for path in &paths {
        let log = match read_log(path) {
            Ok(l) => l,
            Err(Unread::Missing(e)) => {
                why.get_or_insert(e);
                continue;
            }
            Err(Unread::Bad(e)) => return Some(Err(e)),
        };
        if explicit.is_none() {
            if let Err(e) = same_run(doc, &log) {
                why.get_or_insert(format!("{}: {e}", crate::quoted(path)));
                continue;
            }
        }
        return Some(chart(path, &log, stamp(doc)));
    }
    why.map(Err)
}

/// The bands plot of the interval log at `path` on its own (`tickscope report FILE.hlog`),
/// with `stamp` under it.
///
/// # Errors
/// One sentence naming the file: unreadable, not an interval log, or no interval with
/// values.
pub fn log_bands(path: &Path, stamp: String) -> Result<NamedPlot, String> {
    let log = read_log(path).map_err(|(Unread::Missing(e) | Unread::Bad(e))| e)?;
    chart(path, &log, stamp)
}

/// Why a log could not be read: missing or unreadable (another candidate may do), or read
/// but not a valid interval log.
enum Unread {
    Missing(String),
    Bad(String),
}

/// The tags a bands plot may be drawn from, in order of preference: `all` (every thread
/// merged), `T0`, the untagged intervals of a foreign log.
const BAND_TAGS: [&str; 3] = ["all", "T0", crate::import::hlog::UNTAGGED];

/// What a bands plot needs of a log, read in one pass: its StartTime and, for each of
/// [`BAND_TAGS`], whether it has intervals and a [`Band`] (a few numbers) per interval with
/// values — never the intervals' histograms; only the most preferred tag seen so far is
/// decoded and kept.
struct Bands {
    start_time: Option<f64>,
    seen: [bool; 3],
    bands: [Vec<Band>; 3],
}

fn read_log(path: &Path) -> Result<Bands, Unread> {
    let mut input = crate::import::open_input(path).map_err(|e| Unread::Missing(e.to_string()))?;
    let q = crate::quoted(path);
    let hlog = input
        .is_hlog()
        .map_err(|e| Unread::Missing(e.to_string()))?;
    if !hlog {
        return Err(Unread::Bad(format!("{q} is not an interval log")));
    }
    let mut reader = Reader::new(input.into_reader());
    let mut out = Bands {
        start_time: None,
        seen: [false; 3],
        bands: Default::default(),
    };
    let bad = |e: String| Unread::Bad(format!("{q}: {e}"));
    while let Some(head) = reader.next_head().map_err(bad)? {
        let Some(k) = BAND_TAGS.iter().position(|t| *t == head.tag) else {
            continue;
        };
        out.seen[k] = true;
        for later in &mut out.bands[k + 1..] {
            later.clear(); // never drawn now
        }
        if out.seen[..k].contains(&true) {
            continue; // a preferred tag is there: this one will not be drawn
        }
        let h = reader.histogram().map_err(bad)?;
        if let Some(b) = Band::of(head.start, head.length, &h) {
            out.bands[k].push(b);
        }
    }
    out.start_time = reader.start_time();
    Ok(out)
}

/// The bands of `log` (read from `path`): tag `all` (every thread merged) when present, else
/// `T0`, else the untagged intervals of a foreign log.
fn chart(path: &Path, log: &Bands, stamp: String) -> Result<NamedPlot, String> {
    let k = log.seen.iter().position(|&s| s).unwrap_or(0);
    let tag = BAND_TAGS[k];
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    let shown = if tag.is_empty() { "untagged" } else { tag };
    let title = format!("Latency per interval, from {name} (tag {shown})");
    match BandsChart::new(title, tag, log.bands[k].clone()) {
        Some(c) => Ok(NamedPlot {
            stem: "bands".into(),
            caption: c.caption(),
            plot: Plot::Bands(c),
            stamp,
        }),
        None => Err(format!(
            "{} holds no interval with values",
            crate::quoted(path)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Output;
    use crate::sink::hlog::HlogSink;
    use crate::sink::{synthetic, RunSink};

    /// A synthetic run through the hlog sink, its document annotated and written beside
    /// the log as `r.json` would be: (directory, document, result path).
    fn logged(windows: u64) -> (tempfile::TempDir, RunDocument, PathBuf) {
        let run = synthetic::run(2, windows, 300);
        let dir = tempfile::tempdir().unwrap();
        let mut sink = HlogSink::new(Output::prepare(&dir.path().join("r.hlog")).unwrap()).unwrap();
        run.feed(&mut sink);
        let mut doc = run.document();
        sink.annotate(&mut doc);
        sink.run_finished(&run.ctx(), &doc).unwrap();
        sink.finish(&doc, &mut Vec::new()).unwrap();
        let result = dir.path().join("r.json");
        (dir, doc, result)
    }

    fn bands(p: &NamedPlot) -> usize {
        match &p.plot {
            Plot::Bands(c) => c.bands().len(),
            _ => panic!("not a bands plot: {}", p.stem),
        }
    }

    #[test]
    fn one_band_per_window_from_the_log_the_result_names() {
        let (_dir, doc, result) = logged(6);
        let p = bands_plot(&doc, &result, None).unwrap().unwrap();
        assert_eq!(p.stem, "bands");
        assert_eq!(bands(&p), 6);
        assert!(p.caption.contains("tag all"), "{}", p.caption);
        assert!(p.png().unwrap().starts_with(b"\x89PNG"));
    }

    /// Moved together with its result, the log is found relative to the result's
    /// directory when the recorded absolute path is gone.
    #[test]
    fn a_relative_path_is_found_beside_the_result() {
        let (dir, mut doc, _) = logged(3);
        let h = doc.hlog.as_mut().unwrap();
        h.path = "r.hlog".into();
        h.absolute = Some("/nonexistent/r.hlog".into());
        let p = bands_plot(&doc, &dir.path().join("r.json"), None).unwrap();
        assert_eq!(bands(&p.unwrap()), 3);
    }

    /// A log at the named path whose StartTime is not the run's is another run's: not
    /// drawn, said why; given explicitly, it is drawn.
    #[test]
    fn another_runs_log_at_the_same_path_is_not_drawn() {
        let (_dir, mut doc, result) = logged(3);
        doc.hlog.as_mut().unwrap().start_time = Some("2001-02-03T04:05:06.789Z".into());
        let why = bands_plot(&doc, &result, None).unwrap().unwrap_err();
        assert!(why.contains("another run's log"), "{why}");
        let path = PathBuf::from(doc.hlog.as_ref().unwrap().absolute.clone().unwrap());
        assert_eq!(
            bands(&bands_plot(&doc, &result, Some(&path)).unwrap().unwrap()),
            3
        );
    }

    #[test]
    fn without_a_section_or_a_file_there_is_nothing_to_draw() {
        let (dir, mut doc, result) = logged(2);
        let named = doc.hlog.take();
        assert!(bands_plot(&doc, &result, None).is_none());
        doc.hlog = named;
        std::fs::remove_file(dir.path().join("r.hlog")).unwrap();
        assert!(bands_plot(&doc, &result, None).unwrap().is_err());
        let not_a_log = dir.path().join("x.hlog");
        std::fs::write(&not_a_log, "{}\n").unwrap();
        let why = log_bands(&not_a_log, String::new()).unwrap_err();
        assert!(why.contains("not an interval log"), "{why}");
    }
}
