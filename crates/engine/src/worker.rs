//! The measuring loop: wait, read the clock once, record, advance the grid.
//!
//! Everything the loop needs is allocated before it starts. Finished windows go to the
//! collector through a wait-free single-producer ring (`rtrb`, built for real-time audio
//! threads) and come back cleared through a second one, so the loop never allocates, never
//! takes a lock and makes no system call besides the wait and its clock read. If the
//! collector falls behind and no cleared record is waiting, the loop keeps recording into the
//! current one (its `span` grows) rather than block or drop anything — until the record's
//! 32-bit counters could wrap, after 2^31 wake-ups or more (see [`measure`]).

use crate::grid::{Grid, OverrunPolicy};
use crate::record::{LoopRecord, WindowRecord};
use crate::sample::{RawSample, SampleStream};
use crate::time::Nanos;
use crate::wait::WakeMethod;
use crate::window_histogram::Count;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Number of window records in circulation per measuring thread: the one the loop records
/// into and one finished, which the collector (looking every 20 ms) has a whole window to
/// take and hand back cleared. A collector held up longer than that costs no wake-up: the
/// loop keeps recording into its record and the windows are reported merged (`span` > 1).
/// Each record maps 74 KiB, of which about 48 KiB are resident for the whole run
/// ([`resident_magnitude`]); a spare would add that to every measuring thread (`-t all`)
/// for a case the merging covers.
pub const WINDOW_RECORDS: usize = 2;

/// Most periods a statistics window may hold (2^31): the measuring loop's records count in
/// 32 bits ([`LoopRecord`]), and one window's wake-ups must fit in what is left of them
/// whenever the loop keeps recording into a record the collector has not taken.
pub(crate) const MAX_WINDOW_PERIODS: i64 = 1 << 31;

/// When and how one measuring thread runs.
#[derive(Debug, Clone)]
pub struct LoopParams {
    /// First expiry (absolute ns on the run's clock).
    pub first_expiry: Nanos,
    /// Period (ns, > 0).
    pub period: Nanos,
    /// Stop after this many wake-ups.
    pub max_samples: u64,
    /// Stop before waiting for an expiry at or after this time (absolute ns).
    pub end: Nanos,
    /// What to do after an overrun.
    pub overrun: OverrunPolicy,
    /// Length of a statistics window (ns, > 0); windows start at `first_expiry`.
    pub window: Nanos,
    /// At a window's end with no cleared record waiting, wait for the collector (yielding)
    /// instead of merging the windows. Only for virtual time ([`crate::mock`]): there the
    /// loop outruns the collector by far, and waiting keeps both the output deterministic
    /// and the records in circulation at [`WINDOW_RECORDS`]; a real clock never waits.
    pub await_records: bool,
}

/// The measuring thread's ends of the two rings that carry window records.
pub struct WindowLink {
    /// Finished records, to the collector.
    pub full: rtrb::Producer<Box<LoopRecord>>,
    /// Cleared records, back from the collector.
    pub empty: rtrb::Consumer<Box<LoopRecord>>,
}

/// The collector's ends of a [`WindowLink`].
pub struct CollectorLink {
    /// Finished records from the measuring thread.
    pub full: rtrb::Consumer<Box<LoopRecord>>,
    /// Cleared records back to the measuring thread.
    pub empty: rtrb::Producer<Box<LoopRecord>>,
}

/// The magnitudes (ns) whose histogram counters a loop's records hold resident from the
/// start, for a period of `period` ns: 100 ms or two periods, whichever is more — every
/// latency and period deviation short of a wake-up that much late (a period deviation
/// below zero is at most one period). A larger value's page of counters faults in (a
/// minor fault, once per record) when it is first counted, after its wake-up was timed.
pub fn resident_magnitude(period: Nanos) -> u64 {
    const FLOOR_NS: u64 = 100_000_000;
    FLOOR_NS.max(period.max(0).unsigned_abs().saturating_mul(2))
}

/// Creates the two rings and the `records` (≥ 2; normally [`WINDOW_RECORDS`]) that circulate
/// in them: one for the measuring thread to start with, the rest waiting cleared. Allocates
/// about 74 KiB per record (`LoopRecord`: 32-bit counters), of which the pages of the
/// counters for magnitudes up to `resident` ns ([`resident_magnitude`]) are written at once
/// (resident, and locked under `mlockall(MCL_ONFAULT)`): 12 KiB of each of the four
/// halves for 100 ms.
pub fn window_link(records: usize, resident: u64) -> (WindowLink, CollectorLink, Box<LoopRecord>) {
    let records = records.max(2);
    let (full_tx, full_rx) = rtrb::RingBuffer::new(records);
    let (mut empty_tx, empty_rx) = rtrb::RingBuffer::new(records);
    let record = || {
        let mut r = Box::new(LoopRecord::untouched());
        r.prefault(resident);
        r
    };
    for _ in 1..records {
        let _ = empty_tx.push(record());
    }
    (
        WindowLink {
            full: full_tx,
            empty: empty_rx,
        },
        CollectorLink {
            full: full_rx,
            empty: empty_tx,
        },
        record(),
    )
}

/// How many wake-ups a [`LoopRecord`] may hold at a window's end and still take one more
/// window (`window / period` expiries, one more for rounding, one for an expiry returned at
/// once after an overrun) without a 32-bit counter wrapping. `window` and `period` in ns,
/// both positive. A record holding this many is handed over, the loop waiting for a
/// cleared one if need be.
pub(crate) fn full_record(window: Nanos, period: Nanos) -> u64 {
    let per_window = (window / period.max(1)).max(0) as u64 + 2;
    <u32 as Count>::MAX.saturating_sub(per_window)
}

/// One wake-up as [`wake_step`] took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The expiry waited for (absolute ns).
    pub expiry: Nanos,
    /// When the thread woke (absolute ns).
    pub woke: Nanos,
    /// Expiries that passed before this wake-up and were skipped (or will be returned at
    /// once under catch-up): the overruns it caused.
    pub overruns: u64,
}

/// One wake-up of a periodic loop — the step the measuring loop and the periodic library
/// share: wait for the grid's next expiry (a wait cut short by a signal is resumed while
/// `resume()` says so), record its latency and, unless it is the `first`, its period, then
/// advance the grid past the wake-up and count the expiries it passed (overruns). `last_woke` is the
/// previous wake time (or the start) and becomes this one. Allocates nothing.
///
/// Returns `Ok(None)` when a signal cut the wait short and `resume()` said stop.
///
/// # Errors
/// Any error of the wait but `EINTR`; nothing is recorded then.
#[inline(always)]
pub fn wake_step<M: WakeMethod + ?Sized, C: Count>(
    method: &mut M,
    grid: &mut Grid,
    record: &mut WindowRecord<C>,
    last_woke: &mut Nanos,
    first: bool,
    mut resume: impl FnMut() -> bool,
) -> io::Result<Option<Step>> {
    let expiry = grid.expiry();
    let woke = loop {
        match method.wait_at(expiry, grid.expiry_ts(), *last_woke) {
            Ok(t) => break t,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if !resume() {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e),
        }
    };
    let period = (!first).then_some((woke - *last_woke, grid.period()));
    record.record(woke - expiry, period);
    let overruns = grid.advance(woke);
    if overruns > 0 {
        record.overruns += overruns;
    }
    *last_woke = woke;
    Ok(Some(Step {
        expiry,
        woke,
        overruns,
    }))
}

/// How a measuring loop ended.
#[derive(Debug)]
pub struct LoopEnd {
    /// Wake-ups recorded.
    pub samples: u64,
    /// The clock reading just before the first wait (ns).
    pub started: Nanos,
    /// The last wake-up (ns), or `started` if there was none.
    pub last_woke: Nanos,
    /// The last wake-up's latency (woke − expiry, ns), `None` if there was none: what
    /// cyclictest prints as `Act`, known without streaming every wake-up.
    pub last_latency: Option<Nanos>,
    /// The error that ended the loop early, if any (the samples before it are kept).
    pub error: Option<io::Error>,
}

/// Runs the measuring loop until `params` says stop or `stop` becomes true, handing every
/// finished window (and the last, partial one) to the collector through `link`.
///
/// The record's counters are 32 bits wide (`LoopRecord`). When no cleared record is
/// waiting at a window's end, the loop keeps recording into the current one, unless that
/// one could then reach 2^32 − 1 wake-ups within the next window (a collector held up for
/// 2^32 periods: 71 min at 1 µs, 50 days at 1 ms): then it waits for a record (yielding the
/// CPU), so that no count wraps. `params.window / params.period` must be at most
/// `MAX_WINDOW_PERIODS` (the engine's configuration checks it).
///
/// `current` is the record to start with; the method must already be armed. With `stream`,
/// every wake-up later than its threshold (every wake-up with [`SampleStream::every`]) is
/// also pushed to its ring — one load and one comparison per wake-up; when the ring is full
/// the sample is counted in [`WindowRecord::samples_dropped`] instead of waiting.
// Never inlined: called once per measuring thread, so it costs no call per wake-up, and it
// keeps a symbol of its own, which the shipped program's start-up layout places and its test
// finds (crates/cli/link/startup-text.ld, docs/dist.md).
#[inline(never)]
pub fn measure<M: WakeMethod + ?Sized>(
    method: &mut M,
    params: &LoopParams,
    stop: &AtomicBool,
    link: &mut WindowLink,
    mut current: Box<LoopRecord>,
    mut stream: Option<SampleStream<'_>>,
) -> LoopEnd {
    let mut grid = Grid::new(params.first_expiry, params.period, params.overrun);
    let mut window_end = params.first_expiry + params.window;
    current.begin(0);
    let started = method.now();
    let mut last_woke = started;
    let mut samples: u64 = 0;
    let mut last_expiry = started;
    let mut error = None;

    let full_record = full_record(params.window, params.period);
    // One comparison per wake-up for both the window's end and the run's end.
    let mut boundary = window_end.min(params.end);
    while samples < params.max_samples {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let expiry = grid.expiry();
        if expiry >= boundary {
            if expiry >= params.end {
                break;
            }
            let index = ((expiry - params.first_expiry) / params.window) as u64;
            window_end = params.first_expiry + (index as i64 + 1) * params.window;
            let mut next = link.empty.pop();
            let wait = params.await_records || current.samples() >= full_record;
            while next.is_err() && wait && !stop.load(Ordering::Relaxed) {
                std::thread::yield_now();
                next = link.empty.pop();
            }
            match next {
                Ok(fresh) => {
                    let done = std::mem::replace(&mut current, fresh);
                    // Cannot fail: the ring holds as many slots as there are records.
                    let _ = link.full.push(done);
                    current.begin(index);
                }
                Err(_) => current.span = index - current.index + 1,
            }
            boundary = window_end.min(params.end);
        }
        let step = wake_step(
            &mut *method,
            &mut grid,
            &mut current,
            &mut last_woke,
            samples == 0,
            || !stop.load(Ordering::Relaxed),
        );
        let Step { expiry, woke, .. } = match step {
            Ok(Some(s)) => s,
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        };
        if let Some(s) = stream.as_mut() {
            if woke - expiry > s.later_than.load(Ordering::Relaxed) {
                let sample = RawSample {
                    seq: samples,
                    expiry,
                    woke,
                };
                if s.ring.push(sample).is_err() {
                    current.samples_dropped += 1;
                }
            }
        }
        last_expiry = expiry;
        samples += 1;
    }
    current.thread_cpu_ns = Some(crate::time::read_clock(libc::CLOCK_THREAD_CPUTIME_ID));
    let _ = link.full.push(current);
    LoopEnd {
        samples,
        started,
        last_woke,
        last_latency: (samples > 0).then(|| last_woke - last_expiry),
        error,
    }
}
