//! The trace controller of a session: the sinks that explain late wake-ups (per-window
//! context from /proc, and the tracefs capture with its on-late actions), built from typed
//! options. The controller itself lives with the explain code
//! ([`tickscope_explain::controller`], driven through [`tickscope_report::sink::explain_sink`]); it starts tracing when a run's threads are set up
//! ([`RunSink::started`]) and stops and removes its trace instance when the run ends
//! ([`RunSink::finish`]) — the session drives both through the sink lifecycle.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tickscope_explain::controller::ExplainOptions;
use tickscope_report::sink::context::ContextSink;
use tickscope_report::sink::explain_sink::ExplainSink;
use tickscope_report::sink::RunSink;

pub use tickscope_explain::controller::{Mode, Threshold};

/// The sinks that explain late wake-ups, and what to tell the user about them.
pub struct TraceSinks {
    /// The context sink, then the explain sink (the trace controller).
    pub sinks: Vec<Box<dyn RunSink>>,
    /// A note for the user (why tracing falls back to context, for instance).
    pub note: Option<String>,
}

/// The context and explain sinks for `opts`. The controller ends the run through `stop`
/// when an on-late rule says so ([`threshold_hit`] is then true).
///
/// # Errors
/// One sentence when tracing was asked for explicitly and is not permitted here (it says
/// why and how to allow it).
pub fn sinks(opts: ExplainOptions, stop: &Arc<AtomicBool>) -> Result<TraceSinks, String> {
    let virtualized = tickscope_system::system::virtualized();
    let (sink, note) =
        ExplainSink::new(opts, Arc::clone(stop), virtualized).map_err(|u| u.to_string())?;
    Ok(TraceSinks {
        sinks: vec![Box::new(ContextSink::new()), Box::new(sink)],
        note,
    })
}

/// True once an on-late `stop` rule (or `--break`) ended a run of this process.
pub fn threshold_hit() -> bool {
    tickscope_explain::controller::threshold_hit()
}
