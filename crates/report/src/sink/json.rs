//! The result document (`--json FILE`, schema `tickscope.run/1`): rewritten after every run
//! of a comparison, so a crash keeps what was measured, and written whole at the end.

use super::{RunContext, RunSink, SinkError};
use crate::document::RunDocument;
use crate::output::Output;
use crate::quoted;

/// Writes the run document to one [`Output`].
#[derive(Debug)]
pub struct JsonSink {
    out: Option<Output>,
}

impl JsonSink {
    /// A sink writing to `out` (prepared before the run).
    pub fn new(out: Output) -> Self {
        JsonSink { out: Some(out) }
    }
}

impl RunSink for JsonSink {
    fn run_finished(&mut self, ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        let Some(out) = self.out.as_mut().filter(|_| ctx.is_comparison()) else {
            return Ok(());
        };
        let q = quoted(out.path());
        out.checkpoint(doc.to_json().as_bytes())
            .map_err(|e| SinkError(format!("cannot write {q}: {e}")))
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let (q, to) = (quoted(out.path()), out.shown());
        out.finish(doc.to_json().as_bytes())
            .map_err(|e| SinkError(format!("cannot write {q}: {e}")))?;
        notes.push(format!("result written to {to}"));
        Ok(())
    }
}
