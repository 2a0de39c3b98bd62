//! The executive's queue of next expiries: binary heaps against a linear scan, at 2, 10 and
//! 100 tasks, in ns per dispatch.
//!
//! ```sh
//! bench/executive.sh            # builds with --release and runs this
//! ```
//!
//! A dispatch is what the executive does between two releases besides waiting and the
//! task's own work: take the released task of highest priority out of the queue
//! (`pop_released`, or `earliest` then `pop_released` when nothing is released yet) and put
//! it back with its next expiry (`push`). Time is virtual (no clock read, no wait), so the
//! numbers are the data structure's cost alone. Periods are distinct and non-harmonic
//! (1 ms + 37 µs·i), so releases coincide rarely and the order is realistic. Each size runs
//! 2·10^6 dispatches per repetition, 7 repetitions; the median is printed.

use std::hint::black_box;
use std::time::Instant;
use tickscope::executive::queue::{ExpiryQueue, HeapQueue, ScanQueue};
use tickscope::Nanos;

const DISPATCHES: u64 = 2_000_000;
const REPS: usize = 7;

/// ns per dispatch of one run of `DISPATCHES` on `q` with `n` tasks.
fn run(q: &mut impl ExpiryQueue, n: usize) -> f64 {
    let periods: Vec<Nanos> = (0..n as Nanos).map(|i| 1_000_000 + 37_000 * i).collect();
    for (i, &p) in periods.iter().enumerate() {
        q.push(i as u32, p, i as u32);
    }
    let mut now: Nanos = 0;
    let start = Instant::now();
    for _ in 0..DISPATCHES {
        let (task, expiry) = match q.pop_released(now) {
            Some(x) => x,
            None => {
                now = q.earliest().unwrap();
                q.pop_released(now).unwrap()
            }
        };
        let t = task as usize;
        q.push(task, black_box(expiry + periods[t]), t as u32);
    }
    let ns = start.elapsed().as_nanos() as f64 / DISPATCHES as f64;
    black_box(now);
    ns
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    println!("tasks   heap ns/dispatch   scan ns/dispatch");
    for n in [2usize, 10, 100] {
        let heap = median(
            (0..REPS)
                .map(|_| run(&mut HeapQueue::with_capacity(n), n))
                .collect(),
        );
        let scan = median(
            (0..REPS)
                .map(|_| run(&mut ScanQueue::with_capacity(n), n))
                .collect(),
        );
        println!("{n:5}   {heap:16.1}   {scan:16.1}");
    }
}
