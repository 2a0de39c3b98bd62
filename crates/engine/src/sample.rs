//! One raw wake-up, for streaming every sample out of the measuring loop.

use crate::time::Nanos;

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
