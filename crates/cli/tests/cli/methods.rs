//! Every wake-up method against the real kernel, the comparison of several, and the refusals.
//! Real time is involved, so only structure is asserted: samples counted, signs, overruns
//! consistent with `--overrun`, the shape of the result file — never a timing threshold.

use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;
use tickscope_engine::wait::MethodKind;

/// Runs that spin (busy, hybrid) one at a time, so that two of them never hold both CPUs of
/// a small machine at a real-time priority.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

use super::common::tickscope;

/// Runs `tickscope run` with `args` and `--json`; `Err` with the reason when the policy asked
/// for is not permitted here (exit 2, "cannot set …").
fn run_json(args: &[&str]) -> Result<Value, String> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = tickscope()
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && stderr.contains("cannot set") {
        return Err(stderr.trim().to_string());
    }
    assert!(out.status.success(), "{args:?}: {stderr}");
    Ok(serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap())
}

/// 200 ms at 500 µs: 400 expiries per run.
const EXPIRIES: u64 = 400;

/// Checks one run of `--method all` under `overrun`.
fn check_run(run: &Value, policy: &str, overrun: &str) {
    let method = run["method"].as_str().unwrap();
    let s = &run["summary"];
    let samples = s["samples"].as_u64().unwrap();
    let missed = s["overruns"].as_u64().unwrap();
    match overrun {
        // Catch-up wakes once for every expiry before the end.
        "catch-up" => assert_eq!(samples, EXPIRIES, "{method}"),
        // Skip wakes for some and counts the others as missed (a late last wake-up can
        // count expiries past the end as missed too).
        _ => {
            assert!(samples > 0 && samples <= EXPIRIES, "{method}: {samples}");
            assert!(
                samples + missed >= EXPIRIES,
                "{method}: {samples} + {missed}"
            );
        }
    }
    // Every method waits until the expiry: no wake-up comes early.
    let lat = &s["latency_ns"];
    assert_eq!(lat["early"], 0, "{method}: early wake-ups");
    assert!(lat["min"].as_i64().unwrap() >= 0, "{method}");
    assert!(lat["min"].as_i64() <= lat["p50"].as_i64(), "{method}");
    assert!(lat["p99"].as_i64() <= lat["max"].as_i64(), "{method}");
    assert_eq!(s["period_ns"]["nominal"], 500_000);
    let applied = &run["applied"];
    assert_eq!(applied["method"], method);
    assert_eq!(applied["policy"]["policy"], policy, "{method}");
    assert!(!applied["interface"].as_str().unwrap().is_empty());
    assert!(applied["granularity_ns"].as_i64().unwrap() >= 1);
    let cpu = s["cpu_percent"].as_f64().unwrap();
    assert!(cpu >= 0.0, "{method}: cpu {cpu}");
    let report = &s["method_report"];
    match method {
        "hybrid" => {
            let m = &report["margin"];
            assert_eq!(m["mode"], "auto");
            assert!(m["final_ns"].as_i64().unwrap() >= 0);
            assert!(m["sleeps"].as_u64().unwrap() <= samples);
        }
        "busy" => assert!(report["naps"].as_u64().is_some(), "{report}"),
        // Every other thread blocks SIGALRM: the kernel delivers it to the measuring thread.
        "itimer" => assert_eq!(report["signals_forwarded"], 0, "{report}"),
        "timerfd" | "posix-timer" => {
            assert!(
                report["timer_overruns"].as_u64().is_some(),
                "{method}: {report}"
            )
        }
        _ => {}
    }
}

fn every_method_under(policy: &str) {
    for overrun in ["skip", "catch-up"] {
        let args = [
            "--method",
            "all",
            "-i",
            "500us",
            "-D",
            "200ms",
            "-q",
            "--policy",
            policy,
            "--overrun",
            overrun,
            "--busy-sleep-every",
            "1000",
        ];
        let doc = match run_json(&args) {
            Ok(d) => d,
            Err(why) => {
                println!("skipped policy {policy}: not permitted here: {why}");
                return;
            }
        };
        let runs = doc["runs"].as_array().unwrap();
        let names: Vec<&str> = runs.iter().map(|r| r["method"].as_str().unwrap()).collect();
        let all: Vec<&str> = MethodKind::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names, all);
        for (k, run) in runs.iter().enumerate() {
            assert_eq!(
                (run["order"].as_u64(), run["round"].as_u64()),
                (Some(k as u64), Some(1))
            );
            check_run(run, policy, overrun);
        }
        // The top level describes the first run.
        assert_eq!(doc["applied"], runs[0]["applied"]);
        assert_eq!(doc["summary"], runs[0]["summary"]);
    }
}

#[test]
fn every_method_wakes_under_policy_other() {
    every_method_under("other");
}

#[test]
fn every_method_wakes_under_policy_fifo() {
    every_method_under("fifo");
}

#[test]
fn rounds_rotate_and_the_table_has_a_row_per_method() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = tickscope()
        .args([
            "run",
            "--method",
            "busy,hybrid,nanosleep-abs",
            "--rounds",
            "2",
        ])
        .args([
            "-l", "100", "-i", "1ms", "--policy", "other", "--margin", "100us",
        ])
        .args(["--busy-sleep-every", "100", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("comparing 3 methods"), "{stdout}");
    for k in 1..=6 {
        assert!(
            stdout.contains(&format!("[{k}/6] ")),
            "progress line {k}: {stdout}"
        );
    }
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            ["busy ", "hybrid ", "nanosleep-abs "]
                .iter()
                .any(|m| l.contains(&format!("│ {m}")))
        })
        .collect();
    assert_eq!(rows.len(), 3, "{stdout}");
    assert!(stdout.contains("2 rounds: percentiles"), "{stdout}");
    assert!(stdout.contains("margin 100 µs (fixed), "), "{stdout}");

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    let order: Vec<(&str, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap(),
                r["round"].as_u64().unwrap(),
                r["order"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            ("busy", 1, 0),
            ("hybrid", 1, 1),
            ("nanosleep-abs", 1, 2),
            ("hybrid", 2, 3),
            ("nanosleep-abs", 2, 4),
            ("busy", 2, 5),
        ]
    );
    assert!(runs.iter().all(|r| r["summary"]["samples"] == 100));
    assert_eq!(doc["config"]["method_options"]["busy_sleep_every"], 100);
    assert_eq!(doc["config"]["method_options"]["margin"]["fixed"], 100_000);
    assert_eq!(doc["started_at"], runs[0]["started_at"]);
    assert_eq!(doc["ended_at"], runs[5]["ended_at"]);
}

#[test]
fn all_leaves_out_what_cannot_run_and_says_why() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = tickscope()
        .args([
            "run", "--method", "all", "-t", "2", "-l", "20", "-i", "200us", "-q",
        ])
        .args(["--policy", "other", "--busy-sleep-every", "100"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("--method all: leaving out itimer:"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("│ itimer"), "{stdout}");
    assert!(stdout.contains("│ posix-timer"), "{stdout}");
}

#[test]
fn refusals_are_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--method", "itimer", "-t", "2"],
            "only one measuring thread",
        ),
        (&["--method", "itimer", "-i", "85Hz"], "whole µs"),
        (
            &["--method", "nanosleep", "--clock", "realtime"],
            "CLOCK_MONOTONIC",
        ),
        (
            &["--method", "epoll", "--clock", "boottime"],
            "CLOCK_MONOTONIC",
        ),
        (&["--method", "timerfd", "--clock", "tai"], "CLOCK_TAI"),
        (&["--method", "busy,busy"], "twice"),
        (&["--method", "busy,bogus"], "unknown method 'bogus'"),
        (
            &["--method", "busy", "--margin", "10us"],
            "--margin applies",
        ),
        (
            &["--method", "hybrid", "--busy-sleep-every", "10"],
            "--busy-sleep-every applies",
        ),
        (
            &["--method", "busy", "--busy-sleep-every", "0"],
            "at least 1",
        ),
        (
            &["--method", "hybrid", "--margin", "soon"],
            "--margin 'soon'",
        ),
        (&["--rounds", "0"], "--rounds must be at least 1"),
        (&["--rounds", "1001"], "--rounds must be 1..=1000"),
        (
            &["--method", "busy,hybrid", "--csv", "x.csv"],
            "describe a single run",
        ),
        (
            &["--rounds", "2", "--samples", "x.csv"],
            "describe a single run",
        ),
    ];
    for (args, expected) in cases {
        let out = tickscope()
            .arg("run")
            .args(*args)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("tickscope: "), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
