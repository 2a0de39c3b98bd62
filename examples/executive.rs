//! Three periodic tasks in one thread: a 1 ms control step, a 2.5 ms (400 Hz) sensor read
//! and a 10 ms logger, each on its own exact grid, with a plan before and per-task
//! statistics after.
//!
//! ```sh
//! cargo run -p tickscope --example executive -- [MILLISECONDS]   # default 1000
//! ```

use std::hint::black_box;
use tickscope::{Control, Executive, Strategy, Task};

/// Spins about `n` iterations: stand-in work.
fn work(n: u64) {
    for i in 0..n {
        black_box(i);
    }
}

fn main() -> Result<(), tickscope::Error> {
    let ms: i64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 1000,
        Some(Ok(v)) if v > 0 => v,
        Some(_) => {
            eprintln!("usage: executive [MILLISECONDS > 0]");
            std::process::exit(2);
        }
    };
    let mut ex = Executive::new(Strategy::Sleep);
    ex.add(Task::new(1_000_000).budget(50_000).name("control"), |_| {
        work(2_000);
        Control::Continue
    })?;
    ex.add(Task::new(2_500_000).budget(200_000).name("imu"), |_| {
        work(8_000);
        Control::Continue
    })?;
    ex.add(Task::new(10_000_000).name("logger"), |r| {
        if r.overruns > 0 {
            eprintln!("logger: {} overruns", r.overruns);
        }
        Control::Continue
    })?;
    let plan = ex.plan();
    println!(
        "plan: hyperperiod {} us, utilisation {:.3} (Liu-Layland bound {:.3}), {}",
        plan.hyperperiod_ns.unwrap_or(0) / 1000,
        plan.utilisation,
        plan.liu_layland_bound,
        if plan.schedulable() {
            "schedulable"
        } else {
            "NOT schedulable"
        }
    );
    for t in &plan.tasks {
        println!(
            "  {:<8} worst response {} us (blocking {} us)",
            t.name,
            t.response_ns
                .map_or("unbounded".into(), |r| format!("{:.1}", r as f64 / 1e3)),
            t.blocking_ns as f64 / 1e3
        );
    }
    let n = ex.run_for(ms * 1_000_000)?;
    println!("{n} releases in {ms} ms");
    for (i, s) in ex.stats().iter().enumerate() {
        println!(
            "task {i} {:<8} releases {:6}  overruns {}  deadline misses {}  latency max {:8.1} us  response max {:8.1} us",
            s.name,
            s.releases,
            s.overruns,
            s.deadline_misses,
            s.latency.as_ref().map_or(0, |l| l.max) as f64 / 1e3,
            s.response.as_ref().map_or(0, |r| r.max) as f64 / 1e3,
        );
    }
    Ok(())
}
