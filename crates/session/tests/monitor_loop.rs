//! `monitor`'s Prometheus sink leaves the measuring loop alone: on the mock backend
//! (virtual time), a session with the sink hands the engine a configuration whose loop
//! settings are the plain run's (no sample ring), the engine emits no raw wake-up, and the
//! loop's outcome — every thread's wake-ups, overruns, windows and statistics — is the plain
//! run's; the exposition still counts every wake-up into its histograms. `--explain` asks
//! the loop for its late wake-ups only: when none is late, nothing leaves the loop one by
//! one and the outcome is the plain run's; otherwise exactly the late ones do.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tickscope_engine::run::{run, Backend, PolicyRequest, RunConfig, RunEvent, RunOutcome};
use tickscope_engine::sample::LateThreshold;
use tickscope_engine::setup::Policy;
use tickscope_engine::wait::MethodKind;
use tickscope_explain::controller::{ExplainOptions, Mode, Threshold};
use tickscope_report::sink::explain_sink::ExplainSink;
use tickscope_report::sink::prometheus::{Exposition, PrometheusSink};
use tickscope_report::sink::RunSink;
use tickscope_session::{Plan, Session};
use tickscope_system::system;

const MS: i64 = 1_000_000;
const SEC: i64 = 1_000_000_000;

/// 3 virtual seconds at 1 ms on two threads, with early, small and large latencies.
fn plan() -> Plan {
    let mut config = RunConfig::new(MS);
    config.duration_ns = Some(3 * SEC);
    config.cpus = vec![None, None];
    config.policy = PolicyRequest::Exact(Policy::Other { nice: 0 });
    config.backend = Backend::Mock {
        latencies: vec![20_000, 1_500, -2_000, 300_000, 7_777],
    };
    Plan {
        config,
        methods: vec![MethodKind::NanosleepAbs],
        rounds: 1,
    }
}

/// What the engine was asked and did: the configuration, the raw-sample events, the
/// latencies of the wake-ups they carried, the outcome.
struct Seen {
    config: RunConfig,
    sample_events: usize,
    streamed: Vec<i64>,
    outcome: RunOutcome,
}

fn session_with(sinks: Vec<Box<dyn RunSink>>) -> Seen {
    let quiet = |_: &str| {};
    let mut session = Session::new(plan(), system::mock(), &quiet);
    // As `monitor` runs: nothing kept per window.
    session.keep_windows = false;
    let stop = Arc::new(AtomicBool::new(false));
    let mut seen = None;
    session
        .run_with(sinks, &stop, &mut |cfg, stop, observer| {
            let (mut sample_events, mut streamed) = (0, Vec::new());
            let outcome = run(cfg, stop, &mut |e| {
                if let RunEvent::Samples { samples, .. } = &e {
                    sample_events += 1;
                    streamed.extend(samples.iter().map(|s| s.woke - s.expiry));
                }
                observer(e)
            })?;
            seen = Some(Seen {
                config: cfg.clone(),
                sample_events,
                streamed,
                outcome: outcome.clone(),
            });
            Ok(outcome)
        })
        .expect("a mock run succeeds");
    seen.expect("one run")
}

/// The value of the first exposition line starting with `prefix`.
fn value(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{prefix} missing in\n{text}"))
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a number")
}

#[test]
fn monitor_leaves_the_measuring_loop_alone() {
    let plain = session_with(Vec::new());
    let (sink, expo): (PrometheusSink, Exposition) =
        PrometheusSink::new(&system::mock(), &plan().config);
    let monitored = session_with(vec![Box::new(sink)]);

    // The settings the measuring loop reads are the plain run's: no sample ring.
    assert!(!monitored.config.stream_samples);
    assert!(monitored.config.window_histograms);
    let loop_settings = RunConfig {
        window_histograms: false,
        ..monitored.config.clone()
    };
    assert_eq!(loop_settings, plain.config);
    // No wake-up left the loop one by one.
    assert_eq!((plain.sample_events, monitored.sample_events), (0, 0));
    // The loop did the same: the same wake-ups, windows, statistics per thread and merged.
    assert_eq!(monitored.outcome.threads, plain.outcome.threads);
    assert_eq!(monitored.outcome.summary, plain.outcome.summary);
    assert_eq!(monitored.outcome.applied, plain.outcome.applied);

    // And the histograms hold every wake-up, from the windows.
    let text = String::from_utf8(expo.encode()).expect("UTF-8 exposition");
    for t in &plain.outcome.threads {
        let labels = format!(
            "{{cpu=\"unpinned\",method=\"nanosleep-abs\",policy=\"other\",thread=\"{}\"}}",
            t.thread.expect("a thread's index")
        );
        let count = value(
            &text,
            &format!("tickscope_wakeup_latency_seconds_count{labels}"),
        );
        assert_eq!(count, t.samples as f64);
        assert_eq!(count, 3000.0);
        let wakeups = value(&text, &format!("tickscope_wakeups_total{labels}"));
        assert_eq!(wakeups, count, "_count and the wake-up counter agree");
        let early = value(&text, &format!("tickscope_early_wakeups_total{labels}"));
        assert_eq!(early, 600.0, "one in five scripted wake-ups is early");
        let deviations = value(
            &text,
            &format!("tickscope_period_deviation_seconds_count{labels}"),
        );
        assert_eq!(deviations, count - 1.0, "every period after the first");
        let sum = value(
            &text,
            &format!("tickscope_wakeup_latency_seconds_sum{labels}"),
        );
        let exact = 600.0 * (20_000.0 + 1_500.0 - 2_000.0 + 300_000.0 + 7_777.0) / 1e9;
        assert!((sum - exact).abs() < 1e-9, "{sum} vs {exact}");
    }
}

/// `--explain` from context (no tracing: runs anywhere) with a fixed threshold, ns.
fn explain_sink(threshold_ns: i64) -> Box<dyn RunSink> {
    let opts = ExplainOptions {
        mode: Mode::Context,
        threshold: Threshold::Fixed(threshold_ns),
        rules: Vec::new(),
        capture_dir: std::env::temp_dir().join("tickscope-monitor-loop-unused"),
        capture_limit: 0,
        cooldown: std::time::Duration::from_millis(200),
        keep_breakdowns: 1,
        buffer_kb: 64,
        log: None,
        log_events: false,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (sink, _note) = ExplainSink::new(opts, stop, false).expect("context mode needs nothing");
    Box::new(sink)
}

#[test]
fn explain_takes_only_the_late_wake_ups_out_of_the_loop() {
    let plain = session_with(Vec::new());

    // Nothing later than 1 s: the loop hands over no wake-up one by one, and its outcome
    // (wake-ups, overruns, windows, statistics, nothing dropped) is the plain run's.
    let calm = session_with(vec![explain_sink(SEC)]);
    assert!(calm.config.stream_samples);
    assert_eq!(
        calm.config.stream_later_than,
        Some(LateThreshold::Fixed(SEC))
    );
    let loop_settings = RunConfig {
        stream_samples: false,
        stream_later_than: None,
        ..calm.config.clone()
    };
    assert_eq!(loop_settings, plain.config);
    assert_eq!((plain.sample_events, calm.sample_events), (0, 0));
    assert_eq!(calm.outcome.threads, plain.outcome.threads);
    assert_eq!(calm.outcome.summary, plain.outcome.summary);

    // Later than 100 µs: the 300 µs wake-ups (one in five) and no other leave the loop.
    let late = session_with(vec![explain_sink(100_000)]);
    assert_eq!(late.streamed.len(), 2 * 600, "600 late wake-ups per thread");
    assert!(late.streamed.iter().all(|&l| l == 300_000));
    assert_eq!(late.outcome.threads, plain.outcome.threads);
}
