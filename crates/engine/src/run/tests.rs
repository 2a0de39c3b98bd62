//! The coordinator itself — guards, threads, handshake, collection, teardown — on virtual
//! time ([`Backend::Mock`]), so its counts and its events are exact.

use super::*;
use crate::sample::LateThreshold;
use crate::time::NS_PER_US;

/// A mock run of `threads` threads at 1 ms for `seconds`, with a latency script.
fn mock(threads: usize, seconds: i64, latencies: Vec<Nanos>) -> RunConfig {
    let mut cfg = RunConfig::new(NS_PER_MS);
    cfg.duration_ns = Some(seconds * NS_PER_SEC);
    cfg.cpus = vec![None; threads];
    cfg.backend = Backend::Mock { latencies };
    cfg
}

/// Runs `cfg`, returning the outcome and the events seen, as names.
fn run_collecting(cfg: &RunConfig, stop: bool) -> (RunOutcome, Vec<String>) {
    let mut events = Vec::new();
    let stop = Arc::new(AtomicBool::new(stop));
    let outcome = run(cfg, &stop, &mut |e| {
        events.push(match e {
            RunEvent::Started(a) => format!("started {} threads", a.threads.len()),
            RunEvent::Going { first_expiry } => format!("going at {first_expiry}"),
            RunEvent::Second(s) => format!("second {} of {} threads", s.index, s.threads.len()),
            RunEvent::Samples { thread, samples } => format!("samples {thread} {}", samples.len()),
            RunEvent::Joined(a) => format!("joined {} threads", a.threads.len()),
        })
    })
    .unwrap();
    (outcome, events)
}

#[test]
fn a_mock_run_delivers_every_second_in_order_with_exact_counts() {
    let cfg = mock(2, 3, vec![20 * NS_PER_US, 30 * NS_PER_US]);
    let (out, events) = run_collecting(&cfg, false);
    assert_eq!(
        events,
        [
            "started 2 threads",
            "going at 10000000",
            "second 0 of 2 threads",
            "second 1 of 2 threads",
            "second 2 of 2 threads"
        ]
    );
    for t in &out.threads {
        assert_eq!(t.samples, 3000);
        assert_eq!(t.overruns, 0);
        assert_eq!(t.windows.len(), 3);
        let l = t.latency_ns.as_ref().unwrap();
        assert_eq!((l.min, l.max), (20_000, 30_000));
        assert_eq!(l.mean, 25_000.0);
        // The script alternates 20, 30 µs: wake-up 3000 (the last) is the 30 µs one.
        assert_eq!(t.last_latency_ns, Some(30_000));
    }
    assert_eq!(
        out.summary.last_latency_ns, None,
        "merged: no single last wake-up"
    );
    assert_eq!(out.summary.samples, 6000);
    assert!(!out.interrupted && out.error.is_none());
    assert_eq!(
        out.applied
            .threads
            .iter()
            .map(|t| t.tid)
            .collect::<Vec<_>>(),
        [MOCK_TID_BASE, MOCK_TID_BASE + 1]
    );
}

#[test]
fn a_late_wake_up_misses_periods_and_the_counts_add_up() {
    // Every 100th wake-up is 2.5 ms late: two expiries pass each time (skip policy).
    let mut script = vec![10 * NS_PER_US; 99];
    script.push(2_500 * NS_PER_US);
    let cfg = mock(1, 2, script);
    let (out, _) = run_collecting(&cfg, false);
    let t = &out.threads[0];
    assert_eq!(
        t.samples + t.overruns,
        2000,
        "every expiry is woken for or counted as an overrun"
    );
    assert_eq!(
        t.overruns,
        2 * (t.samples / 100),
        "two overruns per late wake-up"
    );
    assert_eq!(t.latency_ns.as_ref().unwrap().max, 2_500_000);
}

#[test]
fn a_stop_before_the_start_ends_the_run_interrupted_and_empty() {
    let cfg = mock(1, 10, vec![NS_PER_US]);
    let (out, events) = run_collecting(&cfg, true);
    assert!(out.interrupted);
    assert_eq!(out.summary.samples, 0);
    assert_eq!(events[0], "started 1 threads");
}

#[test]
fn mock_runs_are_deterministic_and_stream_samples() {
    let mut cfg = mock(2, 2, vec![5 * NS_PER_US, 15 * NS_PER_US, 40 * NS_PER_US]);
    cfg.stream_samples = true;
    let (a, events) = run_collecting(&cfg, false);
    let (b, _) = run_collecting(&cfg, false);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.summary, b.summary);
    let streamed: usize = events
        .iter()
        .filter_map(|e| e.strip_prefix("samples "))
        .map(|e| e.split(' ').nth(1).unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(streamed, 4000, "every wake-up streamed");
}

/// Window histograms (what `--hlog` and `monitor` ask for) are built by the collector from
/// the loop's own window records: on virtual time the loop gets no sample ring, the events
/// and outcome are those of a plain run, and each second carries exactly the histogram of
/// its wake-ups (per thread and merged).
#[test]
fn window_histograms_leave_the_measuring_loop_alone() {
    let script = vec![20 * NS_PER_US, 1_500, 300 * NS_PER_US, -2_000, 7_777];
    let plain = mock(2, 3, script.clone());
    let with = RunConfig {
        window_histograms: true,
        ..plain.clone()
    };
    let (a, events_a) = run_collecting(&plain, false);
    let (b, events_b) = run_collecting(&with, false);
    assert_eq!(events_a, events_b);
    assert!(!events_b.iter().any(|e| e.starts_with("samples")));
    assert_eq!(
        a, b,
        "the same outcome, and no histogram in the kept windows"
    );
    assert!(b.threads.iter().all(|t| t.samples_dropped == 0));

    let mut seconds = Vec::new();
    run(&with, &Arc::new(AtomicBool::new(false)), &mut |e| {
        if let RunEvent::Second(s) = e {
            seconds.push(s.clone());
        }
    })
    .unwrap();
    assert_eq!(seconds.len(), 3);
    for s in &seconds {
        assert_eq!(s.first_expiry, MOCK_FIRST_EXPIRY);
        // Wake-ups k of window w: 1000 w ..= 1000 w + 999, latency script[k % len].
        let mut want = crate::window_histogram::WindowHistogram::new();
        for k in s.index * 1000..(s.index + 1) * 1000 {
            want.record(script[k as usize % script.len()]);
        }
        for (_, w) in &s.threads {
            assert_eq!(
                w.latency_buckets.as_ref().map(|c| c.buckets()),
                Some(want.buckets())
            );
            assert!(w.deviation_buckets.is_some());
        }
        let mut both = want.clone();
        both.add(&want);
        assert_eq!(
            s.merged.latency_buckets.as_ref().map(|c| c.buckets()),
            Some(both.buckets())
        );
    }
    let plain_seconds = {
        let mut v = Vec::new();
        run(&plain, &Arc::new(AtomicBool::new(false)), &mut |e| {
            if let RunEvent::Second(s) = e {
                v.push(s.clone());
            }
        })
        .unwrap();
        v
    };
    assert!(plain_seconds
        .iter()
        .all(|s| s.merged.latency_buckets.is_none()
            && s.threads.iter().all(|(_, w)| w.latency_buckets.is_none())));
}

/// The latencies (woke − expiry) and sequence numbers a run streamed, per thread.
fn streamed(cfg: &RunConfig) -> (RunOutcome, Vec<Vec<(u64, Nanos)>>) {
    let mut got = vec![Vec::new(); cfg.cpus.len()];
    let out = run(cfg, &Arc::new(AtomicBool::new(false)), &mut |e| {
        if let RunEvent::Samples { thread, samples } = e {
            got[thread].extend(samples.iter().map(|s| (s.seq, s.woke - s.expiry)));
        }
    })
    .unwrap();
    (out, got)
}

/// With a late threshold the loop pushes only the wake-ups beyond it: none when nothing is
/// that late (and the outcome is the plain run's), exactly the late ones otherwise.
#[test]
fn a_fixed_late_threshold_streams_exactly_the_late_wake_ups() {
    let script = vec![20 * NS_PER_US, 1_500, 300 * NS_PER_US, -2_000, 7_777];
    let plain = mock(2, 3, script.clone());
    let (want, _) = run_collecting(&plain, false);
    let late = |ns| RunConfig {
        stream_samples: true,
        stream_later_than: Some(LateThreshold::Fixed(ns)),
        ..plain.clone()
    };
    let (calm, none) = streamed(&late(NS_PER_SEC));
    assert!(none.iter().all(Vec::is_empty));
    assert_eq!(calm, want);
    let (out, some) = streamed(&late(10 * NS_PER_US));
    assert_eq!(out, want);
    for thread in &some {
        // Wake-ups k with script[k % 5] of 20 or 300 µs, in order.
        let expected: Vec<(u64, Nanos)> = (0..3000u64)
            .map(|k| (k, script[k as usize % 5]))
            .filter(|&(_, l)| l > 10 * NS_PER_US)
            .collect();
        assert_eq!(thread, &expected);
    }
}

/// The p99 threshold starts at `first` and then follows each thread's p99 as the seconds
/// are reported: all of the first window's wake-ups beyond `first` are streamed, and none
/// from the fourth window on (the loop cannot reach it before the collector has reported
/// the first second: it waits for the records the collector hands back).
#[test]
fn a_p99_late_threshold_follows_the_reported_seconds() {
    let script = vec![20 * NS_PER_US, 1_500, 300 * NS_PER_US, -2_000, 7_777];
    let cfg = RunConfig {
        stream_samples: true,
        stream_later_than: Some(LateThreshold::PreviousP99 {
            first: 10 * NS_PER_US,
        }),
        ..mock(1, 5, script.clone())
    };
    let (_, got) = streamed(&cfg);
    let got = &got[0];
    let first_window: Vec<(u64, Nanos)> = (0..1000u64)
        .map(|k| (k, script[k as usize % 5]))
        .filter(|&(_, l)| l > 10 * NS_PER_US)
        .collect();
    assert_eq!(&got[..first_window.len()], &first_window[..]);
    assert!(got.iter().all(|&(_, l)| l > 10 * NS_PER_US));
    assert!(
        got.iter().all(|&(seq, _)| seq < 3000),
        "the p99 (300 µs) leaves nothing later"
    );
}
