//! The periodic library's strategies against a loop written the Cpp-Periodic-Task README's way.
//!
//! ```sh
//! bench/periodic.sh [SECONDS_EACH] [ROUNDS] [FIFO_PRIORITY]     (defaults: 10 s, 5 rounds)
//! ```
//!
//! Loops compared, every one at the same period on the same thread with the same settings:
//!
//! * `sleep`, `busy`, `hybrid`: [`tickscope::Periodic`] with that strategy and its
//!   defaults (grid `t0 + k·period`, skip passed expiries; busy: a kernel trip every 1000
//!   clock reads; hybrid: auto margin), and `hybrid-100us` with a fixed 100 µs margin;
//! * `sleep-rel`: after each wake-up, `clock_nanosleep(CLOCK_MONOTONIC, 0, period)` — sleep for
//!   the period, as the Cpp-Periodic-Task sleep loop does, so each wake-up's lateness is added to the
//!   next period.
//!
//! Each loop runs `SECONDS_EACH` in total, split into `ROUNDS` slices, interleaved with the
//! others in a rotating order, so load changes on the machine are shared out; 1.1 s of
//! rest between slices lets RT throttling from a spinning loop run out. The first 300 ticks
//! of every slice are a warm-up, not measured (the auto margin calibrates in its first
//! 256). Per loop:
//!
//! * the mean period: the slope of a least-squares line through (grid step, wake time),
//!   pooled over the slices, and its error against the nominal period — the drift (the
//!   Cpp-Periodic-Task loop runs slow by its mean latency). A fit rather than (last − first) / steps,
//!   so that one late wake-up at the end of a slice does not pass for drift;
//! * p99 and max of |dt − period| over consecutive wake-ups;
//! * p99 wake-up latency against the grid (library loops only);
//! * CPU: the thread's CPU time over the wall time, % of one core.

use std::time::Duration;
use tickscope::{Margin, Nanos, Periodic, Strategy};
use tickscope_engine::histogram::SignedHistogram;
use tickscope_engine::moments::Moments;
use tickscope_engine::setup::{privileges, Policy, PolicyGuard, TimerSlackGuard};
use tickscope_engine::time::{read_clock, to_timespec, NS_PER_SEC};

/// One loop under test and everything measured for it.
struct Subject {
    name: &'static str,
    strategy: Option<Strategy>,
    unavailable: Option<String>,
    dt: Moments,
    dt_dev: SignedHistogram,
    latency: SignedHistogram,
    wakes: u64,
    /// Σ over slices of Σ(k − k̄)(t − t̄) and Σ(k − k̄)², for the pooled slope.
    sxy: f64,
    sxx: f64,
    overruns: u64,
    cpu_ns: Nanos,
    wall_ns: Nanos,
    /// The hybrid's margin at the end of each slice, ns.
    margins: Vec<Nanos>,
}

impl Subject {
    fn new(name: &'static str, strategy: Option<Strategy>) -> Self {
        Subject {
            name,
            strategy,
            unavailable: None,
            dt: Moments::default(),
            dt_dev: SignedHistogram::new(),
            latency: SignedHistogram::new(),
            wakes: 0,
            sxy: 0.0,
            sxx: 0.0,
            overruns: 0,
            cpu_ns: 0,
            wall_ns: 0,
            margins: Vec::new(),
        }
    }
}

fn now() -> Nanos {
    read_clock(libc::CLOCK_MONOTONIC)
}

fn thread_cpu() -> Nanos {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Records a slice's wake-ups: `(grid step, woke)` pairs in order.
fn record_slice(s: &mut Subject, period: Nanos, wakes: &[(u64, Nanos)]) {
    s.wakes += wakes.len() as u64;
    for w in wakes.windows(2) {
        let dt = w[1].1 - w[0].1;
        // dt over skipped periods is still one dt, as `tickscope run` records it.
        s.dt.record(dt);
        s.dt_dev.record(dt - period);
    }
    if let Some(&(k0, t0)) = wakes.first() {
        // Relative to the first wake-up, so that f64 keeps ns precision.
        let n = wakes.len() as f64;
        let rel = |&(k, t): &(u64, Nanos)| ((k - k0) as f64, (t - t0) as f64);
        let (sk, st) = wakes
            .iter()
            .map(rel)
            .fold((0.0, 0.0), |a, (k, t)| (a.0 + k, a.1 + t));
        let (mk, mt) = (sk / n, st / n);
        for (k, t) in wakes.iter().map(rel) {
            s.sxy += (k - mk) * (t - mt);
            s.sxx += (k - mk) * (k - mk);
        }
    }
}

/// Ticks at the start of every slice that are run but not measured: the hybrid's auto
/// margin calibrates during its first 256 periods, and every loop gets the same warm-up.
const WARMUP_TICKS: u64 = 300;

/// What one slice measured: wake-ups after the warm-up, and the CPU and wall time they took.
struct Slice {
    cpu_ns: Nanos,
    wall_ns: Nanos,
}

/// Starts the slice's clocks after the warm-up.
struct Meter {
    ticks: u64,
    start: Option<(Nanos, Nanos)>,
}

impl Meter {
    fn new() -> Self {
        Meter {
            ticks: 0,
            start: None,
        }
    }

    /// Counts a tick; true once it is past the warm-up (and starts the clocks then).
    fn measuring(&mut self) -> bool {
        self.ticks += 1;
        if self.ticks == WARMUP_TICKS {
            self.start = Some((thread_cpu(), now()));
        }
        self.ticks > WARMUP_TICKS
    }

    fn finish(&self) -> Slice {
        let (cpu0, wall0) = self.start.unwrap_or((thread_cpu(), now()));
        Slice {
            cpu_ns: thread_cpu() - cpu0,
            wall_ns: now() - wall0,
        }
    }
}

/// Runs one slice of the Cpp-Periodic-Task-style loop: sleep for the period after each wake-up.
fn relative_slice(period: Nanos, slice: Nanos, wakes: &mut Vec<(u64, Nanos)>) -> Slice {
    let ts = to_timespec(period);
    let end = now() + slice;
    let mut meter = Meter::new();
    let mut k = 0u64;
    loop {
        // SAFETY: `ts` is a valid timespec; the remainder pointer may be null.
        let rc =
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
        let woke = now();
        if rc == 0 && meter.measuring() {
            wakes.push((k, woke));
            k += 1;
        }
        if woke >= end {
            return meter.finish();
        }
    }
}

/// Runs one slice of a library loop; `None` if the loop could not run.
fn library_slice(
    s: &mut Subject,
    strategy: Strategy,
    period: Nanos,
    slice: Nanos,
    wakes: &mut Vec<(u64, Nanos)>,
) -> Option<Slice> {
    let fail = |s: &mut Subject, e: tickscope::Error| {
        s.unavailable = Some(e.to_string());
        None
    };
    let mut looper = match Periodic::new(period, strategy) {
        Ok(l) => l,
        Err(e) => return fail(s, e),
    };
    let end = now() + slice;
    let mut meter = Meter::new();
    loop {
        let t = match looper.wait() {
            Ok(t) => t,
            Err(e) => return fail(s, e),
        };
        if meter.measuring() {
            wakes.push((t.index, t.woke));
            s.latency.record(t.latency);
            s.overruns += t.overruns;
        }
        if t.woke >= end {
            break;
        }
    }
    let measured = meter.finish();
    if let Some(m) = looper.stats().method.margin {
        s.margins.push(m.final_ns);
    }
    Some(measured)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut num = |default: i64| {
        args.next()
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let seconds = num(10);
    let rounds = num(5).max(1);
    let fifo = num(0);
    let period: Nanos = 1_000_000;
    let slice = seconds * NS_PER_SEC / rounds;

    // The same settings for every loop: this thread's slack and, if asked, SCHED_FIFO.
    let _slack = TimerSlackGuard::set(1).expect("timer slack");
    let _policy = (fifo > 0).then(|| {
        let p = Policy::Fifo {
            priority: fifo as u8,
        };
        PolicyGuard::apply(p).unwrap_or_else(|e| {
            eprintln!("{}", privileges::explain_policy_error(&p, &e));
            std::process::exit(2)
        })
    });
    let mut subjects = vec![
        Subject::new("sleep", Some(Strategy::Sleep)),
        Subject::new("busy", Some(Strategy::busy())),
        Subject::new("hybrid", Some(Strategy::hybrid())),
        Subject::new(
            "hybrid-100us",
            Some(Strategy::Hybrid {
                margin: Margin::Fixed(100_000),
            }),
        ),
        Subject::new("sleep-rel", None),
    ];
    let n = subjects.len();
    let mut wakes = Vec::with_capacity((slice / period) as usize + 16);
    eprintln!(
        "period {} µs, {seconds} s per loop in {rounds} slices of {} ms, {}",
        period / 1000,
        slice / 1_000_000,
        if fifo > 0 {
            format!("SCHED_FIFO {fifo}")
        } else {
            "SCHED_OTHER".into()
        }
    );
    for round in 0..rounds as usize {
        for i in 0..n {
            let s = &mut subjects[(round + i) % n];
            if s.unavailable.is_some() {
                continue;
            }
            eprintln!("round {}: {}", round + 1, s.name);
            wakes.clear();
            let measured = match s.strategy {
                Some(strategy) => library_slice(s, strategy, period, slice, &mut wakes),
                None => Some(relative_slice(period, slice, &mut wakes)),
            };
            if let Some(m) = measured {
                s.cpu_ns += m.cpu_ns;
                s.wall_ns += m.wall_ns;
            }
            record_slice(s, period, &wakes);
            // Let the machine settle between loops: after a spinning loop under SCHED_FIFO
            // the kernel may still be holding RT tasks back for the rest of its 1 s period.
            std::thread::sleep(Duration::from_millis(1100));
        }
    }

    println!(
        "{:<12} {:>7} {:>13} {:>10} {:>9} {:>12} {:>12} {:>12} {:>7} {:>6}",
        "loop",
        "wakes",
        "period (fit)",
        "error ns",
        "error %",
        "p99|dt-P| µs",
        "max|dt-P| µs",
        "p99 lat µs",
        "overruns",
        "CPU %"
    );
    let us = |ns: Nanos| ns as f64 / 1e3;
    for s in &subjects {
        if let Some(why) = &s.unavailable {
            println!("{:<12} not measured: {why}", s.name);
            continue;
        }
        let mean = if s.sxx > 0.0 { s.sxy / s.sxx } else { f64::NAN };
        let err = mean - period as f64;
        let max_dev =
            s.dt.max()
                .unwrap_or(0)
                .abs_diff(period)
                .max(s.dt.min().unwrap_or(0).abs_diff(period));
        let lat = match s.latency.value_at_quantile(0.99) {
            Some(v) => format!("{:.1}", us(v)),
            None => "-".into(),
        };
        println!(
            "{:<12} {:>7} {:>13.1} {:>10.1} {:>9.4} {:>12.1} {:>12.1} {:>12} {:>7} {:>6.1}",
            s.name,
            s.wakes,
            mean,
            err,
            100.0 * err / period as f64,
            us(s.dt_dev.abs_value_at_quantile(0.99).unwrap_or(0)),
            us(max_dev as Nanos),
            lat,
            if s.strategy.is_some() {
                s.overruns.to_string()
            } else {
                "-".into()
            },
            100.0 * s.cpu_ns as f64 / s.wall_ns.max(1) as f64,
        );
    }
    for s in subjects.iter().filter(|s| !s.margins.is_empty()) {
        let m: Vec<String> = s.margins.iter().map(|&m| format!("{:.1}", us(m))).collect();
        println!(
            "{} margin at the end of each slice, µs: {}",
            s.name,
            m.join(" ")
        );
    }
}
