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
    /// Counts per detail (command name, IRQ, vector) when the cause has one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, u64>,
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
            *row.details.entry(d.clone()).or_default() += 1;
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
                *row.details.entry(d.clone()).or_default() += n;
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
