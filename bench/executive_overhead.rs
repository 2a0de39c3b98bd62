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
//!
//! Then the same without the kernel: an executive whose one task (period 1 ns) is always
//! due runs its releases back to back — dispatch, two clock reads and the statistics, no wait
//! and no system call — against a loop of clock reads (the bare loop's user-space work), so
//! that the difference is the executive's user-space cost per activation, free of the
//! system call's and the scheduler's noise.
//!
//! `count bare|executive N PERIOD_US` runs one loop only, silently: the script counts its
//! instructions under callgrind (user space only, independent of the load), so that the
//! executive's instructions per activation over the bare loop are known exactly.

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

/// CPU ns per clock read (`CLOCK_MONOTONIC`, the vDSO): what the bare loop does in user
/// space besides its system call.
fn clock_reads(n: u64) -> f64 {
    let cpu0 = cpu_now();
    let mut sink = 0i64;
    for _ in 0..n {
        sink = sink.wrapping_add(read_clock(libc::CLOCK_MONOTONIC));
    }
    std::hint::black_box(sink);
    (cpu_now() - cpu0) as f64 / n as f64
}

/// CPU ns per release of an executive whose one task (period 1 ns, empty callback) is always
/// already due: releases back to back, no wait and no system call — the executive's user-space
/// work per activation (dispatch, two clock reads, three histogram records) alone.
fn back_to_back(n: u64) -> f64 {
    let mut ex = Executive::new(Strategy::Sleep);
    ex.add(Task::new(1), |r| {
        std::hint::black_box(r);
        Control::Continue
    })
    .expect("a valid task");
    let cpu0 = cpu_now();
    let ran = ex.run_until(n).expect("the executive runs");
    (cpu_now() - cpu0) as f64 / ran.max(1) as f64
}

/// Runs `a` and `b` in alternating order `rounds` times, prints a row per round and
/// min/median/max of each and of the difference `b − a`.
fn interleaved(rounds: u64, names: [&str; 2], a: impl Fn() -> f64, b: impl Fn() -> f64) {
    println!(
        "round {:>9} {:>14} {:>15}",
        names[0], names[1], "difference ns"
    );
    let (mut xs, mut ys, mut ds) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let (x, y) = if r % 2 == 0 {
            let x = a();
            (x, b())
        } else {
            let y = b();
            (a(), y)
        };
        println!("{:>5} {:>9.0} {:>14.0} {:>15.0}", r + 1, x, y, y - x);
        xs.push(x);
        ys.push(y);
        ds.push(y - x);
    }
    for (name, v) in [
        (names[0], &mut xs),
        (names[1], &mut ys),
        ("difference", &mut ds),
    ] {
        let (lo, mid, hi) = spread(v);
        println!("{name:<12} min {lo:>7.0}  median {mid:>7.0}  max {hi:>7.0} ns");
    }
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

/// `count bare|executive N PERIOD_US`: one loop of `N` activations, nothing printed — the
/// program `bench/executive-overhead.sh` runs under callgrind to count instructions.
fn count(args: &[String]) -> bool {
    let [_, first, mode, n, period_us] = args else {
        return false;
    };
    if first != "count" {
        return false;
    }
    let n: u64 = n.parse().unwrap_or(100).max(1);
    let period = period_us.parse::<Nanos>().unwrap_or(1000).max(1) * 1000;
    match mode.as_str() {
        "bare" => std::hint::black_box(bare(n, period)),
        _ => std::hint::black_box(executive(n, period)),
    };
    true
}

fn main() {
    if count(&std::env::args().collect::<Vec<_>>()) {
        return;
    }
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
    // Warm both paths up (page faults, caches) before measuring.
    bare(n / 10, period);
    executive(n / 10, period);
    interleaved(
        rounds,
        ["bare ns", "executive ns"],
        || bare(n, period),
        || executive(n, period),
    );
    let m = 200_000;
    println!();
    println!(
        "user space only: {m} back-to-back releases (one task of period 1 ns, always due: no \
         wait, no system call) against {m} clock reads, CPU ns per activation"
    );
    back_to_back(m / 10);
    interleaved(
        rounds,
        ["clock ns", "executive ns"],
        || clock_reads(m),
        || back_to_back(m),
    );
    println!("goal: the executive adds ≤ 200 ns per activation (the differences above)");
    println!("load average after: {}", load());
}
