//! The gate's false-failure rate and power on synthetic pairs (`bench/gate.sh` runs it):
//! A/A pairs are two independent runs of one model; planted pairs scale every stall of the
//! candidate by `--scale`. Prints each rate with its Clopper–Pearson interval.
//!
//! Usage: `gate_bench [--aa N] [--planted N] [--scale S] [--windows W] [--rules FILE]`

use std::time::Instant;
use tickscope_gate::overruns::clopper_pearson;
use tickscope_gate::synthetic::Model;
use tickscope_gate::{judge, Outcome, Rules};

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_string())
}

fn number<T: std::str::FromStr>(args: &[String], name: &str, default: &str) -> T {
    arg(args, name, default).parse().unwrap_or_else(|_| {
        eprintln!("gate_bench: {name} needs a number");
        std::process::exit(2)
    })
}

fn rate(label: &str, hits: usize, n: usize) {
    let (lo, hi) = clopper_pearson(hits as u64, n as u64, 0.05).unwrap_or((0.0, 1.0));
    println!(
        "{label}: {hits}/{n} = {:.2} % (95 % Clopper–Pearson {:.2} .. {:.2} %)",
        100.0 * hits as f64 / n.max(1) as f64,
        100.0 * lo,
        100.0 * hi
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let aa: usize = number(&args, "--aa", "200");
    let planted: usize = number(&args, "--planted", "100");
    let scale: f64 = number(&args, "--scale", "1.2");
    let windows: usize = number(&args, "--windows", "1200");
    let rules = match args.iter().position(|a| a == "--rules") {
        Some(i) => {
            let text = std::fs::read_to_string(arg(&args, "--rules", "")).unwrap_or_default();
            Rules::from_toml(&text).unwrap_or_else(|e| {
                eprintln!("gate_bench: --rules: {e} ({i})");
                std::process::exit(2)
            })
        }
        None => Rules::default(),
    };
    let base = Model {
        windows,
        bursts_per_window: number(&args, "--bursts", "0.4"),
        ..Model::default()
    };
    let bad = Model {
        stall_scale: scale,
        ..base.clone()
    };
    // Calibration: the planted interference's effect on p99.99, over 20 runs merged each.
    let merged = |m: &Model, seed0: u64| {
        let mut all = Vec::new();
        for s in 0..20 {
            all.extend(m.series(seed0 + s, "").total);
        }
        all.sort();
        tickscope_gate::series::quantile_of(&all, 0.9999).unwrap_or(0) as f64
    };
    let (q0, q1) = (merged(&base, 1_000_000), merged(&bad, 2_000_000));
    println!(
        "model: {} windows of {} wake-ups; stall scale {scale}: p99.99 {:.1} µs -> {:.1} µs ({:+.1} %)",
        base.windows,
        base.rate,
        q0 / 1e3,
        q1 / 1e3,
        100.0 * (q1 / q0 - 1.0)
    );
    let started = Instant::now();
    let mut outcomes = [0usize; 4];
    let mut failures = 0;
    for i in 0..aa {
        let a = base.series(10 * i as u64, "a");
        let b = base.series(10 * i as u64 + 1, "b");
        let v = judge(&a, &b, &rules);
        outcomes[v.outcome as usize] += 1;
        if v.outcome == Outcome::Regression {
            failures += 1;
            for r in &v.reasons {
                println!("  A/A pair {i} failed: {r}");
            }
        }
    }
    println!(
        "A/A outcomes: pass {}, improvement {}, inconclusive {}, regression {}",
        outcomes[0], outcomes[1], outcomes[2], outcomes[3]
    );
    rate("A/A false-failure rate", failures, aa);
    let mut caught = 0;
    let mut by_test = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..planted {
        let a = base.series(10 * i as u64 + 5, "a");
        let b = bad.series(10 * i as u64 + 6, "b");
        let v = judge(&a, &b, &rules);
        if v.outcome == Outcome::Regression {
            caught += 1;
        }
        if i < 3 {
            for f in &v.findings {
                println!(
                    "  planted pair {i}: {} change {:?} interval {:?} p {:?}",
                    f.name, f.change, f.interval, f.p_regression
                );
            }
        }
        for f in &v.findings {
            if f.decision == tickscope_gate::finding::Decision::Regression {
                *by_test.entry(f.name.clone()).or_default() += 1;
            }
        }
    }
    rate(&format!("power (stall scale {scale})"), caught, planted);
    println!("planted pairs failed by test: {by_test:?}");
    let pairs = (aa + planted).max(1);
    println!(
        "{} pairs in {:.1} s ({:.2} s a pair)",
        pairs,
        started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64() / pairs as f64
    );
}
