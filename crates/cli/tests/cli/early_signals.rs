//! Signals from the first instruction on (docs/run.md, "Stopping"): whenever SIGINT, SIGTERM or
//! SIGHUP arrives, a measuring command either leaves its promised result — its file
//! complete, its summary printed, exit 0 — or says `tickscope: interrupted before
//! measuring` and exits 128 + the signal's number, with no file. Never a silent success.
//! (`clocks` has one more documented shape: a shortened measurement is neither printed nor
//! written, said in one line, 128 + N.)
//!
//! The mock backend runs on virtual time, so a `-D 2s` run takes a few tens of real
//! milliseconds: the delays below cover start-up, set-up, the measurement and the writing of
//! the file. Only the shapes of the outcomes are asserted, never when one shape turns into
//! another.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
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

/// A stoppable command and what its promised result looks like.
struct Case {
    name: &'static str,
    /// The arguments; `{json}` is replaced by the result file's path.
    args: Vec<String>,
    /// Whether the command writes `{json}`.
    writes: bool,
    /// A line of its summary on standard output.
    summary: &'static str,
    /// Checks a written file, returning whether it says it was interrupted.
    check: fn(&str) -> bool,
}

fn run_doc(text: &str) -> bool {
    let doc = crate::common::result_json(text);
    doc["interrupted"]
        .as_bool()
        .expect("interrupted is a boolean")
}

fn scenario_doc(text: &str) -> bool {
    let doc: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
    assert_eq!(doc["schema"], "tickscope.scenario/1");
    doc["interrupted"]
        .as_bool()
        .expect("interrupted is a boolean")
}

fn clocks_doc(text: &str) -> bool {
    let doc: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
    assert!(doc["schema"]
        .as_str()
        .unwrap()
        .starts_with("tickscope.clocks/"));
    false // a clocks file is written only for a complete measurement
}

/// Spawns the case with `{json}` in `dir`, sends `signal` after `delay`, and collects what
/// it left.
fn interrupt(case: &Case, dir: &Path, signal: i32, delay: Duration) -> Outcome {
    let json = dir.join("r.json");
    let _ = std::fs::remove_file(&json);
    let args = case
        .args
        .iter()
        .map(|a| a.replace("{json}", json.to_str().unwrap()));
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    // SAFETY: a signal to our own child, by PID; it may have exited (then ESRCH, ignored).
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_str().is_some_and(|n| n.ends_with(".tmp")))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        file: std::fs::read_to_string(&json).ok(),
    }
}

/// Checks that `o` is one of the allowed shapes; returns its name.
fn shape(case: &Case, o: &Outcome, signal: i32, what: &str) -> &'static str {
    let show = format!(
        "{} {what}: {:?}\n--- stdout\n{}\n--- stderr\n{}",
        case.name, o.status, o.stdout, o.stderr
    );
    if o.status.code() == Some(0) {
        // The promised result: the summary, and the file complete.
        assert!(
            o.stdout.contains(case.summary),
            "exit 0 without the summary: {show}"
        );
        if !case.writes {
            return "result";
        }
        let text = o
            .file
            .as_deref()
            .unwrap_or_else(|| panic!("exit 0 without the file: {show}"));
        return match (case.check)(text) {
            true => "interrupted result",
            false => "result",
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
    // The outcome is one line of its own; notes may follow it (a starting tickscope that
    // removed a trace instance another test's killed run left, `monitor`'s housekeeping
    // note written by the thread that was setting up when the signal came).
    let said = |prefix: &str| o.stderr.lines().any(|l| l.starts_with(prefix));
    if case.name == "clocks" && said("tickscope: interrupted; clocks measures") {
        return "clocks: shortened, said";
    }
    assert!(
        o.stderr
            .lines()
            .any(|l| l == "tickscope: interrupted before measuring"),
        "{show}"
    );
    "interrupted before measuring"
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const SCENARIO: &str = r#"name = "mock"
about = "two mock steps"
[source]
title = "t"
author = "a"
year = 2026
[[steps]]
name = "one"
args = ["--debug-mock", "20us,30us", "-D", "1s", "-q"]
[[steps]]
name = "two"
args = ["--debug-mock", "20us,30us", "-D", "1s", "-q"]
[table]
title = "mock steps"
rows = [{label = "max", metric = "latency.max"}]
columns = ["one", "two"]
"#;

#[test]
fn a_signal_at_any_moment_leaves_the_result_or_says_interrupted_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), SCENARIO).unwrap();
    let cases = [
        Case {
            name: "run",
            args: strings(&[
                "run",
                "--debug-mock",
                "20us,30us",
                "-D",
                "2s",
                "--json",
                "{json}",
            ]),
            writes: true,
            summary: "latency p99",
            check: run_doc,
        },
        Case {
            name: "monitor",
            args: strings(&[
                "monitor",
                "--debug-mock",
                "20us,30us",
                "-D",
                "2s",
                "--no-listen",
                "--textfile",
                "m.prom",
                "--json",
                "{json}",
            ]),
            writes: true,
            summary: "latency p99",
            check: run_doc,
        },
        Case {
            name: "scenario run",
            args: strings(&["scenario", "run", "s.toml", "--json", "{json}"]),
            writes: true,
            summary: "mock — mock steps",
            check: scenario_doc,
        },
        Case {
            name: "run --tasks",
            args: strings(&["run", "--tasks", "1ms,2ms", "-D", "200ms"]),
            writes: false,
            summary: "releases",
            check: run_doc,
        },
        Case {
            name: "clocks",
            args: strings(&["clocks", "-D", "200ms", "--json", "{json}"]),
            writes: true,
            summary: "CLOCK_MONOTONIC",
            check: clocks_doc,
        },
    ];
    for case in &cases {
        let mut seen = std::collections::BTreeMap::new();
        let signals = match case.name {
            "run" => vec![libc::SIGTERM, libc::SIGINT, libc::SIGHUP],
            _ => vec![libc::SIGTERM, libc::SIGINT],
        };
        for &signal in &signals {
            for ms in [0, 1, 2, 5, 10, 20, 50] {
                for _ in 0..3 {
                    let o = interrupt(case, dir.path(), signal, Duration::from_millis(ms));
                    let what = format!("signal {signal} after {ms} ms");
                    *seen.entry(shape(case, &o, signal, &what)).or_insert(0) += 1;
                }
            }
        }
        eprintln!("{}: {seen:?}", case.name);
    }
}
