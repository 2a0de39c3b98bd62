//! `tickscope plan` and `tickscope run --tasks` from the outside: output structure, exit
//! statuses, one-line errors.

use crate::common::tickscope;
use predicates::prelude::*;

#[test]
fn plan_prints_the_analysis_of_the_issue_example() {
    tickscope()
        .args(["plan", "--tasks", "1ms:50us,2.5ms:200us,10ms"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "3 tasks, utilisation 0.130 (Liu & Layland bound for 3: 0.780, within), hyperperiod 10.0 ms",
        ))
        .stdout(predicate::str::contains("1ms → 2.5ms → 10ms"))
        .stdout(predicate::str::contains("250 µs"));
}

#[test]
fn bad_task_lists_are_one_line_and_exit_2() {
    for args in [
        vec!["plan", "--tasks", "1ms:bogus=1"],
        vec!["run", "--tasks", "0ms", "-D", "1s"],
        vec!["run", "--tasks", "1ms", "--method", "timerfd", "-D", "1s"],
    ] {
        let out = tickscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("tickscope: "), "{err}");
    }
}

#[test]
fn run_tasks_prints_a_row_per_task() {
    let out = tickscope()
        .args([
            "run",
            "--tasks",
            "1ms:work=20us,2.5ms:work=50us,10ms",
            "-D",
            "300ms",
            "--policy",
            "other",
            "--no-mlock",
            "--no-pm-qos",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["1ms (1.00 ms)", "2.5ms (2.50 ms)", "10ms (10.0 ms)"] {
        assert_eq!(
            text.lines().filter(|l| l.contains(name)).count(),
            1,
            "{name}:\n{text}"
        );
    }
    assert!(
        text.contains("lat p99") && text.contains("deadline misses"),
        "{text}"
    );
}
