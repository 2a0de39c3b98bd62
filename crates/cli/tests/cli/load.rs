//! `tickscope run --load`: the load child is gone (checked by PID) after a normal end, after
//! Ctrl-C and after an error; a missing stress-ng is refused with the install command.

use assert_cmd::Command;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn have_stress_ng() -> bool {
    let ok = std::process::Command::new("stress-ng")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: stress-ng is not installed (apt-get install stress-ng)");
    }
    ok
}

/// True when no process with this pid exists and none is left in its process group.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let leader = std::path::Path::new(&format!("/proc/{pid}")).exists();
        let members = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
                // pid (comm) state ppid pgrp …: fields after the last ')'.
                s.rsplit_once(')')
                    .and_then(|(_, r)| r.split_whitespace().nth(2).map(|g| g == pid.to_string()))
                    .unwrap_or(false)
            })
        });
        if !leader && !members {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pid from the `load: … (pid N, …)` line.
fn pid_of(line: &str) -> Option<i32> {
    let rest = line.split("(pid ").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn missing_stress_ng_exits_2_with_the_install_command() {
    let out = Command::cargo_bin("tickscope")
        .unwrap()
        .env("PATH", "/nonexistent")
        .args(["run", "-l", "5", "--policy", "other", "--load", "cpu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("apt-get install stress-ng"), "{err}");
}

#[test]
fn load_is_recorded_and_gone_after_a_normal_end() {
    if !have_stress_ng() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    Command::cargo_bin("tickscope")
        .unwrap()
        .args([
            "run", "-i", "1ms", "-D", "2s", "--policy", "other", "-q", "--load", "cpu:1",
        ])
        .args(["--load-cpus", "0", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let load = &doc["load"];
    let pid = load["process"]["pid"].as_i64().unwrap() as i32;
    assert!(pid > 0);
    assert_eq!(load["process"]["command"][0], "stress-ng");
    assert_eq!(load["process"]["stopped_by_tickscope"], true);
    assert!(load["process"]["exit"]
        .as_str()
        .unwrap()
        .contains("stopped by tickscope"));
    assert_eq!(load["measured_cpus"], serde_json::json!([0]));
    let windows = load["windows"].as_array().unwrap();
    assert!(!windows.is_empty());
    for w in windows {
        let busy = w["cpu_busy_percent"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&busy));
        assert!(w["context_switches_per_s"].as_f64().unwrap() >= 0.0);
    }
    assert!(load["total"]["interrupts_per_s"].as_f64().unwrap() >= 0.0);
    assert!(gone(pid), "load {pid} still running");
}

#[test]
fn load_is_gone_after_ctrl_c() {
    if !have_stress_ng() {
        return;
    }
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tickscope"))
        .args([
            "run", "-i", "1ms", "-D", "60s", "--policy", "other", "--load", "cpu:1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.starts_with("load:").then(|| pid_of(&l)).flatten())
        .expect("a load line with the pid");
    // Past the settling second and into the measurement.
    let _ = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.trim_start().starts_with('1'));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let drain = std::thread::spawn(move || lines.map_while(Result::ok).count());
    let status = child.wait().unwrap();
    drain.join().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "an interrupted run still ends normally"
    );
    assert!(gone(pid), "load {pid} still running after Ctrl-C");
}

#[test]
fn load_is_gone_after_an_error() {
    if !have_stress_ng() {
        return;
    }
    // stress-ng refuses the option and ends during the settling second: an error, exit 2.
    let out = Command::cargo_bin("tickscope")
        .unwrap()
        .args([
            "run",
            "-l",
            "5",
            "--policy",
            "other",
            "--load",
            "stress-ng:\"--no-such-option 1\"",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ended before measuring started"), "{err}");
    let pid = pid_of(&String::from_utf8_lossy(&out.stdout)).expect("load line");
    assert!(gone(pid));
    // A shell load whose command keeps a child: the whole group goes when the run fails.
    let out = Command::cargo_bin("tickscope")
        .unwrap()
        .args([
            "run",
            "-l",
            "5",
            "--policy",
            "fifo",
            "-p",
            "100",
            "--load",
            "exec:\"sleep 30\"",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "priority 100 is refused before the load starts"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("load:"));
}

#[test]
fn an_exec_load_dies_with_a_sigkilled_tickscope() {
    // The shell forks both sleeps (PDEATHSIG alone reaches only the shell); the warden kills
    // the whole group when tickscope is killed. The marker (an odd duration) names them.
    let marker = "sleep 47.0301";
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tickscope"))
        .args(["run", "-i", "1ms", "-D", "60s", "--policy", "other"])
        .args(["--load", &format!("exec:{marker} & {marker}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.starts_with("load:").then(|| pid_of(&l)).flatten())
        .expect("a load line with the pid");
    let deadline = Instant::now() + Duration::from_secs(20);
    while super::common::running_with(marker).len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the load's two sleeps never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The bound is generous for a loaded CI machine; the warden acts within milliseconds.
    let left = super::common::gone_within(marker, Duration::from_secs(5));
    assert!(
        left.is_empty(),
        "load processes {left:?} survived SIGKILL of tickscope"
    );
    assert!(gone(pid), "load group {pid} still has processes");
}
