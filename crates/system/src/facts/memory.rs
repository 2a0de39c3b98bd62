//! Memory: transparent huge pages, swap, and the memory-lock and RT-priority limits.
//!
//! Sources: `/sys/kernel/mm/transparent_hugepage/{enabled,defrag}` (the selected mode in
//! brackets; Documentation/admin-guide/mm/transhuge.rst), `/proc/swaps`, `/proc/self/limits`
//! ("Max locked memory", "Max realtime priority"; proc(5)) and `getrlimit(2)`.

use super::{Fact, Root};
use serde::{Deserialize, Serialize};
pub use tickscope_engine::probe::{soft_rlimit, Limit};

/// Memory facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryFacts {
    /// THP mode: `always`, `madvise` or `never`.
    pub thp_enabled: Fact<String>,
    /// THP defrag mode: `always`, `defer`, `defer+madvise`, `madvise`, `never`.
    pub thp_defrag: Fact<String>,
    /// Active swap areas (the `Filename` column of `/proc/swaps`).
    pub swaps: Fact<Vec<String>>,
    /// Soft RLIMIT_MEMLOCK of this process.
    pub memlock: Fact<Limit>,
    /// Soft RLIMIT_RTPRIO of this process.
    pub rtprio: Fact<Limit>,
}

/// Reads the memory facts under `root`.
pub fn read(root: &Root) -> MemoryFacts {
    let (memlock, rtprio) = read_limits(root);
    MemoryFacts {
        thp_enabled: root
            .fact("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|s| selected(&s)),
        thp_defrag: root
            .fact("/sys/kernel/mm/transparent_hugepage/defrag")
            .and_then(|s| selected(&s)),
        swaps: root.fact("/proc/swaps").map(|s| {
            s.lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                .collect()
        }),
        memlock,
        rtprio,
    }
}

/// RLIMIT_MEMLOCK and RLIMIT_RTPRIO (soft) from `/proc/self/limits`.
pub fn read_limits(root: &Root) -> (Fact<Limit>, Fact<Limit>) {
    let limits = root.fact("/proc/self/limits");
    (
        limits.clone().and_then(|s| limit(&s, "Max locked memory")),
        limits.and_then(|s| limit(&s, "Max realtime priority")),
    )
}

/// The bracketed choice in a sysfs mode list: `always [madvise] never` → `madvise`.
///
/// # Errors
/// The text, when nothing is bracketed.
pub fn selected(s: &str) -> Result<String, String> {
    s.split_once('[')
        .and_then(|(_, r)| r.split_once(']'))
        .map(|(m, _)| m.to_string())
        .ok_or_else(|| format!("no [selected] mode in {s:?}"))
}

/// The soft limit of row `name` in `/proc/PID/limits`.
///
/// # Errors
/// When the row is missing or its soft limit is not a number or `unlimited`.
pub fn limit(text: &str, name: &str) -> Result<Limit, String> {
    let row = text
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .ok_or_else(|| format!("no {name:?} row"))?;
    match row.split_whitespace().next() {
        Some("unlimited") => Ok(Limit::Unlimited),
        Some(n) => n
            .parse()
            .map(Limit::Value)
            .map_err(|_| format!("unexpected soft limit {n:?}")),
        None => Err(format!("empty {name:?} row")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_limits() {
        assert_eq!(selected("always [madvise] never").unwrap(), "madvise");
        assert!(selected("always").is_err());
        let t = "Limit                     Soft Limit           Hard Limit           Units     \n\
                 Max locked memory         8388608              8388608              bytes     \n\
                 Max realtime priority     unlimited            unlimited                      \n";
        assert_eq!(
            limit(t, "Max locked memory").unwrap(),
            Limit::Value(8_388_608)
        );
        assert_eq!(limit(t, "Max realtime priority").unwrap(), Limit::Unlimited);
        assert!(limit(t, "Max nice priority").is_err());
    }
}
