//! Every wake-up as CSV (`--samples FILE`), written while the run goes on.
//!
//! Columns: `run` (from 0, one per measuring run of the invocation), `method`, `thread`,
//! `index` (wake-up number within the thread and run, from 0), `expiry_ns` and `woke_ns`
//! (absolute ns on the run's clock), `latency_ns` (`woke_ns − expiry_ns`, negative for an
//! early wake-up). The writer is fed batches on the collector thread, never the measuring
//! one; what it could not keep up with is counted by the engine
//! (`ThreadStats::samples_dropped`), not written here.

use std::io::{self, Write};
use tickscope_engine::sample::RawSample;

/// The header line's columns.
pub const COLUMNS: [&str; 7] = [
    "run",
    "method",
    "thread",
    "index",
    "expiry_ns",
    "woke_ns",
    "latency_ns",
];

/// Streams raw samples as CSV rows into `W` (a buffered file, normally).
#[derive(Debug)]
pub struct SampleWriter<W: Write> {
    csv: csv::Writer<W>,
    run: Option<u32>,
    method: String,
    rows: u64,
}

impl<W: Write> SampleWriter<W> {
    /// Starts the CSV with its header line.
    ///
    /// # Errors
    /// Writing the header fails.
    pub fn new(out: W) -> io::Result<Self> {
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        csv.write_record(COLUMNS)?;
        Ok(SampleWriter {
            csv,
            run: None,
            method: String::new(),
            rows: 0,
        })
    }

    /// Marks the start of a measuring run: the following samples belong to it.
    pub fn start_run(&mut self, method: &str) {
        self.run = Some(self.run.map_or(0, |r| r + 1));
        self.method = method.to_string();
    }

    /// Writes a batch of one thread's samples, in order.
    ///
    /// # Errors
    /// Writing fails (disk full, …).
    pub fn write(&mut self, thread: usize, samples: &[RawSample]) -> io::Result<()> {
        let run = self.run.unwrap_or(0).to_string();
        let thread = thread.to_string();
        for s in samples {
            self.csv.write_record([
                run.as_str(),
                self.method.as_str(),
                thread.as_str(),
                &s.seq.to_string(),
                &s.expiry.to_string(),
                &s.woke.to_string(),
                &(s.woke - s.expiry).to_string(),
            ])?;
        }
        self.rows += samples.len() as u64;
        Ok(())
    }

    /// Rows written so far (without the header).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes and hands back the destination.
    ///
    /// # Errors
    /// Flushing fails.
    pub fn finish(self) -> io::Result<W> {
        self.csv.into_inner().map_err(|e| e.into_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_rows_with_run_numbers() {
        let mut w = SampleWriter::new(Vec::new()).unwrap();
        w.start_run("nanosleep-abs");
        let s = |seq, expiry, woke| RawSample { seq, expiry, woke };
        w.write(0, &[s(0, 1_000, 1_050), s(1, 2_000, 1_990)])
            .unwrap();
        w.start_run("nanosleep-rel");
        w.write(1, &[s(0, 5_000, 5_007)]).unwrap();
        assert_eq!(w.rows(), 3);
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            out,
            "run,method,thread,index,expiry_ns,woke_ns,latency_ns\n\
             0,nanosleep-abs,0,0,1000,1050,50\n\
             0,nanosleep-abs,0,1,2000,1990,-10\n\
             1,nanosleep-rel,1,0,5000,5007,7\n"
        );
    }
}
