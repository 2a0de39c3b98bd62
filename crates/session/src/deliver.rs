//! What every sink sees of a run, in order: each engine event handed to every sink, and
//! each document annotated by every sink before any sink reads it.

use crate::housekeeping::Placement;
use tickscope_engine::run::{Applied, RunEvent};
use tickscope_report::sink::{RunContext, RunSink};
use tickscope_report::RunDocument;

/// The document with every sink's section added, in sink order.
pub(crate) fn annotated(sinks: &mut [Box<dyn RunSink>], mut doc: RunDocument) -> RunDocument {
    for s in sinks.iter_mut() {
        s.annotate(&mut doc);
    }
    doc
}

/// Hands one engine event to every sink (on the collector thread). On
/// [`RunEvent::Started`] — the measuring threads exist now — tickscope's own threads move to
/// the housekeeping CPUs of `placement` first (see [`Placement::after_start`]), the header
/// says where they run, and the settings' notes are put in the caller's words by `word`.
pub(crate) fn deliver(
    sinks: &mut [Box<dyn RunSink>],
    ctx: &RunContext<'_>,
    event: &RunEvent<'_>,
    placement: Option<&Placement>,
    word: fn(&mut Applied),
) {
    match event {
        RunEvent::Started(applied) => {
            let mut a = (*applied).clone();
            word(&mut a);
            if let Some(p) = placement {
                let tids: Vec<i32> = a.threads.iter().map(|t| t.tid).collect();
                a.housekeeping = Some(match p.after_start(&tids) {
                    Some(failed) => format!("{} — {failed}", p.describe()),
                    None => p.describe(),
                });
            }
            for s in sinks.iter_mut() {
                s.started(ctx, &a);
            }
        }
        RunEvent::Going { first_expiry } => {
            for s in sinks.iter_mut() {
                s.going(ctx, *first_expiry);
            }
        }
        RunEvent::Second(second) => {
            for s in sinks.iter_mut() {
                s.window(ctx, second);
            }
        }
        RunEvent::Samples { thread, samples } => {
            for s in sinks.iter_mut() {
                s.samples(*thread, samples);
            }
        }
        RunEvent::Joined(applied) => {
            let mut a = (*applied).clone();
            word(&mut a);
            for s in sinks.iter_mut() {
                s.thread_joined(ctx, &a);
            }
        }
    }
}
