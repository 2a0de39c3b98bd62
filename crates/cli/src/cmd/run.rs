//! `tickscope run`: measure, show each second, summarise, write the result file — or, with
//! several methods or rounds, run each in turn and print one comparison table.
//!
//! A comparison runs the methods in the order of [`tickscope_engine::schedule::schedule`]
//! (each round rotated by one), every run with the same configuration but its method and
//! started the same way by the engine (fresh threads, same setup, first expiry the same
//! distance ahead, no sample discarded). Per-second lines are left out; one line per
//! finished run shows progress. The result file is rewritten after every run, so an
//! interruption or a crash keeps what was measured.

use super::signals::stoppable;
use super::sinks::sinks;
use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::housekeeping::Placement;
use crate::options::run_plan;
use std::sync::atomic::Ordering;
use tickscope_engine::run::{run, RunConfig, RunEvent};
use tickscope_engine::schedule::schedule;
use tickscope_engine::system;
use tickscope_report::sink::{RunContext, RunSink, SinkNeeds};
use tickscope_report::{MethodRun, RunDocument};

/// Runs the measurement described by `args`: plan, sinks, then each run of the plan with
/// every event handed to every sink.
///
/// # Errors
/// [`Failure::Usage`] for bad flags, an output that cannot be written, or a requested
/// setting that cannot be applied — all before the first wake-up; [`Failure::Runtime`]
/// when a result file cannot be written or a thread fails.
pub fn execute(args: &RunArgs) -> Result<(), Failure> {
    if let Some(tasks) = &args.tasks {
        return super::tasks::execute(args, tasks);
    }
    measure(args, Vec::new(), false, true, &mut |_| {})
}

/// [`execute`] with `extra` sinks (placed first, so that their sections are in the
/// document every other sink sees) and `on_doc` called with the final document, before the
/// sinks finish. The document's threads hold their windows when `keep_windows` or a sink
/// needs them ([`SinkNeeds::windows`]); otherwise memory stays flat however long the run.
/// `cyclictest_lines`: `-q` ends with cyclictest's per-thread lines (`tickscope run`, not a
/// scenario's step). With `--load`, the load is started and settled before the first wake-up
/// and stopped and reaped after the last (on every path: its guard is dropped).
///
/// # Errors
/// As [`execute`]; a load that cannot be started is [`Failure::Usage`].
pub fn measure(
    args: &RunArgs,
    extra: Vec<Box<dyn RunSink>>,
    keep_windows: bool,
    cyclictest_lines: bool,
    on_doc: &mut dyn FnMut(&RunDocument),
) -> Result<(), Failure> {
    let plan = run_plan(args).map_err(Failure::Usage)?;
    // A mock run changes nothing on the system: its threads stay where they are.
    let placement = match plan.config.backend.is_mock() {
        true => None,
        false => Some(
            Placement::plan(args.housekeeping_cpus.as_deref(), &plan.config.cpus)
                .map_err(Failure::Usage)?,
        ),
    };
    let load = crate::load::request(args.load.as_deref(), args.load_cpus.as_deref())?;
    let stop = stoppable();
    let mut sinks = sinks(args, plan.is_comparison(), &stop, cyclictest_lines)?;
    let mut running = match &load {
        Some(l) => {
            let (child, record) = l.start()?;
            sinks.insert(0, l.sink(record));
            Some(child)
        }
        None => None,
    };
    for (i, s) in extra.into_iter().enumerate() {
        sinks.insert(i, s);
    }
    let needs = sinks
        .iter()
        .fold(SinkNeeds::default(), |n, s| n.union(s.needs()));
    for note in &plan.left_out {
        eprintln!("tickscope: {note}");
    }
    let system = match plan.config.backend.is_mock() {
        true => system::mock(),
        false => system::detect(),
    };
    let base = RunConfig {
        stream_samples: needs.raw_samples,
        keep_windows: needs.windows || keep_windows,
        ..plan.config.clone()
    };
    let order = schedule(&plan.methods, plan.rounds);
    let mut runs: Vec<MethodRun> = Vec::new();
    let mut error: Option<String> = None;
    let document = |runs: Vec<MethodRun>, error: &Option<String>| {
        let mut doc = RunDocument::of_runs(
            system.clone(),
            base.clone(),
            runs,
            plan.is_comparison(),
            error.clone(),
        );
        doc.set_command_line(std::env::args_os());
        if args.redact {
            doc.redact();
        }
        doc
    };
    for (index, planned) in order.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let cfg = planned.config(&base);
        let ctx = RunContext {
            system: &system,
            config: &cfg,
            methods: &plan.methods,
            rounds: plan.rounds,
            index,
            total: order.len(),
        };
        if let Some(p) = &placement {
            p.before_run();
        }
        let mut outcome = run(&cfg, &stop, &mut |event| {
            deliver(&mut sinks, &ctx, &event, placement.as_ref())
        })?;
        crate::engine_errors::word_notes(&mut outcome.applied);
        let (finished, run_error) = MethodRun::new(planned.round, planned.order, outcome);
        if let Some(e) = run_error {
            let e = match plan.is_comparison() {
                true => format!("{}: {e}", planned.method.name()),
                false => e,
            };
            error.get_or_insert(e);
        }
        runs.push(finished);
        let doc = annotated(&mut sinks, document(runs.clone(), &error));
        for s in &mut sinks {
            s.run_finished(&ctx, &doc)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
        }
    }
    if let Some(child) = running.as_mut() {
        child.stop(); // after the last wake-up, before the document records its exit
    }
    if runs.is_empty() {
        // Stopped before any run: nothing to write, as for any unfinished output — but said,
        // with the signal's exit status, never a silent success.
        return match super::signals::stop_signal() {
            Some(_) => Err(Failure::Interrupted("interrupted before measuring".into())),
            None => Ok(()), // standard output was closed: a quiet end, as documented
        };
    }
    // Files first, the terminal (last in the list) after: a closed or full standard output
    // must not cost the result.
    let doc = annotated(&mut sinks, document(std::mem::take(&mut runs), &error));
    on_doc(&doc);
    let mut notes: Vec<String> = doc
        .load
        .iter()
        .map(|l| format!("load: {}", l.describe()))
        .collect();
    // Every sink finishes even if one fails; each error is printed once: the last becomes
    // the Failure (printed with the exit status), the earlier ones are printed here.
    let mut failed: Option<String> = None;
    for s in &mut sinks {
        if let Err(e) = s.finish(&doc, &mut notes) {
            if let Some(earlier) = failed.replace(e.to_string()) {
                eprintln!("tickscope: {earlier}");
            }
        }
    }
    match (failed, error) {
        (Some(f), _) => Err(Failure::Runtime(f)),
        (None, Some(e)) => Err(Failure::Runtime(e)),
        (None, None) if tickscope_report::sink::explain::threshold_hit() => {
            Err(Failure::ThresholdHit(
                "stopped: a wake-up was later than the --on-late/--break threshold".into(),
            ))
        }
        (None, None) => Ok(()),
    }
}

/// The document with every sink's section added.
pub(crate) fn annotated(sinks: &mut [Box<dyn RunSink>], mut doc: RunDocument) -> RunDocument {
    for s in sinks.iter_mut() {
        s.annotate(&mut doc);
    }
    doc
}

/// Hands one engine event to every sink (on the collector thread). On
/// [`RunEvent::Started`] — the measuring threads exist now — tickscope's own threads move to
/// the housekeeping CPUs of `placement` first (see [`Placement::after_start`]) and the
/// header says where they run.
pub(crate) fn deliver(
    sinks: &mut [Box<dyn RunSink>],
    ctx: &RunContext<'_>,
    event: &RunEvent<'_>,
    placement: Option<&Placement>,
) {
    // The settings' notes in the command line's words ("… pass --no-mlock").
    let worded = match event {
        RunEvent::Started(applied) => {
            let mut a = (*applied).clone();
            crate::engine_errors::word_notes(&mut a);
            if let Some(p) = placement {
                let tids: Vec<i32> = a.threads.iter().map(|t| t.tid).collect();
                a.housekeeping = Some(match p.after_start(&tids) {
                    Some(failed) => format!("{} — {failed}", p.describe()),
                    None => p.describe(),
                });
            }
            Some(a)
        }
        _ => None,
    };
    for s in sinks.iter_mut() {
        match event {
            RunEvent::Started(_) => s.started(ctx, worded.as_ref().expect("set for Started")),
            RunEvent::Second(second) => s.window(ctx, second),
            RunEvent::Samples { thread, samples } => s.samples(*thread, samples),
        }
    }
}
