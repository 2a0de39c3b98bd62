//! Which of a traced program's threads `tickscope attach` measures while it runs: the ones
//! chosen when it started, and — unless the user named the threads — every thread that
//! begins waking from a timer later and turns out periodic (a worker started after the
//! attach, a loop restarted under a new thread id).
//!
//! A thread not yet measured has its timer wake-ups kept until its pattern can be judged
//! ([`crate::infer::infer`] over at least [`JOIN_AFTER`] of them). Periodic, with a wait
//! attach has a method for: it joins, with the wake-ups kept so far, and is measured from
//! then on. Not periodic after [`GIVE_UP_AFTER`] wake-ups: it stays unmeasured.

use crate::infer::{infer, Pattern};
use crate::wakeups::WakeUp;
use std::collections::{BTreeSet, HashMap};

/// Timer wake-ups a newly seen thread needs before its pattern is judged: twice the
/// fewest [`crate::infer::MIN_WAKE_UPS`] a thread needs at the start, since a thread seen
/// mid-run is judged on its first wake-ups only.
pub const JOIN_AFTER: usize = 2 * crate::infer::MIN_WAKE_UPS;

/// Timer wake-ups after which a thread never found periodic is left unmeasured.
pub const GIVE_UP_AFTER: usize = 200;

/// At most this many threads are measured in one observation (those chosen at the start
/// and those that joined, exited ones included): a program that keeps starting periodic
/// threads under new ids (a worker restarted every minute) is followed up to here, then
/// its newcomers are noted and left out, so that memory and the number of
/// `monitor --attach` series stay bounded.
pub const MAX_MEASURED: usize = 64;

/// Where one wake-up goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// A wake-up of measured thread `index` (the order threads were chosen or joined).
    Measured(usize, WakeUp),
    /// A thread found periodic now: measured from now on as thread `index`, with its
    /// `pattern`; `wake_ups` are the ones kept until now (this one included), in order.
    Joined {
        /// Its index among the measured threads.
        index: usize,
        /// Its period, wait and clock.
        pattern: Pattern,
        /// Its wake-ups so far, oldest first.
        wake_ups: Vec<WakeUp>,
    },
    /// Kept: the thread's pattern is not known yet.
    Kept,
    /// Not measured. `first`: the first wake-up of this thread not measured for good (a
    /// thread not followed, not periodic, or waiting in a way attach has no method for), so
    /// that the caller notes it once.
    Unmeasured {
        /// The thread.
        tid: i32,
        /// Whether this is the first time the thread is turned away.
        first: bool,
    },
}

/// The measured threads and the ones being judged (see the module text).
#[derive(Debug, Default)]
pub struct Roster {
    index: HashMap<i32, usize>,
    follow_new: bool,
    pending: HashMap<i32, Vec<WakeUp>>,
    turned_away: BTreeSet<i32>,
}

impl Roster {
    /// Measures `chosen` (indices 0, 1, … in that order); with `follow_new`, also every
    /// thread found periodic later.
    pub fn new(chosen: &[i32], follow_new: bool) -> Self {
        Roster {
            index: chosen.iter().enumerate().map(|(i, t)| (*t, i)).collect(),
            follow_new,
            ..Roster::default()
        }
    }

    /// How many threads are measured.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no thread is measured.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The index of thread `tid`, when it is measured.
    pub fn index_of(&self, tid: i32) -> Option<usize> {
        self.index.get(&tid).copied()
    }

    /// Routes one wake-up (in trace order per thread).
    pub fn route(&mut self, w: WakeUp) -> Routed {
        if let Some(&i) = self.index.get(&w.tid) {
            return Routed::Measured(i, w);
        }
        let tid = w.tid;
        if !self.follow_new || self.turned_away.contains(&tid) || self.index.len() >= MAX_MEASURED {
            return Routed::Unmeasured {
                tid,
                first: self.turned_away.insert(tid),
            };
        }
        let kept = self.pending.entry(tid).or_default();
        kept.push(w);
        if kept.len() < JOIN_AFTER {
            return Routed::Kept;
        }
        let pattern = infer(tid, kept).filter(|p| p.periodic && p.wait.method_name().is_some());
        match pattern {
            Some(pattern) => {
                let index = self.index.len();
                self.index.insert(tid, index);
                Routed::Joined {
                    index,
                    pattern,
                    wake_ups: self.pending.remove(&tid).unwrap_or_default(),
                }
            }
            None if kept.len() >= GIVE_UP_AFTER => {
                self.pending.remove(&tid);
                Routed::Unmeasured {
                    tid,
                    first: self.turned_away.insert(tid),
                }
            }
            None => Routed::Kept,
        }
    }

    /// Forgets a thread that exited while being judged; returns whether it was measured.
    pub fn exited(&mut self, tid: i32) -> bool {
        self.pending.remove(&tid);
        self.index.contains_key(&tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wakeups::CLOCK_MONOTONIC;

    fn w(tid: i32, k: i64, period: i64) -> WakeUp {
        WakeUp {
            tid,
            expiry: k * period,
            woke: k * period + 20_000,
            nr: libc::SYS_clock_nanosleep,
            enter_args: Some([1, 1, 0, 0, 0, 0]),
            function: "hrtimer_wakeup",
            clock: CLOCK_MONOTONIC,
            armed_at: 0,
            passed: 0,
        }
    }

    #[test]
    fn a_periodic_newcomer_joins_with_its_wake_ups_and_is_measured_after() {
        let mut r = Roster::new(&[10], true);
        assert_eq!(
            r.route(w(10, 0, 1_000_000)),
            Routed::Measured(0, w(10, 0, 1_000_000))
        );
        for k in 0..JOIN_AFTER as i64 - 1 {
            assert_eq!(r.route(w(11, k, 2_000_000)), Routed::Kept);
        }
        let Routed::Joined {
            index,
            pattern,
            wake_ups,
        } = r.route(w(11, JOIN_AFTER as i64 - 1, 2_000_000))
        else {
            panic!("not joined")
        };
        assert_eq!((index, pattern.tid, pattern.period_ns), (1, 11, 2_000_000));
        assert_eq!(wake_ups.len(), JOIN_AFTER);
        assert_eq!(r.len(), 2);
        assert!(matches!(
            r.route(w(11, 50, 2_000_000)),
            Routed::Measured(1, _)
        ));
        assert!(r.exited(11) && !r.exited(12));
    }

    #[test]
    fn named_threads_only_or_irregular_newcomers_stay_unmeasured_and_are_noted_once() {
        let mut r = Roster::new(&[10], false);
        assert_eq!(
            r.route(w(11, 0, 1)),
            Routed::Unmeasured {
                tid: 11,
                first: true
            }
        );
        assert_eq!(
            r.route(w(11, 1, 1)),
            Routed::Unmeasured {
                tid: 11,
                first: false
            }
        );
        let mut r = Roster::new(&[10], true);
        let mut firsts = 0;
        for k in 0..GIVE_UP_AFTER as i64 + 5 {
            // Expiries spaced 1, 2, 3, … ms apart: no period.
            let mut x = w(12, 0, 1);
            x.expiry = k * (k + 1) / 2 * 1_000_000;
            match r.route(x) {
                Routed::Kept => {}
                Routed::Unmeasured { first, .. } => firsts += usize::from(first),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!((firsts, r.len()), (1, 1));
    }

    #[test]
    fn newcomers_beyond_the_cap_are_turned_away() {
        let chosen: Vec<i32> = (0..MAX_MEASURED as i32).collect();
        let mut r = Roster::new(&chosen, true);
        assert_eq!(
            r.route(w(1000, 0, 1_000_000)),
            Routed::Unmeasured {
                tid: 1000,
                first: true
            }
        );
        assert_eq!(r.len(), MAX_MEASURED);
    }
}
