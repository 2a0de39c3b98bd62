//! The latency histogram in cyclictest's `-h` format (`--histogram-file FILE`, or
//! cyclictest's own `-h N`, `-H N` and `--histfile FILE`), written when the run ends. With a
//! range (`-h N`) the sink also follows the raw wake-ups to list the cycle numbers of the
//! overflows, as cyclictest does; see [`crate::export::histogram_file`].

use super::{RunSink, SinkError, SinkNeeds};
use crate::document::RunDocument;
use crate::export::histogram_file::{render_with, HistogramOptions, CYCLES_KEPT};
use crate::output::Output;
use crate::quoted;
use tickscope_engine::sample::RawSample;

/// Writes the histogram of the final document to one [`Output`].
pub struct HistogramSink {
    out: Option<Output>,
    opts: HistogramOptions,
    /// Per thread: overflow cycle numbers kept (at most [`CYCLES_KEPT`]).
    cycles: Vec<Vec<u64>>,
}

impl HistogramSink {
    /// A sink writing the histogram laid out by `opts` to `out` (prepared before the run).
    pub fn new(out: Output, opts: HistogramOptions) -> Self {
        HistogramSink {
            out: Some(out),
            opts,
            cycles: Vec::new(),
        }
    }
}

impl RunSink for HistogramSink {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds {
            raw_samples: self.opts.range_us.is_some(),
            ..SinkNeeds::default()
        }
    }

    fn samples(&mut self, thread: usize, samples: &[RawSample]) {
        let Some(range_us) = self.opts.range_us else {
            return;
        };
        let limit = range_us as i64 * 1000;
        if self.cycles.len() <= thread {
            self.cycles.resize(thread + 1, Vec::new());
        }
        let kept = &mut self.cycles[thread];
        for s in samples {
            if s.woke - s.expiry >= limit && kept.len() < CYCLES_KEPT {
                kept.push(s.seq);
            }
        }
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let (q, to) = (quoted(out.path()), out.shown());
        let opts = HistogramOptions {
            overflow_cycles: std::mem::take(&mut self.cycles),
            ..self.opts.clone()
        };
        out.finish(render_with(doc, &opts).as_bytes())
            .map_err(|e| SinkError(format!("cannot write {q}: {e}")))?;
        notes.push(format!("histogram file written to {to}"));
        Ok(())
    }
}
