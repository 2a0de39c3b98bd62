//! The output files of `tickscope run` (`--json`, `--histogram-file`, `--csv`,
//! `--samples`): prepared and checked before measuring, the raw samples streamed while it
//! runs, everything committed when it ends — also after Ctrl-C, which ends the run
//! normally. The rules for destinations are those of [`tickscope_report::output`].

use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::output_path::{finish, prepare_outputs, shown};
use std::path::Path;
use tickscope_engine::run::{RunConfig, RunEvent};
use tickscope_report::export::csv::CsvExport;
use tickscope_report::export::histogram_file::HistogramFile;
use tickscope_report::export::samples::SampleWriter;
use tickscope_report::export::Exporter;
use tickscope_report::{quoted, Output, OutputStream, RunDocument};

/// The raw-sample stream: where it goes (for messages), a CSV writer on the prepared
/// output, and the first write error.
struct SampleSink {
    shown: String,
    writer: Option<SampleWriter<OutputStream>>,
    error: Option<std::io::Error>,
}

/// What the run writes, open for the length of the run.
pub struct Exports {
    json: Option<Output>,
    files: Vec<(Output, Box<dyn Exporter>)>,
    samples: Option<SampleSink>,
}

impl Exports {
    /// Prepares every output of `args` (see [`prepare_outputs`]); with `--samples`, asks
    /// the engine to stream raw samples (`cfg.stream_samples`) and opens the stream.
    ///
    /// # Errors
    /// [`Failure::Usage`] for any output that cannot be written, or two on one file.
    pub fn prepare(args: &RunArgs, cfg: &mut RunConfig) -> Result<Self, Failure> {
        let e = &args.exports;
        let wanted: Vec<(&str, &Path)> = [
            ("--json", args.json.as_deref()),
            ("--histogram-file", e.histogram_file.as_deref()),
            ("--csv", e.csv.as_deref()),
            ("--samples", e.samples.as_deref()),
        ]
        .into_iter()
        .filter_map(|(flag, p)| p.map(|p| (flag, p)))
        .collect();
        let mut exports = Exports {
            json: None,
            files: Vec::new(),
            samples: None,
        };
        for ((flag, _), out) in wanted.iter().zip(prepare_outputs(&wanted, &[])?) {
            match *flag {
                "--json" => exports.json = Some(out),
                "--histogram-file" => exports.files.push((out, Box::new(HistogramFile))),
                "--csv" => exports.files.push((out, Box::new(CsvExport))),
                _ => {
                    let q = quoted(out.path());
                    let cannot = |e: std::io::Error| {
                        Failure::Usage(format!("--samples: cannot write {q}: {e}"))
                    };
                    let shown = shown(&out);
                    let stream = out.stream().map_err(cannot)?;
                    cfg.stream_samples = true;
                    exports.samples = Some(SampleSink {
                        shown,
                        writer: Some(SampleWriter::new(stream).map_err(cannot)?),
                        error: None,
                    });
                }
            }
        }
        Ok(exports)
    }

    /// Follows the run: a new run starts a new run number in the sample file; sample
    /// batches are written. Called on the collector thread. After a write error, further
    /// samples are not written and the error is reported at the end.
    pub fn observe(&mut self, event: &RunEvent<'_>) {
        let Some(sink) = &mut self.samples else {
            return;
        };
        let Some(writer) = &mut sink.writer else {
            return;
        };
        match event {
            RunEvent::Started(applied) => writer.start_run(applied.method.name()),
            RunEvent::Samples { thread, samples } => {
                if let Err(e) = writer.write(*thread, samples) {
                    sink.error = Some(e);
                    sink.writer = None;
                }
            }
            RunEvent::Second(_) => {}
        }
    }

    /// Rewrites the result file (a regular one) with what was measured so far, so that a
    /// crash in a later run of a comparison keeps it.
    ///
    /// # Errors
    /// [`Failure::Runtime`] naming the file.
    pub fn checkpoint(&mut self, doc: &RunDocument) -> Result<(), Failure> {
        if let Some(out) = &mut self.json {
            let q = quoted(out.path());
            out.checkpoint(doc.to_json().as_bytes())
                .map_err(|e| Failure::Runtime(format!("cannot write {q}: {e}")))?;
        }
        Ok(())
    }

    /// Writes every file of the finished run and commits the sample stream; says on
    /// stderr how many samples the writer could not keep. Every file is attempted even
    /// after one fails (each failure is printed as it happens). Returns the "written to"
    /// lines for the files that were written, and the first failure.
    pub fn finish(self, doc: &RunDocument) -> (Vec<String>, Result<(), Failure>) {
        let mut written: Vec<String> = Vec::new();
        let mut first_error = None;
        let mut fail = |f: Failure| {
            let (Failure::Runtime(m) | Failure::Usage(m) | Failure::Interrupted(m)) = &f;
            eprintln!("tickscope: {m}");
            first_error.get_or_insert(f);
        };
        if let Some(out) = self.json {
            let to = shown(&out);
            match finish(out, doc.to_json().as_bytes()) {
                Ok(()) => written.push(format!("result written to {to}")),
                Err(f) => fail(f),
            }
        }
        for (out, exporter) in self.files {
            let to = shown(&out);
            let q = quoted(out.path());
            let done = exporter
                .render(doc)
                .map_err(|e| Failure::Runtime(format!("cannot write {q}: {e}")))
                .and_then(|bytes| finish(out, &bytes));
            match done {
                Ok(()) => written.push(format!("{} written to {to}", exporter.what())),
                Err(f) => fail(f),
            }
        }
        if let Some(sink) = self.samples {
            let rows = sink.writer.as_ref().map_or(0, SampleWriter::rows);
            let committed = match (sink.error, sink.writer) {
                (Some(e), _) => Err(e),
                (None, Some(w)) => w.finish().and_then(OutputStream::commit),
                (None, None) => Ok(()),
            };
            match committed {
                Ok(()) => written.push(format!("{rows} samples written to {}", sink.shown)),
                Err(e) => fail(Failure::Runtime(format!(
                    "cannot write {}: {e}",
                    sink.shown
                ))),
            }
            report_dropped(doc, &sink.shown);
        }
        (written, first_error.map_or(Ok(()), Err))
    }
}

/// Says on stderr how many raw samples the engine dropped because the writer fell behind,
/// per thread index over all runs; silent when none were.
fn report_dropped(doc: &RunDocument, shown: &str) {
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
    if total > 0 {
        let each: Vec<String> = per_thread
            .iter()
            .enumerate()
            .map(|(i, n)| format!("T{i}: {n}"))
            .collect();
        eprintln!(
            "tickscope: {total} samples are missing from {shown} because the writer fell \
             behind ({})",
            each.join(", ")
        );
    }
}
