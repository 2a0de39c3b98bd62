//! One raw wake-up, for streaming samples out of the measuring loop — every one, or only
//! those later than a threshold (what `--explain` and `--on-late` need).

use crate::time::Nanos;
use std::sync::atomic::AtomicI64;

/// A single wake-up as measured: its sequence number, expiry and wake time (ns on the run's
/// clock). Latency is `woke - expiry`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawSample {
    /// Wake-up number within its thread, from 0.
    pub seq: u64,
    /// The expiry waited for (absolute ns).
    pub expiry: Nanos,
    /// When the thread woke (absolute ns).
    pub woke: Nanos,
}

/// Capacity of a thread's raw-sample ring: 65 536 samples (1.5 MiB), which holds 65 s at
/// 1 kHz and, at the collector's 20 ms polling, keeps up with periods down to about 300 ns.
pub(crate) const SAMPLE_RING: usize = 1 << 16;

/// Writes one sample into every page of `ring`'s free space without committing it, so that
/// the pages are resident (and, under `mlockall(MCL_ONFAULT)`, locked) before the measuring
/// loop pushes into them. Call it on a fresh ring.
pub(crate) fn prefault_ring(ring: &mut rtrb::Producer<RawSample>) {
    let per_page = (4096 / std::mem::size_of::<RawSample>()).max(1);
    if let Ok(mut chunk) = ring.write_chunk_uninit(ring.slots()) {
        let (a, b) = chunk.as_mut_slices();
        for part in [a, b] {
            for slot in part.iter_mut().step_by(per_page) {
                slot.write(RawSample {
                    seq: 0,
                    expiry: 0,
                    woke: 0,
                });
            }
        }
        // Dropped without commit: the ring stays empty.
    }
}

/// Which wake-ups the measuring loop streams when only late ones are wanted
/// ([`RunConfig::stream_later_than`](crate::run::RunConfig::stream_later_than)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LateThreshold {
    /// Wake-ups whose latency exceeds this many ns.
    Fixed(Nanos),
    /// Wake-ups whose latency exceeds the thread's p99 of the latest window the collector
    /// has reported (ns; at least 1), and `first` ns before the first such report. The
    /// collector updates the threshold right after it reports a second, so the loop tests a
    /// wake-up against the threshold a sink reading it sees when the wake-up arrives
    /// ([`crate::run`](mod@crate::run): the collector drains the samples before it reports a second).
    PreviousP99 {
        /// The threshold before the first window is reported, ns.
        first: Nanos,
    },
}

impl LateThreshold {
    /// The threshold the loop starts with, ns.
    pub fn initial(self) -> Nanos {
        match self {
            LateThreshold::Fixed(ns) => ns,
            LateThreshold::PreviousP99 { first } => first,
        }
    }
}

/// Streams every wake-up: no latency is below this.
static EVERY: AtomicI64 = AtomicI64::new(Nanos::MIN);

/// Where the measuring loop pushes wake-ups, and which: those whose latency (woke − expiry,
/// ns) exceeds `later_than`, which the loop reads at each wake-up (a relaxed load, no lock)
/// and the collector may lower or raise while the loop runs.
pub struct SampleStream<'a> {
    /// The ring to the collector.
    pub ring: &'a mut rtrb::Producer<RawSample>,
    /// The threshold, ns ([`Nanos::MIN`]: every wake-up).
    pub later_than: &'a AtomicI64,
}

impl<'a> SampleStream<'a> {
    /// Streams every wake-up into `ring`.
    pub fn every(ring: &'a mut rtrb::Producer<RawSample>) -> Self {
        SampleStream {
            ring,
            later_than: &EVERY,
        }
    }
}
