//! Where a run's results go while it runs and when it ends: one [`RunSink`] per destination.
//!
//! The engine reports each run through [`tickscope_engine::run::RunEvent`]s; the command
//! that drives it hands every event to every sink, then, after each run, the document so
//! far ([`RunSink::run_finished`]) and, after the last, the final document
//! ([`RunSink::finish`]). Before either, every sink may add its own section to the document
//! ([`RunSink::annotate`]). A sink declares what it needs from the engine ([`SinkNeeds`]:
//! raw samples, for instance) instead of editing the engine's configuration.
//!
//! One file per sink: [`terminal`] (header, per-second lines, summary or comparison table),
//! [`json`] (the result document, rewritten after every run), [`csv`] (the summary and
//! the windows as a CSV table, its rows spooled as they finish), [`histogram`] (cyclictest's
//! `-h` format, with the overflows' cycle numbers), [`samples`]
//! (every wake-up, streamed). [`registry`] names the file formats; a new output format is
//! one new file plus one line there.

pub mod context;
pub mod csv;
pub mod doctor;
pub mod explain_sink;
pub mod histogram;
pub mod hlog;
pub mod json;
pub mod load;
pub mod prometheus;
pub mod registry;
pub mod samples;
#[cfg(test)]
pub(crate) mod synthetic;
pub mod terminal;

use crate::document::RunDocument;
use tickscope_engine::run::{Applied, RunConfig, SecondWindows};
use tickscope_engine::sample::{LateThreshold, RawSample};
use tickscope_engine::wait::MethodKind;
use tickscope_system::system::SystemInfo;

/// What a sink needs the engine to deliver beyond the settings and the windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkNeeds {
    /// Every wake-up as a [`RawSample`] (costs a wait-free ring per thread and collector work).
    pub raw_samples: bool,
    /// Only the wake-ups later than this, as [`RawSample`]s (what `--explain` needs): the
    /// measuring loop pushes only those ([`RunConfig::stream_later_than`]). A sink given
    /// more (another sink asked for every wake-up) filters them itself.
    pub late_samples: Option<LateThreshold>,
    /// Every window kept in memory for the final document's threads
    /// ([`RunConfig::keep_windows`]): memory grows with the run's length, so no sink of a
    /// run asks for it (the JSON document and the CSV table spool their windows instead).
    pub windows: bool,
    /// Each window's latency and period-deviation histograms
    /// ([`RunConfig::window_histograms`]): built once a window by the collector from the
    /// measuring loop's own records, so the loop's work does not change.
    pub window_histograms: bool,
    /// Each window's latency histogram only ([`RunConfig::window_latency_histograms`]):
    /// what `--hlog` needs, at half the collector's work of [`SinkNeeds::window_histograms`].
    pub latency_histograms: bool,
}

impl SinkNeeds {
    /// What any of `a` and `b` needs. Two different late thresholds need every wake-up.
    pub fn union(self, other: SinkNeeds) -> SinkNeeds {
        let (late, raw) = match (self.late_samples, other.late_samples) {
            (Some(a), Some(b)) if a != b => (None, true),
            (a, b) => (a.or(b), false),
        };
        let raw_samples = raw || self.raw_samples || other.raw_samples;
        SinkNeeds {
            raw_samples,
            late_samples: late.filter(|_| !raw_samples),
            windows: self.windows || other.windows,
            window_histograms: self.window_histograms || other.window_histograms,
            latency_histograms: self.latency_histograms || other.latency_histograms,
        }
    }
}

impl SinkNeeds {
    /// Whether any wake-up is streamed (every one, or the late ones).
    pub fn any_samples(&self) -> bool {
        self.raw_samples || self.late_samples.is_some()
    }
}

/// The invocation a run belongs to: the machine, the plan, and which run this is.
#[derive(Debug, Clone, Copy)]
pub struct RunContext<'a> {
    /// The machine.
    pub system: &'a SystemInfo,
    /// This run's configuration (its method set).
    pub config: &'a RunConfig,
    /// Every method of the plan, in the order given (one for a single run).
    pub methods: &'a [MethodKind],
    /// Rounds of the plan (≥ 1).
    pub rounds: u32,
    /// This run's position in the order of runs, from 0.
    pub index: usize,
    /// How many runs the plan has (methods × rounds).
    pub total: usize,
}

impl RunContext<'_> {
    /// True when the invocation runs several methods or rounds (a comparison).
    pub fn is_comparison(&self) -> bool {
        self.total > 1
    }
}

/// A failure of one sink, as one sentence (the path is quoted in it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SinkError(pub String);

/// One destination of a run's results. Every method has a default that does nothing, so a
/// sink implements only what it uses. Called on the collector thread (never the measuring
/// one) while a run goes on, and on the main thread between and after runs.
pub trait RunSink {
    /// What this sink needs from the engine.
    fn needs(&self) -> SinkNeeds {
        SinkNeeds::default()
    }

    /// The names of a task set's tasks (`run --tasks`, `monitor --tasks`), task `i` being
    /// thread `i`; called once before [`RunSink::started`]. Not called for single-rate runs.
    fn task_names(&mut self, names: &[String]) {
        let _ = names;
    }

    /// A run's threads are set up and about to start, with these settings.
    fn started(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        let _ = (ctx, applied);
    }

    /// The threads were told to go (after [`RunSink::started`]): the run's first expiry,
    /// absolute ns on the run's clock (`RunEvent::Going`).
    fn going(&mut self, ctx: &RunContext<'_>, first_expiry: tickscope_engine::time::Nanos) {
        let _ = (ctx, first_expiry);
    }

    /// A thread joined the run while it goes on (`tickscope attach` following a program
    /// that started a periodic thread): `applied` lists it last. Comes before its first
    /// samples and windows; a sink that keeps per-thread state adds the thread here.
    fn thread_joined(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        let _ = (ctx, applied);
    }

    /// A window (one second) of the run is complete for every thread.
    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondWindows) {
        let _ = (ctx, second);
    }

    /// A window of a task set (`run --tasks`, `monitor --tasks`) is complete: `second` as
    /// given to [`RunSink::window`] just before (task `i` as thread `i`), and what only the
    /// tasks have, one entry per task. Not called for single-rate runs.
    fn task_window(
        &mut self,
        ctx: &RunContext<'_>,
        second: &SecondWindows,
        tasks: &[crate::task_set::TaskWindow],
    ) {
        let _ = (ctx, second, tasks);
    }

    /// The next raw wake-ups of one thread, in order (only when [`SinkNeeds::raw_samples`]).
    fn samples(&mut self, thread: usize, samples: &[RawSample]) {
        let _ = (thread, samples);
    }

    /// Adds what this sink knows to the result document before any sink sees it (a section
    /// of its own, e.g. the load achieved or the context of each window). Called for every
    /// document built — after each run and at the end — in sink order.
    fn annotate(&mut self, doc: &mut RunDocument) {
        let _ = doc;
    }

    /// A run ended; `doc` holds every run so far (rewritten files are rewritten here).
    ///
    /// # Errors
    /// [`SinkError`] when a checkpoint cannot be written; the invocation stops.
    fn run_finished(&mut self, ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        let _ = (ctx, doc);
        Ok(())
    }

    /// The last run ended: write what is left. Files come before the terminal, which gets
    /// in `notes` the lines the files added ("result written to …") to print after the
    /// summary.
    ///
    /// # Errors
    /// [`SinkError`] when the file cannot be written; the other sinks still finish.
    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        let _ = (doc, notes);
        Ok(())
    }
}
