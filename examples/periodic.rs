//! A 1 kHz loop with tickscope from Rust, ending with the Cpp-Periodic-Task README's
//! statistics block (and what Cpp-Periodic-Task does not show: latency, misses, CPU).
//!
//! ```sh
//! cargo run --release -p tickscope --example periodic -- [TICKS [sleep|busy|hybrid]]
//! ```

use tickscope::{Periodic, Stats, Strategy};

fn main() {
    let mut args = std::env::args().skip(1);
    let ticks: u64 = args.next().map_or(5000, |s| s.parse().unwrap_or(0));
    let name = args.next().unwrap_or_else(|| "sleep".into());
    let Some(strategy) = Strategy::from_name(&name).filter(|_| ticks >= 2) else {
        eprintln!("usage: periodic [TICKS>=2 [sleep|busy|hybrid]]");
        std::process::exit(2);
    };
    if let Err(e) = run(ticks, strategy) {
        eprintln!("periodic: {e}");
        std::process::exit(1);
    }
}

fn run(ticks: u64, strategy: Strategy) -> Result<(), tickscope::Error> {
    let mut looper = Periodic::builder(1_000_000) // 1 ms
        .strategy(strategy)
        .timer_slack(1)
        .build()?;
    for _ in 0..ticks {
        let _tick = looper.wait()?; // the periodic work goes here
    }
    print_stats_block(&strategy.name().to_uppercase(), &looper.stats());
    Ok(())
}

fn print_stats_block(title: &str, s: &Stats) {
    let Some(p) = &s.period else { return };
    let us = |ns: f64| ns / 1e3;
    let period = us(s.period_ns as f64);
    let (mean, dev) = (us(p.mean), us(p.stddev));
    let (lo, hi) = (us(p.min as f64), us(p.max as f64));
    println!("============ {title} ============");
    println!("Sample Size  : {:>15}", p.samples);
    println!("Task Period  : {period:>15.6} us ({:.3} Hz)", 1e6 / period);
    println!("mean         : {mean:>15.6} us ({:.3} Hz)", 1e6 / mean);
    println!("deviation    : {dev:>15.6} us");
    println!("min          : {lo:>15.6} us");
    println!("max          : {hi:>15.6} us");
    println!("diff min max : {:>15.6} us", hi - lo);
    println!("% deviation  : {:>15.6} %", 100.0 * dev / period);
    println!("% minmax     : {:>15.6} %", 100.0 * (hi - lo) / period);
    println!("------------------------------");
    if let Some(l) = &s.latency {
        let (p99, max) = (us(l.p99 as f64), us(l.max as f64));
        println!("latency p99  : {p99:>15.3} us (max {max:.3} us)");
    }
    println!("overruns     : {:>15}", s.overruns);
    println!("cpu          : {:>15.1} %", s.cpu_percent);
}
