//! `tickscope gate` on recorded fixture pairs (`tests/fixtures/gate/`, see its README): an
//! A/A pair passes, a planted tail regression fails, an improvement is said, a short
//! candidate is inconclusive, cyclictest inputs are judged with reduced power, a fleet
//! baseline merged by `tickscope hlog merge` is accepted, every result schema version is
//! read, task sets are judged task by task, and the verdict is the same on every run. No live measurement: deterministic.

use super::common::tickscope;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gate")
        .join(name)
}

fn report_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(name)
}

/// Runs `gate` on files, returns (exit status, stdout).
fn gate(args: &[&std::ffi::OsStr]) -> (i32, String) {
    let out = tickscope().arg("gate").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn pair(base: &str, cand: &str) -> (i32, String) {
    gate(&[fixture(base).as_os_str(), fixture(cand).as_os_str()])
}

#[test]
fn gate_passes_an_a_a_pair() {
    let (code, out) = pair("base.hlog", "same.hlog");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("outcome: pass"), "{out}");
    assert!(!out.contains("REGRESSION"), "{out}");
    let (code, out) = pair("base.hlog", "base2.hlog");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn gate_fails_a_planted_tail_regression_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("gate.xml");
    let out = tickscope()
        .arg("gate")
        .arg(fixture("base.hlog"))
        .arg(fixture("tail.hlog"))
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("candidate") && text.contains("REGRESSION"),
        "{text}"
    );
    assert!(text.contains("why: p99.99: changed +"), "{text}");
    // The body did not move: p50 and p99 pass.
    for line in text
        .lines()
        .filter(|l| l.contains("p50 ") || l.contains("p99 "))
    {
        assert!(line.contains("pass"), "{line}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(
        xml.contains("<failure message=\"p99.99 regressed\""),
        "{xml}"
    );
    assert!(xml.contains("<testcase classname=\"tickscope.gate\" name=\"p50\"><system-out>"));
}

#[test]
fn gate_reports_an_improvement_with_status_0() {
    let (code, out) = pair("base.hlog", "better.hlog");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("outcome: improvement"), "{out}");
    assert!(out.contains("why: p50: improved -"), "{out}");
}

#[test]
fn gate_is_inconclusive_on_a_short_candidate() {
    let (code, out) = pair("base.hlog", "short.hlog");
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("20 windows, fewer than the 30 needed"),
        "{out}"
    );
    // A rule asking for less is judged on the same data.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "min_windows = 10\n[[quantiles]]\nquantile = 0.99\nmax_increase = 0.05\n",
    )
    .unwrap();
    let (code, out) = gate(&[
        fixture("base.hlog").as_os_str(),
        fixture("short.hlog").as_os_str(),
        "--rules".as_ref(),
        rules.as_os_str(),
    ]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn gate_judges_cyclictest_files_with_reduced_power() {
    let (code, out) = pair("base.cyclictest.json", "same.cyclictest.json");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("reduced power"), "{out}");
    assert!(out.contains("shape: not run"), "{out}");
    let (code, out) = pair("base.cyclictest.json", "tail.cyclictest.json");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("why: p99.99"), "{out}");
}

#[test]
fn gate_judges_jitterdebugger_files_with_reduced_power() {
    let file = report_fixture("jitterdebugger-2cpus.json");
    let (code, out) = gate(&[file.as_os_str(), file.as_os_str()]);
    // 3940 wake-ups: too few for p99.9 and p99.99 (inconclusive), enough for p50 and p99.
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("(jitterdebugger, 3940 wake-ups"), "{out}");
    assert!(out.contains("│ p99      ┆  51.0 µs ┆   51.0 µs"), "{out}");
    assert!(out.contains("reduced power"), "{out}");
    assert!(out.contains("shape: not run"), "{out}");
}

#[test]
fn gate_accepts_a_fleet_baseline_merged_by_hlog_merge() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.hlog");
    tickscope()
        .args(["hlog", "merge", "-o"])
        .arg(&fleet)
        .arg(fixture("base.hlog"))
        .arg(fixture("base2.hlog"))
        .assert()
        .success();
    let (code, out) = gate(&[fleet.as_os_str(), fixture("same.hlog").as_os_str()]);
    assert_eq!(code, 0, "{out}");
    // Both hosts' wake-ups are in the baseline; the comparison is at the candidate's length.
    assert!(
        out.contains("(hlog, 300000 wake-ups, 150 windows)"),
        "{out}"
    );
    assert!(out.contains("both runs at 150000 wake-ups"), "{out}");
    let (code, out) = gate(&[fleet.as_os_str(), fixture("tail.hlog").as_os_str()]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn gate_reads_every_result_schema_version() {
    // tickscope.run/1 (windows inside the threads) and tickscope.run/2 (one windows list).
    for (file, samples) in [
        (report_fixture("tickscope-fifo-2threads.json"), 600),
        (fixture("mock-v2.json"), 120_000),
    ] {
        let (code, out) = gate(&[file.as_os_str(), file.as_os_str()]);
        assert!(code == 0 || code == 3, "{}: {code} {out}", file.display());
        assert!(
            out.contains(&format!("(tickscope, {samples} wake-ups")),
            "{out}"
        );
    }
    let (code, out) = gate(&[
        fixture("mock-v2.json").as_os_str(),
        fixture("mock-v2.json").as_os_str(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the windows' p99"), "{out}");
    assert!(out.contains("overruns ┆"), "{out}");
}

#[test]
fn gate_gives_the_same_verdict_every_time_and_json_says_it() {
    let run = || {
        let out = tickscope()
            .arg("gate")
            .arg("--json")
            .arg(fixture("base.hlog"))
            .arg(fixture("tail.hlog"))
            .arg(fixture("same.hlog"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8(out.stdout).unwrap()
    };
    let first = run();
    assert_eq!(first, run());
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["schema"], "tickscope.gate/1");
    assert_eq!(v["outcome"], "regression");
    assert_eq!(v["verdicts"][0]["outcome"], "regression");
    assert_eq!(v["verdicts"][1]["outcome"], "pass");
}

#[test]
fn gate_refuses_bad_input_in_one_line_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.hlog");
    let bad_rules = dir.path().join("rules.toml");
    std::fs::write(&bad_rules, "confidence = 2\n").unwrap();
    let not_result = dir.path().join("x.json");
    std::fs::write(&not_result, "{\"a\": 1}").unwrap();
    let base = fixture("base.hlog");
    for args in [
        vec![base.as_os_str(), missing.as_os_str()],
        vec![
            base.as_os_str(),
            base.as_os_str(),
            "--rules".as_ref(),
            bad_rules.as_os_str(),
        ],
        vec![base.as_os_str(), not_result.as_os_str()],
        vec![base.as_os_str()],
    ] {
        let out = tickscope().arg("gate").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Rules for the task-set fixture (31 s: 7 750 releases of its shortest task, too few for
/// p99.9): p50 and p99 only.
const TASK_RULES: &str = "[[quantiles]]\nquantile = 0.5\nmax_increase = 0.10\n\
                          [[quantiles]]\nquantile = 0.99\nmax_increase = 0.05\n";

/// The task-set fixture with every latency of task `task` (thread `task`) made 3/2 as long
/// — its histogram, statistics and windows — and the task names replaced by `names`.
fn planted_task_set(task: Option<usize>, names: &[&str]) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture("tasks.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let scale = |v: &mut serde_json::Value| {
        if let Some(x) = v.as_i64() {
            *v = (x * 3 / 2).into();
        } else if let Some(x) = v.as_f64() {
            *v = (x * 1.5).into();
        }
    };
    if let Some(t) = task {
        let latency = &mut doc["threads"][t]["latency_ns"];
        for key in [
            "min", "max", "mean", "stddev", "p50", "p90", "p99", "p99_9", "p99_99",
        ] {
            scale(&mut latency[key]);
        }
        for b in latency["histogram"]["buckets"].as_array_mut().unwrap() {
            scale(&mut b[0]);
        }
        for w in doc["windows"].as_array_mut().unwrap() {
            if w["thread"] == t {
                for key in ["latency_min", "latency_mean", "latency_p99", "latency_max"] {
                    scale(&mut w[key]);
                }
            }
        }
    }
    for (i, name) in names.iter().enumerate() {
        doc["tasks"]["tasks"][i]["name"] = (*name).into();
    }
    doc
}

#[test]
fn gate_judges_task_sets_task_by_task() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, TASK_RULES).unwrap();
    let write = |name: &str, doc: serde_json::Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let base = fixture("tasks.json");
    let run = |cand: &std::path::Path, extra: &[&str]| {
        let out = tickscope()
            .arg("gate")
            .arg(&base)
            .arg(cand)
            .arg("--rules")
            .arg(&rules)
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // A/A: every task passes, a row per task.
    let (code, out) = run(&base, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("task set: 4ms, 10ms, 20ms"), "{out}");
    for task in ["4ms", "10ms", "20ms"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("│ {task} ")) && l.contains("pass")),
            "{task}:\n{out}"
        );
        assert!(out.contains(&format!(", task {task} (")), "{task}:\n{out}");
    }
    // A regression planted in the 10 ms task fails that task and the whole gate; the
    // other tasks pass. The JSON and JUnit say it per task.
    let worse = write(
        "worse.json",
        planted_task_set(Some(1), &["4ms", "10ms", "20ms"]),
    );
    let junit = dir.path().join("gate.xml");
    let (code, out) = run(&worse, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    let row = |task: &str| row_of(&out, task);
    assert!(row("10ms").contains("REGRESSION"), "{out}");
    assert!(
        row("4ms").contains("pass") && row("20ms").contains("pass"),
        "{out}"
    );
    assert!(out.contains("outcome: REGRESSION"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testsuite ").count(), 3, "{xml}");
    assert!(xml.contains("worse.json: task 10ms"), "{xml}");
    assert!(xml.contains("name=\"10ms: shape\"><failure"), "{xml}");
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    let (_, json) = run(&worse, &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["outcome"], "regression");
    assert_eq!(
        v["baseline_tasks"],
        serde_json::json!(["4ms", "10ms", "20ms"])
    );
    let verdicts = v["verdicts"].as_array().unwrap();
    let by_task: Vec<(&str, &str)> = verdicts
        .iter()
        .map(|v| (v["task"].as_str().unwrap(), v["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        by_task,
        vec![("4ms", "pass"), ("10ms", "regression"), ("20ms", "pass")]
    );
    // A task renamed: in one result only, each side said, inconclusive (status 3).
    let renamed = write(
        "renamed.json",
        planted_task_set(None, &["4ms", "control", "20ms"]),
    );
    let (code, out) = run(&renamed, &[]);
    assert_eq!(code, 3, "{out}");
    assert!(
        row_of(&out, "control").contains("in the candidate only"),
        "{out}"
    );
    assert!(
        row_of(&out, "10ms").contains("in the baseline only"),
        "{out}"
    );
    assert!(
        out.contains(
            "the task '10ms' is in the baseline only: the candidate has '4ms', 'control', '20ms'"
        ),
        "{out}"
    );
}

/// The summary row of `task` in a gate's table.
fn row_of(out: &str, task: &str) -> String {
    out.lines()
        .find(|l| l.starts_with(&format!("│ {task} ")))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn gate_refuses_a_task_set_against_a_single_rate_run_in_one_line() {
    let tasks = fixture("tasks.json");
    let single = fixture("mock-v2.json");
    for (a, b) in [(&tasks, &single), (&single, &tasks)] {
        let out = tickscope().arg("gate").arg(a).arg(b).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("tasks.json' is a task set"), "{err}");
    }
}
