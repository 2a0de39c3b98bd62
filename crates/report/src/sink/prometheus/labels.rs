//! What every metric family of the exposition shares: the per-thread labels and the classic
//! histograms' bucket bounds.

/// The labels of every per-thread metric, in order.
pub const THREAD_LABELS: [&str; 4] = ["cpu", "thread", "method", "policy"];

/// The labels of every per-thread metric of `monitor --attach`, in order: those of
/// [`THREAD_LABELS`], then the measured thread's id and command name (`/proc/TID/comm`).
/// Bounded: at most `tickscope_explain::roster::MAX_MEASURED` threads are measured.
pub const TARGET_LABELS: [&str; 6] = ["cpu", "thread", "method", "policy", "tid", "comm"];

/// Upper bounds (`le`) of the classic histogram buckets, seconds: 1-2-5 steps from 1 µs to
/// 100 ms (+Inf is implicit).
pub const BUCKETS_SECONDS: [f64; 16] = [
    1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1,
];
