//! The export files of `tickscope run` (`--histogram-file`, `--csv`, `--samples`): checked
//! before measuring, the raw samples streamed while it runs, everything committed
//! atomically when it ends — also after Ctrl-C, which ends the run normally.

use crate::cli::ExportArgs;
use crate::exit::Failure;
use crate::output_path::check_output_dir;
use std::path::{Path, PathBuf};
use tickscope_engine::run::{RunConfig, RunEvent};
use tickscope_report::export::csv::CsvExport;
use tickscope_report::export::histogram_file::HistogramFile;
use tickscope_report::export::samples::SampleWriter;
use tickscope_report::export::Exporter;
use tickscope_report::{AtomicFile, RunDocument};

/// The raw-sample stream: a CSV writer on a temporary file, and the first write error.
struct SampleSink {
    writer: Option<SampleWriter<AtomicFile>>,
    error: Option<std::io::Error>,
}

/// What the run exports, open for the length of the run.
pub struct Exports {
    files: Vec<(PathBuf, Box<dyn Exporter>)>,
    samples: Option<(PathBuf, SampleSink)>,
}

impl Exports {
    /// Checks the export paths and opens the sample stream; with `--samples`, asks the
    /// engine to stream raw samples (`cfg.stream_samples`).
    ///
    /// # Errors
    /// [`Failure::Usage`] for a missing directory or a sample file that cannot be created.
    pub fn prepare(args: &ExportArgs, cfg: &mut RunConfig) -> Result<Self, Failure> {
        let mut files: Vec<(PathBuf, Box<dyn Exporter>)> = Vec::new();
        if let Some(p) = &args.histogram_file {
            check_output_dir("--histogram-file", p)?;
            files.push((p.clone(), Box::new(HistogramFile)));
        }
        if let Some(p) = &args.csv {
            check_output_dir("--csv", p)?;
            files.push((p.clone(), Box::new(CsvExport)));
        }
        let samples = match &args.samples {
            Some(p) => {
                check_output_dir("--samples", p)?;
                let cannot = |e: std::io::Error| {
                    Failure::Usage(format!("--samples: cannot create {}: {e}", p.display()))
                };
                let file = AtomicFile::create(p).map_err(cannot)?;
                cfg.stream_samples = true;
                let sink = SampleSink {
                    writer: Some(SampleWriter::new(file).map_err(cannot)?),
                    error: None,
                };
                Some((p.clone(), sink))
            }
            None => None,
        };
        Ok(Exports { files, samples })
    }

    /// Follows the run: a new run starts a new run number in the sample file; sample
    /// batches are written. Called on the collector thread. After a write error, further
    /// samples are not written and the error is reported at the end.
    pub fn observe(&mut self, event: &RunEvent<'_>) {
        let Some((_, sink)) = &mut self.samples else {
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

    /// Writes the files rendered from the finished run and commits the sample file; says
    /// how many samples were written and, always, how many the writer could not keep.
    ///
    /// # Errors
    /// [`Failure::Runtime`] naming the first file that could not be written (the others are
    /// still attempted).
    pub fn finish(self, doc: &RunDocument, quiet: bool) -> Result<(), Failure> {
        let mut first_error = None;
        let mut fail = |path: &Path, e: String| {
            let msg = format!("cannot write {}: {e}", path.display());
            eprintln!("tickscope: {msg}");
            first_error.get_or_insert(msg);
        };
        for (path, exporter) in &self.files {
            let written = exporter
                .render(doc)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    tickscope_report::write_atomic(path, &bytes).map_err(|e| e.to_string())
                });
            match written {
                Ok(()) if !quiet => println!("{} written to {}", exporter.what(), path.display()),
                Ok(()) => {}
                Err(e) => fail(path, e),
            }
        }
        if let Some((path, sink)) = self.samples {
            let rows = sink.writer.as_ref().map_or(0, SampleWriter::rows);
            let committed = match (sink.error, sink.writer) {
                (Some(e), _) => Err(e),
                (None, Some(w)) => w.finish().and_then(AtomicFile::commit),
                (None, None) => Ok(()),
            };
            match committed {
                Ok(()) if !quiet => {
                    println!("{rows} samples written to {}", path.display())
                }
                Ok(()) => {}
                Err(e) => fail(&path, e.to_string()),
            }
            report_dropped(doc, &path);
        }
        first_error.map_or(Ok(()), |m| Err(Failure::Runtime(m)))
    }
}

/// Says on stderr how many raw samples the engine dropped because the writer fell behind,
/// per thread index over all runs; silent when none were.
fn report_dropped(doc: &RunDocument, path: &Path) {
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
            "tickscope: {total} samples are missing from {} because the writer fell behind ({})",
            path.display(),
            each.join(", ")
        );
    }
}
