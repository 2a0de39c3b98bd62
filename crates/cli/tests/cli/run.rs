//! `tickscope run` end to end: bad input, result-file structure under each policy, several
//! threads, and interruption. Real time is involved, so only structure is asserted.

use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::common::tickscope;

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("result file exists");
    crate::common::result_json(&text)
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing_dir = dir.path().join("no/such/dir/r.json");
    let cases: Vec<Vec<&str>> = vec![
        vec!["-i", "0"],
        vec!["-i", "-5ms"],
        vec!["-i", "fast"],
        vec!["-i", "0Hz"],
        vec!["-l", "0"],
        vec!["-l", "many"],
        vec!["-D", "soon"],
        vec!["-D", "0s"],
        vec!["--policy", "bogus"],
        vec!["-p", "100"],
        vec!["-p", "0"],
        vec!["--policy", "other", "-p", "50"],
        vec!["--policy", "fifo", "--nice", "5"],
        vec!["--nice", "40", "--policy", "other"],
        vec!["--deadline-runtime", "10us"],
        vec!["--policy", "deadline", "-a", "0"],
        vec!["--policy", "deadline", "--deadline-runtime", "5ms"],
        vec!["-a", "999"],
        vec!["-a", "0-x"],
        vec!["-t", "0"],
        vec!["-t", "lots"],
        vec!["--method", "bogus"],
        vec!["--clock", "bogus"],
        vec!["--overrun", "never"],
        vec!["--pm-qos", "-1"],
        vec!["--pm-qos", "0", "--no-pm-qos"],
        vec!["--timer-slack", "x"],
        vec!["--bogus-flag"],
        vec!["--json", missing_dir.to_str().unwrap()],
    ];
    for args in cases {
        let out = tickscope()
            .arg("run")
            .args(&args)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: status {:?}, stderr {stderr}",
            out.status
        );
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {stderr}"
        );
        assert!(stderr.starts_with("tickscope: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn help_and_version_succeed() {
    tickscope().args(["run", "--help"]).assert().success();
    tickscope().arg("--version").assert().success();
}

/// Checks the structure (as read back: windows inside each entry) of a thread or summary entry with `samples` wake-ups.
fn check_stats(t: &Value, samples: u64) {
    assert_eq!(t["samples"], samples, "{t}");
    let lat = &t["latency_ns"];
    let order = ["min", "p50", "p90", "p99", "p99_9", "p99_99", "max"].map(|k| {
        lat[k]
            .as_i64()
            .unwrap_or_else(|| panic!("latency_ns.{k} missing"))
    });
    assert!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "percentiles out of order: {order:?}"
    );
    assert!(lat["mean"].is_f64() && lat["stddev"].as_f64().unwrap() >= 0.0);
    let buckets = lat["histogram"]["buckets"].as_array().unwrap();
    let counted: u64 = buckets.iter().map(|b| b[1].as_u64().unwrap()).sum();
    assert_eq!(counted, samples, "histogram counts");
    assert_eq!(lat["histogram"]["significant_figures"], 2);
    let per = &t["period_ns"];
    assert_eq!(per["nominal"], 1_000_000);
    for k in ["mean", "stddev", "rms_jitter"] {
        assert!(per[k].as_f64().unwrap() >= 0.0, "period_ns.{k}");
    }
    assert!(per["min"].as_i64().unwrap() <= per["max"].as_i64().unwrap());
    assert!(t["overruns"].as_u64().is_some());
    assert!(t["cpu_time_ns"].as_i64().unwrap() >= 0);
    let windows = t["windows"].as_array().unwrap();
    assert!(!windows.is_empty());
    let in_windows: u64 = windows.iter().map(|w| w["samples"].as_u64().unwrap()).sum();
    assert_eq!(in_windows, samples, "windows cover every sample");
    let idx: Vec<u64> = windows
        .iter()
        .map(|w| w["index"].as_u64().unwrap())
        .collect();
    assert!(idx.windows(2).all(|w| w[0] < w[1]), "window indices ascend");
}

/// Runs 300 wake-ups at 1 ms with `extra` flags; `None` when the policy is not permitted here.
fn run_300(extra: &[&str]) -> Option<Value> {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = tickscope()
        .args(["run", "-l", "300", "-i", "1ms", "-q", "--json"])
        .arg(&json)
        .args(extra)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && stderr.contains("cannot set") {
        println!("skipped {extra:?}: not permitted here: {stderr}");
        return None;
    }
    assert!(out.status.success(), "{extra:?}: {stderr}");
    Some(read_json(&json))
}

#[test]
fn result_file_structure_under_every_policy() {
    for (flags, policy) in [
        (vec!["--policy", "other"], "other"),
        (vec!["--policy", "fifo", "-p", "80"], "fifo"),
        (vec!["--policy", "rr", "-p", "10"], "rr"),
        (vec!["--policy", "deadline"], "deadline"),
        (
            vec![
                "--policy",
                "auto",
                "--overrun",
                "catch-up",
                "--clock",
                "realtime",
            ],
            "",
        ),
    ] {
        let Some(d) = run_300(&flags) else { continue };
        assert_eq!(d["schema"], "tickscope.run/2");
        assert_eq!(d["tool"]["name"], "tickscope");
        for k in ["started_at", "ended_at"] {
            let s = d[k].as_str().unwrap();
            assert!(s.ends_with('Z') && s.contains('T'), "{k}: {s}");
        }
        for k in [
            "kernel_release",
            "machine",
            "cpu_count",
            "clocksource",
            "preemption_model",
            "virtualization",
            "default_timer_slack_ns",
        ] {
            assert!(!d["system"][k].is_null(), "system.{k} missing");
        }
        assert_eq!(d["config"]["period_ns"], 1_000_000);
        if !policy.is_empty() {
            assert_eq!(d["applied"]["policy"]["policy"], policy);
        }
        let threads = d["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 1);
        assert!(threads[0]["tid"].as_i64().unwrap() > 0);
        check_stats(&threads[0], 300);
        check_stats(&d["summary"], 300);
        assert_eq!(d["interrupted"], false);
    }
}

#[test]
fn threads_all_puts_one_thread_on_each_cpu() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let d = run_300(&["-t", "all"]).expect("auto policy always runs");
    let threads = d["threads"].as_array().unwrap();
    assert_eq!(threads.len(), cpus);
    for (k, t) in threads.iter().enumerate() {
        assert_eq!(t["thread"], k);
        assert!(t["cpu"].as_u64().is_some(), "thread {k} pinned");
        check_stats(t, 300);
    }
    check_stats(&d["summary"], 300 * cpus as u64);
    assert!(d["summary"]["tid"].is_null());
}

/// Starts a long run, sends `signal` after a second, and checks the summary and the file.
fn interrupted_run_leaves_a_valid_file(signal: i32) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tickscope"))
        .args(["run", "-D", "60s", "-i", "1ms", "--json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, signal) };
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "run did not stop after the signal"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("latency p99"), "summary printed: {stdout}");
    let d = read_json(&json);
    assert_eq!(d["interrupted"], true);
    let samples = d["summary"]["samples"].as_u64().unwrap();
    assert!(samples > 0);
    check_stats(&d["summary"], samples);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left");
}

#[test]
fn ctrl_c_prints_the_summary_and_leaves_a_valid_file() {
    interrupted_run_leaves_a_valid_file(libc::SIGINT);
}

#[test]
fn sigterm_prints_the_summary_and_leaves_a_valid_file() {
    interrupted_run_leaves_a_valid_file(libc::SIGTERM);
}

/// Runs tickscope as user `nobody` through `setpriv`; `None` (with a printed reason) when
/// that is not possible here.
fn as_nobody(args: &[&str]) -> Option<std::process::Output> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        println!(
            "skipped: dropping privileges needs root, and this test already runs unprivileged"
        );
        return None;
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(setpriv) = setpriv else {
        println!("skipped: setpriv (util-linux) is not installed");
        return None;
    };
    let out = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("tickscope"))
        .args(args)
        .current_dir("/")
        .output()
        .unwrap();
    if String::from_utf8_lossy(&out.stderr).contains("Permission denied") {
        println!("skipped: user nobody cannot execute the test binary here");
        return None;
    }
    Some(out)
}

#[test]
fn unprivileged_auto_runs_and_says_what_it_could_not_set() {
    let Some(out) = as_nobody(&["run", "-l", "200"]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("auto: using other, because cannot set SCHED_FIFO priority 90"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cannot hold /dev/cpu_dma_latency"),
        "{stdout}"
    );
    assert!(stdout.contains("samples"), "{stdout}");
}

#[test]
fn unprivileged_explicit_fifo_is_refused_with_the_fix() {
    let Some(out) = as_nobody(&["run", "-l", "10", "--policy", "fifo", "-p", "90"]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("CAP_SYS_NICE") && stderr.contains("ulimit -r"),
        "{stderr}"
    );
}

/// Spawns a run with a 5 s interval, so the measuring thread is asleep when signalled.
fn spawn_long_interval_run() -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("tickscope"))
        .args(["run", "-i", "5s", "-D", "60s", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for the child to exit, failing after `limit`.
fn exit_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the run did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_interrupts_a_long_wait_instead_of_waiting_for_the_next_expiry() {
    let mut child = spawn_long_interval_run();
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // Structure, not timing: the run ends long before its next 5 s expiry would have come.
    let status = exit_within(&mut child, Duration::from_secs(4));
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_second_ctrl_c_exits_at_once_with_status_130() {
    let mut child = spawn_long_interval_run();
    std::thread::sleep(Duration::from_millis(1500));
    for _ in 0..2 {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = exit_within(&mut child, Duration::from_secs(20));
    // 130 is the immediate exit. Two SIGINTs still pending together are delivered as one
    // (standard signals do not queue), and then the orderly stop's 0 is right.
    assert!(matches!(status.code(), Some(130) | Some(0)), "{status:?}");
}

/// Runs `tickscope ARGS` and checks it was refused before measuring: exit 2, one line on
/// stderr starting `tickscope: ` and containing `expected`, no result file written. `-D 60s`
/// is added unless the case sets -D, and the run is killed after 30 s, so a refusal that
/// measured anyway fails here (status not 2) instead of passing slowly.
fn assert_refused(cmd: &str, args: &[&str], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut c = tickscope();
    c.arg(cmd).args(args);
    if cmd == "run" {
        if !args.contains(&"-D") {
            c.args(["-D", "60s"]);
        }
        if !args.contains(&"--json") {
            c.arg("--json").arg(&json);
        }
    }
    let out = c.timeout(Duration::from_secs(30)).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(stderr.starts_with("tickscope: "), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!json.exists(), "{args:?}: a result file was written");
}

#[test]
fn intervals_out_of_range_are_refused_before_measuring() {
    for i in [
        "1e-300Hz",
        "0.0000000001Hz",
        "2562047.7h",
        "61m",
        "3600000000001ns",
    ] {
        assert_refused("run", &["-i", i], "longer than 1h");
    }
    assert_refused("run", &["-i", "fast"], "250us, 1ms, 85Hz or 1000 (µs)");
    assert_refused("run", &["-i", "fastHz"], "250us, 1ms, 85Hz or 1000 (µs)");
    // Limits that would overflow combined with the interval.
    assert_refused(
        "run",
        &["-i", "1h", "-l", "900000"],
        "longer than 100 years",
    );
    assert_refused("run", &["-D", "876001h"], "100 years");
}

#[test]
fn timer_slack_above_the_interval_is_refused() {
    assert_refused(
        "run",
        &["--policy", "other", "--timer-slack", "18446744073709551615"],
        "--timer-slack",
    );
    assert_refused(
        "run",
        &["-i", "1ms", "--timer-slack", "1000001"],
        "interval",
    );
}

#[test]
fn a_margin_not_shorter_than_the_interval_is_refused() {
    for m in ["2ms", "1ms"] {
        assert_refused(
            "run",
            &["--method", "hybrid", "-i", "1ms", "--margin", m],
            "--margin",
        );
    }
}

#[test]
fn rt_spinning_on_every_cpu_needs_confirmation() {
    let cases: [&[&str]; 4] = [
        &[
            "--policy", "fifo", "-p", "99", "--method", "busy", "-t", "all",
        ],
        &[
            "--policy",
            "rr",
            "--method",
            "busy,nanosleep-abs",
            "-t",
            "all",
        ],
        &["--policy", "fifo", "--method", "busy", "-t", "4096"],
        &[
            "--policy", "fifo", "--method", "hybrid", "-i", "1ms", "--margin", "900us", "-t", "all",
        ],
    ];
    for args in cases {
        assert_refused("run", args, "--allow-rt-spin-all-cpus");
        assert_refused("run", args, "every other task");
    }
}

#[test]
fn confirmed_rt_spinning_on_every_cpu_runs() {
    // 5 ms of spinning on each CPU: long enough to prove the flag lets it through.
    let out = tickscope()
        .args(["run", "--policy", "fifo", "--method", "busy", "-t", "all"])
        .args(["-l", "5", "-i", "1ms", "-q", "--allow-rt-spin-all-cpus"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && stderr.contains("cannot set") {
        eprintln!("skipped: SCHED_FIFO is not permitted here: {stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
}

#[test]
fn method_all_leaves_out_rt_spinning_on_every_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = tickscope()
        .args(["run", "--policy", "fifo", "--method", "all", "-t", "all"])
        .args(["-D", "50ms", "-i", "1ms", "-q", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && stderr.contains("cannot set") {
        eprintln!("skipped: SCHED_FIFO is not permitted here: {stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("leaving out busy") && stderr.contains("--allow-rt-spin-all-cpus"),
        "{stderr}"
    );
    let doc = read_json(&json);
    let methods: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert!(!methods.contains(&"busy"), "{methods:?}");
    assert!(methods.contains(&"nanosleep-abs"), "{methods:?}");
}

#[test]
fn no_subcommand_is_one_line_and_exit_2() {
    let out = tickscope()
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("tickscope: ") && stderr.contains("run"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    let help = tickscope().arg("--help").output().unwrap();
    assert!(help.status.success() && !help.stdout.is_empty());
    // A missing argument is named on the same line.
    let out = tickscope().arg("report").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("<RESULT.json>"), "{stderr}");
}

#[test]
fn a_path_with_a_newline_stays_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("no\nsuch/r.json");
    let bad = bad.to_str().unwrap();
    assert_refused("run", &["--json", bad], "no\\nsuch");
    assert_refused("clocks", &["--json", bad], "no\\nsuch");
}
