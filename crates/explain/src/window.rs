//! A bounded window of recent trace events per CPU (a flight recorder in memory).
//!
//! Events arrive in time order per CPU (ftrace's per-CPU ring buffers); a `[LOST K EVENTS]`
//! line carries no time, so it is stamped with the time of the next event of its CPU.

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
            seen: 0,
            lost: 0,
        }
    }

    /// Takes one event in.
    pub fn push(&mut self, mut e: Event) {
        if let Kind::Lost { count } = e.kind {
            self.lost += count;
            *self.unstamped_lost.entry(e.cpu).or_default() += count;
            return;
        }
        self.seen += 1;
        self.newest = self.newest.max(e.ts);
        let q = self.per_cpu.entry(e.cpu).or_default();
        if let Some(count) = self.unstamped_lost.remove(&e.cpu) {
            q.push_back(Event {
                kind: Kind::Lost { count },
                ..e.clone()
            });
        }
        e.comm.shrink_to_fit();
        q.push_back(e);
        let horizon = self.newest - self.keep_ns;
        while q.len() > self.cap || q.front().is_some_and(|f| f.ts < horizon) {
            q.pop_front();
        }
    }

    /// The newest timestamp seen on any CPU (`Nanos::MIN` before the first event).
    pub fn newest(&self) -> Nanos {
        self.newest
    }

    /// Every event with `from <= ts <= to`, all CPUs, in time order (stable per CPU).
    pub fn range(&self, from: Nanos, to: Nanos) -> Vec<Event> {
        let mut out: Vec<Event> = self
            .per_cpu
            .values()
            .flat_map(|q| q.iter().filter(|e| e.ts >= from && e.ts <= to).cloned())
            .collect();
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
            kind: Kind::Lost { count: 7 },
            ..ev(0, 1)
        });
        w.push(ev(300, 1));
        let r = w.range(0, 1000);
        assert!(r.iter().all(|e| e.ts >= 200));
        assert!(matches!(r[0].kind, Kind::Lost { count: 7 }));
        assert_eq!(w.lost, 7);
    }
}
