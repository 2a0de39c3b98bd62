//! How a session ends when it does not end well, folded into one reason.

use tickscope_report::RunDocument;

/// Why [`crate::Session::run`] produced no clean document. The variants are in order of
/// precedence: a failed output outranks a failed run, which outranks an on-late stop.
#[derive(Debug)]
pub enum Error {
    /// Before the first wake-up: the load could not be started or ended while settling.
    /// Nothing was measured.
    Setup(String),
    /// The engine refused the configuration, could not apply a setting, or could not
    /// start or join its threads ([`tickscope_engine::Error`]).
    Engine(tickscope_engine::Error),
    /// The stop flag was set before the first run started: nothing was measured and no
    /// output was written.
    StoppedBeforeMeasuring,
    /// An output failed: a sink while the runs went on ([`tickscope_report::sink::RunSink::run_finished`],
    /// which ends the session at once, `document` then `None`) or at the end
    /// ([`tickscope_report::sink::RunSink::finish`]; every other sink still finished), or a
    /// companion ([`crate::Companion::end`]). `last` is the latest failure, `earlier` the
    /// ones before it, in order.
    Output {
        /// The failures before `last`, oldest first.
        earlier: Vec<String>,
        /// The latest failure: the one to report as the session's reason.
        last: String,
        /// The final document, when the runs all ended.
        document: Option<Box<RunDocument>>,
    },
    /// A run failed (a measuring thread reported an error); in a comparison the sentence
    /// starts with the method's name. Every output was written.
    Run {
        /// The first run's failure.
        message: String,
        /// The final document, holding every run measured.
        document: Box<RunDocument>,
    },
    /// An on-late `stop` rule (`--break`) ended the run; every output was written.
    ThresholdHit {
        /// The final document.
        document: Box<RunDocument>,
    },
}

impl Error {
    /// The final document, when the runs ended and the outputs were written (or tried).
    pub fn document(&self) -> Option<&RunDocument> {
        match self {
            Error::Output { document, .. } => document.as_deref(),
            Error::Run { document, .. } | Error::ThresholdHit { document } => Some(document),
            _ => None,
        }
    }
}
