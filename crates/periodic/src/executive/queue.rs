//! The executive's queue of next expiries: which task runs next, and until when to sleep.
//!
//! Fixed-priority, non-preemptive dispatch in one thread: at each dispatch point, among the
//! tasks whose next expiry has passed (*released*), run the one of highest priority (lowest
//! rank); if none is released, sleep until the earliest next expiry. Tasks due at the same
//! instant therefore run in priority order.
//!
//! Two interchangeable implementations, measured against each other in `bench/executive.rs`:
//!
//! * [`HeapQueue`]: two binary heaps (`std::collections::BinaryHeap`), the waiting tasks by
//!   expiry and the released ones by rank — O(log n) per dispatch, the layout of an RTOS's
//!   delayed and ready lists;
//! * [`ScanQueue`]: one array of next expiries scanned linearly — O(n) per dispatch, with no
//!   data-dependent branches beyond a compare, the fastest at a handful of tasks.
//!
//! Neither is a timer wheel. A wheel (Linux's jiffies wheel, tokio's 1 ms wheel) buys O(1)
//! insertion for millions of timeouts by rounding expiries to its slots' granularity; a
//! periodic executive has 2–100 tasks whose expiries must stay exact to the nanosecond, which
//! is why Linux moved precise timers from the wheel to a time-ordered queue (T. Gleixner and
//! D. Niehaus, "Hrtimers and Beyond: Transforming the Linux Time Subsystems", Ottawa Linux
//! Symposium 2006).
//!
//! Neither allocates after construction: each holds at most one entry per task.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tickscope_engine::time::Nanos;

/// A queue holding one next expiry per task.
pub trait ExpiryQueue {
    /// Queues task `task` (0-based index, < the capacity) with its next expiry (absolute ns)
    /// and its rank (0 = highest priority; ranks are unique). Each task is queued at most
    /// once at a time.
    fn push(&mut self, task: u32, expiry: Nanos, rank: u32);

    /// Takes out the released task (expiry ≤ `now`) of lowest rank and returns
    /// `(task, expiry)`; `None` when no queued task is released at `now`.
    fn pop_released(&mut self, now: Nanos) -> Option<(u32, Nanos)>;

    /// The earliest expiry among the queued tasks; `None` when empty.
    fn earliest(&self) -> Option<Nanos>;
}

/// Two binary heaps: waiting tasks by `(expiry, rank)`, released ones by rank.
#[derive(Debug, Clone, Default)]
pub struct HeapQueue {
    waiting: BinaryHeap<Reverse<(Nanos, u32, u32)>>,
    released: BinaryHeap<Reverse<(u32, Nanos, u32)>>,
}

impl HeapQueue {
    /// An empty queue with room for `tasks` tasks (allocated now, never again).
    pub fn with_capacity(tasks: usize) -> Self {
        HeapQueue {
            waiting: BinaryHeap::with_capacity(tasks),
            released: BinaryHeap::with_capacity(tasks),
        }
    }
}

impl ExpiryQueue for HeapQueue {
    #[inline]
    fn push(&mut self, task: u32, expiry: Nanos, rank: u32) {
        self.waiting.push(Reverse((expiry, rank, task)));
    }

    #[inline]
    fn pop_released(&mut self, now: Nanos) -> Option<(u32, Nanos)> {
        while let Some(&Reverse((expiry, rank, task))) = self.waiting.peek() {
            if expiry > now {
                break;
            }
            self.waiting.pop();
            self.released.push(Reverse((rank, expiry, task)));
        }
        self.released
            .pop()
            .map(|Reverse((_, expiry, task))| (task, expiry))
    }

    #[inline]
    fn earliest(&self) -> Option<Nanos> {
        let released = self.released.iter().map(|Reverse((_, e, _))| *e).min();
        let waiting = self.waiting.peek().map(|Reverse((e, _, _))| *e);
        match (released, waiting) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Sentinel expiry of a task that is not queued.
const ABSENT: Nanos = Nanos::MAX;

/// One array of next expiries, indexed by rank, scanned linearly.
#[derive(Debug, Clone, Default)]
pub struct ScanQueue {
    /// `(expiry, task)` by rank; `expiry == ABSENT` when the task is not queued.
    by_rank: Vec<(Nanos, u32)>,
}

impl ScanQueue {
    /// An empty queue with room for `tasks` tasks (allocated now, never again).
    pub fn with_capacity(tasks: usize) -> Self {
        ScanQueue {
            by_rank: vec![(ABSENT, 0); tasks],
        }
    }
}

impl ExpiryQueue for ScanQueue {
    /// # Panics
    /// If `rank` is not below the capacity.
    #[inline]
    fn push(&mut self, task: u32, expiry: Nanos, rank: u32) {
        self.by_rank[rank as usize] = (expiry, task);
    }

    #[inline]
    fn pop_released(&mut self, now: Nanos) -> Option<(u32, Nanos)> {
        // Ranks ascend along the array: the first released entry is the one to run.
        let slot = self.by_rank.iter_mut().find(|(e, _)| *e <= now)?;
        let (expiry, task) = *slot;
        slot.0 = ABSENT;
        Some((task, expiry))
    }

    #[inline]
    fn earliest(&self) -> Option<Nanos> {
        self.by_rank
            .iter()
            .map(|(e, _)| *e)
            .min()
            .filter(|&e| e != ABSENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut impl ExpiryQueue, now: Nanos) -> Vec<(u32, Nanos)> {
        std::iter::from_fn(|| q.pop_released(now)).collect()
    }

    #[test]
    fn both_queues_release_by_rank_and_wait_for_the_earliest() {
        for heap in [true, false] {
            let mut h = HeapQueue::with_capacity(4);
            let mut s = ScanQueue::with_capacity(4);
            let q: &mut dyn ExpiryQueue = if heap { &mut h } else { &mut s };
            // task 0 rank 2 at 100, task 1 rank 0 at 100, task 2 rank 1 at 50, task 3 rank 3 at 300
            q.push(0, 100, 2);
            q.push(1, 100, 0);
            q.push(2, 50, 1);
            q.push(3, 300, 3);
            assert_eq!(q.earliest(), Some(50));
            assert_eq!(q.pop_released(49), None);
            assert_eq!(q.pop_released(60), Some((2, 50)));
            // At 100, ranks 0 then 2; task 3 still waits.
            assert_eq!(q.pop_released(100), Some((1, 100)));
            assert_eq!(q.pop_released(100), Some((0, 100)));
            assert_eq!(q.pop_released(100), None);
            assert_eq!(q.earliest(), Some(300));
            assert_eq!(q.pop_released(1000), Some((3, 300)));
            assert_eq!(q.earliest(), None);
        }
    }

    #[test]
    fn a_released_task_of_higher_priority_overtakes_an_earlier_expiry() {
        let mut h = HeapQueue::with_capacity(2);
        let mut s = ScanQueue::with_capacity(2);
        for q in [&mut h as &mut dyn ExpiryQueue, &mut s] {
            q.push(0, 10, 1); // low priority, due first
            q.push(1, 20, 0); // high priority, due later
            assert_eq!(q.earliest(), Some(10));
            let order: Vec<_> = std::iter::from_fn(|| q.pop_released(25)).collect();
            assert_eq!(order, vec![(1, 20), (0, 10)]);
        }
        let _ = drain(&mut h, 0);
    }
}
