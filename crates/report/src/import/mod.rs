//! Reading result files — tickscope's own and other tools' — into [`Measurement`]s, the
//! common shape `tickscope compare` puts side by side.
//!
//! One file per format, each behind [`Importer`]: [`tickscope`] (`tickscope.run/2` and `/1`),
//! [`cyclictest`] (rt-tests `cyclictest --json`) and [`jitterdebugger`] (its `results.json`).
//! The format is recognised from the JSON itself, never from the file name.
//!
//! Other tools record latency in whole µs (or whole ns with their `-N`/`--nsec`); their
//! percentiles are read off their histograms, whose buckets are that unit wide
//! ([`Measurement::resolution_ns`]).

pub mod cyclictest;
pub mod hlog;
pub mod jitterdebugger;
pub mod measurement;
pub mod tickscope;
pub mod tool_threads;
pub mod validate;

use serde_json::Value;
use std::path::Path;

pub use measurement::{
    ImportError, Importer, LatencyFigures, Measurement, Setting, SourceFormat, MAX_LATENCY_NS,
    MAX_SAMPLES,
};
pub use tool_threads::bucket_quantile;
pub(crate) use tool_threads::{text, tool_measurement, tool_threads};

/// Every importer, tried in this order.
pub fn importers() -> [&'static dyn Importer; 3] {
    [
        &tickscope::TickscopeImporter,
        &cyclictest::CyclictestImporter,
        &jitterdebugger::JitterdebuggerImporter,
    ]
}

/// Reads a result file of any known format. An interval log is read as it streams
/// ([`hlog::import_from`]), never whole; a JSON result is read whole ([`Opened::into_text`]).
///
/// # Errors
/// An [`ImportError`] naming the file when it cannot be read, is not JSON, is truncated,
/// is of no known format or lacks what its format requires.
pub fn read(path: &Path) -> Result<Vec<Measurement>, ImportError> {
    let name = path.display().to_string();
    let stem = path
        .file_stem()
        .map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
    let mut input = open_input(path)?;
    if input.is_hlog()? {
        return input.import_hlog(&stem);
    }
    let text = input.into_text()?;
    parse(&name, &stem, &text)
}

/// The largest JSON result file read whole: 256 MiB. A day-long `-t all` run on 64 CPUs stays
/// well below it; anything larger is not a result (or is `/dev/zero`). Interval logs, read as
/// they stream, have no such limit.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// An input opened for reading by [`open_input`]: a regular file, or standard input.
pub struct Opened {
    name: String,
    /// The file's size, when it is one.
    len: Option<u64>,
    reader: std::io::BufReader<Box<dyn std::io::Read>>,
}

/// Opens an input — every importer's and `tickscope hlog`'s — without blocking: a regular
/// file, or standard input for `-`. The file is opened with `O_NONBLOCK` and checked with
/// `fstat(2)` before anything is read, so a FIFO, a device, a socket or a directory is
/// refused at once instead of blocking (a FIFO without a writer) or reading forever.
///
/// # Errors
/// [`ImportError`] naming the file: cannot be opened, or not a regular file.
pub fn open_input(path: &Path) -> Result<Opened, ImportError> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = path.display().to_string();
    let fail = |problem: String| ImportError {
        path: name.clone(),
        problem,
    };
    let (reader, len): (Box<dyn std::io::Read>, _) = if path.as_os_str() == "-" {
        (Box::new(std::io::stdin()), None)
    } else {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        let meta = file
            .metadata()
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        if !meta.is_file() {
            return Err(fail(
                "not a regular file; give a result file, or '-' for standard input".into(),
            ));
        }
        (Box::new(file), Some(meta.len()))
    };
    Ok(Opened {
        name,
        len,
        reader: std::io::BufReader::with_capacity(64 << 10, reader),
    })
}

impl Opened {
    fn fail(&self, problem: String) -> ImportError {
        ImportError {
            path: self.name.clone(),
            problem,
        }
    }

    /// The input's first bytes (up to 64, after leading white space, lossily as text),
    /// without consuming them; empty for an empty input.
    ///
    /// # Errors
    /// [`ImportError`] when it cannot be read.
    pub fn peek(&mut self) -> Result<String, ImportError> {
        use std::io::BufRead;
        let name = self.name.clone();
        loop {
            let buf = self.reader.fill_buf().map_err(|e| ImportError {
                path: name.clone(),
                problem: format!("cannot read: {e}"),
            })?;
            let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            if buf.is_empty() || blank < buf.len() {
                let end = buf.len().min(blank + 64);
                return Ok(String::from_utf8_lossy(&buf[blank..end]).into_owned());
            }
            // Only white space so far: drop it and look further.
            self.reader.consume(blank);
        }
    }

    /// Whether the input starts like an interval log ([`hlog::looks_like_hlog`]), judged
    /// from its first bytes ([`Opened::peek`]).
    ///
    /// # Errors
    /// [`ImportError`] when it cannot be read.
    pub fn is_hlog(&mut self) -> Result<bool, ImportError> {
        let start = self.peek()?;
        let marker = "\"StartTimestamp\"";
        Ok(hlog::looks_like_hlog(&start)
            || (start.len() < marker.len() && !start.is_empty() && marker.starts_with(&*start)))
    }

    /// Reads it whole as text, at most [`MAX_INPUT_BYTES`].
    ///
    /// # Errors
    /// [`ImportError`] naming the file: cannot be read, too large, not UTF-8.
    pub fn into_text(mut self) -> Result<String, ImportError> {
        use std::io::Read;
        if let Some(len) = self.len.filter(|&l| l > MAX_INPUT_BYTES) {
            return Err(self.fail(format!(
                "{len} bytes, larger than any result file (at most {} MiB)",
                MAX_INPUT_BYTES >> 20
            )));
        }
        let mut bytes = Vec::new();
        (&mut self.reader)
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.fail(format!("cannot read: {e}")))?;
        if bytes.len() as u64 > MAX_INPUT_BYTES {
            return Err(self.fail(format!(
                "larger than any result file (at most {} MiB)",
                MAX_INPUT_BYTES >> 20
            )));
        }
        String::from_utf8(bytes).map_err(|_| self.fail("not text (UTF-8)".into()))
    }

    /// The input as it streams, for [`hlog::Reader`].
    pub fn into_reader(self) -> impl std::io::BufRead {
        self.reader
    }

    /// Reads it as an interval log: one comparison column, or one per task for a task set's
    /// log ([`hlog::import_columns_from`]), whose source is the input's name and label
    /// `stem` (`stem: task`).
    ///
    /// # Errors
    /// [`ImportError`] naming the file: as [`hlog::import_from`].
    pub fn import_hlog(self, stem: &str) -> Result<Vec<Measurement>, ImportError> {
        let name = self.name.clone();
        let mut columns =
            hlog::import_columns_from(self.reader, stem).map_err(|p| ImportError {
                path: name.clone(),
                problem: format!("interval log: {p}"),
            })?;
        for m in &mut columns {
            m.source = name.clone();
        }
        Ok(columns)
    }
}

/// The text of a result file: a regular file, or standard input for `-`, at most
/// [`MAX_INPUT_BYTES`], opened by [`open_input`] (a FIFO, a device or a directory is refused
/// at once).
///
/// # Errors
/// [`ImportError`] naming the file: cannot be opened, not a regular file, too large, not
/// UTF-8.
pub fn read_input(path: &Path) -> Result<String, ImportError> {
    open_input(path)?.into_text()
}

/// Reads result-file contents; `name` is used in errors and as the measurements' source,
/// `stem` in their labels.
///
/// # Errors
/// As [`read`], apart from reading the file.
pub fn parse(name: &str, stem: &str, text: &str) -> Result<Vec<Measurement>, ImportError> {
    let fail = |problem: String| ImportError {
        path: name.to_string(),
        problem,
    };
    if text.trim().is_empty() {
        return Err(fail("the file is empty".into()));
    }
    if hlog::looks_like_hlog(text) {
        let mut columns = hlog::import_columns_from(text.as_bytes(), stem)
            .map_err(|p| fail(format!("interval log: {p}")))?;
        for m in &mut columns {
            m.source = name.to_string();
        }
        return Ok(columns);
    }
    let json: Value = serde_json::from_str(text).map_err(|e| {
        fail(if e.is_eof() {
            format!(
                "truncated: the JSON ends early (line {}, column {})",
                e.line(),
                e.column()
            )
        } else {
            format!("not valid JSON: {e}")
        })
    })?;
    if !json.is_object() {
        return Err(fail("not a result file: the JSON is not an object".into()));
    }
    let importer = importers()
        .into_iter()
        .find(|i| i.recognizes(&json))
        .ok_or_else(|| {
            fail(
                "not a tickscope, cyclictest --json or jitterdebugger result \
                  (none of the keys 'schema', 'thread' or 'cpu' at the top level)"
                    .into(),
            )
        })?;
    let format = importer.format();
    let mut found = importer
        .import(json, stem)
        .map_err(|p| fail(format!("{} result: {p}", format.name())))?;
    for m in &mut found {
        m.source = name.to_string();
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_buckets_use_the_rank_rule() {
        let b = [(1, 1), (2, 2), (10, 1)];
        assert_eq!(bucket_quantile(&b, 0.0), Some(1));
        assert_eq!(bucket_quantile(&b, 0.25), Some(1));
        assert_eq!(bucket_quantile(&b, 0.5), Some(2));
        assert_eq!(bucket_quantile(&b, 0.75), Some(2));
        assert_eq!(bucket_quantile(&b, 0.99), Some(10));
        assert_eq!(bucket_quantile(&[], 0.5), None);
    }

    #[test]
    fn unknown_empty_and_broken_files_name_the_problem() {
        let e = parse("x.json", "x", "").unwrap_err();
        assert_eq!(e.to_string(), "'x.json': the file is empty");
        let e = parse("x.json", "x", "{\"a\": [1, 2").unwrap_err();
        assert!(e.problem.starts_with("truncated"), "{e}");
        let e = parse("x.json", "x", "hello").unwrap_err();
        assert!(e.problem.starts_with("not valid JSON"), "{e}");
        let e = parse("x.json", "x", "[1]").unwrap_err();
        assert!(e.problem.contains("not an object"), "{e}");
        let e = parse("x.json", "x", "{\"a\": 1}").unwrap_err();
        assert!(e.problem.starts_with("not a tickscope"), "{e}");
    }
}
