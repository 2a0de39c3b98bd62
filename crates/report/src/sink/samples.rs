//! Every wake-up as CSV (`--samples FILE`), streamed on the collector thread while the run
//! goes on; the file appears complete when the run ends (see [`crate::export::samples`] for
//! the columns). Samples the writer could not keep up with are counted by the engine per
//! thread (`samples_dropped`) and reported here at the end.

use super::{RunContext, RunSink, SinkError, SinkNeeds};
use crate::document::RunDocument;
use crate::export::samples::SampleWriter;
use crate::output::{Output, OutputStream};
use crate::quoted;
use tickscope_engine::run::Applied;
use tickscope_engine::sample::RawSample;

/// Streams raw samples into one [`Output`].
pub struct SamplesSink {
    shown: String,
    quoted: String,
    writer: Option<SampleWriter<OutputStream>>,
    error: Option<std::io::Error>,
}

impl SamplesSink {
    /// Opens the stream on `out` and writes the header line.
    ///
    /// # Errors
    /// [`SinkError`] when the destination cannot be opened or written (a FIFO blocks here
    /// until it has a reader).
    pub fn new(out: Output) -> Result<Self, SinkError> {
        let (shown, q) = (out.shown(), quoted(out.path()));
        let cannot = |e: std::io::Error| SinkError(format!("cannot write {q}: {e}"));
        let writer = SampleWriter::new(out.stream().map_err(cannot)?).map_err(cannot)?;
        Ok(SamplesSink {
            shown,
            quoted: q,
            writer: Some(writer),
            error: None,
        })
    }
}

impl RunSink for SamplesSink {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds {
            raw_samples: true,
            ..SinkNeeds::default()
        }
    }

    fn started(&mut self, _ctx: &RunContext<'_>, applied: &Applied) {
        if let Some(w) = &mut self.writer {
            w.start_run(applied.method.name());
        }
    }

    fn samples(&mut self, thread: usize, samples: &[RawSample]) {
        if let Some(w) = &mut self.writer {
            if let Err(e) = w.write(thread, samples) {
                self.error = Some(e);
                self.writer = None;
            }
        }
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        let rows = self.writer.as_ref().map_or(0, SampleWriter::rows);
        let committed = match (self.error.take(), self.writer.take()) {
            (Some(e), _) => Err(e),
            (None, Some(w)) => w.finish().and_then(OutputStream::commit),
            (None, None) => return Ok(()),
        };
        if let Some(line) = dropped(doc, &self.shown) {
            eprintln!("tickscope: {line}");
        }
        committed.map_err(|e| SinkError(format!("cannot write {}: {e}", self.quoted)))?;
        notes.push(format!("{rows} samples written to {}", self.shown));
        Ok(())
    }
}

/// How many raw samples the engine dropped because the writer fell behind, per thread
/// index over all runs, as one sentence; `None` when none were.
pub fn dropped(doc: &RunDocument, shown: &str) -> Option<String> {
    let mut per_thread: Vec<u64> = Vec::new();
    for run in doc.each_run() {
        for (i, t) in run.threads.iter().enumerate() {
            let i = t.thread.unwrap_or(i);
            if per_thread.len() <= i {
                per_thread.resize(i + 1, 0);
            }
            per_thread[i] += t.samples_dropped;
        }
    }
    let total: u64 = per_thread.iter().sum();
    (total > 0).then(|| {
        let each: Vec<String> = per_thread
            .iter()
            .enumerate()
            .map(|(i, n)| format!("T{i}: {n}"))
            .collect();
        format!(
            "{total} samples are missing from {shown} because the writer fell behind ({})",
            each.join(", ")
        )
    })
}
