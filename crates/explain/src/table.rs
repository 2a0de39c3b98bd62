//! The cause table of one thread: how often each cause made a wake-up late, for how long in
//! total and at most.

use crate::attribution::Breakdown;
use crate::events::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One row: a cause category and what it cost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseRow {
    /// Late wake-ups with this cause.
    pub count: u64,
    /// Sum of their latencies, ns.
    pub total_ns: Nanos,
    /// Largest of their latencies, ns.
    pub max_ns: Nanos,
    /// Counts per detail (command name, IRQ, vector) when the cause has one: at most
    /// [`DETAILS_KEPT`] names, then [`OTHER_DETAILS`] counts the rest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, u64>,
}

/// Detail names kept per cause. Names are unbounded (every short-lived command that held a
/// CPU has its own), and a table kept for days — `monitor --explain` — must not grow with
/// them: the first this many names are counted by name, later new names together.
pub const DETAILS_KEPT: usize = 64;

/// The detail that counts names beyond [`DETAILS_KEPT`].
pub const OTHER_DETAILS: &str = "(other names)";

impl CauseRow {
    /// Counts `n` more wake-ups for `detail`, within [`DETAILS_KEPT`].
    fn add_detail(&mut self, detail: &str, n: u64) {
        let key = match self.details.contains_key(detail) || self.details.len() < DETAILS_KEPT {
            true => detail,
            false => OTHER_DETAILS,
        };
        match self.details.get_mut(key) {
            Some(c) => *c += n,
            None => {
                self.details.insert(key.to_string(), n);
            }
        }
    }
}

/// Causes of one thread's late wake-ups, by category.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseTable {
    /// Rows by category.
    pub causes: BTreeMap<String, CauseRow>,
}

impl CauseTable {
    /// Counts one breakdown.
    pub fn add(&mut self, b: &Breakdown) {
        let row = self.causes.entry(b.cause.category.clone()).or_default();
        row.count += 1;
        row.total_ns += b.latency_ns;
        row.max_ns = row.max_ns.max(b.latency_ns);
        if let Some(d) = &b.cause.detail {
            row.add_detail(d, 1);
        }
    }

    /// Counts a late wake-up whose cause is not known (no trace: context mode).
    pub fn add_unexplained(&mut self, category: &str, latency: Nanos) {
        let row = self.causes.entry(category.to_string()).or_default();
        row.count += 1;
        row.total_ns += latency;
        row.max_ns = row.max_ns.max(latency);
    }

    /// Adds another table's rows.
    pub fn merge(&mut self, other: &CauseTable) {
        for (k, r) in &other.causes {
            let row = self.causes.entry(k.clone()).or_default();
            row.count += r.count;
            row.total_ns += r.total_ns;
            row.max_ns = row.max_ns.max(r.max_ns);
            for (d, n) in &r.details {
                row.add_detail(d, *n);
            }
        }
    }

    /// Wake-ups counted.
    pub fn total(&self) -> u64 {
        self.causes.values().map(|r| r.count).sum()
    }

    /// Rows, most frequent first (ties: larger total first).
    pub fn ranked(&self) -> Vec<(&str, &CauseRow)> {
        let mut v: Vec<_> = self.causes.iter().map(|(k, r)| (k.as_str(), r)).collect();
        v.sort_by(|a, b| {
            b.1.count
                .cmp(&a.1.count)
                .then(b.1.total_ns.cmp(&a.1.total_ns))
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_stay_bounded_and_every_wake_up_is_counted() {
        let mut row = CauseRow::default();
        // A day of short-lived commands: each name new.
        for i in 0..100_000u64 {
            row.add_detail(&format!("cc1-{i}"), 1);
            row.add_detail("rustc", 1);
        }
        assert!(
            row.details.len() <= DETAILS_KEPT + 1,
            "{}",
            row.details.len()
        );
        assert_eq!(row.details.values().sum::<u64>(), 200_000);
        assert_eq!(row.details["rustc"], 100_000);
        assert_eq!(
            row.details[OTHER_DETAILS],
            100_000 - (DETAILS_KEPT as u64 - 1)
        );
        // Merging tables keeps the bound too.
        let mut a = CauseTable::default();
        let mut b = CauseTable::default();
        b.causes.insert("other thread".into(), row.clone());
        for _ in 0..3 {
            a.merge(&b);
        }
        let merged = &a.causes["other thread"];
        assert!(merged.details.len() <= DETAILS_KEPT + 1);
        assert_eq!(merged.details.values().sum::<u64>(), 600_000);
    }
}
