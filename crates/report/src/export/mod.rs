//! Files rendered from a finished run's [`RunDocument`], one file per format, each behind
//! [`Exporter`]; and the raw-sample stream ([`samples`]), which is written while the run
//! goes on. Exporters only read the document: they never measure.

pub mod csv;
pub mod foreign_html;
pub mod histogram_file;
pub mod hlog_bands;
pub mod html;
pub mod html_escape;
pub mod html_explain;
pub mod html_tasks;
pub mod samples;

use crate::document::RunDocument;
use std::fmt;

/// A renderer failed (plot drawing, encoding); the message says what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError(pub String);

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExportError {}

/// A file format rendered from a run document.
pub trait Exporter {
    /// What the file is, for messages (`histogram file`, `CSV`).
    fn what(&self) -> &'static str;

    /// The file's contents.
    ///
    /// # Errors
    /// [`ExportError`] when rendering fails (not for any document content: every valid
    /// document renders).
    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError>;
}

/// The series of a run that exports list: each thread, then all threads merged when there
/// are several, with a name (`T0`, `T1`, `all`).
pub fn series<'a>(
    threads: &'a [tickscope_engine::result::ThreadStats],
    summary: &'a tickscope_engine::result::ThreadStats,
) -> Vec<(String, &'a tickscope_engine::result::ThreadStats)> {
    let mut out: Vec<_> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("T{}", t.thread.unwrap_or(i)), t))
        .collect();
    if threads.len() > 1 {
        out.push(("all".to_string(), summary));
    }
    out
}
