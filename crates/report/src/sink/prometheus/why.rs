//! `monitor --explain`: why wake-ups were late, as metrics. Per measuring thread,
//! `tickscope_late_wakeups_total{cause}` and `tickscope_late_seconds_total{cause}` (the
//! latency of those wake-ups, summed), with `cause` from the closed set [`CAUSES`];
//! `tickscope_late_pending` (late wake-ups still waiting for their trace events);
//! `tickscope_late_culprit_info{cause, culprit}` for the [`CULPRITS_KEPT`] most frequent
//! culprits per thread (value: late wake-ups they caused; names are unbounded, so only the
//! top few are series); and `tickscope_explain_info{backend}` (`bpf`, `tracefs`, `context`:
//! no privilege for causes, or `off`: no `--explain`).
//!
//! Counts come from the explain sink's published state ([`tickscope_explain::controller::published`])
//! after each window and at the end; once nothing is pending, the cause counters add up to
//! the wake-ups later than the threshold.

use prometheus::{CounterVec, GaugeVec, IntCounterVec, Opts, Registry};
use std::collections::HashMap;
use tickscope_explain::controller::published;

/// Cause label values: the categories of `tickscope_explain::Cause` with `_` for spaces;
/// anything else (a wake-up not traced, or beyond the pending cap) is `unexplained`.
pub const CAUSES: [&str; 17] = [
    "timer_slack",
    "interrupt_delivery",
    "hypervisor",
    "exit_from_idle",
    "cannot_tell",
    "cpu_busy",
    "hrtimer_queue",
    "other_thread",
    "irq",
    "softirq",
    "kernel_path",
    "rt_throttled",
    "cpu_quota",
    "page_fault",
    "return_to_user",
    "events_lost",
    "unexplained",
];

/// Culprit series kept per thread.
pub const CULPRITS_KEPT: usize = 5;

/// The label value of a cause category.
pub fn cause_label(category: &str) -> &'static str {
    let snake = category.replace(' ', "_");
    CAUSES
        .iter()
        .find(|c| **c == snake)
        .copied()
        .unwrap_or("unexplained")
}

/// The metrics and what was already counted (the Prometheus sink's; public for a replay of
/// recorded events through the same counters, `bench/explain-replay.sh`).
pub struct Why {
    late: IntCounterVec,
    seconds: CounterVec,
    pending: GaugeVec,
    culprits: GaugeVec,
    info: GaugeVec,
    /// Per (thread, cause): count and ns already added.
    seen: HashMap<(usize, &'static str), (u64, i64)>,
}

fn must<T>(r: prometheus::Result<T>) -> T {
    r.expect("constant metric definitions are valid and registered once")
}

impl Why {
    /// Registers the metrics (`thread_labels` + `cause`).
    ///
    /// # Panics
    /// When `registry` already holds these metrics (registered once per registry).
    pub fn register(registry: &Registry, thread_labels: &[&str]) -> Why {
        let with = |extra: &[&'static str]| -> Vec<&str> {
            thread_labels
                .iter()
                .copied()
                .chain(extra.iter().copied())
                .collect()
        };
        let late = must(IntCounterVec::new(
            Opts::new(
                "tickscope_late_wakeups_total",
                "Wake-ups later than the --explain threshold, by cause (monitor --explain).",
            ),
            &with(&["cause"]),
        ));
        let seconds = must(CounterVec::new(
            Opts::new(
                "tickscope_late_seconds_total",
                "Wake-up latency of the late wake-ups, summed by cause, seconds.",
            ),
            &with(&["cause"]),
        ));
        let pending = must(GaugeVec::new(
            Opts::new(
                "tickscope_late_pending",
                "Late wake-ups waiting for their trace events (not counted by cause yet).",
            ),
            &with(&[]),
        ));
        let culprits = must(GaugeVec::new(
            Opts::new(
                "tickscope_late_culprit_info",
                "The most frequent culprits of late wake-ups (top 5 per thread): late \
                 wake-ups each caused.",
            ),
            &with(&["cause", "culprit"]),
        ));
        let info = must(GaugeVec::new(
            Opts::new(
                "tickscope_explain_info",
                "Where the causes come from: bpf, tracefs, context (causes need root or \
                 CAP_BPF+CAP_PERFMON) or off (no --explain); always 1.",
            ),
            &["backend"],
        ));
        for m in [&pending, &culprits, &info] {
            must(registry.register(Box::new(m.clone())));
        }
        must(registry.register(Box::new(late.clone())));
        must(registry.register(Box::new(seconds.clone())));
        info.with_label_values(&["off"]).set(1.0);
        Why {
            late,
            seconds,
            pending,
            culprits,
            info,
            seen: HashMap::new(),
        }
    }

    /// Brings the metrics up to the explain sink's newest state; `labels(thread)` gives a
    /// thread's label values.
    pub fn update(&mut self, labels: impl Fn(usize) -> Option<Vec<String>>) {
        let Some(p) = published() else { return };
        self.info.reset();
        self.info.with_label_values(&[p.backend.as_str()]).set(1.0);
        self.culprits.reset();
        for t in &p.threads {
            let Some(l) = labels(t.thread) else { continue };
            let base: Vec<&str> = l.iter().map(String::as_str).collect();
            self.pending.with_label_values(&base).set(t.pending as f64);
            let mut totals: HashMap<&'static str, (u64, i64)> = HashMap::new();
            let mut named: Vec<(u64, &'static str, &str)> = Vec::new();
            for (category, row) in &t.causes.causes {
                let cause = cause_label(category);
                let e = totals.entry(cause).or_default();
                e.0 += row.count;
                e.1 += row.total_ns;
                named.extend(row.details.iter().map(|(d, n)| (*n, cause, d.as_str())));
            }
            for (cause, (count, ns)) in totals {
                let seen = self.seen.entry((t.thread, cause)).or_default();
                let mut with = base.clone();
                with.push(cause);
                if count > seen.0 {
                    self.late.with_label_values(&with).inc_by(count - seen.0);
                }
                if ns > seen.1 {
                    self.seconds
                        .with_label_values(&with)
                        .inc_by((ns - seen.1) as f64 / 1e9);
                }
                *seen = (count.max(seen.0), ns.max(seen.1));
            }
            named.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(b.2)));
            for (n, cause, culprit) in named.into_iter().take(CULPRITS_KEPT) {
                let mut with = base.clone();
                with.push(cause);
                with.push(culprit);
                self.culprits.with_label_values(&with).set(n as f64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cause_labels_are_a_closed_set() {
        assert_eq!(cause_label("other thread"), "other_thread");
        assert_eq!(cause_label("timer slack"), "timer_slack");
        assert_eq!(cause_label("not traced"), "unexplained");
        assert_eq!(cause_label("anything new"), "unexplained");
        for c in CAUSES {
            assert_eq!(cause_label(&c.replace('_', " ")), c);
        }
    }
}
