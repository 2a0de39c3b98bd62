//! Memory does not grow with a run's length: the heap high-water mark of a whole run — the
//! coordinator, the measuring loop, the collector and the result document's sink (or the
//! CSV table's), which spools every window to a file — is the same for 10^4 wake-ups in 140 windows as for
//! 10^7 wake-ups in 1.4·10^5 windows (windows of 100 ms; the script's 2.5 ms wake-ups
//! cause overruns, so the runs last 14 and 14 000 virtual seconds). On virtual time ([`Backend::Mock`]), so it is exact and
//! fast; a counting global allocator measures the heap.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tickscope_engine::run::{run, Backend, RunConfig, RunEvent};
use tickscope_report::output::Output;
use tickscope_report::sink::csv::CsvSink;
use tickscope_report::sink::json::JsonSink;
use tickscope_report::sink::{RunContext, RunSink};
use tickscope_report::RunDocument;
use tickscope_system::system;

/// Counts the bytes allocated now and the most ever allocated at once.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// One measurement at a time: the counters are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

/// The output a run writes: the result document (`--json`) or the CSV table (`--csv`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Json,
    Csv,
}

/// The heap's high-water mark above its level at the start of a mock run of `wakeups`
/// wake-ups at 1 ms in windows of `window_ns`, with a `kind` file written at the end.
fn peak_of(wakeups: u64, window_ns: i64, kind: Kind) -> usize {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.out");
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);

    let mut cfg = RunConfig::new(1_000_000);
    cfg.loops = Some(wakeups);
    cfg.duration_ns = None;
    cfg.window_ns = window_ns;
    cfg.keep_windows = false; // what `tickscope run --json` asks when no sink needs them
                              // The document's script overruns (a wake-up at a time, 14 000 virtual seconds for the
                              // long run); the table's does not (each window counted at once, 10 000 s).
    cfg.backend = Backend::Mock {
        latencies: match kind {
            Kind::Json => vec![20_000, 30_000, 25_000, 2_500_000, 21_000],
            Kind::Csv => vec![20_000, 30_000, 25_000, 21_000],
        },
    };
    let system = system::mock();
    let out = Output::prepare(&path).unwrap();
    let mut sink: Box<dyn RunSink> = match kind {
        Kind::Json => Box::new(JsonSink::new(out)),
        Kind::Csv => Box::new(CsvSink::new(out)),
    };
    let ctx = RunContext {
        system: &system,
        config: &cfg,
        methods: &[cfg.method],
        rounds: 1,
        index: 0,
        total: 1,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let outcome = run(&cfg, &stop, &mut |e| match e {
        RunEvent::Started(a) => sink.started(&ctx, a),
        RunEvent::Going { first_expiry } => sink.going(&ctx, first_expiry),
        RunEvent::Second(s) => sink.window(&ctx, s),
        RunEvent::Samples { thread, samples } => sink.samples(thread, samples),
        RunEvent::Joined(a) => sink.thread_joined(&ctx, a),
    })
    .unwrap();
    assert_eq!(outcome.summary.samples, wakeups);
    let doc = RunDocument::new(system.clone(), cfg.clone(), outcome);
    sink.finish(&doc, &mut Vec::new()).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    println!("{kind:?}: {wakeups} wake-ups: heap high-water mark {peak} B");
    drop(doc);
    if kind == Kind::Csv {
        // Every wake-up is in a window row, though memory never held them all.
        let text = std::fs::read_to_string(&path).unwrap();
        let mut in_windows = 0;
        for r in csv::Reader::from_reader(text.as_bytes()).records() {
            let r = r.unwrap();
            if &r[4] == "window" {
                in_windows += r[7].parse::<u64>().unwrap();
            }
        }
        assert_eq!(in_windows, wakeups);
        return peak;
    }

    // The file holds every window, though memory never held them all.
    let back = RunDocument::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let windows = &back.first().threads[0].windows;
    let in_windows: u64 = windows.iter().map(|w| w.samples).sum();
    assert_eq!(in_windows, wakeups);
    // A window spans more than one when the collector fell behind virtual time.
    let spanned: u64 = windows.iter().map(|w| w.span).sum();
    assert!(spanned >= wakeups * 1_000_000 / window_ns as u64);
    println!(
        "{wakeups} wake-ups: {} windows in the file covering {spanned}",
        windows.len()
    );
    peak
}

#[test]
fn the_heap_high_water_mark_does_not_grow_with_the_run() {
    let small = peak_of(10_000, 100_000_000, Kind::Json); // 10^4 wake-ups, 100 windows
    let big = peak_of(10_000_000, 100_000_000, Kind::Json); // 10^7 wake-ups, 10^5 windows
    println!("heap high-water mark: {small} B for 10^4 wake-ups, {big} B for 10^7");
    // Equal but for the few seconds in flight between the threads at the peak, which depend
    // on scheduling, not on the run's length, and the coarse window the long run merges
    // after its first hour (tickscope_report::coarse: its histogram's buckets, bounded by
    // the histogram, not by the run). Measured: 34 972 and 34 924 B.
    assert!(
        big.abs_diff(small) <= 16384,
        "the heap grew with the run's length: {small} B → {big} B"
    );
}

/// The same for `--csv`, whose table lists each series' windows together: its rows wait in
/// a buffer of 16 KiB per series and go to a spool, which is remembered by chunk — 40 bytes
/// per 16 KiB of rows, in a list that doubles as it grows (old and new list both held for a
/// moment): the long run's 36 000 rows of the first hour are about 450 chunks, a list of
/// 20 KiB, 30 KiB at its doubling; the shorter run's 1000 rows about 12. After the first hour
/// a row is a minute, so the list hardly grows; both runs spool, so both read a chunk back at
/// the end. Keeping the windows instead would cost 7 MB here. The long run's coarse window
/// (after its first hour) hands its histograms over as dense counters up to the highest used
/// (`WindowCounts`, at most 4608 `u32` per sign and histogram: bounded by the histogram, not
/// by the run). Measured: 64 826 and 107 674 B before windows carried counters, 64 829 and
/// 117 296 B since (both runs spool and read back). The wake-ups never overrun here, so
/// virtual time counts each window at once.
#[test]
fn the_csv_tables_heap_high_water_mark_does_not_grow_with_the_run() {
    let short = peak_of(100_000, 100_000_000, Kind::Csv); // 10^5 wake-ups, 1000 windows
    let long = peak_of(10_000_000, 100_000_000, Kind::Csv); // 10^7 wake-ups, 10^5 windows
    println!("CSV heap high-water mark: {short} B for 10^5 wake-ups, {long} B for 10^7");
    assert!(
        long.abs_diff(short) <= 64 * 1024,
        "the heap grew with the run's length: {short} B → {long} B"
    );
}
