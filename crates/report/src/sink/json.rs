//! The result document (`--json FILE`, schema `tickscope.run/2`): rewritten after every run
//! of a comparison, so a crash keeps what was measured, and written whole at the end.
//!
//! The per-second windows are not kept in memory: each finished window is appended, as
//! one line of JSON, to a spool — an anonymous temporary file (`O_TMPFILE`, no name, gone
//! when the process ends) in the result's directory, or in the system's temporary
//! directory when the result goes to standard output or a FIFO — and copied into
//! the document's `windows` list ([`crate::layout`]) whenever the document is written. So
//! the memory of `tickscope run -D 24h --json r.json` does not grow with the run's length;
//! the spool grows by about 400 bytes per window and thread.

use super::{RunContext, RunSink, SinkError, SinkNeeds};
use crate::document::RunDocument;
use crate::layout::{self, EntryWriter, WindowEntry};
use crate::output::Output;
use crate::quoted;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use tickscope_engine::run::SecondWindows;

/// Writes the run document to one [`Output`], its windows spooled as they finish.
#[derive(Debug)]
pub struct JsonSink {
    out: Option<Output>,
    spool: Option<BufWriter<File>>,
    entries: EntryWriter,
    /// The first I/O error of the spool; reported when the document is written.
    spool_error: Option<io::Error>,
}

impl JsonSink {
    /// A sink writing to `out` (prepared before the run).
    pub fn new(out: Output) -> Self {
        JsonSink {
            out: Some(out),
            spool: None,
            entries: EntryWriter::default(),
            spool_error: None,
        }
    }

    fn spool(&mut self, entry: &WindowEntry) -> io::Result<()> {
        if self.spool.is_none() {
            // Beside the result (same file system: if it is full, the result could not be
            // written either), or in the temporary directory for a stream destination.
            let file = match self.out.as_ref().and_then(Output::directory) {
                Some(dir) => tempfile::tempfile_in(dir)?,
                None => tempfile::tempfile()?,
            };
            self.spool = Some(BufWriter::new(file));
        }
        let spool = self.spool.as_mut().expect("just created");
        self.entries.write(spool, entry)
    }

    /// Writes the document: `doc` without its windows (hoisted and dropped: the spool has
    /// them), then the spool's entries.
    fn write(&mut self, doc: &RunDocument, out: &mut dyn Write) -> io::Result<()> {
        if let Some(e) = self.spool_error.take() {
            return Err(io::Error::new(
                e.kind(),
                format!("the window spool failed: {e}"),
            ));
        }
        let mut doc = doc.clone();
        layout::hoist(&mut doc);
        let spool = &mut self.spool;
        layout::write_document(out, &doc, &mut |w| match spool.as_mut() {
            None => Ok(()),
            Some(s) => {
                s.flush()?;
                let file = s.get_mut();
                file.seek(SeekFrom::Start(0))?;
                io::copy(&mut io::Read::by_ref(file), w)?;
                file.seek(SeekFrom::End(0)).map(|_| ())
            }
        })
    }
}

impl RunSink for JsonSink {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds::default() // windows come through `window`, not the final document
    }

    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondWindows) {
        if self.spool_error.is_some() {
            return;
        }
        let run = ctx.index;
        let mut result = second.threads.iter().try_for_each(|(t, w)| {
            self.spool(&WindowEntry {
                run,
                thread: Some(*t),
                stats: w.clone(),
            })
        });
        if result.is_ok() && ctx.config.cpus.len() > 1 {
            result = self.spool(&WindowEntry {
                run,
                thread: None,
                stats: second.merged.clone(),
            });
        }
        self.spool_error = result.err();
    }

    fn run_finished(&mut self, ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        if !ctx.is_comparison() {
            return Ok(());
        }
        let Some(mut out) = self.out.take() else {
            return Ok(());
        };
        let q = quoted(out.path());
        let result = out.checkpoint_with(&mut |w| self.write(doc, w));
        self.out = Some(out);
        result.map_err(|e| SinkError(format!("cannot write {q}: {e}")))
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let (q, to) = (quoted(out.path()), out.shown());
        out.finish_with(&mut |w| self.write(doc, w))
            .map_err(|e| SinkError(format!("cannot write {q}: {e}")))?;
        notes.push(format!("result written to {to}"));
        Ok(())
    }
}
