//! `--explain` as a sink: hands the run's events to the
//! [`tickscope_explain::controller::Controller`] (which traces, attributes and acts on the
//! collector thread), puts its section into the result document and, at the end, prints its
//! summary ([`crate::explain_text`]). Capture bundles are written by [`crate::capture`].

use super::{RunContext, RunSink, SinkError, SinkNeeds};
use crate::document::RunDocument;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tickscope_engine::run::{Applied, SecondWindows};
use tickscope_engine::sample::RawSample;
use tickscope_explain::controller::{Controller, ExplainOptions, Hooks};
use tickscope_explain::tracefs::Unavailable;

/// The `--explain` sink.
pub struct ExplainSink(Controller);

impl ExplainSink {
    /// Prepares `--explain` ([`Controller::new`]): returns the sink and, for auto, a note on
    /// the fallback to context mode.
    ///
    /// # Errors
    /// As [`Controller::new`]: tracing refused with `--explain=trace`, a capture directory
    /// or `--explain-log` file that cannot be created.
    pub fn new(
        opts: ExplainOptions,
        stop: Arc<AtomicBool>,
        virtualized: bool,
    ) -> Result<(Self, Option<String>), Unavailable> {
        let hooks = Hooks {
            write_capture: crate::capture::write,
            latest_context: super::context::latest,
        };
        let (controller, note) = Controller::new(opts, stop, virtualized, hooks)?;
        Ok((ExplainSink(controller), note))
    }
}

impl RunSink for ExplainSink {
    fn needs(&self) -> SinkNeeds {
        // Only the late wake-ups: the measuring loop pushes those alone.
        SinkNeeds {
            late_samples: Some(self.0.late_threshold()),
            ..SinkNeeds::default()
        }
    }

    fn started(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        self.0.started(ctx.config, ctx.rounds, ctx.index, applied);
    }

    fn going(&mut self, _ctx: &RunContext<'_>, first_expiry: tickscope_engine::time::Nanos) {
        self.0.going(first_expiry);
    }

    fn thread_joined(&mut self, _ctx: &RunContext<'_>, applied: &Applied) {
        self.0.thread_joined(applied);
    }

    fn window(&mut self, _ctx: &RunContext<'_>, second: &SecondWindows) {
        self.0.window(second);
    }

    fn samples(&mut self, thread: usize, samples: &[RawSample]) {
        self.0.samples(thread, samples);
    }

    fn annotate(&mut self, doc: &mut RunDocument) {
        doc.explain = Some(self.0.section());
    }

    fn run_finished(&mut self, _ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        let summary = &doc.runs.last().unwrap_or(doc.first()).summary;
        let latency = summary.latency_ns.as_ref().map(|l| (l.p50, l.p99, l.max));
        self.0.run_finished(latency);
        Ok(())
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        self.0.finish().map_err(SinkError)?;
        if let Some(section) = &doc.explain {
            let dropped: u64 = doc.first().threads.iter().map(|t| t.samples_dropped).sum();
            let mut lines = crate::explain_text::report(section, 3);
            if dropped > 0 {
                lines.push(format!(
                    "note: {dropped} wake-ups were dropped from the sample stream (collector \
                     behind); they are in the statistics but were not explained"
                ));
            }
            if section.events_lost > 0 {
                lines.push(format!(
                    "note: the trace lost {} events (ring overrun); wake-ups near them are \
                     flagged 'events lost', never guessed",
                    section.events_lost
                ));
            }
            notes.extend(lines);
        }
        Ok(())
    }
}
