//! The summary and the windows as one CSV table (`--csv FILE`; the columns are
//! [`crate::export::csv`]'s), with memory that does not grow with the run's length.
//!
//! The table lists the totals first, then every window series by series (each thread, then
//! all threads merged), while windows finish second by second, all series at once. So each
//! finished window becomes its row at once — after a run's first stretch a row of a minute,
//! merged exactly as in the result file ([`crate::coarse`]) — and rows wait in a small
//! buffer per series; a full buffer ([`CHUNK`] bytes) is appended to a spool, an anonymous
//! temporary file (gone when the process ends) beside the output or in the system's
//! temporary directory, and only its place is remembered (a few bytes per chunk). When the
//! run ends the table is written from the document's totals and the spool's chunks, series
//! by series, one chunk in memory at a time: for a run short enough to keep its grain the
//! file is byte for byte what [`crate::export::csv::CsvExport`] renders from a document that
//! holds every window.

use super::{RunContext, RunSink, SinkError, SinkNeeds};
use crate::coarse::Coarsener;
use crate::document::RunDocument;
use crate::export::csv::{thread_series, write_head, writer, WindowTail};
use crate::output::Output;
use crate::quoted;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use tickscope_engine::result::WindowStats;
use tickscope_engine::run::SecondWindows;

/// Bytes of rows a series holds in memory before they go to the spool (16 KiB, about a
/// hundred rows).
pub const CHUNK: usize = 16 * 1024;

/// The encoder's buffer, bytes: a row is about 150 (a longer one is written in pieces).
const ROW_BYTES: usize = 512;

/// A series of windows: the run (its index) and the thread (`None`: all threads merged).
type Series = (usize, Option<usize>);

/// Where a chunk of one series' rows lies in the spool.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    series: Series,
    offset: u64,
    len: usize,
}

/// Writes the CSV table to one [`Output`], its window rows spooled as they finish.
pub struct CsvSink {
    out: Option<Output>,
    coarse: Coarsener,
    /// The run whose windows `coarse` merges.
    coarse_run: usize,
    /// Rows not yet spooled, per series (at most [`CHUNK`] bytes each).
    pending: BTreeMap<Series, Vec<u8>>,
    spool: Option<File>,
    /// Bytes written to the spool.
    spooled: u64,
    chunks: Vec<Chunk>,
    /// The first error of the spool; reported when the table is written.
    error: Option<io::Error>,
}

impl CsvSink {
    /// A sink writing to `out` (prepared before the run).
    pub fn new(out: Output) -> Self {
        CsvSink {
            out: Some(out),
            coarse: Coarsener::default(),
            coarse_run: 0,
            pending: BTreeMap::new(),
            spool: None,
            spooled: 0,
            chunks: Vec::new(),
            error: None,
        }
    }

    /// Bytes of rows held in memory now (at most [`CHUNK`] per series), and the chunks
    /// remembered in the spool: what the sink keeps while a run goes on.
    pub fn held(&self) -> (usize, usize) {
        (self.pending.values().map(Vec::len).sum(), self.chunks.len())
    }

    /// Takes window `w` of `series` into its coarse window or, when it is one to write, writes
    /// its row.
    fn put(&mut self, series: Series, threads: usize, window_ns: i64, w: &WindowStats) {
        self.coarse_run = series.0;
        if let Some(w) = self.coarse.put(series.1, (threads, window_ns), w) {
            self.write_row(series, &w);
        }
    }

    /// Appends the row of `w` to its series' buffer, spooling the buffer when it is full.
    fn write_row(&mut self, series: Series, w: &WindowStats) {
        if self.error.is_some() {
            return;
        }
        let buf = self
            .pending
            .entry(series)
            .or_insert_with(|| Vec::with_capacity(CHUNK + ROW_BYTES));
        let mut row = csv::WriterBuilder::new()
            .has_headers(false)
            .buffer_capacity(ROW_BYTES)
            .from_writer(&mut *buf);
        let encoded = row
            .serialize(WindowTail::of(w))
            .and_then(|()| row.flush().map_err(csv::Error::from));
        drop(row);
        if let Err(e) = encoded {
            self.error = Some(io::Error::other(e.to_string()));
            return;
        }
        if buf.len() >= CHUNK {
            // Out of the map while it is spooled, then back, emptied: its memory is reused.
            let mut full = std::mem::take(buf);
            if let Err(e) = self.spool_chunk(series, &full) {
                self.error = Some(e);
            }
            full.clear();
            self.pending.insert(series, full);
        }
    }

    /// Appends `bytes` (rows of `series`) to the spool and remembers where they lie.
    fn spool_chunk(&mut self, series: Series, bytes: &[u8]) -> io::Result<()> {
        let file = match self.spool.take() {
            Some(f) => f,
            // Beside the output (same file system), or in the temporary directory for a
            // stream destination.
            None => match self.out.as_ref().and_then(Output::directory) {
                Some(dir) => tempfile::tempfile_in(dir)?,
                None => tempfile::tempfile()?,
            },
        };
        let file = self.spool.insert(file);
        file.write_all(bytes)?;
        self.chunks.push(Chunk {
            series,
            offset: self.spooled,
            len: bytes.len(),
        });
        self.spooled += bytes.len() as u64;
        Ok(())
    }

    /// Writes the rows of the coarse windows still being merged (at the end of a run).
    fn flush_coarse(&mut self) {
        let run = self.coarse_run;
        for (thread, w) in self.coarse.flush() {
            self.write_row((run, thread), &w);
        }
    }

    /// Writes the table: the header and totals from `doc`, then each series' window rows —
    /// from the spool, chunk by chunk, then from its buffer — prefixed with the run's and
    /// the series' columns.
    fn write(&mut self, doc: &RunDocument, out: &mut dyn Write) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(io::Error::new(
                e.kind(),
                format!("the window spool failed: {e}"),
            ));
        }
        let csv_error = |e: csv::Error| io::Error::other(format!("cannot write CSV: {e}"));
        let mut table = writer(out);
        write_head(&mut table, doc).map_err(csv_error)?;
        let mut chunk = Vec::new();
        for (i, run) in doc.each_run().iter().enumerate() {
            let (run_index, round) = (i.to_string(), run.round.to_string());
            for (thread, t) in thread_series(run) {
                let series = (i, t.thread);
                let prefix = [run_index.as_str(), &run.method, &round, &thread];
                let spooled = self.chunks.iter().filter(|c| c.series == series);
                for c in spooled {
                    let file = self
                        .spool
                        .as_ref()
                        .ok_or_else(|| io::Error::other("the window spool is missing a chunk"))?;
                    chunk.resize(c.len, 0);
                    file.read_exact_at(&mut chunk, c.offset)?;
                    copy_rows(&chunk, &prefix, &mut table).map_err(csv_error)?;
                }
                if let Some(rest) = self.pending.get(&series) {
                    copy_rows(rest, &prefix, &mut table).map_err(csv_error)?;
                }
            }
        }
        table.flush()
    }
}

/// Writes each row of `rows` (CSV, as [`WindowTail`] encodes them) to `table`, after the
/// fields of `prefix`.
fn copy_rows<W: Write>(
    rows: &[u8],
    prefix: &[&str],
    table: &mut csv::Writer<W>,
) -> Result<(), csv::Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(rows);
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record)? {
        table.write_record(prefix.iter().copied().chain(record.iter()))?;
    }
    Ok(())
}

impl RunSink for CsvSink {
    fn needs(&self) -> SinkNeeds {
        // Rows come through `window`, not the final document; the windows' histograms
        // merge them into coarse windows exactly.
        SinkNeeds {
            window_histograms: true,
            ..SinkNeeds::default()
        }
    }

    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondWindows) {
        let threads = ctx.config.cpus.len();
        let window_ns = ctx.config.window_ns;
        for (t, w) in &second.threads {
            self.put((ctx.index, Some(*t)), threads, window_ns, w);
        }
        if threads > 1 {
            self.put((ctx.index, None), threads, window_ns, &second.merged);
        }
    }

    fn run_finished(&mut self, _ctx: &RunContext<'_>, _doc: &RunDocument) -> Result<(), SinkError> {
        self.flush_coarse();
        Ok(())
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        self.flush_coarse();
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let (q, to) = (quoted(out.path()), out.shown());
        out.finish_with(&mut |w| self.write(doc, w))
            .map_err(|e| SinkError(format!("cannot write {q}: {e}")))?;
        notes.push(format!("CSV written to {to}"));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
