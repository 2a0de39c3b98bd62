//! The result document's `explain` section: what `--explain` found, per thread and per
//! late wake-up, and what the `--on-late` actions did (schema: `docs/result-schema.md`).
//! Filled by the [`crate::controller`], rendered by the report crate.

use crate::table::CauseTable;
use crate::Breakdown;
use serde::{Deserialize, Serialize};

/// One thread's causes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadCauses {
    /// Thread index.
    pub thread: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// Wake-ups later than the threshold.
    pub late: u64,
    /// Counted per cause.
    #[serde(flatten)]
    pub causes: CauseTable,
}

/// What an action did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionStatus {
    /// `mark`, `capture`, `stop`, `exec`.
    pub name: String,
    /// `ok`, `skipped: …`, or the error; for `exec`, how the command ended (`exit 0 in
    /// 12.0 ms`, `failed: exit 3 in …`, `failed: killed after 10.0 s (timeout)`, `stopped
    /// at the end of the run after …`, see [`crate::on_late_exec`]), `running` while it runs.
    pub status: String,
}

/// One `--on-late` hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureRecord {
    /// Hit number, from 1.
    pub index: u32,
    /// Thread index.
    pub thread: usize,
    /// Wake-up number.
    pub seq: u64,
    /// Bundle directory (empty without a capture).
    pub path: String,
    /// Latency, ns.
    pub latency_ns: i64,
    /// Cause found.
    pub cause: String,
    /// Actions, in order.
    pub actions: Vec<ActionStatus>,
}

/// The result document's `explain` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExplainSection {
    /// `bpf`, `tracefs` or `context`.
    pub backend: String,
    /// What the backend could and could not do, in one sentence.
    pub note: String,
    /// The threshold as given (`100 µs`, `p99`).
    pub threshold: String,
    /// Resolution of the trace's event timestamps, ns (text `trace_pipe`: 1000; payload
    /// fields `expires`/`now` are exact ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_resolution_ns: Option<i64>,
    /// Trace events read.
    pub events_read: u64,
    /// Trace events the kernel dropped (ring overrun).
    pub events_lost: u64,
    /// Events per second traced, over the traced time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_per_s: Option<f64>,
    /// Per thread.
    pub threads: Vec<ThreadCauses>,
    /// The worst late wake-ups, broken down, worst first.
    pub breakdowns: Vec<Breakdown>,
    /// `--on-late` hits, the first [`HITS_KEPT`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<CaptureRecord>,
    /// `--on-late` hits acted on but not kept in `captures` (beyond [`HITS_KEPT`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hits_not_kept: u64,
    /// With `--rounds N` (N ≥ 2): odd runs are traced, even ones not; the difference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer: Option<ObserverEffect>,
    /// What tracing itself cost (absent in context mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<TracingCost>,
}

/// The observer cost of the trace backend, as measured during the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TracingCost {
    /// `bpf` or `tracefs`.
    pub backend: String,
    /// Why this backend and not the preferred one (empty when BPF ran).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fallback: String,
    /// Events written in the kernel per second of tracing (BPF: records into the per-CPU
    /// rings, its "hits"; tracefs: events read).
    pub events_per_s: f64,
    /// Events lost (BPF: records of the windows the ring buffer had no room for; tracefs:
    /// ring-buffer overruns).
    pub events_lost: u64,
    /// Windows sent for late wake-ups (BPF).
    pub windows: u64,
    /// CPU time the collector spent reading and decoding the trace, ns (thread CPU clock).
    pub read_cpu_ns: i64,
    /// That time as a share of one CPU over the traced time, percent.
    pub read_cpu_percent: f64,
    /// CPU time loading the BPF programs took, once at the start, ns (user + system of the
    /// loader: parsing the kernel's BTF, relocating, the kernel's verification, attaching;
    /// 0 for tracefs).
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub load_cpu_ns: i64,
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// At most this many `--on-late` hits are kept in the document, so that memory stays
/// bounded when every wake-up is late for days (`monitor`); later hits are still acted on
/// and counted in [`ExplainSection::hits_not_kept`].
pub const HITS_KEPT: usize = 1000;

/// Traced minus untraced runs (`--rounds`): what tracing did to the measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObserverEffect {
    /// Runs traced and not traced.
    pub traced_runs: u32,
    /// Runs not traced.
    pub untraced_runs: u32,
    /// Mean p50 of the traced runs minus that of the untraced ones, ns.
    pub p50_delta_ns: f64,
    /// The same for p99, ns.
    pub p99_delta_ns: f64,
    /// The same for the maximum, ns.
    pub max_delta_ns: f64,
    /// Each traced run minus the next untraced run of the same method (absent without such
    /// a pair, and in documents of before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedEffect>,
}

/// The paired differences of [`ObserverEffect`]: each traced run of a `--rounds` plan and
/// the next untraced run of the same method ([`crate::observer::observer_effect`]; with one
/// method, runs 1 − 2, 3 − 4, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairedEffect {
    /// Pairs (1 to 500).
    pub pairs: u32,
    /// p50 traced − untraced, ns.
    pub p50: MedianInterval,
    /// p99 traced − untraced, ns.
    pub p99: MedianInterval,
    /// Maximum traced − untraced, ns.
    pub max: MedianInterval,
}

/// The median of paired differences and its distribution-free 95 % interval (the sign
/// test's; [`crate::observer::median_interval`]), ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MedianInterval {
    /// The median, ns (signed).
    pub median_ns: f64,
    /// The interval's low end, ns; absent for fewer than 6 pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_ns: Option<f64>,
    /// Its high end, ns; absent for fewer than 6 pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_ns: Option<f64>,
}
