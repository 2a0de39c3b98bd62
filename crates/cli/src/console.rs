//! What tickscope prints for a person, and what happens when it cannot be printed.
//!
//! * Text goes to standard output, or to standard error when an output file is standard
//!   output (`--json -`), so the file stays clean.
//! * A closed standard output (`tickscope run | head -1`, `EPIPE`) is a quiet end of
//!   output: nothing more is printed, a running measurement stops as on Ctrl-C, result
//!   files are still written complete, and the exit status is unaffected (0 for a run that
//!   was otherwise fine). Rust ignores `SIGPIPE`, so the write fails instead of killing the
//!   process.
//! * Any other write error (`/dev/full`: `ENOSPC`) is reported once, at the end, as one line
//!   — after the result files were written — with exit status 1.
//!
//! Nothing here panics, unlike `println!`.

use crate::exit::Failure;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tickscope_report::sink::terminal::Printer;

static TO_STDERR: AtomicBool = AtomicBool::new(false);
static CLOSED: AtomicBool = AtomicBool::new(false);
static ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Sends text meant for a person to standard error from now on (an output is stdout).
pub fn text_to_stderr() {
    TO_STDERR.store(true, Ordering::Relaxed);
    tickscope_report::fit::set_width(width());
}

/// True once standard output was found closed (`EPIPE`).
pub fn stdout_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// The width of the terminal the text goes to, in columns; when it goes to a file or a pipe
/// (or standard error, when an output file is standard output and not a terminal), the
/// `COLUMNS` environment variable if set, else `None` — one line per row and message, for
/// scripts ([`tickscope_report::fit`]).
pub fn width() -> Option<usize> {
    if TO_STDERR.load(Ordering::Relaxed) {
        tickscope_report::fit::width_of(std::io::stderr())
    } else {
        tickscope_report::fit::width_of(std::io::stdout())
    }
}

/// Fits tables and messages to [`width`] from now on (called once the command is known).
pub fn fit_to_width() {
    tickscope_report::fit::set_width(width());
}

/// Prints `text` (wrapped to the width, [`tickscope_report::fit::wrap`]) and a newline, and
/// flushes.
pub fn line(text: impl std::fmt::Display) {
    let text = tickscope_report::fit::wrap(&text.to_string());
    if TO_STDERR.load(Ordering::Relaxed) {
        let _ = writeln!(std::io::stderr(), "{text}");
        return;
    }
    if stdout_closed() || ERROR.lock().map(|e| e.is_some()).unwrap_or(true) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
        failed(e);
    }
}

/// Writes `bytes` to standard output as they are (a comparison, a document for `-`).
pub fn raw(bytes: &[u8]) {
    if stdout_closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        failed(e);
    }
}

/// Records a failed write to standard output; a closed pipe also asks a run to stop.
pub fn failed(e: std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CLOSED.store(true, Ordering::Relaxed);
        crate::cmd::signals::request_stop();
    } else if let Ok(mut slot) = ERROR.lock() {
        slot.get_or_insert_with(|| format!("cannot write to standard output: {e}"));
    }
}

/// The command's outcome, with a failed standard output (not a closed one) turned into
/// [`Failure::Runtime`] if the command itself succeeded.
///
/// # Errors
/// The command's own failure, else the standard-output error.
pub fn settle(result: Result<(), Failure>) -> Result<(), Failure> {
    result?;
    match ERROR.lock().ok().and_then(|mut e| e.take()) {
        Some(m) => Err(Failure::Runtime(m)),
        None => Ok(()),
    }
}

/// The terminal's printer for the report crate's sinks: [`line`], [`stdout_closed`], [`width`].
pub(crate) struct Console;

impl Printer for Console {
    fn line(&mut self, text: &str) {
        line(text);
    }
    fn closed(&self) -> bool {
        stdout_closed()
    }
    fn width(&self) -> Option<usize> {
        width()
    }
}
