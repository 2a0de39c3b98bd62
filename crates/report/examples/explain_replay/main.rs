//! `monitor --explain` for a day at a 64-CPU host's volume, replayed (see `replay.rs`):
//! prints, per virtual hour, the late wake-ups replayed, the records decoded, the process's
//! resident memory and the sizes of everything the path keeps; then RSS min/median/max and
//! the first against the last hour. Exits 1 when memory grew (last hour's RSS more than
//! 1 MiB above the first hour's) or a bounded structure is over its bound; 2 on bad usage.
//!
//! Usage: explain_replay [--hours H=24] [--threads N=64] [--rate-hz R=1000]
//! [--late-permille P=1] [--variants V=100000] [--publish-s S=10] [--max-wall-s W=1800]
//! [--window-keep-ms K=3000] [--fixtures DIR]
//!
//! Late wake-ups per virtual second and thread: R × P / 1000 (1 kHz × 0.1 %: 1), evenly
//! spaced; the `monitor` counters and the textfile are brought up to date every S virtual
//! seconds. The event window keeps K ms behind its newest event (the controller's 3 s). A
//! replay that reaches W seconds of wall time stops and says at which hour.

mod replay;

use replay::Replay;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::time::Instant;

fn rss_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().next().unwrap_or("?").to_string())
        .unwrap_or_else(|_| "?".into())
}

struct Args {
    hours: u64,
    threads: usize,
    rate_hz: u64,
    late_permille: u64,
    variants: u64,
    publish_s: u64,
    max_wall_s: u64,
    window_keep_ms: u64,
    fixtures: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        hours: 24,
        threads: 64,
        rate_hz: 1000,
        late_permille: 1,
        variants: 100_000,
        publish_s: 10,
        max_wall_s: 1800,
        window_keep_ms: (replay::WINDOW_KEEP_NS / 1_000_000) as u64,
        fixtures: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../explain/tests/fixtures/oracle"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let num = || -> Result<u64, String> {
            value.parse::<u64>().ok().filter(|&v| v > 0).ok_or(format!(
                "{flag}: expected a positive integer, got {value:?}"
            ))
        };
        match flag.as_str() {
            "--hours" => a.hours = num()?,
            "--threads" => a.threads = num()? as usize,
            "--rate-hz" => a.rate_hz = num()?,
            "--late-permille" => a.late_permille = num()?,
            "--variants" => a.variants = num()?,
            "--publish-s" => a.publish_s = num()?,
            "--max-wall-s" => a.max_wall_s = num()?,
            "--window-keep-ms" => a.window_keep_ms = num()?,
            "--fixtures" => a.fixtures = PathBuf::from(&value),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if a.threads > 4096 || a.rate_hz * a.late_permille > 1_000_000_000 {
        return Err("at most 4096 threads and 1e6 late wake-ups per second and thread".into());
    }
    Ok(a)
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("explain_replay: {e}");
            std::process::exit(2);
        }
    };
    let keep_ns = a.window_keep_ms.min(3_600_000) as i64 * 1_000_000;
    let mut r = match Replay::load(&a.fixtures, a.threads, a.variants, keep_ns) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("explain_replay: {e}");
            std::process::exit(2);
        }
    };
    // Late wake-ups per virtual second and thread, as a rate in millihertz.
    let per_s_milli = a.rate_hz * a.late_permille;
    println!(
        "# {} threads x {} Hz x {}/1000 late = {:.1} late wake-ups/s ({} recordings, names from {} variants, counters every {} s, window {} ms); load before {}",
        a.threads,
        a.rate_hz,
        a.late_permille,
        a.threads as f64 * per_s_milli as f64 / 1000.0,
        r.recordings(),
        a.variants,
        a.publish_s,
        a.window_keep_ms,
        load()
    );
    println!(
        "{:>4} {:>11} {:>12} {:>8} {:>6} {:>6} {:>5} {:>7} {:>7} {:>7} {:>8} {:>7} {:>6}",
        "hour",
        "late",
        "records",
        "rss_KiB",
        "comms",
        "names",
        "det",
        "culprit",
        "window",
        "prom_B",
        "wall_s",
        "counted",
        "load"
    );
    let started = Instant::now();
    let mut hourly: Vec<u64> = Vec::new();
    let mut failed = Vec::new();
    // The next late wake-up of every thread, in virtual milliseconds ×1000 (µs), earliest
    // first.
    let step_us = 1_000_000_000 / per_s_milli; // µs between two late wake-ups of a thread
    let mut next_us: BinaryHeap<Reverse<(u64, usize)>> = (0..a.threads)
        .map(|k| Reverse((k as u64 * 997 % step_us.max(1), k)))
        .collect();
    let mut cut = false;
    for hour in 1..=a.hours {
        for second in (hour - 1) * 3600..hour * 3600 {
            let end_us = (second + 1) * 1_000_000;
            // In time order across the threads, as a collector receives them: one thread's
            // whole second before the next one's put events a second older than the newest
            // into the window, which then held up to two seconds of some CPUs.
            while let Some(&Reverse((t, k))) = next_us.peek() {
                if t >= end_us {
                    break;
                }
                next_us.pop();
                r.late_wakeup(k, t as i64 * 1000);
                next_us.push(Reverse((t + step_us, k)));
            }
            if (second + 1) % a.publish_s == 0 {
                if let Err(e) = r.publish() {
                    eprintln!("explain_replay: {e}");
                    std::process::exit(1);
                }
            }
            if started.elapsed().as_secs() >= a.max_wall_s {
                println!(
                    "# stopped at {:.2} virtual hours: --max-wall-s {} reached",
                    second as f64 / 3600.0,
                    a.max_wall_s
                );
                cut = true;
                break;
            }
        }
        let _ = r.publish();
        let s = r.sizes();
        let rss = rss_kib("VmRSS:");
        hourly.push(rss);
        let (counted, late) = r.counted();
        println!(
            "{:>4} {:>11} {:>12} {:>8} {:>6} {:>6} {:>5} {:>7} {:>7} {:>7} {:>8.1} {:>7} {:>6}",
            hour,
            r.late,
            r.records,
            rss,
            s.comms,
            s.names,
            s.details,
            s.culprit_series,
            s.window,
            r.textfile_bytes,
            started.elapsed().as_secs_f64(),
            if counted == late { "yes" } else { "NO" },
            load()
        );
        if counted != late {
            failed.push(format!("hour {hour}: counters {counted} != late {late}"));
        }
        if s.comms > 4096 || s.details > Replay::details_bound() {
            failed.push(format!(
                "hour {hour}: a bounded table is over its bound: {s:?}"
            ));
        }
        if s.culprit_series > 5 * a.threads || s.breakdowns > replay::KEEP_BREAKDOWNS {
            failed.push(format!(
                "hour {hour}: series or breakdowns over bound: {s:?}"
            ));
        }
        if cut {
            break;
        }
    }
    let mut sorted = hourly.clone();
    sorted.sort_unstable();
    if let (Some(first), Some(last)) = (hourly.first(), hourly.last()) {
        println!(
            "# RSS KiB over {} hourly samples: min {} median {} max {}; first hour {} last hour {} (growth {:+} KiB); peak (VmHWM) {} KiB; wall {:.0} s; load after {}",
            hourly.len(),
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1],
            first,
            last,
            *last as i64 - *first as i64,
            rss_kib("VmHWM:"),
            started.elapsed().as_secs_f64(),
            load()
        );
        if *last > first + 1024 {
            failed.push(format!("RSS grew from {first} KiB to {last} KiB"));
        }
    }
    let causes: Vec<String> = r.causes().iter().map(|(c, n)| format!("{c} {n}")).collect();
    println!("# causes: {}", causes.join(", "));
    for f in &failed {
        println!("FAIL: {f}");
    }
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
