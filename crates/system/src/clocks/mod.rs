//! `tickscope clocks`: what reading each clock costs and how finely it ticks.
//!
//! Every latency tickscope reports is the difference of two clock reads, so it can be no
//! finer than the clock's step and no smaller than what one read costs. This module measures
//! both, for every clock `clock_gettime(2)` offers plus, on x86-64, the time-stamp counter
//! read directly with `rdtsc`/`rdtscp`:
//!
//! * the resolution the kernel advertises (`clock_getres(2)`);
//! * the cost of one read: batches of [`READS_PER_BATCH`] reads, each batch timed with
//!   `CLOCK_MONOTONIC_RAW` around it; the median of the batch means with its p10–p90 spread;
//! * the same cost through a real system call (`syscall(SYS_clock_gettime)`), which tells
//!   whether the C library's read stayed in the vDSO ([`Access`]);
//! * the back-to-back deltas between successive reads in a batch (min, p50, p99, max), the
//!   observed granularity (the smallest non-zero step) and the backward steps;
//! * the delta of a pair of reads taken right after the thread slept ([`IDLE_GAP_NS`]): the
//!   clock_gettime 2010 post's measurement, which idle states make slower.
//!
//! With `idle_compare`, everything is repeated with `/dev/cpu_dma_latency` held at 0 and with
//! a thread spinning on a sibling CPU ([`spinner`]).
//!
//! Layout: [`kind`] the clocks and how to read them; [`tsc`] the time-stamp counter and its
//! frequency; [`stats`] the pure statistics; [`mod@measure`] the loops and the passes;
//! [`spinner`] the bounded busy thread. Result types are here. This crate measures and never
//! formats: `tickscope-report` renders these types.

pub mod kind;
pub mod measure;
pub mod spinner;
pub mod stats;
pub mod tsc;

use serde::{Deserialize, Serialize};
use tickscope_engine::time::Nanos;

pub use kind::ClockKind;
pub use measure::{measure, measure_clock, measure_until};
pub use tsc::{TscFrequency, TscFrequencySource};

/// Reads in one timed batch. Large enough that the two reads of the batch clock around it
/// (tens of ns) add well under 0.1 ns to the per-read cost; small enough that a batch of the
/// slowest clocks (CPU-time, ~0.5 µs a read) lasts under a millisecond.
pub const READS_PER_BATCH: usize = 1000;

/// How long the thread sleeps before each after-idle pair, ns (1 ms): long enough for an
/// idle CPU to leave polling and halt (guest halt-polling gives up after at most 200 µs by
/// default, Documentation/virt/guest-halt-polling.rst).
pub const IDLE_GAP_NS: Nanos = 1_000_000;

/// What to measure and for how long; validated by the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClocksConfig {
    /// Pin the measuring (calling) thread to this CPU for the whole measurement; `None`
    /// leaves it unpinned, except that `idle_compare` pins it to the CPU it is on.
    pub cpu: Option<usize>,
    /// Total time budget, ns (> 0), split evenly over the passes and, within a pass, over the
    /// clocks by weight (see [`mod@measure`]). Every measurement takes at least a few batches,
    /// so a very small budget is exceeded.
    pub budget_ns: Nanos,
    /// Also measure with PM QoS held at 0 µs and with a spinning thread on a sibling CPU.
    pub idle_compare: bool,
}

/// How a clock read reaches the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// In user space through the vDSO: the C library's read costs well under the system
    /// call's (see [`stats::access_verdict`]).
    Vdso,
    /// In the kernel: the C library's read costs about as much as `syscall(SYS_clock_gettime)`
    /// (the vDSO falls back to the system call for clocks it cannot serve).
    Syscall,
    /// A CPU instruction (`rdtsc`, `rdtscp`): no library, no kernel.
    Instruction,
}

/// The cost of one read, from batches of [`READS_PER_BATCH`] reads. Batch means in ns; the
/// percentiles are nearest-rank (the value of rank ⌈q·n⌉ among the sorted batch means).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostStats {
    /// Number of batches timed (≥ 1).
    pub batches: u64,
    /// Reads per batch.
    pub reads_per_batch: u64,
    /// Median of the batch means, ns per read: the cost.
    pub median_ns: f64,
    /// 10th percentile of the batch means, ns per read.
    pub p10_ns: f64,
    /// 90th percentile of the batch means, ns per read.
    pub p90_ns: f64,
    /// Fastest batch mean, ns per read.
    pub min_ns: f64,
}

/// Differences between successive reads of one clock, in the clock's unit (ns; ticks for
/// the raw TSC figures). Percentiles follow HdrHistogram's convention (upper bound of the
/// bucket holding rank ⌈q·n⌉, 3 significant digits) clamped to the exact extremes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaStats {
    /// Back-to-back deltas in the distribution (successive reads within one batch).
    pub samples: u64,
    /// Smallest back-to-back delta (exact); negative if the clock stepped back.
    pub min: i64,
    /// Median back-to-back delta.
    pub p50: i64,
    /// 99th percentile of the back-to-back deltas.
    pub p99: i64,
    /// Largest back-to-back delta (exact).
    pub max: i64,
    /// Back-to-back deltas equal to 0: reads that saw the same value (a coarse clock).
    pub zero: u64,
    /// Observed granularity: the smallest positive difference between any two successive
    /// reads, batch boundaries included; `None` if the clock never advanced.
    pub granularity: Option<i64>,
    /// Successive reads, batch boundaries included, where the later read was smaller.
    /// Must be 0 for a monotonic clock.
    pub backward_steps: u64,
}

/// The delta of two back-to-back reads taken right after the thread slept for
/// [`IDLE_GAP_NS`], over several such pairs; ns. Percentiles are nearest-rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairStats {
    /// Pairs taken.
    pub samples: u64,
    /// How long the thread slept before each pair, ns.
    pub gap_ns: Nanos,
    /// Smallest pair delta, ns.
    pub min: Nanos,
    /// Median pair delta, ns.
    pub p50: Nanos,
    /// 90th percentile of the pair deltas, ns.
    pub p90: Nanos,
    /// Largest pair delta, ns.
    pub max: Nanos,
}

/// Everything measured about one supported clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockMeasurement {
    /// The advertised resolution, ns: `clock_getres(2)`; for the TSC one tick rounded up to a
    /// whole ns (the exact tick is in the run's TSC frequency).
    pub resolution_ns: Nanos,
    /// Cost of one read through the C library (or the instruction).
    pub cost: CostStats,
    /// Cost of one read as a real system call (`syscall(SYS_clock_gettime)`); `None` for
    /// the TSC.
    pub syscall_cost: Option<CostStats>,
    /// Whether the library read went through the vDSO or the kernel.
    pub access: Access,
    /// Back-to-back deltas, ns (TSC ticks converted with the run's TSC frequency).
    pub deltas: DeltaStats,
    /// For the TSC, the same deltas in ticks, unrounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_ticks: Option<DeltaStats>,
    /// Pairs of reads right after a sleep (the clock_gettime 2010 post's measurement).
    pub after_idle: PairStats,
}

/// Whether a clock could be measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ClockOutcome {
    /// Measured.
    Measured(Box<ClockMeasurement>),
    /// The kernel or the CPU does not offer this clock (`clock_getres` gave `EINVAL`, or the
    /// CPU lacks the instruction); not an error.
    Unsupported {
        /// Why, in a few words.
        reason: String,
    },
}

/// One clock's line in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockEntry {
    /// Which clock.
    pub clock: ClockKind,
    /// Its usual name: `CLOCK_MONOTONIC`, …, `TSC (rdtsc)`.
    pub name: String,
    /// Whether the clock promises never to go back (see [`ClockKind::is_monotonic`]).
    pub monotonic: bool,
    /// The measurement, or why there is none.
    #[serde(flatten)]
    pub outcome: ClockOutcome,
}

impl ClockEntry {
    /// The measurement, if the clock is supported.
    pub fn measured(&self) -> Option<&ClockMeasurement> {
        match &self.outcome {
            ClockOutcome::Measured(m) => Some(m),
            ClockOutcome::Unsupported { .. } => None,
        }
    }
}

/// The conditions `idle_compare` measures under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Condition {
    /// The system as it is.
    AsIs,
    /// `/dev/cpu_dma_latency` held at 0 µs: cpuidle keeps the CPUs out of idle states deeper
    /// than polling (Documentation/power/pm_qos_interface.rst).
    PmQosZero,
    /// A thread spinning (never idle) on a sibling CPU of the measuring one.
    SiblingSpin,
}

impl Condition {
    /// A short label: `as is`, `PM QoS 0`, `sibling spin`.
    pub fn label(self) -> &'static str {
        match self {
            Condition::AsIs => "as is",
            Condition::PmQosZero => "PM QoS 0",
            Condition::SiblingSpin => "sibling spin",
        }
    }
}

/// All clocks measured under one condition of `idle_compare`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClocksPass {
    /// The condition.
    pub condition: Condition,
    /// What was applied (e.g. `spinning on CPU 1, an SMT sibling`).
    pub note: Option<String>,
    /// Why this condition could not be set up; then `clocks` is empty.
    pub skipped: Option<String>,
    /// One report per clock, in [`ClockKind::all`] order.
    pub clocks: Vec<ClockEntry>,
}

/// The result of [`measure()`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClocksResult {
    /// The CPU the measurement was pinned to, if any.
    pub cpu: Option<usize>,
    /// How that CPU was chosen (`--cpu`, or automatically for `idle_compare`).
    pub cpu_note: Option<String>,
    /// The clock that times each batch (`CLOCK_MONOTONIC_RAW`).
    pub batch_clock: String,
    /// The TSC frequency used to convert ticks to ns, and where it came from; `None` off
    /// x86-64 or without a usable TSC.
    pub tsc: Option<TscFrequency>,
    /// Every clock, measured as the system is, in [`ClockKind::all`] order.
    pub clocks: Vec<ClockEntry>,
    /// With `idle_compare`: the passes under [`Condition::PmQosZero`] and
    /// [`Condition::SiblingSpin`] (`clocks` is the [`Condition::AsIs`] pass); else empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle_compare: Vec<ClocksPass>,
}
