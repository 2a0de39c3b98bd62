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
pub const SAMPLE_RING: usize = 1 << 16;
