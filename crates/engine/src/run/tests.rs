//! The whole coordinator on the mock backend: events, counts, stop, errors.

use super::*;
use crate::setup::Policy;
use crate::time::NS_PER_SEC;
use crate::wait::MethodKind;

const MS: Nanos = 1_000_000;

/// A run of `secs` seconds at 1 ms on `threads` unpinned threads.
fn cfg(secs: i64, threads: usize) -> RunConfig {
    RunConfig {
        duration_ns: Some(secs * NS_PER_SEC),
        cpus: vec![None; threads],
        ..RunConfig::new(MS)
    }
}

/// What the observer saw, in order: "started", "second N", "samples T n".
fn mock_run(cfg: &RunConfig, stop_at: Option<u64>) -> (Vec<String>, RunOutcome) {
    let stop = Arc::new(AtomicBool::new(false));
    let mut events = Vec::new();
    let flag = Arc::clone(&stop);
    let outcome = run_on_mock(
        cfg,
        &stop,
        &mut |e| match e {
            RunEvent::Started(_) => events.push("started".to_string()),
            RunEvent::Second(s) => {
                events.push(format!("second {}", s.index));
                if stop_at == Some(s.index) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            RunEvent::Samples { thread, samples } => {
                events.push(format!("samples {thread} {}", samples.len()))
            }
        },
        &MockRun { seed: 7 },
    )
    .unwrap();
    (events, outcome)
}

#[test]
fn a_mock_run_reports_started_then_every_second_in_order() {
    let (events, out) = mock_run(&cfg(3, 1), None);
    assert_eq!(events, ["started", "second 0", "second 1", "second 2"]);
    // The script's last wake-up of every 1000 is 2.5 periods late: two periods missed
    // each time (at the 1000th and 2000th wake-ups; the 3000th is past the end).
    assert_eq!((out.summary.samples, out.summary.overruns), (2996, 4));
    assert_eq!(out.summary.samples + out.summary.overruns, 3000);
    let per_window: Vec<u64> = out.summary.windows.iter().map(|w| w.samples).collect();
    assert_eq!(per_window, [1000, 998, 998]);
    assert!(!out.interrupted && out.error.is_none());
    assert_eq!(out.applied.interface, "mock");
    assert_eq!(out.applied.policy, Policy::Fifo { priority: 90 });
    assert_eq!(out.threads.len(), 1);
    assert_eq!(out.summary.cpu_time_ns, 0);
    let lat = out.summary.latency_ns.as_ref().unwrap();
    assert!(lat.min >= 1_000 && lat.max == 2 * MS + MS / 2, "{lat:?}");
}

#[test]
fn a_mock_run_is_the_same_every_time() {
    let c = cfg(2, 2);
    let (e1, o1) = mock_run(&c, None);
    let (e2, o2) = mock_run(&c, None);
    assert_eq!((e1, o1), (e2, o2));
}

#[test]
fn threads_are_merged_per_second() {
    let stop = Arc::new(AtomicBool::new(false));
    let mut merged = Vec::new();
    let out = run_on_mock(
        &cfg(2, 3),
        &stop,
        &mut |e| {
            if let RunEvent::Second(s) = e {
                let threads: Vec<usize> = s.threads.iter().map(|(t, _)| *t).collect();
                merged.push((s.index, threads, s.merged.samples));
            }
        },
        &MockRun::default(),
    )
    .unwrap();
    assert_eq!(
        merged,
        [(0, vec![0, 1, 2], 3000), (1, vec![0, 1, 2], 3 * 998)]
    );
    assert_eq!(out.threads.len(), 3);
    assert_eq!(out.summary.samples, 3 * 1998);
    let tids: Vec<i32> = out.applied.threads.iter().map(|t| t.tid).collect();
    assert_eq!(tids, [1, 2, 3]);
}

#[test]
fn a_stop_ends_the_run_early_and_marks_it_interrupted() {
    let (events, out) = mock_run(&cfg(600, 1), Some(1));
    assert!(out.interrupted);
    assert!(out.summary.samples < 600_000, "{}", out.summary.samples);
    assert_eq!(events[0], "started");
    for (k, e) in events[1..].iter().enumerate() {
        assert_eq!(e, &format!("second {k}"));
    }
    assert!(events.len() >= 3);
}

#[test]
fn loops_end_the_run_and_streamed_samples_arrive_in_full() {
    let c = RunConfig {
        loops: Some(1500),
        duration_ns: None,
        stream_samples: true,
        ..cfg(1, 1)
    };
    let (events, out) = mock_run(&c, None);
    assert_eq!(out.summary.samples, 1500);
    let streamed: usize = events
        .iter()
        .filter_map(|e| e.strip_prefix("samples 0 "))
        .map(|n| n.parse::<usize>().unwrap())
        .sum();
    assert_eq!(streamed, 1500);
    assert_eq!(out.summary.samples_dropped, 0);
}

#[test]
fn a_method_limit_is_refused_before_any_thread_starts() {
    let c = RunConfig {
        method: MethodKind::Itimer,
        ..cfg(1, 2)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut started = false;
    let r = run_on_mock(&c, &stop, &mut |_| started = true, &MockRun::default());
    let kind = r.map_err(|e| e.kind().clone()).unwrap_err();
    assert_eq!(
        kind,
        crate::error::ErrorKind::InvalidConfig {
            setting: crate::error::Setting::Threads
        }
    );
    assert!(!started);
}

#[test]
fn the_mock_reports_the_settings_as_asked() {
    let c = RunConfig {
        policy: PolicyRequest::Exact(Policy::Other { nice: 0 }),
        timer_slack_ns: None,
        pm_qos_us: Some(0),
        ..cfg(1, 1)
    };
    let (_, out) = mock_run(&c, None);
    let a = &out.applied;
    assert_eq!(a.policy, Policy::Other { nice: 0 });
    assert_eq!(
        (a.timer_slack_ns, a.pm_qos_us, a.mlock),
        (50_000, Some(0), true)
    );
    assert_eq!(a.policy_note, None);
    let secs = out.ended_at.duration_since(out.started_at).unwrap();
    assert_eq!(secs.as_nanos() as i64, out.summary.wall_time_ns);
}
