//! The measuring loop against virtual time: statistics, windows, overruns, bounded memory.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::mock::MockMethod;
use tickscope_engine::mock::MockTimebase;
use tickscope_engine::record::WindowRecord;
use tickscope_engine::stats::{latency_stats, window_stats};
use tickscope_engine::wait::{Busy, Hybrid, Margin, WakeMethod};
use tickscope_engine::worker::{
    measure, resident_magnitude, window_link, LoopParams, WINDOW_RECORDS,
};

/// Counts allocations made by threads that opted in.
struct Counting;
thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = COUNTING.try_with(|c| {
            if c.get() {
                ALLOCS.with(|a| a.set(a.get() + 1));
            }
        });
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

const MS: i64 = 1_000_000;
const SEC: i64 = 1_000_000_000;

fn params(samples: u64, overrun: OverrunPolicy) -> LoopParams {
    LoopParams {
        first_expiry: 10 * SEC,
        period: MS,
        max_samples: samples,
        end: i64::MAX,
        overrun,
        window: SEC,
        await_records: false,
    }
}

/// Runs the loop on the mock with a collector thread recycling windows; returns the
/// windows in order and the number of allocations the measuring thread made in the loop.
fn run_mock(
    latencies: Vec<i64>,
    p: LoopParams,
) -> (Vec<WindowRecord>, u64, tickscope_engine::worker::LoopEnd) {
    let mut m = MockMethod::new(10 * SEC - MS, latencies);
    run_loop(&mut m, p)
}

/// Runs the loop with any method, as [`run_mock`] does.
fn run_loop<M: WakeMethod>(
    m: &mut M,
    p: LoopParams,
) -> (Vec<WindowRecord>, u64, tickscope_engine::worker::LoopEnd) {
    // One record more than the engine's: on virtual time the loop outruns this recycling
    // thread, and these tests count windows one by one (merging is tested below).
    let (mut link, mut collector, first) =
        window_link(WINDOW_RECORDS + 1, resident_magnitude(1_000_000));
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let done2 = done.clone();
    let keep = std::thread::spawn(move || {
        let mut kept = Vec::new();
        loop {
            let finished = done2.load(std::sync::atomic::Ordering::Acquire);
            while let Ok(rec) = collector.full.pop() {
                let mut copy = WindowRecord::new();
                copy.merge(&rec);
                copy.index = rec.index;
                copy.span = rec.span;
                kept.push(copy);
                let mut rec = rec;
                rec.clear();
                let _ = collector.empty.push(rec);
            }
            if finished {
                return kept;
            }
            std::thread::yield_now();
        }
    });
    let stop = AtomicBool::new(false);
    COUNTING.with(|c| c.set(true));
    let end = measure(m, &p, &stop, &mut link, first, None);
    COUNTING.with(|c| c.set(false));
    let allocs = ALLOCS.with(|a| a.replace(0));
    done.store(true, std::sync::atomic::Ordering::Release);
    (keep.join().unwrap(), allocs, end)
}

#[test]
fn constant_latency_gives_exact_statistics_and_one_window_per_second() {
    let (windows, _, end) = run_mock(vec![5_000], params(3_000, OverrunPolicy::Skip));
    assert_eq!(end.samples, 3_000);
    assert_eq!(windows.len(), 3);
    for (k, w) in windows.iter().enumerate() {
        assert_eq!((w.index, w.span, w.samples()), (k as u64, 1, 1000));
        assert_eq!(
            (w.latency.min(), w.latency.max()),
            (Some(5_000), Some(5_000))
        );
        assert_eq!(w.overruns, 0);
        let s = window_stats(w, SEC, MS, None);
        assert_eq!(s.period_mean, Some(MS as f64));
        assert_eq!(s.period_stddev, Some(0.0));
    }
    // The first sample of the run has no period.
    assert_eq!(windows[0].period.count, 999);
}

#[test]
fn early_wakeups_are_negative_and_counted() {
    let (windows, _, _) = run_mock(vec![-2_000, 3_000], params(1_000, OverrunPolicy::Skip));
    let w = &windows[0];
    let l = latency_stats(&w.latency, &w.latency_hist).unwrap();
    assert_eq!((l.min, l.max, l.early), (-2_000, 3_000, 500));
    assert_eq!(l.mean, 500.0);
}

#[test]
fn a_stall_is_counted_as_missed_periods_by_both_policies() {
    // Every 100th wake-up is 3.5 periods late: expiries k+1, k+2, k+3 pass before it.
    let mut script = vec![1_000; 100];
    script[99] = 3 * MS + MS / 2;
    let (skip, _, _) = run_mock(script.clone(), params(1_000, OverrunPolicy::Skip));
    let skip_overruns: u64 = skip.iter().map(|w| w.overruns).sum();
    assert_eq!(skip_overruns, 3 * 10);
    // Skip: 1000 wake-ups plus 30 skipped expiries span 1030 grid points: 2 windows.
    assert_eq!(skip.iter().map(|w| w.samples()).sum::<u64>(), 1_000);

    let (catch_up, _, _) = run_mock(script, params(1_000, OverrunPolicy::CatchUp));
    let cu_overruns: u64 = catch_up.iter().map(|w| w.overruns).sum();
    assert_eq!(cu_overruns, 30);
    // Catch-up wakes for every expiry, so the latencies after a stall are late too.
    let max_after: i64 = catch_up[0].latency.max().unwrap();
    assert_eq!(max_after, 3 * MS + MS / 2);
}

#[test]
fn the_loop_does_not_allocate_and_memory_does_not_grow_with_run_length() {
    let (_, small, e1) = run_mock(
        vec![1_000, 20_000, -300],
        params(10_000, OverrunPolicy::Skip),
    );
    let (_, large, e2) = run_mock(
        vec![1_000, 20_000, -300, 7 * MS],
        params(10_000_000, OverrunPolicy::Skip),
    );
    assert_eq!(e1.samples, 10_000);
    assert_eq!(e2.samples, 10_000_000);
    assert_eq!(small, 0, "allocations in a 10^4 wake-up loop");
    assert_eq!(large, 0, "allocations in a 10^7 wake-up loop");
}

#[test]
fn stop_flag_ends_the_loop_before_the_next_wait() {
    let (mut link, _collector, first) = window_link(WINDOW_RECORDS, resident_magnitude(1_000_000));
    let mut m = MockMethod::new(0, vec![1]);
    let stop = AtomicBool::new(true);
    let end = measure(
        &mut m,
        &params(100, OverrunPolicy::Skip),
        &stop,
        &mut link,
        first,
        None,
    );
    assert_eq!(end.samples, 0);
}

#[test]
fn every_sample_is_streamed_or_counted_as_dropped() {
    let (mut link, _collector, first) = window_link(WINDOW_RECORDS, resident_magnitude(1_000_000));
    let (mut tx, mut rx) = rtrb::RingBuffer::new(100);
    let mut m = MockMethod::new(10 * SEC - MS, vec![1_000]);
    let stop = AtomicBool::new(false);
    let end = measure(
        &mut m,
        &params(250, OverrunPolicy::Skip),
        &stop,
        &mut link,
        first,
        Some(tickscope_engine::sample::SampleStream::every(&mut tx)),
    );
    assert_eq!(end.samples, 250);
    let mut streamed = Vec::new();
    while let Ok(s) = rx.pop() {
        streamed.push(s);
    }
    assert_eq!(streamed.len(), 100);
    assert!(streamed
        .iter()
        .enumerate()
        .all(|(k, s)| s.seq == k as u64 && s.woke - s.expiry == 1_000));
    let rec = dropped_total(&mut link, _collector);
    assert_eq!(rec, 150);
}

#[test]
fn only_wake_ups_later_than_the_threshold_are_streamed() {
    let (mut link, collector, first) = window_link(WINDOW_RECORDS, resident_magnitude(1_000_000));
    let (mut tx, mut rx) = rtrb::RingBuffer::new(1000);
    let mut m = MockMethod::new(10 * SEC - MS, vec![1_000, 50_000, 2_000, 80_000]);
    let stop = AtomicBool::new(false);
    let later_than = std::sync::atomic::AtomicI64::new(10_000);
    let end = measure(
        &mut m,
        &params(400, OverrunPolicy::Skip),
        &stop,
        &mut link,
        first,
        Some(tickscope_engine::sample::SampleStream {
            ring: &mut tx,
            later_than: &later_than,
        }),
    );
    assert_eq!(end.samples, 400);
    let mut streamed = Vec::new();
    while let Ok(s) = rx.pop() {
        streamed.push((s.seq, s.woke - s.expiry));
    }
    let want: Vec<(u64, i64)> = (0..400u64)
        .filter(|k| k % 2 == 1)
        .map(|k| (k, if k % 4 == 1 { 50_000 } else { 80_000 }))
        .collect();
    assert_eq!(streamed, want);
    assert_eq!(dropped_total(&mut link, collector), 0);
}

fn dropped_total(
    _link: &mut tickscope_engine::worker::WindowLink,
    mut c: tickscope_engine::worker::CollectorLink,
) -> u64 {
    let mut dropped = 0;
    while let Ok(r) = c.full.pop() {
        dropped += r.samples_dropped;
    }
    dropped
}

#[test]
fn busy_and_hybrid_run_the_loop_on_virtual_time_without_allocating() {
    // Readings cost 200 ns; sleeps overshoot by 20 µs, one in 500 by 300 µs.
    let mut script = vec![20_000; 499];
    script.push(300_000);
    let mut busy = Busy::with_clock(
        MockTimebase::new(10 * SEC - MS, 200, script.clone()),
        Some(50),
    );
    let (windows, allocs, end) = run_loop(&mut busy, params(3_000, OverrunPolicy::Skip));
    assert_eq!((end.samples, allocs), (3_000, 0));
    let w = &windows[0];
    // A busy-wait wakes within one reading of the expiry (naps here return 20 µs late).
    assert!(w.latency.min().unwrap() >= 0);
    assert_eq!(w.overruns, 0);
    assert!(busy.naps() > 0);

    let mut hybrid =
        Hybrid::with_clock(MockTimebase::new(10 * SEC - MS, 200, script), Margin::Auto);
    hybrid.arm(10 * SEC, MS).unwrap();
    let (windows, allocs, end) = run_loop(&mut hybrid, params(3_050, OverrunPolicy::Skip));
    assert_eq!((end.samples, allocs), (3_050, 0));
    let not_early: u64 = windows
        .iter()
        .map(|w| w.latency_hist.len() - w.latency_hist.negative_count())
        .sum();
    assert_eq!(not_early, 3_050);
    let r = hybrid.observations().margin.unwrap();
    // The 300 µs overshoots (0.2 %) are late and raise the margin for a moment, but stay
    // below the percentile: after the next update the margin is back on 20 µs.
    assert_eq!(r.final_ns, 20_000 + 5_000 + 2_000);
    assert_eq!(r.overshot, 6);
}
