//! What the measuring thread writes per wake-up: one window's worth of samples.
//!
//! A [`WindowRecord`] is allocated before the loop and handed to the collector through a
//! wait-free ring when its window is over; the collector turns it into statistics, merges it
//! into the run's totals, clears it and hands it back. So the measuring thread records each
//! sample once, into memory it already owns, and never allocates or locks.

use crate::moments::Moments;
use crate::time::Nanos;
use crate::window_histogram::{Count, WindowHistogram};

/// The record the measuring loop fills: counters of 32 bits, 74 KiB per record instead of
/// 147 KiB with 64 bits. The loop hands a record over before it holds 2^32 − 1 wake-ups
/// ([`crate::worker::measure`]).
pub(crate) type LoopRecord = WindowRecord<u32>;

/// Samples of one window (normally one second of expiries) of one measuring thread, with
/// histogram counters of type `C` ([`Count`]: `u64` for totals, `u32` in `LoopRecord`).
#[derive(Debug, Clone, Default)]
pub struct WindowRecord<C: Count = u64> {
    /// Index of the first window this record covers (window k holds expiries in
    /// `[t0 + k·W, t0 + (k+1)·W)`).
    pub index: u64,
    /// Number of windows covered: more than 1 when the collector fell behind and the
    /// measuring thread kept recording into the same record rather than wait.
    pub span: u64,
    /// Wake-up latency (woke − expiry, ns) of every sample.
    pub latency: Moments,
    /// Distribution of the latency.
    pub latency_hist: WindowHistogram<C>,
    /// Period dt (woke − previous woke, ns); the first sample of a run has none.
    pub period: Moments,
    /// Distribution of the period deviation dt − nominal period (ns).
    pub period_dev_hist: WindowHistogram<C>,
    /// Expiries that passed before the thread woke for the previous one (overruns).
    pub overruns: u64,
    /// Raw samples not streamed because the sample ring was full (the writer fell behind).
    pub samples_dropped: u64,
    /// The measuring thread's CPU time (ns) when the record was handed over, set only on the
    /// last record of a run (read after the loop, when the collector can no longer read it).
    pub thread_cpu_ns: Option<Nanos>,
}

impl WindowRecord {
    /// A fresh record counting in `u64`; allocates its histograms (4 × 36 KiB).
    pub fn new() -> Self {
        Self::default()
    }
}

impl<C: Count> WindowRecord<C> {
    /// A clear record whose histogram pages become resident only as they are counted into
    /// ([`WindowHistogram::untouched`]); `WindowRecord::prefault` makes a range resident.
    pub fn untouched() -> Self {
        WindowRecord {
            index: 0,
            span: 0,
            latency: Moments::default(),
            latency_hist: WindowHistogram::untouched(),
            period: Moments::default(),
            period_dev_hist: WindowHistogram::untouched(),
            overruns: 0,
            samples_dropped: 0,
            thread_cpu_ns: None,
        }
    }

    /// Makes the counters of latencies and period deviations of magnitude up to
    /// `magnitude` ns resident ([`WindowHistogram::prefault`]).
    pub(crate) fn prefault(&mut self, magnitude: u64) {
        self.latency_hist.prefault(magnitude);
        self.period_dev_hist.prefault(magnitude);
    }

    /// Records one wake-up: its latency and, from the second wake-up on, its period deviation.
    /// Inlined into the measuring loop.
    #[inline(always)]
    pub fn record(&mut self, latency: Nanos, period: Option<(Nanos, Nanos)>) {
        self.latency.record(latency);
        self.latency_hist.record(latency);
        if let Some((dt, nominal)) = period {
            self.period.record(dt);
            self.period_dev_hist.record(dt - nominal);
        }
    }

    /// Records `n` wake-ups of the same latency and period (or none): the same as `n`
    /// calls of [`WindowRecord::record`] (for virtual time's bulk windows,
    /// [`crate::mock_bulk`]).
    ///
    /// # Panics
    /// If `n` does not fit in a counter of type `C`.
    pub(crate) fn record_n(&mut self, latency: Nanos, period: Option<(Nanos, Nanos)>, n: u64) {
        self.latency.record_n(latency, n);
        self.latency_hist.record_n(latency, n);
        if let Some((dt, nominal)) = period {
            self.period.record_n(dt, n);
            self.period_dev_hist.record_n(dt - nominal, n);
        }
    }

    /// Number of wake-ups recorded.
    pub fn samples(&self) -> u64 {
        self.latency.count
    }

    /// Starts window `index` in a record that is already clear. Cheap: the measuring thread
    /// calls it at each window boundary.
    #[inline]
    pub fn begin(&mut self, index: u64) {
        self.index = index;
        self.span = 1;
    }

    /// Forgets every value, keeping the allocations. Touches only the histogram counters
    /// that were used; the collector does it, never the measuring thread.
    pub fn clear(&mut self) {
        self.index = 0;
        self.span = 1;
        self.latency = Moments::default();
        self.latency_hist.reset();
        self.period = Moments::default();
        self.period_dev_hist.reset();
        self.overruns = 0;
        self.samples_dropped = 0;
        self.thread_cpu_ns = None;
    }

    /// Adds every sample into `total` and leaves `self` clear for reuse, walking each
    /// histogram's used counters once: [`WindowRecord::merge`] then [`WindowRecord::clear`]
    /// in one pass. The collector's way of taking a finished window.
    pub fn drain_into<D: Count + From<C>>(&mut self, total: &mut WindowRecord<D>) {
        total.latency.merge(&self.latency);
        self.latency_hist.drain_into(&mut total.latency_hist);
        total.period.merge(&self.period);
        self.period_dev_hist.drain_into(&mut total.period_dev_hist);
        total.overruns += self.overruns;
        total.samples_dropped += self.samples_dropped;
        self.index = 0;
        self.span = 1;
        self.latency = Moments::default();
        self.period = Moments::default();
        self.overruns = 0;
        self.samples_dropped = 0;
        self.thread_cpu_ns = None;
    }

    /// Adds every sample of `other` (for totals and for merging threads).
    pub fn merge<D: Count>(&mut self, other: &WindowRecord<D>)
    where
        C: From<D>,
    {
        self.latency.merge(&other.latency);
        self.latency_hist.add(&other.latency_hist);
        self.period.merge(&other.period);
        self.period_dev_hist.add(&other.period_dev_hist);
        self.overruns += other.overruns;
        self.samples_dropped += other.samples_dropped;
    }
}
