//! A bounded window of recent trace events per CPU (a flight recorder in memory).
//!
//! Events arrive in time order per CPU (ftrace's per-CPU ring buffers); a `[LOST K EVENTS]`
//! line carries no time, so it is stamped with the time of the next event of its CPU.
//!
//! Events still needed are kept however far the trace runs ahead: [`EventWindow::hold_from`]
//! sets a floor below which nothing is dropped for age (only the per-CPU cap applies). Before
//! it existed the window dropped everything older than 3 s behind the newest event, and a
//! collector that fell behind (each breakdown scanned the whole window) attributed its
//! backlog to no events at all: "unexplained" for every late wake-up from then on.

use crate::events::{Event, Kind, Nanos};
use std::collections::{BTreeMap, VecDeque};

/// Recent events per CPU, kept for `keep_ns` behind the newest and at most `cap` per CPU.
#[derive(Debug)]
pub struct EventWindow {
    per_cpu: BTreeMap<u32, VecDeque<Event>>,
    unstamped_lost: BTreeMap<u32, u64>,
    keep_ns: Nanos,
    cap: usize,
    newest: Nanos,
    hold: Option<Nanos>,
    /// Events taken in, all CPUs.
    pub seen: u64,
    /// Events the kernel reported lost, all CPUs.
    pub lost: u64,
}

impl EventWindow {
    /// A window of `keep_ns` (> 0) and at most `cap` (> 0) events per CPU.
    pub fn new(keep_ns: Nanos, cap: usize) -> Self {
        EventWindow {
            per_cpu: BTreeMap::new(),
            unstamped_lost: BTreeMap::new(),
            keep_ns: keep_ns.max(1),
            cap: cap.max(1),
            newest: Nanos::MIN,
            hold: None,
            seen: 0,
            lost: 0,
        }
    }

    /// Takes one event in.
    pub fn push(&mut self, e: Event) {
        if let Kind::Lost { count, .. } = e.kind {
            self.lost += count;
            *self.unstamped_lost.entry(e.cpu).or_default() += count;
            return;
        }
        self.seen += 1;
        self.newest = self.newest.max(e.ts);
        let q = self.per_cpu.entry(e.cpu).or_default();
        if let Some(count) = self.unstamped_lost.remove(&e.cpu) {
            let since = q.back().map(|b| b.ts);
            q.push_back(Event {
                kind: Kind::Lost { count, since },
                ..e.clone()
            });
        }
        q.push_back(e);
        let mut horizon = self.newest - self.keep_ns;
        if let Some(h) = self.hold {
            horizon = horizon.min(h);
        }
        while q.len() > self.cap || q.front().is_some_and(|f| f.ts < horizon) {
            q.pop_front();
        }
    }

    /// Keeps every event at or after `from` (ns) whatever its age, within the per-CPU cap;
    /// `None` lets the age limit alone decide again.
    pub fn hold_from(&mut self, from: Option<Nanos>) {
        self.hold = from;
    }

    /// Events held now, all CPUs (at most the cap per CPU).
    pub fn len(&self) -> usize {
        self.per_cpu.values().map(VecDeque::len).sum()
    }

    /// Whether no event is held.
    pub fn is_empty(&self) -> bool {
        self.per_cpu.values().all(VecDeque::is_empty)
    }

    /// The newest timestamp seen on any CPU (`Nanos::MIN` before the first event).
    pub fn newest(&self) -> Nanos {
        self.newest
    }

    /// Every event with `from <= ts <= to`, all CPUs, in time order (stable per CPU), and a
    /// loss marker stamped after `to` whose loss began at or before it (the events of the
    /// range may be among those lost). Each CPU's events are in time order, so the range is
    /// found by binary search: the cost is that of the events returned, not of the window.
    pub fn range(&self, from: Nanos, to: Nanos) -> Vec<Event> {
        let mut out: Vec<Event> = Vec::new();
        for q in self.per_cpu.values() {
            let a = q.partition_point(|e| e.ts < from);
            let b = q.partition_point(|e| e.ts <= to);
            out.extend(q.range(a..b.max(a)).cloned());
            if let Some(e) = q.get(b.max(a)) {
                if matches!(e.kind, Kind::Lost { since, .. } if since.is_none_or(|s| s <= to)) {
                    out.push(e.clone());
                }
            }
        }
        out.sort_by_key(|e| e.ts);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: Nanos, cpu: u32) -> Event {
        Event {
            ts,
            cpu,
            pid: 1,
            comm: "x".into(),
            kind: Kind::Other { name: "y".into() },
        }
    }

    #[test]
    fn keeps_only_the_recent_past_and_stamps_lost_events() {
        let mut w = EventWindow::new(100, 3);
        for ts in [0, 50, 120, 130, 140, 150] {
            w.push(ev(ts, 1));
        }
        assert_eq!(w.range(0, 1000).len(), 3, "cap");
        w.push(Event {
            kind: Kind::Lost {
                count: 7,
                since: None,
            },
            ..ev(0, 1)
        });
        w.push(ev(300, 1));
        let r = w.range(0, 1000);
        assert!(r.iter().all(|e| e.ts >= 200));
        assert!(matches!(
            r[0].kind,
            Kind::Lost {
                count: 7,
                since: Some(150)
            }
        ));
        assert_eq!(w.lost, 7);
    }

    #[test]
    fn a_loss_that_began_inside_a_range_is_returned_with_it() {
        let mut w = EventWindow::new(1_000, 100);
        w.push(ev(100, 1));
        w.push(Event {
            kind: Kind::Lost {
                count: 5,
                since: None,
            },
            ..ev(0, 1)
        });
        w.push(ev(900, 1));
        let r = w.range(200, 300);
        assert_eq!(r.len(), 1, "only the loss marker: {r:?}");
        assert!(matches!(
            r[0].kind,
            Kind::Lost {
                count: 5,
                since: Some(100)
            }
        ));
        assert!(w.range(0, 50).is_empty(), "the loss began after that range");
    }

    #[test]
    fn held_events_outlive_the_age_limit_and_ranges_are_exact() {
        let mut w = EventWindow::new(100, 1000);
        w.hold_from(Some(20));
        for ts in (0..1000).step_by(10) {
            w.push(ev(ts, 1));
            w.push(ev(ts + 5, 0));
        }
        let r = w.range(20, 40);
        let got: Vec<(Nanos, u32)> = r.iter().map(|e| (e.ts, e.cpu)).collect();
        assert_eq!(got, vec![(20, 1), (25, 0), (30, 1), (35, 0), (40, 1)]);
        assert!(w.range(0, 19).is_empty(), "older than the hold: dropped");
        w.hold_from(None);
        w.push(ev(1000, 1));
        assert!(
            w.range(0, 800).iter().all(|e| e.cpu == 0),
            "CPU 1 trimmed on push"
        );
        assert!(w
            .range(0, 850)
            .iter()
            .filter(|e| e.cpu == 1)
            .all(|e| e.ts >= 900));
    }
}
