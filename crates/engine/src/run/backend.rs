//! What a run measures with: the real system, or virtual time.
//!
//! [`Backend::System`] is every real run. [`Backend::Mock`] runs the same coordinator, the
//! same measuring loop and the same collector on [`crate::mock::MockMethod`]s — virtual time
//! with a scripted latency per wake-up — and changes nothing on the system (no policy,
//! affinity, timer slack, memory lock or PM QoS), with fixed, made-up thread ids and no CPU
//! time. A run on it is deterministic: tests pin its whole output (hyperfine's
//! `--debug-mode` is the model: <https://github.com/sharkdp/hyperfine>). A script whose
//! latencies all lie within the period is counted a window at a time
//! ([`crate::mock_bulk`]), with the same records, so that day-long runs of many threads at
//! 1 kHz take minutes.

use crate::time::Nanos;

/// The backend of a run (not part of the result file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Backend {
    /// The real clock, wake-up methods and system settings.
    #[default]
    System,
    /// Virtual time: wake-up `k` of each thread is late by `latencies[k % len]` ns.
    Mock {
        /// The latency script, ns (at least one value).
        latencies: Vec<Nanos>,
    },
}

impl Backend {
    /// True for [`Backend::Mock`].
    pub fn is_mock(&self) -> bool {
        matches!(self, Backend::Mock { .. })
    }
}

/// Thread ids reported for mock threads: `MOCK_TID_BASE + index`.
pub(crate) const MOCK_TID_BASE: i32 = 1000;

/// First expiry of a mock run, ns of virtual time (the mock clock starts at 0).
pub(crate) const MOCK_FIRST_EXPIRY: Nanos = 10_000_000;
