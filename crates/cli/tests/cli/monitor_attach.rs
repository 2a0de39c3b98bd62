//! `tickscope monitor --attach PID` scraped by a real Prometheus: a program's periodic
//! threads exported under monitor's metric names with their `tid` and `comm`, a thread that
//! starts later getting its series, `--explain`'s cause counters, and a clean end when the
//! program exits. Skipped with a reason when not root, without tracefs, or without the
//! `prometheus` binary. Structure only (series present, counts positive, sums adding up).

use super::attach::{cannot_trace, serial, tick};
use super::monitor::{free_port, start_prometheus, text_sum, wait_for, which, Killed};
use crate::common::{bin, tickscope};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The target of `monitor_attach_exports_every_thread_and_ends_with_the_program`, run in a
/// child process of this test binary: a 2 ms loop from the start; once the file named by
/// the variable's value + `.go` exists, a 1 ms loop on a new thread (`late-loop`); once
/// `.stop` exists (or after 60 s), both end and the process exits.
#[test]
fn monitor_attach_target() {
    let Some(base) = std::env::var_os("TICKSCOPE_MONITOR_ATTACH_FILES") else {
        eprintln!("monitor_attach_target: the target of a test, idle unless that test starts it");
        return;
    };
    let base = PathBuf::from(base);
    let (go, stop) = (base.join("go"), base.join("stop"));
    let started = Instant::now();
    let over = move || stop.exists() || started.elapsed() > Duration::from_secs(60);
    tick(Duration::from_millis(2), &|| go.exists() || over());
    let o = over.clone();
    let late = std::thread::Builder::new()
        .name("late-loop".into())
        .spawn(move || tick(Duration::from_millis(1), &o))
        .unwrap();
    tick(Duration::from_millis(2), &over);
    late.join().unwrap();
}

/// The Prometheus query's result vector (empty while nothing matches).
fn query(port: u16, q: &str) -> Vec<serde_json::Value> {
    let body = wait_for(port, &format!("/api/v1/query?query={q}"));
    let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    json["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn monitor_attach_refuses_measurement_flags_and_needs_a_pid() {
    let out = tickscope()
        .args(["monitor", "--attach", "1", "-i", "2ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("-i/--interval") && err.lines().count() == 1,
        "{err}"
    );
    let out = tickscope()
        .args(["monitor", "--tid", "5", "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--tid without --attach");
}

#[test]
fn monitor_attach_exports_every_thread_and_ends_with_the_program() {
    const NAME: &str = "monitor_attach_exports_every_thread_and_ends_with_the_program";
    if let Some(why) = cannot_trace() {
        eprintln!("skipping {NAME}: {why}");
        return;
    }
    let Some(prometheus) = which("prometheus") else {
        eprintln!(
            "skipping {NAME}: the 'prometheus' binary is not installed (Debian package prometheus)"
        );
        return;
    };
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let target = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "monitor_attach::monitor_attach_target",
            "--nocapture",
        ])
        .env("TICKSCOPE_MONITOR_ATTACH_FILES", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = target.id();
    let mut target = Killed(target);
    let (tport, pport) = (free_port(), free_port());
    let _prom = start_prometheus(&prometheus, dir.path(), tport, pport);
    let textfile = dir.path().join("tickscope.prom");
    let monitor = Command::new(bin())
        .args([
            "monitor",
            "--attach",
            &pid.to_string(),
            "--discover",
            "500ms",
        ])
        .args(["-q", "--explain", "--explain-threshold", "10us"])
        .args(["--listen", &format!("127.0.0.1:{tport}"), "--textfile"])
        .arg(&textfile)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut monitor = Killed(monitor);
    // The endpoints are up once the threads are chosen; then the second loop starts.
    wait_for(tport, "/healthz");
    std::fs::write(dir.path().join("go"), "").unwrap();
    let start = Instant::now();
    let late = loop {
        let r = query(pport, "tickscope_wakeups_total%7Bcomm%3D%22late-loop%22%7D");
        let counted = r
            .first()
            .and_then(|s| s["value"][1].as_str()?.parse::<f64>().ok());
        if counted.is_some_and(|n| n > 0.0) {
            break r[0]["metric"].clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "the thread that started later never got its series: {r:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let late_tid = late["tid"].as_str().unwrap().to_string();
    assert_eq!(late["thread"], "1", "{late}");
    assert_eq!(late["method"], "nanosleep-abs", "{late}");
    let first = query(pport, "tickscope_wakeups_total%7Bthread%3D%220%22%7D");
    assert_eq!(first.len(), 1, "{first:?}");
    let first_tid = first[0]["metric"]["tid"].as_str().unwrap().to_string();
    assert_ne!(first_tid, late_tid);
    // The program exits: the monitor detaches and ends by itself, status 0.
    std::fs::write(dir.path().join("stop"), "").unwrap();
    target.0.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = monitor.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "monitor did not end with its target"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    if let Some(mut e) = monitor.0.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "{err}");
    assert!(err.contains("exited; detached"), "{err}");
    // The last textfile: both threads, labelled; every late wake-up under one cause.
    let text = std::fs::read_to_string(&textfile).unwrap();
    for with in [
        format!("tid=\"{first_tid}\""),
        format!("tid=\"{late_tid}\""),
        "comm=\"late-loop\"".to_string(),
    ] {
        assert!(
            text_sum(&text, "tickscope_wakeups_total", &with) > 0.0,
            "{with}\n{text}"
        );
    }
    assert!(
        text.contains("tickscope_explain_info{backend=\"bpf\"} 1")
            || text.contains("tickscope_explain_info{backend=\"tracefs\"} 1"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("tickscope_late_pending{") && l.contains("comm=\"late-loop\"")),
        "the joined thread has no explain series\n{text}"
    );
    let by_cause = text_sum(&text, "tickscope_late_wakeups_total", "cause=");
    let pending = text_sum(&text, "tickscope_late_pending", "thread=");
    let count = text_sum(&text, "tickscope_wakeup_latency_seconds_count", "thread=");
    let above = |le: &str| {
        count
            - text_sum(
                &text,
                "tickscope_wakeup_latency_seconds_bucket",
                &format!("le=\"{le}\""),
            )
    };
    assert_eq!(pending, 0.0, "{text}");
    assert!(
        above("0.00001") <= by_cause && by_cause <= above("0.000005"),
        "{text}"
    );
}
