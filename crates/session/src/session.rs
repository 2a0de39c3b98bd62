//! [`Session::run`]: one invocation's runs, from plan to final document.
//!
//! The order is fixed, and the same for every command that measures:
//! 1. the load (if any) starts and settles; its sink goes first;
//! 2. each planned run, in [`schedule`] order, unless the stop flag is set: tickscope's own
//!    threads get their starting mask back ([`Placement::before_run`]), the engine runs,
//!    every event goes to every sink ([`RunSink::started`], [`RunSink::window`],
//!    [`RunSink::samples`]; on `Started` the tool's threads move to the housekeeping
//!    CPUs), then the document so far is annotated by every sink and handed to every sink
//!    ([`RunSink::run_finished`]; a failure there ends the session);
//! 3. after the last wake-up: the load is stopped and reaped, the companions end;
//! 4. the final document is annotated and every sink finishes ([`RunSink::finish`]) in
//!    order — files before the terminal, so that a closed standard output cannot cost a
//!    result file — even when an earlier one failed;
//! 5. the failures are folded into one [`Error`]: a failed output, else a failed run, else
//!    an on-late stop.

use crate::deliver::{annotated, deliver};
use crate::error::Error;
use crate::housekeeping::Placement;
use crate::load::LoadRequest;
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::run::{run, Applied, RunConfig, RunEvent, RunOutcome};
use tickscope_engine::schedule::schedule;
use tickscope_engine::wait::MethodKind;
use tickscope_report::sink::{RunContext, RunSink, SinkNeeds};
use tickscope_report::{MethodRun, RunDocument};
use tickscope_system::system::SystemInfo;

/// What to measure: one configuration, run once per method and round.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The configuration of every run; each run sets its own method
    /// ([`tickscope_engine::schedule::PlannedRun::config`]).
    pub config: RunConfig,
    /// The methods, in the order of the first round (at least one).
    pub methods: Vec<MethodKind>,
    /// Rounds over the methods, ≥ 1; each round starts one method later.
    pub rounds: u32,
}

impl Plan {
    /// Whether this is a comparison (several methods or rounds) rather than a single run.
    pub fn is_comparison(&self) -> bool {
        self.methods.len() > 1 || self.rounds > 1
    }
}

/// What carries out one planned run: the engine's [`run`] for the commands that measure
/// their own threads; `tickscope attach` observes another program's threads instead. Called
/// with the run's configuration, the stop flag and the observer that hands every event to
/// every sink; returns the run's outcome as the engine does.
pub type Runner<'r> = dyn FnMut(
        &RunConfig,
        &Arc<AtomicBool>,
        &mut dyn FnMut(RunEvent<'_>),
    ) -> Result<RunOutcome, tickscope_engine::Error>
    + 'r;

/// A tool thread that runs beside the measurement (an HTTP endpoint, a file rewritten
/// periodically) and ends when the last run ends, before the final document is built.
pub trait Companion {
    /// Stops the thread and waits for it.
    ///
    /// # Errors
    /// One sentence when the thread failed; the session reports it after the sinks'.
    fn end(self: Box<Self>) -> Result<(), String>;
}

/// One invocation's runs and everything around them. Build it with [`Session::new`], set
/// the fields that apply, then call [`Session::run`] once.
pub struct Session<'a> {
    /// What to measure.
    pub plan: Plan,
    /// The machine, as recorded in the document ([`tickscope_system::system::detect`], or
    /// [`tickscope_system::system::mock`] on the mock backend).
    pub system: SystemInfo,
    /// Where tickscope's own threads run (`None`: where they are, e.g. on the mock backend).
    pub placement: Option<Placement>,
    /// A load to run for exactly the length of the measurement (`None`: none).
    pub load: Option<LoadRequest>,
    /// Keep every window in the document's threads even when no sink needs them
    /// ([`SinkNeeds::windows`]); memory then grows with the run's length.
    pub keep_windows: bool,
    /// The command line recorded in the document, program name first (`None`: none).
    pub command_line: Option<Vec<OsString>>,
    /// Leave the host name and kernel command line out of the document.
    pub redact: bool,
    /// Tool threads that end with the last run.
    pub companions: Vec<Box<dyn Companion>>,
    /// Puts the engine's notes on the applied settings in the caller's words (e.g. the
    /// command-line flag that changes a setting) before any sink or document sees them.
    pub word_notes: fn(&mut Applied),
    /// Where the session's own lines go (the load's start line), one line per call.
    pub say: &'a dyn Fn(&str),
}

impl<'a> Session<'a> {
    /// A session measuring `plan` on `system`, with no placement, load, companions or
    /// command line, notes as the engine words them, and lines for the user given to `say`.
    pub fn new(plan: Plan, system: SystemInfo, say: &'a dyn Fn(&str)) -> Session<'a> {
        Session {
            plan,
            system,
            placement: None,
            load: None,
            keep_windows: false,
            command_line: None,
            redact: false,
            companions: Vec::new(),
            word_notes: |_| {},
            say,
        }
    }

    /// Runs the plan, every event handed to every sink of `sinks` in order (see the module
    /// documentation for the order of everything), until the plan ends or `stop` is set
    /// (the engine ends the current run within a wake-up or a window; no further run
    /// starts). Returns the final document, which every sink has finished.
    ///
    /// # Errors
    /// [`Error::Setup`] when the load cannot start; [`Error::Engine`] when the engine
    /// refuses or fails a run; [`Error::StoppedBeforeMeasuring`] when `stop` was set before
    /// the first run; [`Error::Output`] when a sink or companion failed; [`Error::Run`]
    /// when a measuring thread failed; [`Error::ThresholdHit`] when an on-late rule ended
    /// the run. Companions end and the load is stopped on every path.
    pub fn run(
        self,
        sinks: Vec<Box<dyn RunSink>>,
        stop: &Arc<AtomicBool>,
    ) -> Result<RunDocument, Error> {
        self.run_with(sinks, stop, &mut |cfg, stop, observer| {
            run(cfg, stop, observer)
        })
    }

    /// [`Session::run`] with each planned run carried out by `runner` instead of the
    /// engine's measuring threads (everything else — sinks, documents, the order, the
    /// folding of failures — the same).
    ///
    /// # Errors
    /// As [`Session::run`].
    pub fn run_with(
        mut self,
        mut sinks: Vec<Box<dyn RunSink>>,
        stop: &Arc<AtomicBool>,
        runner: &mut Runner<'_>,
    ) -> Result<RunDocument, Error> {
        let mut running = match &self.load {
            Some(l) => match l.start(self.say) {
                Ok((child, record)) => {
                    sinks.insert(0, l.sink(record));
                    Some(child)
                }
                Err(e) => {
                    end(&mut self.companions);
                    return Err(Error::Setup(e));
                }
            },
            None => None,
        };
        let needs = sinks
            .iter()
            .fold(SinkNeeds::default(), |n, s| n.union(s.needs()));
        let base = RunConfig {
            stream_samples: needs.any_samples(),
            stream_later_than: needs.late_samples,
            window_histograms: needs.window_histograms,
            window_latency_histograms: needs.latency_histograms,
            keep_windows: needs.windows || self.keep_windows,
            ..self.plan.config.clone()
        };
        let comparison = self.plan.is_comparison();
        let document = |runs: Vec<MethodRun>, error: &Option<String>| {
            let mut doc = RunDocument::of_runs(
                self.system.clone(),
                base.clone(),
                runs,
                comparison,
                error.clone(),
            );
            if let Some(args) = &self.command_line {
                doc.set_command_line(args.iter().cloned());
            }
            if self.redact {
                doc.redact();
            }
            doc
        };
        let order = schedule(&self.plan.methods, self.plan.rounds);
        let mut runs: Vec<MethodRun> = Vec::new();
        let mut error: Option<String> = None;
        for (index, planned) in order.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let cfg = planned.config(&base);
            let ctx = RunContext {
                system: &self.system,
                config: &cfg,
                methods: &self.plan.methods,
                rounds: self.plan.rounds,
                index,
                total: order.len(),
            };
            if let Some(p) = &self.placement {
                p.before_run();
            }
            let (placement, word) = (self.placement.as_ref(), self.word_notes);
            let outcome = runner(&cfg, stop, &mut |event| {
                deliver(&mut sinks, &ctx, &event, placement, word)
            });
            let mut outcome = match outcome {
                Ok(o) => o,
                Err(e) => {
                    end(&mut self.companions);
                    return Err(Error::Engine(e));
                }
            };
            (self.word_notes)(&mut outcome.applied);
            let (finished, run_error) = MethodRun::new(planned.round, planned.order, outcome);
            if let Some(e) = run_error {
                let e = match comparison {
                    true => format!("{}: {e}", planned.method.name()),
                    false => e,
                };
                error.get_or_insert(e);
            }
            runs.push(finished);
            let doc = annotated(&mut sinks, document(runs.clone(), &error));
            for s in &mut sinks {
                if let Err(e) = s.run_finished(&ctx, &doc) {
                    let mut failures = vec![e.to_string()];
                    failures.extend(end(&mut self.companions));
                    return Err(folded(failures, None).unwrap_or(Error::StoppedBeforeMeasuring));
                }
            }
        }
        if let Some(child) = running.as_mut() {
            child.stop(); // after the last wake-up, before the document records its exit
        }
        let companion_failures = end(&mut self.companions);
        if runs.is_empty() {
            return Err(folded(companion_failures, None).unwrap_or(Error::StoppedBeforeMeasuring));
        }
        let doc = annotated(&mut sinks, document(std::mem::take(&mut runs), &error));
        let mut notes: Vec<String> = doc
            .load
            .iter()
            .map(|l| format!("load: {}", l.describe()))
            .collect();
        let mut failures = Vec::new();
        for s in &mut sinks {
            if let Err(e) = s.finish(&doc, &mut notes) {
                failures.push(e.to_string());
            }
        }
        failures.extend(companion_failures);
        let doc = Box::new(doc);
        if !failures.is_empty() {
            return Err(folded(failures, Some(doc)).unwrap_or(Error::StoppedBeforeMeasuring));
        }
        match error {
            Some(message) => Err(Error::Run {
                message,
                document: doc,
            }),
            None if crate::trace::threshold_hit() => Err(Error::ThresholdHit { document: doc }),
            None => Ok(*doc),
        }
    }
}

/// Ends every companion, oldest first; their failures in that order.
fn end(companions: &mut Vec<Box<dyn Companion>>) -> Vec<String> {
    companions.drain(..).filter_map(|c| c.end().err()).collect()
}

/// `failures` as one [`Error::Output`] (the last is the reason); `None` when there are none.
fn folded(mut failures: Vec<String>, document: Option<Box<RunDocument>>) -> Option<Error> {
    let last = failures.pop()?;
    Some(Error::Output {
        earlier: failures,
        last,
        document,
    })
}
