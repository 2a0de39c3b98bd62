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
//!
//! So that the file of a day-long run stays small too, windows after a run's first stretch
//! are merged into windows of a minute before they are spooled ([`crate::coarse`]): the
//! spool, and the document, grow by about 400 bytes per minute and thread after the first
//! hour. Merging needs each window's histograms, so the sink asks for them
//! ([`SinkNeeds::window_histograms`]).

use super::{RunContext, RunSink, SinkError, SinkNeeds};
use crate::coarse::Coarsener;
use crate::document::RunDocument;
use crate::layout::{self, EntryWriter, WindowEntry};
use crate::output::Output;
use crate::quoted;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use tickscope_engine::result::WindowStats;
use tickscope_engine::run::SecondWindows;
use tickscope_engine::time::Nanos;

/// Writes the run document to one [`Output`], its windows spooled as they finish.
#[derive(Debug)]
pub struct JsonSink {
    out: Option<Output>,
    spool: Option<BufWriter<File>>,
    entries: EntryWriter,
    /// The first I/O error of the spool; reported when the document is written.
    spool_error: Option<io::Error>,
    /// The coarse windows being merged, of run `coarse_run`.
    coarse: Coarsener,
    coarse_run: usize,
}

impl JsonSink {
    /// A sink writing to `out` (prepared before the run).
    pub fn new(out: Output) -> Self {
        JsonSink {
            out: Some(out),
            spool: None,
            entries: EntryWriter::default(),
            spool_error: None,
            coarse: Coarsener::default(),
            coarse_run: 0,
        }
    }

    /// Spools window `w` of series `thread` (`None`: all threads merged) of run `run`, in a
    /// run of `threads` threads: as it is, or into its coarse window ([`crate::coarse`]),
    /// spooling the coarse window it finishes.
    fn put(
        &mut self,
        (run, threads, window_ns): (usize, usize, Nanos),
        thread: Option<usize>,
        w: &WindowStats,
    ) -> io::Result<()> {
        self.coarse_run = run;
        let stats = self.coarse.put(thread, (threads, window_ns), w);
        match stats {
            Some(stats) => self.spool(&WindowEntry { run, thread, stats }),
            None => Ok(()),
        }
    }

    /// Spools the coarse windows still being merged (at the end of a run).
    fn flush_coarse(&mut self) {
        let run = self.coarse_run;
        for (thread, stats) in self.coarse.flush() {
            let result = self.spool(&WindowEntry { run, thread, stats });
            if self.spool_error.is_none() {
                self.spool_error = result.err();
            }
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
        // Windows come through `window`, not the final document; their histograms merge
        // them into coarse windows exactly.
        SinkNeeds {
            window_histograms: true,
            ..SinkNeeds::default()
        }
    }

    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondWindows) {
        if self.spool_error.is_some() {
            return;
        }
        let threads = ctx.config.cpus.len();
        let run = (ctx.index, threads, ctx.config.window_ns);
        let mut result = second
            .threads
            .iter()
            .try_for_each(|(t, w)| self.put(run, Some(*t), w));
        if result.is_ok() && threads > 1 {
            result = self.put(run, None, &second.merged);
        }
        self.spool_error = result.err();
    }

    fn run_finished(&mut self, ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        self.flush_coarse();
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
        self.flush_coarse();
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
