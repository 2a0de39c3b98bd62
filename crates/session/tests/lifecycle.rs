//! `Session::run` on the mock backend (virtual time, no system setting touched), with
//! recording sinks: the order in which sinks see a session, how failures fold, the stop
//! flag, and companions — without the command line.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use tickscope_engine::run::{Applied, Backend, PolicyRequest, RunConfig, SecondWindows};
use tickscope_engine::setup::Policy;
use tickscope_engine::wait::MethodKind;
use tickscope_report::sink::{RunContext, RunSink, SinkError, SinkNeeds};
use tickscope_report::RunDocument;
use tickscope_session::{Companion, Error, Plan, Session};
use tickscope_system::system;

const MS: i64 = 1_000_000;
const SEC: i64 = 1_000_000_000;

type Log = Arc<Mutex<Vec<String>>>;

/// Records every call as `name:event`, and fails `run_finished` or `finish` when told.
struct Recording {
    name: &'static str,
    log: Log,
    fail_run_finished: bool,
    fail_finish: bool,
}

impl Recording {
    fn boxed(name: &'static str, log: &Log) -> Box<dyn RunSink> {
        Box::new(Recording {
            name,
            log: Arc::clone(log),
            fail_run_finished: false,
            fail_finish: false,
        })
    }
    fn push(&self, event: String) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{}:{event}", self.name));
    }
}

impl RunSink for Recording {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds::default()
    }
    fn started(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        self.push(format!("started {} {}", ctx.index, applied.threads.len()));
    }
    fn window(&mut self, ctx: &RunContext<'_>, _second: &SecondWindows) {
        self.push(format!("window {}", ctx.index));
    }
    fn annotate(&mut self, doc: &mut RunDocument) {
        self.push(format!("annotate {}", doc.runs.len()));
    }
    fn run_finished(&mut self, ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        self.push(format!("run_finished {} {}", ctx.index, doc.runs.len()));
        match self.fail_run_finished {
            true => Err(SinkError(format!("{} cannot checkpoint", self.name))),
            false => Ok(()),
        }
    }
    fn finish(&mut self, doc: &RunDocument, _notes: &mut Vec<String>) -> Result<(), SinkError> {
        self.push(format!("finish {}", doc.runs.len()));
        match self.fail_finish {
            true => Err(SinkError(format!("{} cannot write", self.name))),
            false => Ok(()),
        }
    }
}

/// Ends with `result`, recording that it ended.
struct Helper {
    log: Log,
    result: Result<(), String>,
}

impl Companion for Helper {
    fn end(self: Box<Self>) -> Result<(), String> {
        self.log.lock().unwrap().push("helper:end".into());
        self.result
    }
}

/// `methods` × `rounds` runs of 3 virtual seconds at 1 ms, two threads, every wake-up 20 µs
/// late.
fn plan(methods: &[MethodKind], rounds: u32) -> Plan {
    let mut config = RunConfig::new(MS);
    config.duration_ns = Some(3 * SEC);
    config.cpus = vec![None, None];
    config.policy = PolicyRequest::Exact(Policy::Other { nice: 0 });
    config.backend = Backend::Mock {
        latencies: vec![20_000],
    };
    Plan {
        config,
        methods: methods.to_vec(),
        rounds,
    }
}

fn quiet(_: &str) {}

fn session(methods: &[MethodKind], rounds: u32) -> Session<'static> {
    Session::new(plan(methods, rounds), system::mock(), &quiet)
}

fn events(log: &Log, sink: &str) -> Vec<String> {
    let prefix = format!("{sink}:");
    log.lock()
        .unwrap()
        .iter()
        .filter_map(|e| e.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

/// The events without the windows, which may be any number ≥ 1 per run.
fn without_windows(events: &[String]) -> Vec<String> {
    events
        .iter()
        .filter(|e| !e.starts_with("window"))
        .cloned()
        .collect()
}

#[test]
fn one_run_reaches_every_sink_in_order() {
    let log = Log::default();
    let stop = Arc::new(AtomicBool::new(false));
    let sinks = vec![Recording::boxed("a", &log), Recording::boxed("b", &log)];
    let doc = session(&[MethodKind::NanosleepAbs], 1)
        .run(sinks, &stop)
        .expect("a mock run succeeds");
    assert_eq!(doc.runs.len(), 1);
    for sink in ["a", "b"] {
        let seen = events(&log, sink);
        assert_eq!(
            without_windows(&seen),
            [
                "started 0 2",
                "annotate 1",
                "run_finished 0 1",
                "annotate 1",
                "finish 1"
            ],
            "{sink}: {seen:?}"
        );
        let windows = seen.iter().filter(|e| e.starts_with("window 0")).count();
        assert!(windows >= 1, "{sink}: no window in {seen:?}");
        // Windows come between the start and the end of the run.
        let first_window = seen.iter().position(|e| e.starts_with("window")).unwrap();
        assert_eq!(first_window, 1, "{seen:?}");
    }
    // Every event goes to every sink before the next event: a's start precedes b's, and
    // b's start precedes a's first window.
    let all = log.lock().unwrap().clone();
    let at = |e: &str| all.iter().position(|x| x == e).unwrap();
    assert!(at("a:started 0 2") < at("b:started 0 2"));
    assert!(at("b:started 0 2") < at("a:window 0"));
    assert!(at("b:run_finished 0 1") < at("a:finish 1"));
}

#[test]
fn a_comparison_runs_every_planned_run_and_checkpoints_after_each() {
    let log = Log::default();
    let stop = Arc::new(AtomicBool::new(false));
    let methods = [MethodKind::NanosleepAbs, MethodKind::Busy];
    let doc = session(&methods, 2)
        .run(vec![Recording::boxed("a", &log)], &stop)
        .expect("a mock comparison succeeds");
    assert_eq!(doc.runs.len(), 4);
    let seen = without_windows(&events(&log, "a"));
    let finished: Vec<&String> = seen
        .iter()
        .filter(|e| e.starts_with("run_finished"))
        .collect();
    assert_eq!(
        finished,
        [
            "run_finished 0 1",
            "run_finished 1 2",
            "run_finished 2 3",
            "run_finished 3 4"
        ]
    );
    assert_eq!(seen.last().unwrap(), "finish 4");
}

#[test]
fn every_sink_finishes_and_the_last_failure_is_the_reason() {
    let log = Log::default();
    let stop = Arc::new(AtomicBool::new(false));
    let failing = |name| {
        Box::new(Recording {
            name,
            log: Arc::clone(&log),
            fail_run_finished: false,
            fail_finish: true,
        }) as Box<dyn RunSink>
    };
    let sinks = vec![failing("x"), Recording::boxed("ok", &log), failing("y")];
    let mut s = session(&[MethodKind::NanosleepAbs], 1);
    s.companions = vec![Box::new(Helper {
        log: Arc::clone(&log),
        result: Ok(()),
    })];
    match s.run(sinks, &stop) {
        Err(Error::Output {
            earlier,
            last,
            document,
        }) => {
            assert_eq!(earlier, ["x cannot write"]);
            assert_eq!(last, "y cannot write");
            assert_eq!(document.expect("the runs ended").runs.len(), 1);
        }
        other => panic!("expected an output failure, got {other:?}"),
    }
    for sink in ["x", "ok", "y"] {
        assert_eq!(
            events(&log, sink).last().map(String::as_str),
            Some("finish 1"),
            "{sink}"
        );
    }
    // The companion ended after the run, before the final document.
    let all = log.lock().unwrap().clone();
    let at = |e: &str| all.iter().position(|x| x == e).unwrap();
    assert!(at("x:run_finished 0 1") < at("helper:end"));
    assert!(at("helper:end") < at("x:finish 1"));
}

#[test]
fn a_failed_checkpoint_ends_the_session_and_a_companions_failure_comes_last() {
    let log = Log::default();
    let stop = Arc::new(AtomicBool::new(false));
    let sinks: Vec<Box<dyn RunSink>> = vec![
        Box::new(Recording {
            name: "j",
            log: Arc::clone(&log),
            fail_run_finished: true,
            fail_finish: false,
        }),
        Recording::boxed("t", &log),
    ];
    let mut s = session(&[MethodKind::NanosleepAbs, MethodKind::Busy], 1);
    s.companions = vec![Box::new(Helper {
        log: Arc::clone(&log),
        result: Err("the textfile thread failed".into()),
    })];
    match s.run(sinks, &stop) {
        Err(Error::Output {
            earlier,
            last,
            document,
        }) => {
            assert_eq!(earlier, ["j cannot checkpoint"]);
            assert_eq!(last, "the textfile thread failed");
            assert!(document.is_none());
        }
        other => panic!("expected an output failure, got {other:?}"),
    }
    // No second run, no finish; the sink after the failing one never saw the checkpoint.
    let t = without_windows(&events(&log, "t"));
    assert_eq!(t, ["started 0 2", "annotate 1"]);
    assert!(log.lock().unwrap().iter().any(|e| e == "helper:end"));
}

#[test]
fn a_stop_before_the_first_run_measures_nothing_and_ends_the_companions() {
    let log = Log::default();
    let stop = Arc::new(AtomicBool::new(true));
    let mut s = session(&[MethodKind::NanosleepAbs], 1);
    s.companions = vec![Box::new(Helper {
        log: Arc::clone(&log),
        result: Ok(()),
    })];
    let r = s.run(vec![Recording::boxed("a", &log)], &stop);
    assert!(matches!(r, Err(Error::StoppedBeforeMeasuring)), "{r:?}");
    assert_eq!(*log.lock().unwrap(), ["helper:end"]);
}

#[test]
fn notes_are_worded_by_the_caller_and_the_command_line_recorded() {
    let log = Log::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut s = session(&[MethodKind::NanosleepAbs], 1);
    s.word_notes = |a| a.method_note = Some("worded".into());
    s.command_line = Some(vec!["tickscope".into(), "run".into()]);
    s.redact = true;
    let doc = s.run(vec![Recording::boxed("a", &log)], &stop).unwrap();
    assert_eq!(doc.runs[0].applied.method_note.as_deref(), Some("worded"));
    assert_eq!(doc.command_line, ["tickscope", "run"]);
    assert!(doc.redacted);
}
