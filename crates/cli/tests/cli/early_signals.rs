//! Signals from the first instruction on (README "Stopping"): whenever SIGINT, SIGTERM or
//! SIGHUP arrives, a run either leaves its promised result — the file complete, the summary
//! printed, exit 0 — or says `tickscope: interrupted before measuring` and exits 128 + the
//! signal's number, with no file. Never a silent success.
//!
//! The mock backend runs on virtual time, so a `-D 2s` run takes a few tens of real
//! milliseconds: the delays below cover start-up, set-up, the measurement and the writing of
//! the file. Only the shapes of the outcomes are asserted, never when one shape turns into
//! another.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::common::bin;

/// What one interrupted invocation left.
struct Outcome {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
    file: Option<String>,
}

/// Spawns `tickscope ARGS --json FILE`, sends `signal` after `delay`, and collects what
/// it left.
fn interrupt(args: &[&str], signal: i32, delay: Duration) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = Command::new(bin())
        .args(args)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    // SAFETY: a signal to our own child, by PID; it may have exited (then ESRCH, ignored).
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "r.json")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        file: std::fs::read_to_string(&json).ok(),
    }
}

/// Checks that `o` is one of the allowed shapes for `signal`; returns its name.
fn shape(o: &Outcome, signal: i32, what: &str) -> &'static str {
    let show = format!(
        "{what}: {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status, o.stdout, o.stderr
    );
    if o.status.code() == Some(0) {
        // The promised result: the file complete (interrupted or not) and the summary.
        let text = o
            .file
            .as_deref()
            .unwrap_or_else(|| panic!("exit 0 without the file: {show}"));
        let doc = crate::common::result_json(text);
        assert!(doc["interrupted"].is_boolean(), "{show}");
        assert!(
            o.stdout.contains("latency p99"),
            "exit 0 without the summary: {show}"
        );
        return match doc["interrupted"].as_bool() {
            Some(true) => "interrupted, file and summary",
            _ => "finished before the signal",
        };
    }
    assert!(o.file.is_none(), "a failed run left a file: {show}");
    if o.status.signal() == Some(signal) {
        // Before `main` installed the handlers, the kernel's default action ends the
        // process (a shell reports 128 + N as well); nothing was set up, nothing is written.
        assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{show}");
        return "killed before the handlers";
    }
    assert_eq!(o.status.code(), Some(128 + signal), "{show}");
    assert_eq!(
        o.stderr.trim_end(),
        "tickscope: interrupted before measuring",
        "{show}"
    );
    "interrupted before measuring"
}

#[test]
fn a_signal_at_any_moment_leaves_the_result_or_says_interrupted_before_measuring() {
    let mut seen = std::collections::BTreeMap::new();
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        for ms in [0, 1, 2, 5, 10, 20, 50] {
            for _ in 0..3 {
                let o = interrupt(
                    &["run", "--debug-mock", "20us,30us", "-D", "2s"],
                    signal,
                    Duration::from_millis(ms),
                );
                let what = format!("signal {signal} after {ms} ms");
                *seen.entry(shape(&o, signal, &what)).or_insert(0) += 1;
            }
        }
    }
    eprintln!("outcomes: {seen:?}");
}
