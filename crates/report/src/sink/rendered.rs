//! A file rendered from the finished run by an [`Exporter`] (`--csv`, `--histogram-file`):
//! nothing while the run goes on, the whole file when it ends.

use super::{RunSink, SinkError, SinkNeeds};
use crate::document::RunDocument;
use crate::export::Exporter;
use crate::output::Output;
use crate::quoted;

/// Writes `exporter`'s rendering of the final document to one [`Output`].
pub struct RenderedSink {
    out: Option<Output>,
    exporter: Box<dyn Exporter>,
}

impl RenderedSink {
    /// A sink writing `exporter`'s file to `out` (prepared before the run).
    pub fn new(out: Output, exporter: Box<dyn Exporter>) -> Self {
        RenderedSink {
            out: Some(out),
            exporter,
        }
    }
}

impl RunSink for RenderedSink {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds {
            windows: true, // the CSV has a row per window
            ..SinkNeeds::default()
        }
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let (q, to) = (quoted(out.path()), out.shown());
        let cannot = |e: String| SinkError(format!("cannot write {q}: {e}"));
        let bytes = self
            .exporter
            .render(doc)
            .map_err(|e| cannot(e.to_string()))?;
        out.finish(&bytes).map_err(|e| cannot(e.to_string()))?;
        notes.push(format!("{} written to {to}", self.exporter.what()));
        Ok(())
    }
}
