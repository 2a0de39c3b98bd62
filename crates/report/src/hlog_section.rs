//! The `hlog` section of a run document: where the run's interval log (`--hlog`) went.

use tickscope_engine::time::Nanos;

/// Where the interval log of a run went, as the result document records it (`hlog`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HlogSection {
    /// The path as given on the command line (`-` for standard output).
    pub path: String,
    /// The same path made absolute when the run started, if it could be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absolute: Option<String>,
    /// The log's `StartTime`: the wall-clock time of the run's first expiry (RFC 3339, UTC,
    /// ms precision, as the log's `#[StartTime: …]` line gives it); every interval's start is
    /// relative to it. Absent when no window was measured. `tickscope report` checks that a log
    /// it finds has the same, so that another run's log at the same path is not drawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// The length of an interval, ns.
    pub window_ns: Nanos,
    /// The tags written: `T<k>` per thread, `all`, and `T<k>.early` where a thread woke
    /// early.
    pub tags: Vec<String>,
}
