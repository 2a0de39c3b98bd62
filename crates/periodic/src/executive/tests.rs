//! The executive on virtual time: a mock wait method whose clock the tasks' "work" moves.

use super::*;
use crate::strategy::Strategy;
use proptest::prelude::*;
use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::time::Nanos;
use tickscope_engine::wait::WakeMethod;

const MS: Nanos = 1_000_000;
const START: Nanos = 1_000 * MS;

/// A virtual clock shared by the wait method and the tasks' work.
#[derive(Debug, Clone, Default)]
struct VClock(Arc<AtomicI64>);

impl VClock {
    fn now(&self) -> Nanos {
        self.0.load(Ordering::Relaxed)
    }
    fn set(&self, t: Nanos) {
        self.0.store(t, Ordering::Relaxed);
    }
    fn work(&self, ns: Nanos) {
        self.0.fetch_add(ns, Ordering::Relaxed);
    }
}

/// Waits jump the clock to `expiry + latency[k]` (never back), latencies cycling.
#[derive(Debug)]
struct Mock {
    clock: VClock,
    latencies: Vec<Nanos>,
    next: usize,
}

impl WakeMethod for Mock {
    fn now(&self) -> Nanos {
        self.clock.now()
    }
    fn wait(&mut self, expiry: Nanos, _last: Nanos) -> io::Result<Nanos> {
        let lat = self.latencies[self.next];
        self.next = (self.next + 1) % self.latencies.len();
        let woke = (expiry + lat).max(self.clock.now());
        self.clock.set(woke);
        Ok(woke)
    }
    fn interface(&self) -> &'static str {
        "mock"
    }
}

fn executive<'a>(clock: &VClock, latencies: Vec<Nanos>, queue: QueueKind) -> Executive<'a> {
    clock.set(START);
    let mut ex = Executive::new(Strategy::Sleep).with_method(Box::new(Mock {
        clock: clock.clone(),
        latencies,
        next: 0,
    }));
    ex.set_queue(queue).unwrap();
    ex
}

type Log = Rc<RefCell<Vec<Release>>>;

/// A callback that logs its release and works `work` ns of virtual time.
fn logger(log: &Log, clock: &VClock, work: Nanos) -> impl FnMut(&Release) -> Control {
    let (log, clock) = (log.clone(), clock.clone());
    move |r| {
        log.borrow_mut().push(*r);
        clock.work(work);
        Control::Continue
    }
}

/// 10^9 periods: jump the virtual clock 10^9 periods of the 100 Hz task ahead; both grids
/// land on their exact points and every skipped expiry is counted, none lost or doubled.
#[test]
fn no_drift_after_a_billion_periods() {
    let clock = VClock::default();
    let log: Log = Rc::default();
    let mut ex = executive(&clock, vec![0], QueueKind::Heap);
    let hz100 = ex.add(Task::new(10 * MS), logger(&log, &clock, 0)).unwrap();
    let hz40 = ex.add(Task::new(25 * MS), logger(&log, &clock, 0)).unwrap();
    assert_eq!(ex.run_until(2).unwrap(), 2);
    let t0 = ex.t0().unwrap();
    assert_eq!(t0, START + 10 * MS);
    const N: Nanos = 1_000_000_000;
    clock.set(t0 + N * 10 * MS + 1);
    assert_eq!(ex.run_until(2).unwrap(), 2);
    let l = log.borrow();
    // The pending releases ran (late); everything strictly between them and "now" was missed.
    assert_eq!(
        (l[2].task, l[2].expiry, l[2].overruns),
        (hz100, t0 + 10 * MS, (N - 1) as u64)
    );
    let k40 = (N * 10 * MS) / (25 * MS); // 4·10^8: the last 40 Hz point before "now"
    assert_eq!(
        (l[3].task, l[3].expiry, l[3].overruns),
        (hz40, t0 + 25 * MS, (k40 - 1) as u64)
    );
    assert_eq!(ex.next_expiry(hz100), Some(t0 + (N + 1) * 10 * MS));
    assert_eq!(ex.next_expiry(hz40), Some(t0 + (k40 + 1) * 25 * MS));
    drop(l);
    assert_eq!(ex.run_until(1).unwrap(), 1);
    let last = *log.borrow().last().unwrap();
    assert_eq!(
        (last.index, last.expiry),
        ((N + 1) as u64, t0 + (N + 1) * 10 * MS)
    );
}

/// 40 Hz beside 100 Hz over 10^4 s of virtual time (1.4·10^6 dispatches, with latency):
/// exactly 10^6 and 4·10^5 releases, every one on its own grid, and mean start intervals of
/// exactly 10 and 25 ms. (A 100 Hz base tick divided by ⌊100/40⌋ = 2 would give 50 Hz.)
#[test]
fn forty_hertz_beside_a_hundred_is_exact() {
    let clock = VClock::default();
    let mut ex = executive(&clock, vec![0], QueueKind::Scan);
    let seen: Rc<RefCell<[(u64, Nanos); 2]>> = Rc::default();
    for (i, period) in [10 * MS, 25 * MS].into_iter().enumerate() {
        let seen = seen.clone();
        ex.add(Task::new(period), move |r| {
            let mut s = seen.borrow_mut();
            assert_eq!(r.index, s[i].0, "no release skipped or repeated");
            assert_eq!(r.latency, 0);
            s[i] = (r.index + 1, r.expiry);
            Control::Continue
        })
        .unwrap();
    }
    let d = 10_000 * 1_000 * MS;
    let n = ex.run_for(d).unwrap();
    let t0 = ex.t0().unwrap();
    // Expiries ≤ START + d: t0 + k·T ≤ START + d with t0 = START + 10 ms.
    assert_eq!(n, 1_000_000 + 400_000);
    let s = ex.stats();
    assert_eq!((s[0].releases, s[1].releases), (1_000_000, 400_000));
    assert_eq!(seen.borrow()[0].1, t0 + 999_999 * 10 * MS);
    assert_eq!(seen.borrow()[1].1, t0 + 399_999 * 25 * MS);
    assert_eq!(s[0].start_period.as_ref().unwrap().mean, 10.0 * MS as f64);
    assert_eq!(s[1].start_period.as_ref().unwrap().mean, 25.0 * MS as f64);
    assert_eq!((s[0].overruns, s[1].overruns), (0, 0));
}

/// Releases due together run in rank order — explicit priority, then rate-monotonic, then
/// order added — at every coincidence, identically with both queues and with queueing
/// delay from the work of earlier tasks of the same instant.
#[test]
fn coincidences_run_in_priority_order_and_the_order_is_stable() {
    let mut runs = Vec::new();
    for queue in [QueueKind::Heap, QueueKind::Scan] {
        let clock = VClock::default();
        let log: Log = Rc::default();
        let mut ex = executive(&clock, vec![3_000, 0, 17_000], queue);
        // Added slowest first; the 5 ms one has an explicit priority above all.
        ex.add(Task::new(10 * MS), logger(&log, &clock, 200_000))
            .unwrap(); // rank 3
        ex.add(Task::new(2_500_000), logger(&log, &clock, 100_000))
            .unwrap(); // rank 2
        ex.add(Task::new(MS), logger(&log, &clock, 50_000)).unwrap(); // rank 1
        ex.add(Task::new(5 * MS).priority(1), logger(&log, &clock, 10_000))
            .unwrap(); // rank 0
        ex.add(Task::new(MS).name("second 1ms"), logger(&log, &clock, 0))
            .unwrap(); // rank 1½
        ex.run_for(40 * MS).unwrap();
        let rank = [3, 2, 1, 0, 1];
        let l = log.borrow();
        let mut at_zero = vec![];
        for w in l.windows(2) {
            if w[0].expiry == w[1].expiry {
                let (a, b) = (w[0].task.0, w[1].task.0);
                assert!((rank[a], a) < (rank[b], b), "{:?} before {:?}", w[0], w[1]);
            }
        }
        for r in l.iter().filter(|r| r.expiry == ex.t0().unwrap()) {
            at_zero.push(r.task.0);
        }
        assert_eq!(at_zero, vec![3, 2, 4, 1, 0]);
        // The first of an instant starts at the wake-up; the others queue behind it.
        assert_eq!(l[0].latency, 3_000);
        assert_eq!(l[1].latency, 3_000 + 10_000);
        let s = ex.stats();
        assert_eq!(
            s[3].woken, s[3].releases,
            "the top priority always starts a wake-up"
        );
        runs.push(
            l.iter()
                .map(|r| (r.task, r.expiry, r.start))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn deadlines_budgets_and_stop() {
    let clock = VClock::default();
    let mut ex = executive(&clock, vec![0], QueueKind::Heap);
    let c = clock.clone();
    let mut k = 0;
    // 1 ms, deadline 300 us, budget 100 us; every third release works 400 us.
    ex.add(Task::new(MS).deadline(300_000).budget(100_000), move |_| {
        k += 1;
        c.work(if k % 3 == 0 { 400_000 } else { 50_000 });
        if k == 9 {
            Control::Stop
        } else {
            Control::Continue
        }
    })
    .unwrap();
    assert_eq!(ex.run().unwrap(), 9);
    let s = &ex.stats()[0];
    assert_eq!(
        (s.releases, s.deadline_misses, s.budget_overruns),
        (9, 3, 3)
    );
    assert_eq!(s.response.as_ref().unwrap().max, 400_000);
    let stop = ex.stop_handle();
    stop.stop();
    // A new run clears the flag.
    assert_eq!(ex.run_until(2).unwrap(), 2);
    ex.reset_stats();
    assert_eq!(ex.stats()[0].releases, 0);
    assert!(
        ex.add(Task::new(MS), |_| Control::Continue).is_err(),
        "no task after the start"
    );
}

/// The completion observer sees every release once, after its callback, with the same
/// response, misses and budget overruns the statistics count.
#[test]
fn the_completion_observer_agrees_with_the_statistics() {
    let clock = VClock::default();
    let mut ex = executive(&clock, vec![7_000], QueueKind::Heap);
    let seen: Rc<RefCell<Vec<Completion>>> = Rc::default();
    let s2 = seen.clone();
    ex.on_complete(move |c| s2.borrow_mut().push(*c)).unwrap();
    let c = clock.clone();
    let mut k = 0;
    ex.add(Task::new(MS).deadline(300_000).budget(100_000), move |_| {
        k += 1;
        c.work(if k % 3 == 0 { 400_000 } else { 50_000 });
        Control::Continue
    })
    .unwrap();
    ex.add(Task::new(2 * MS), logger(&Rc::default(), &clock, 20_000))
        .unwrap();
    assert_eq!(ex.run_until(12).unwrap(), 12);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 12);
    let stats = ex.stats();
    for (i, s) in stats.iter().enumerate() {
        let mine: Vec<&Completion> = seen.iter().filter(|c| c.release.task.0 == i).collect();
        assert_eq!(mine.len() as u64, s.releases);
        let misses = mine.iter().filter(|c| c.deadline_missed).count() as u64;
        let over = mine.iter().filter(|c| c.budget_overrun).count() as u64;
        assert_eq!((misses, over), (s.deadline_misses, s.budget_overruns));
        let max = mine.iter().map(|c| c.response).max();
        assert_eq!(max, s.response.as_ref().map(|r| r.max));
        for c in &mine {
            assert_eq!(c.response, c.end - c.release.expiry);
            assert!(c.end >= c.release.start);
            assert_eq!(c.execution, None, "not measured");
        }
    }
    assert!(seen.iter().any(|c| c.woken) && seen.iter().any(|c| !c.woken));
    assert!(
        ex.on_complete(|_| ()).is_err(),
        "no observer after the start"
    );
}

/// Relative: a release that works 2.5 periods makes the next two expiries pass (counted as
/// overruns), and the grid moves so that the next release is one period after the late one
/// started; the other task's grid does not move.
#[test]
fn relative_overrun_moves_only_the_late_task() {
    let clock = VClock::default();
    let log: Log = Rc::default();
    let mut ex = executive(&clock, vec![0], QueueKind::Heap);
    let c = clock.clone();
    let (l1, mut k) = (log.clone(), 0);
    let late = ex
        .add(Task::new(MS).overrun(OverrunPolicy::Relative), move |r| {
            l1.borrow_mut().push(*r);
            k += 1;
            c.work(if k == 2 { 2_500_000 } else { 10_000 });
            Control::Continue
        })
        .unwrap();
    let other = ex.add(Task::new(4 * MS), logger(&log, &clock, 0)).unwrap();
    ex.run_for(10 * MS).unwrap();
    let t0 = ex.t0().unwrap();
    let l = log.borrow();
    let mine: Vec<_> = l.iter().filter(|r| r.task == late).collect();
    // Releases 0 and 1 on time; release 1 ends at t0 + 3.5 ms, so release 2 (t0 + 2 ms)
    // starts 1.5 ms late with expiry t0 + 3 ms passed: 1 overrun, and the grid moves.
    assert_eq!((mine[2].expiry, mine[2].overruns), (t0 + 2 * MS, 1));
    assert_eq!(mine[2].start, t0 + 3_500_000);
    assert_eq!(mine[3].expiry, t0 + 4_500_000);
    assert_eq!(mine[4].expiry - mine[3].expiry, MS);
    assert_eq!(ex.stats()[late.0].overruns, 1);
    let theirs: Vec<_> = l
        .iter()
        .filter(|r| r.task == other)
        .map(|r| r.expiry)
        .collect();
    assert_eq!(theirs[..3], [t0, t0 + 4 * MS, t0 + 8 * MS]);
}

#[test]
fn bad_tasks_and_empty_sets_are_refused() {
    let mut ex = Executive::new(Strategy::Sleep);
    assert_eq!(ex.run_until(1).unwrap_err().errno(), libc::EINVAL);
    assert_eq!(
        ex.add(Task::new(0), |_| Control::Continue)
            .unwrap_err()
            .errno(),
        libc::EINVAL
    );
    assert_eq!(ex.run_for(-1).unwrap_err().errno(), libc::EINVAL);
}

/// The naive reference: every task's grid as an explicit list of expiries (repeated
/// addition), fixed-priority dispatch by scanning all tasks, missed releases counted by
/// walking the list; a relative overrun moves the task's grid to start at the late start.
/// Returns the releases in order.
fn event_list_simulation(
    tasks: &[(Nanos, Nanos, OverrunPolicy, i32)], // period, work, policy, priority
    latencies: &[Nanos],
    releases: usize,
) -> Vec<(usize, Nanos, Nanos, u64)> {
    let t0 = START + tasks.iter().map(|t| t.0).min().unwrap();
    // Where each task's grid starts (moved by relative overruns).
    let mut base = vec![t0; tasks.len()];
    // Grid point k of task i, computed on demand: a starved low-priority task may fall any
    // number of periods behind.
    let grid = |base: &[Nanos], i: usize, k: usize| base[i] + k as Nanos * tasks[i].0;
    let mut next = vec![0usize; tasks.len()]; // index into the grid
    let mut counted = vec![0usize; tasks.len()]; // grid points up to here counted as overruns
    let (mut now, mut lat) = (START, 0usize);
    let mut out = Vec::new();
    while out.len() < releases {
        let pick = |base: &[Nanos], now: Nanos| {
            (0..tasks.len())
                .filter(|&i| grid(base, i, next[i]) <= now)
                .min_by_key(|&i| (std::cmp::Reverse(tasks[i].3), tasks[i].0, i))
        };
        let (i, start) = match pick(&base, now) {
            Some(i) => (i, now),
            None => {
                let e = (0..tasks.len())
                    .map(|i| grid(&base, i, next[i]))
                    .min()
                    .unwrap();
                now = (e + latencies[lat]).max(now);
                lat = (lat + 1) % latencies.len();
                (pick(&base, now).unwrap(), now)
            }
        };
        let k = next[i];
        let mut overruns = 0;
        let mut j = k + 1;
        while grid(&base, i, j) < start {
            if j > counted[i] {
                overruns += 1;
                counted[i] = j;
            }
            j += 1;
        }
        let expiry = grid(&base, i, k);
        next[i] = match tasks[i].2 {
            OverrunPolicy::Skip => j,
            OverrunPolicy::CatchUp => k + 1,
            OverrunPolicy::Relative if j > k + 1 => {
                base[i] = start - k as Nanos * tasks[i].0;
                counted[i] = k;
                k + 1
            }
            OverrunPolicy::Relative => k + 1,
        };
        out.push((i, expiry, start, overruns));
        now = start + tasks[i].1;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Per-task releases and missed-release accounting equal the naive simulation's, for
    /// random period sets, work (up to twice the period: overruns), latencies and policies.
    #[test]
    fn overrun_accounting_matches_an_event_list_simulation(
        tasks in proptest::collection::vec(
            (1i64..40, 0i64..80, 0usize..3, 0i32..2), 1..6),
        latencies in proptest::collection::vec(0i64..30_000, 1..5),
        heap in any::<bool>(),
    ) {
        let tasks: Vec<_> = tasks
            .into_iter()
            .map(|(p, w, c, prio)| {
                let period = p * 1_000;
                let policy =
                    [OverrunPolicy::Skip, OverrunPolicy::CatchUp, OverrunPolicy::Relative][c];
                (period, w * period / 40, policy, prio)
            })
            .collect();
        const N: usize = 300;
        let expected = event_list_simulation(&tasks, &latencies, N);
        let clock = VClock::default();
        let log: Log = Rc::default();
        let queue = if heap { QueueKind::Heap } else { QueueKind::Scan };
        let mut ex = executive(&clock, latencies.clone(), queue);
        for &(period, work, policy, prio) in &tasks {
            ex.add(Task::new(period).overrun(policy).priority(prio), logger(&log, &clock, work))
                .unwrap();
        }
        prop_assert_eq!(ex.run_until(N as u64).unwrap(), N as u64);
        let got: Vec<_> = log
            .borrow()
            .iter()
            .map(|r| (r.task.0, r.expiry, r.start, r.overruns))
            .collect();
        prop_assert_eq!(&got, &expected);
        let stats = ex.stats();
        for (i, s) in stats.iter().enumerate() {
            let mine = expected.iter().filter(|e| e.0 == i);
            prop_assert_eq!(s.releases, mine.clone().count() as u64);
            prop_assert_eq!(s.overruns, mine.map(|e| e.3).sum::<u64>());
        }
    }
}

/// 85 Hz and 30 Hz (periods not whole ns) beside 1 ms, dispatched on the mock clock: every
/// release is at `t0 + round(k·10⁹/f)`; after 10⁹ skipped periods of the 1 ms task (a jump of
/// 10⁶ s, a multiple of the 200 ms hyperperiod) all three grids land exactly on it.
#[test]
fn rates_that_are_not_whole_ns_stay_exact() {
    let clock = VClock::default();
    let log: Log = Rc::default();
    let mut ex = executive(&clock, vec![0], QueueKind::Heap);
    let fast = ex.add(Task::new(MS), logger(&log, &clock, 0)).unwrap();
    let hz85 = ex.add(Task::hz(85), logger(&log, &clock, 0)).unwrap();
    let hz30 = ex.add(Task::hz(30), logger(&log, &clock, 0)).unwrap();
    // 200 ms: 200 + 17 + 6 releases, then the first ones of the next hyperperiod.
    assert_eq!(ex.run_until(223 + 3).unwrap(), 226);
    let t0 = ex.t0().unwrap();
    for r in log.borrow().iter() {
        let f: i128 = if r.task == hz85 {
            85
        } else if r.task == hz30 {
            30
        } else {
            1000
        };
        let exact2 = 2 * i128::from(r.index) * 1_000_000_000; // 2·f·(exact offset)
        let offset = i128::from(r.expiry - t0);
        assert!((2 * f * offset - exact2).abs() <= f, "{r:?}");
        assert_eq!(r.overruns, 0);
    }
    let l = log.borrow();
    let last_of = |t| l.iter().rev().find(|r| r.task == t).unwrap().index;
    assert_eq!((last_of(fast), last_of(hz85), last_of(hz30)), (200, 17, 6));
    drop(l);
    let hyper = 200 * MS;
    let jump: Nanos = 5_000_000 * hyper; // 10⁶ s: 10⁹ periods of the 1 ms task
    clock.set(t0 + jump);
    log.borrow_mut().clear();
    assert_eq!(ex.run_until(6).unwrap(), 6);
    let l = log.borrow();
    // The late pending releases run first; then the three released at exactly t0 + jump.
    let on_time: Vec<_> = l.iter().filter(|r| r.expiry == t0 + jump).collect();
    assert_eq!(on_time.len(), 3, "{l:?}");
    let index = |t| on_time.iter().find(|r| r.task == t).unwrap().index;
    assert_eq!(
        (index(fast), index(hz85), index(hz30)),
        (1_000_000_000, 85_000_000, 30_000_000)
    );
}
