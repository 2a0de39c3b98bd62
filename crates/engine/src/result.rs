//! The measured results, as plain data: what the renderers and the result file are built from.
//!
//! All times are integer ns (`i64`) except means and standard deviations, which are `f64` ns.
//! Percentiles follow HdrHistogram's convention (the upper bound of the bucket holding the
//! sample of rank ⌈q·n⌉), with 3 significant digits.

use crate::histogram::HistogramBuckets;
use crate::time::Nanos;
use crate::wait::MethodObservations;
use crate::window_counts::WindowCounts;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Wake-up latency (woke − expiry) of a series of wake-ups, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Smallest latency (exact), ns; negative for an early wake-up.
    pub min: Nanos,
    /// Largest latency (exact), ns.
    pub max: Nanos,
    /// Mean, ns.
    pub mean: f64,
    /// Population standard deviation about the mean, ns.
    pub stddev: f64,
    /// Median, ns.
    pub p50: Nanos,
    /// 90th percentile, ns.
    pub p90: Nanos,
    /// 99th percentile, ns.
    pub p99: Nanos,
    /// 99.9th percentile, ns.
    pub p99_9: Nanos,
    /// 99.99th percentile, ns.
    pub p99_99: Nanos,
    /// Wake-ups that came before their expiry (latency < 0).
    pub early: u64,
    /// The whole distribution (see [`HistogramBuckets`]).
    pub histogram: HistogramBuckets,
}

/// The period dt between consecutive wake-ups, ns, against the nominal period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodStats {
    /// The nominal period (the interval asked for), ns.
    pub nominal: Nanos,
    /// Number of periods measured (wake-ups − 1 per thread).
    pub samples: u64,
    /// Mean dt, ns.
    pub mean: f64,
    /// Population standard deviation of dt about its mean, ns.
    pub stddev: f64,
    /// Root-mean-square deviation of dt from the nominal period, ns (the rt 2013 post's "SD").
    pub rms_jitter: f64,
    /// Smallest dt (exact), ns.
    pub min: Nanos,
    /// Largest dt (exact), ns.
    pub max: Nanos,
    /// Median of |dt − nominal|, ns.
    pub abs_deviation_p50: Nanos,
    /// 99th percentile of |dt − nominal|, ns.
    pub abs_deviation_p99: Nanos,
    /// 99.9th percentile of |dt − nominal|, ns.
    pub abs_deviation_p99_9: Nanos,
    /// Distribution of dt − nominal (see [`HistogramBuckets`]).
    pub deviation_histogram: HistogramBuckets,
}

/// Statistics of one window (normally one second of expiries) alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowStats {
    /// Window index: window k holds the expiries in `[t0 + k·W, t0 + (k+1)·W)`.
    pub index: u64,
    /// Windows covered (more than 1 only when the collector fell behind).
    pub span: u64,
    /// Start of the window relative to the first expiry, ns.
    pub start_ns: Nanos,
    /// Wake-ups in the window.
    pub samples: u64,
    /// Overruns in the window: expiries that passed before the thread woke for the previous one.
    pub overruns: u64,
    /// Smallest latency, ns.
    pub latency_min: Option<Nanos>,
    /// Mean latency, ns.
    pub latency_mean: Option<f64>,
    /// 99th percentile of latency, ns.
    pub latency_p99: Option<Nanos>,
    /// Largest latency, ns.
    pub latency_max: Option<Nanos>,
    /// Mean dt, ns.
    pub period_mean: Option<f64>,
    /// Standard deviation of dt about its mean, ns.
    pub period_stddev: Option<f64>,
    /// RMS deviation of dt from the nominal period, ns.
    pub period_rms_jitter: Option<f64>,
    /// Smallest dt, ns.
    pub period_min: Option<Nanos>,
    /// Largest dt, ns.
    pub period_max: Option<Nanos>,
    /// CPU used by the measuring thread(s) while the window was collected, % of one core;
    /// sampled by the collector, so its edges are those of the collector's reads.
    pub cpu_percent: Option<f64>,
    /// The thread's scheduling policy as read back from the kernel (`sched_getattr(2)`) when
    /// the window closed (`fifo:90`, `other`, `other nice 5`), so that a change made from
    /// outside (`chrt -p`) shows in the window it happened; absent for merged windows, runs
    /// on virtual time and wherever it could not be read. See `sched(7)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// The window's latency distribution, ns, in HdrHistogram's buckets with exact counts
    /// (a copy of the measuring loop's own window histogram's counters,
    /// [`crate::window_counts`]; [`WindowCounts::buckets`] lists them), when the run
    /// was asked for it ([`RunConfig::window_histograms`](crate::run::RunConfig::window_histograms));
    /// for the outputs that need a distribution per window (`--hlog`, `monitor`) without
    /// every wake-up. Never written to result files. Shared (`Arc`): a run with one thread
    /// hands the same window on as its own and as every thread's merged, without a copy.
    #[serde(skip)]
    pub latency_buckets: Option<Arc<WindowCounts>>,
    /// The same for the period deviation dt − nominal period, ns.
    #[serde(skip)]
    pub deviation_buckets: Option<Arc<WindowCounts>>,
}

/// Everything measured for one measuring thread, or for all threads merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadStats {
    /// Thread index (0-based), `None` for the merged summary.
    pub thread: Option<usize>,
    /// Kernel thread id, `None` for the merged summary.
    pub tid: Option<i32>,
    /// CPU the thread was pinned to, `None` if unpinned or merged.
    pub cpu: Option<usize>,
    /// Wake-ups recorded.
    pub samples: u64,
    /// Overruns: expiries that passed before the thread woke for the previous one.
    pub overruns: u64,
    /// Raw samples that could not be streamed (`--samples`) because the writer fell behind.
    pub samples_dropped: u64,
    /// Wake-up latency; `None` when there were no wake-ups.
    pub latency_ns: Option<LatencyStats>,
    /// Period dt; `None` with fewer than two wake-ups.
    pub period_ns: Option<PeriodStats>,
    /// CPU time the measuring loop used (`CLOCK_THREAD_CPUTIME_ID`), ns; summed when merged.
    pub cpu_time_ns: Nanos,
    /// Wall time of the measuring loop, ns (longest thread when merged).
    pub wall_time_ns: Nanos,
    /// `cpu_time_ns / wall_time_ns` in % of one core.
    pub cpu_percent: f64,
    /// The last wake-up's latency, ns (cyclictest's `Act` at the end of a run); `None` for
    /// the merged summary, a thread that never woke, and documents written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_latency_ns: Option<Nanos>,
    /// What the wake-up method observed about itself (the hybrid's margin, …); for the
    /// merged summary, the threads' reports combined ([`MethodObservations::merge`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method_report: Option<MethodObservations>,
    /// Per-window statistics, in order; empty when the run kept none
    /// ([`RunConfig::keep_windows`](crate::run::RunConfig::keep_windows)) and absent from
    /// the JSON when empty (a result document lists its windows apart).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowStats>,
}
