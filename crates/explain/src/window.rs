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
    /// Per CPU, in CPU order (found by binary search: a few CPUs, no tree to walk per event).
    per_cpu: Vec<(u32, VecDeque<Event>)>,
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
            per_cpu: Vec::new(),
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
        let mut last = None;
        self.push_at(e, &mut last);
    }

    /// Takes events in, in order (as [`EventWindow::push`] one by one; a run of one CPU's
    /// events finds its queue once).
    pub fn extend(&mut self, events: impl IntoIterator<Item = Event>) {
        let mut last = None;
        for e in events {
            self.push_at(e, &mut last);
        }
    }

    /// The index of `cpu`'s queue in `per_cpu`, added if new; `last` is the previous
    /// event's (CPU, index), tried first.
    fn queue(&mut self, cpu: u32, last: &mut Option<(u32, usize)>) -> usize {
        if let Some((c, i)) = *last {
            if c == cpu {
                return i;
            }
        }
        let i = match self.per_cpu.binary_search_by_key(&cpu, |(c, _)| *c) {
            Ok(i) => i,
            Err(i) => {
                self.per_cpu.insert(i, (cpu, VecDeque::new()));
                i
            }
        };
        *last = Some((cpu, i));
        i
    }

    fn push_at(&mut self, e: Event, last: &mut Option<(u32, usize)>) {
        if let Kind::Lost { count, .. } = e.kind {
            self.lost += count;
            *self.unstamped_lost.entry(e.cpu).or_default() += count;
            return;
        }
        self.seen += 1;
        self.newest = self.newest.max(e.ts);
        let at = self.queue(e.cpu, last);
        let q = &mut self.per_cpu[at].1;
        if !self.unstamped_lost.is_empty() {
            if let Some(count) = self.unstamped_lost.remove(&e.cpu) {
                let since = q.back().map(|b| b.ts);
                q.push_back(Event {
                    kind: Kind::Lost { count, since },
                    ..e.clone()
                });
            }
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
        self.per_cpu.iter().map(|(_, q)| q.len()).sum()
    }

    /// Whether no event is held.
    pub fn is_empty(&self) -> bool {
        self.per_cpu.iter().all(|(_, q)| q.is_empty())
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
        let mut out = Vec::new();
        self.range_into(from, to, &mut out);
        out
    }

    /// [`EventWindow::range`] into `out` (emptied first; its allocation reused, grown at most
    /// once to the range's size).
    pub fn range_into(&self, from: Nanos, to: Nanos, out: &mut Vec<Event>) {
        out.clear();
        let bounds = |q: &VecDeque<Event>| {
            let a = q.partition_point(|e| e.ts < from);
            (a, q.partition_point(|e| e.ts <= to).max(a))
        };
        let size: usize = self
            .per_cpu
            .iter()
            .map(|(_, q)| {
                let (a, b) = bounds(q);
                b - a + 1
            })
            .sum();
        out.reserve(size);
        for (_, q) in &self.per_cpu {
            let (a, b) = bounds(q);
            out.extend(q.range(a..b).cloned());
            if let Some(e) = q.get(b) {
                if matches!(e.kind, Kind::Lost { since, .. } if since.is_none_or(|s| s <= to)) {
                    out.push(e.clone());
                }
            }
        }
        // One CPU's events (the usual range) are in order already: a stable sort would leave
        // them as they are, after allocating its buffer.
        if !out.is_sorted_by_key(|e| e.ts) {
            out.sort_by_key(|e| e.ts);
        }
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
    fn taking_a_batch_in_is_taking_each_event_in() {
        let lost = |ts, cpu| Event {
            kind: Kind::Lost {
                count: 2,
                since: None,
            },
            ..ev(ts, cpu)
        };
        let events = vec![
            ev(10, 3),
            ev(11, 3),
            lost(0, 1),
            ev(12, 1),
            ev(13, 0),
            ev(14, 3),
            ev(15, 1),
            ev(200, 2),
        ];
        let (mut one, mut batch) = (EventWindow::new(100, 3), EventWindow::new(100, 3));
        for e in events.clone() {
            one.push(e);
        }
        batch.extend(events);
        assert_eq!(batch.range(0, 1000), one.range(0, 1000));
        assert_eq!(
            (batch.len(), batch.seen, batch.lost),
            (one.len(), one.seen, one.lost)
        );
        // Each CPU is trimmed when its own events arrive: none reached the cap of 3 or the
        // age limit before CPU 2's event at 200, which trims CPU 2 only.
        let got: Vec<(Nanos, u32, bool)> = one
            .range(0, 1000)
            .iter()
            .map(|e| (e.ts, e.cpu, matches!(e.kind, Kind::Lost { .. })))
            .collect();
        assert_eq!(
            got,
            vec![
                (10, 3, false),
                (11, 3, false),
                (12, 1, true),
                (12, 1, false),
                (13, 0, false),
                (14, 3, false),
                (15, 1, false),
                (200, 2, false)
            ]
        );
    }

    #[test]
    fn a_range_into_a_used_buffer_is_the_range() {
        let mut w = EventWindow::new(1_000, 100);
        // Two CPUs with equal times: the sort keeps each CPU's order, CPU 0 first.
        for (ts, cpu) in [(10, 1), (10, 0), (20, 1), (20, 0), (30, 1)] {
            w.push(ev(ts, cpu));
        }
        let mut buf = vec![ev(999, 7); 3];
        w.range_into(10, 20, &mut buf);
        assert_eq!(buf, w.range(10, 20));
        let got: Vec<(Nanos, u32)> = buf.iter().map(|e| (e.ts, e.cpu)).collect();
        assert_eq!(got, vec![(10, 0), (10, 1), (20, 0), (20, 1)]);
        w.range_into(25, 30, &mut buf);
        assert_eq!(buf, w.range(25, 30));
        assert_eq!(buf.len(), 1);
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
