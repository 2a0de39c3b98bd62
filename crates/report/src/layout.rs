//! How a run document lays out its per-second windows on disk (`tickscope.run/2`): not
//! inside each thread's statistics (`tickscope.run/1`) but as one flat `windows` list at the
//! end of the document, one [`WindowEntry`] per window, thread and run.
//!
//! Why: a flat list can be written while the run goes on — [`crate::sink::json`] appends
//! each finished window to a spool and never keeps them in memory — so a days-long run's
//! memory does not grow with its length, and the entries are the last key so that a
//! reader sees the summary first. In memory, [`RunDocument`] keeps the `tickscope.run/1`
//! shape (`ThreadStats::windows`), which every renderer reads: [`hoist`] and
//! [`distribute`] convert between the two, and [`RunDocument::from_json_value`] reads
//! either version.
//!
//! [`RunDocument::from_json_value`]: crate::document::RunDocument::from_json_value

use crate::document::{RunDocument, RUN_SCHEMA, RUN_SCHEMA_V1};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use tickscope_engine::result::{ThreadStats, WindowStats};

/// One window of one thread of one run (or of all its threads merged), as the `windows`
/// list of a `tickscope.run/2` document holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowEntry {
    /// The run, from 0: an index into `runs`, or 0 for a single run.
    pub run: usize,
    /// The thread's index (0-based), or `None` (`null`) for all threads merged. A run with
    /// one thread has no merged entries: its summary's windows are the thread's.
    pub thread: Option<usize>,
    /// The window's statistics (its fields sit beside `run` and `thread`).
    #[serde(flatten)]
    pub stats: WindowStats,
}

/// The entries for one thread's (or the merged) windows of run `run`.
pub fn entries(
    run: usize,
    thread: Option<usize>,
    windows: &[WindowStats],
) -> impl Iterator<Item = WindowEntry> + '_ {
    windows.iter().map(move |w| WindowEntry {
        run,
        thread,
        stats: w.clone(),
    })
}

/// Takes every window out of `doc` (its runs, threads and summaries) and returns them as
/// entries, by run, then thread (merged last, and only for runs with several threads).
pub fn hoist(doc: &mut RunDocument) -> Vec<WindowEntry> {
    let mut out = Vec::new();
    let mut take = |run: usize, threads: &mut [ThreadStats], summary: &mut ThreadStats| {
        for (i, t) in threads.iter_mut().enumerate() {
            out.extend(entries(run, Some(i), &std::mem::take(&mut t.windows)));
        }
        let merged = std::mem::take(&mut summary.windows);
        if threads.len() > 1 {
            out.extend(entries(run, None, &merged));
        }
    };
    for (r, run) in doc.runs.iter_mut().enumerate() {
        take(r, &mut run.threads, &mut run.summary);
    }
    out
}

/// Puts `entries` back into `doc`'s threads and summaries (the inverse of [`hoist`]).
///
/// # Errors
/// One sentence when an entry names a run or thread the document does not have.
pub fn distribute(doc: &mut RunDocument, entries: Vec<WindowEntry>) -> Result<(), String> {
    let runs = doc.runs.len();
    for e in entries {
        let Some(run) = doc.runs.get_mut(e.run) else {
            return Err(format!(
                "a window names run {} of a document with {runs}",
                e.run
            ));
        };
        let count = run.threads.len();
        let into = match e.thread {
            None => &mut run.summary,
            Some(t) => run.threads.get_mut(t).ok_or_else(|| {
                format!(
                    "a window names thread {t} of run {} with {count} threads",
                    e.run
                )
            })?,
        };
        into.windows.push(e.stats);
    }
    for r in &mut doc.runs {
        if r.threads.len() == 1 && r.summary.windows.is_empty() {
            r.summary.windows = r.threads[0].windows.clone();
        }
    }
    Ok(())
}

/// Writes `doc` as pretty JSON with its `windows` list last: `doc`'s own windows must have
/// been hoisted (they are not written), and `write_entries` writes the entries, each as
/// `,`-separated lines (see [`EntryWriter`]). Returns what `write_entries` returned.
///
/// # Errors
/// Any I/O error of `out` or of `write_entries`.
pub fn write_document(
    out: &mut dyn Write,
    doc: &RunDocument,
    write_entries: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let pretty = serde_json::to_string_pretty(doc).map_err(io::Error::other)?;
    let head = pretty
        .strip_suffix('}')
        .map(str::trim_end)
        .ok_or_else(|| io::Error::other("a run document is a JSON object"))?;
    out.write_all(head.as_bytes())?;
    out.write_all(b",\n  \"windows\": [")?;
    write_entries(out)?;
    out.write_all(b"\n  ]\n}\n")
}

/// Writes [`WindowEntry`]s one per line, with the commas between them, wherever the
/// caller keeps them (a spool file while the run goes on).
#[derive(Debug, Default)]
pub struct EntryWriter {
    written: u64,
}

impl EntryWriter {
    /// Writes one entry (compact JSON on its own line).
    ///
    /// # Errors
    /// Any I/O error of `out`.
    pub fn write(&mut self, out: &mut dyn Write, entry: &WindowEntry) -> io::Result<()> {
        out.write_all(if self.written == 0 {
            b"\n    "
        } else {
            b",\n    "
        })?;
        serde_json::to_writer(&mut *out, entry).map_err(io::Error::other)?;
        self.written += 1;
        Ok(())
    }

    /// Entries written so far.
    pub fn count(&self) -> u64 {
        self.written
    }
}

/// A run document on disk: written and read in the `tickscope.run/2` layout.
impl RunDocument {
    /// The document as pretty-printed JSON, in the `tickscope.run/2` layout (the windows
    /// as one list at the end, [`crate::layout`]).
    ///
    /// # Panics
    /// Never in practice: every field serializes (no maps with non-string keys).
    pub fn to_json(&self) -> String {
        let mut doc = self.clone();
        let entries = hoist(&mut doc);
        let mut out = Vec::new();
        let mut writer = EntryWriter::default();
        write_document(&mut out, &doc, &mut |w| {
            entries.iter().try_for_each(|e| writer.write(w, e))
        })
        .expect("run documents always serialize");
        String::from_utf8(out).expect("JSON is UTF-8")
    }

    /// Reads a document of either schema (`tickscope.run/2`, or `/1` with the windows
    /// inside the threads) from parsed JSON, with its windows back in its threads.
    ///
    /// # Errors
    /// One sentence when the schema is neither, a field is missing or of the wrong type, or
    /// a window names a run or thread the document does not have.
    pub fn from_json_value(mut json: serde_json::Value) -> Result<Self, String> {
        match json.get("schema").and_then(serde_json::Value::as_str) {
            Some(RUN_SCHEMA | RUN_SCHEMA_V1) => {}
            Some(other) => {
                return Err(format!(
                    "schema '{other}' is not one this tickscope reads ({RUN_SCHEMA}, \
                     {RUN_SCHEMA_V1})"
                ))
            }
            None => return Err("'schema' is missing or not a string".into()),
        }
        let windows = match json.as_object_mut().and_then(|o| o.remove("windows")) {
            Some(w) => serde_json::from_value::<Vec<WindowEntry>>(w)
                .map_err(|e| format!("windows: {e}"))?,
            None => Vec::new(),
        };
        let mut doc: RunDocument = serde_json::from_value(json).map_err(|e| e.to_string())?;
        distribute(&mut doc, windows)?;
        doc.schema = RUN_SCHEMA.into();
        Ok(doc)
    }

    /// [`RunDocument::from_json_value`] of a text.
    ///
    /// # Errors
    /// As [`RunDocument::from_json_value`], and for text that is not JSON.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        Self::from_json_value(json)
    }
}
