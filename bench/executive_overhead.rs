//! The executive's cost per activation over a bare `clock_nanosleep` loop.
//!
//! ```sh
//! bench/executive-overhead.sh [ROUNDS] [ACTIVATIONS] [PERIOD_US]   (defaults: 7, 2000, 200)
//! ```
//!
//! Two loops wake `ACTIVATIONS` times every `PERIOD_US` µs on the same thread with the same
//! settings, in alternating order, `ROUNDS` times each:
//!
//! * `bare`: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to `t0 + k·period`, then one
//!   `clock_gettime` — the least a periodic loop can do;
//! * `executive`: one [`tickscope::Executive`] task of that period with an empty callback
//!   (sleep strategy: the same absolute sleep), so what it adds is the dispatch (queue,
//!   grid, overrun rule) and the per-release statistics (three histogram records).
//!
//! Measured: the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) per activation. CPU time,
//! not wall time, so the sleep itself and time spent preempted do not count; what the
//! kernel spends in the sleep's system call counts for both loops alike and cancels in the
//! difference. Printed per round, then min/median/max over rounds of each loop and of the
//! difference (executive − bare, paired by round), and the load average before and after.

use tickscope::{Control, Executive, Strategy, Task};
use tickscope_engine::time::{read_clock, to_timespec, Nanos};

fn cpu_now() -> Nanos {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU ns per activation of the bare loop.
fn bare(n: u64, period: Nanos) -> f64 {
    let start = read_clock(libc::CLOCK_MONOTONIC);
    let cpu0 = cpu_now();
    let mut sink = 0i64;
    for k in 1..=n as i64 {
        let ts = to_timespec(start + k * period);
        // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be NULL for an
        // absolute sleep.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        sink = sink.wrapping_add(read_clock(libc::CLOCK_MONOTONIC));
    }
    std::hint::black_box(sink);
    (cpu_now() - cpu0) as f64 / n as f64
}

/// CPU ns per activation of an executive running one task with an empty callback.
fn executive(n: u64, period: Nanos) -> f64 {
    let mut ex = Executive::new(Strategy::Sleep);
    ex.add(Task::new(period), |r| {
        std::hint::black_box(r);
        Control::Continue
    })
    .expect("a valid task");
    let cpu0 = cpu_now();
    let ran = ex.run_until(n).expect("the executive runs");
    (cpu_now() - cpu0) as f64 / ran.max(1) as f64
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn spread(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

fn main() {
    let arg = |i: usize, d: u64| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let (rounds, n, period_us) = (arg(1, 7).max(1), arg(2, 2000).max(10), arg(3, 200).max(1));
    let period = period_us as Nanos * 1000;
    println!("load average before: {}", load());
    println!("{rounds} rounds, {n} activations each, period {period_us} µs, CPU ns per activation");
    println!("round   bare ns   executive ns   difference ns");
    // Warm both paths up (page faults, caches) before measuring.
    bare(n / 10, period);
    executive(n / 10, period);
    let (mut b, mut e, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let (x, y) = if r % 2 == 0 {
            let x = bare(n, period);
            (x, executive(n, period))
        } else {
            let y = executive(n, period);
            (bare(n, period), y)
        };
        println!("{:>5} {:>9.0} {:>14.0} {:>15.0}", r + 1, x, y, y - x);
        b.push(x);
        e.push(y);
        d.push(y - x);
    }
    for (name, v) in [
        ("bare", &mut b),
        ("executive", &mut e),
        ("difference", &mut d),
    ] {
        let (lo, mid, hi) = spread(v);
        println!("{name:<10} min {lo:>7.0}  median {mid:>7.0}  max {hi:>7.0} ns");
    }
    println!("goal: difference median ≤ 200 ns");
    println!("load average after: {}", load());
}
