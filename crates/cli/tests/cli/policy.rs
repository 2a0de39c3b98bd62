//! A policy changed from outside while a run goes on (`chrt -f -p 1 TID`, here the same
//! system call from the test): the live view marks it in the second it happened, and the
//! result's windows carry the policy read back.

use super::common::bin;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn a_policy_changed_mid_run_is_marked_and_carried_by_the_windows() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping the policy-change test: setting SCHED_FIFO needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = Command::new(bin())
        .args(["run", "-D", "4s", "--policy", "other", "--json"])
        .arg(&json)
        .env_remove("COLUMNS")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut out = Vec::new();
    let mut tid: Option<i32> = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("thread:  T0 tid ") {
            tid = rest.split_whitespace().next().and_then(|t| t.parse().ok());
        }
        // The first per-second line: the thread runs; change its policy now.
        let first_second = line.trim_start().starts_with("1 ") && line.contains("T0");
        out.push(line);
        if first_second {
            break;
        }
    }
    let tid = tid.expect("the header names the thread's tid");
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: a valid sched_param for a tid of the child; failure is checked.
    let set = unsafe { libc::sched_setscheduler(tid, libc::SCHED_FIFO, &param) };
    assert_eq!(
        set,
        0,
        "sched_setscheduler: {}",
        std::io::Error::last_os_error()
    );
    out.extend(lines.map(Result::unwrap));
    assert!(child.wait().unwrap().success());
    let text = out.join("\n");
    let marks: Vec<&String> = out
        .iter()
        .filter(|l| l.contains("now runs fifo:1"))
        .collect();
    assert_eq!(
        marks.len(),
        1,
        "one mark, in the second of the change:\n{text}"
    );
    assert!(marks[0].contains("T0 now runs fifo:1, was other"), "{text}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let policies: Vec<&str> = doc["windows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["thread"] == 0)
        .filter_map(|w| w["policy"].as_str())
        .collect();
    assert_eq!(policies.first(), Some(&"other"), "{policies:?}");
    assert_eq!(policies.last(), Some(&"fifo:1"), "{policies:?}");
}
