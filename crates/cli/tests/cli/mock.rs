//! `tickscope run` end to end on virtual time (the hidden `--debug-mock`, as hyperfine's
//! `--debug-mode`): the whole terminal output — header, per-second lines, summary, the
//! comparison of methods — is deterministic and pinned by snapshots.

use assert_cmd::Command;

/// stdout and stderr of `tickscope run --debug-mock SCRIPT ARGS…`.
fn mock_run(script: &str, args: &[&str]) -> String {
    let out = Command::cargo_bin("tickscope")
        .unwrap()
        .args(["run", "--debug-mock", script])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn single_run_with_two_threads() {
    insta::assert_snapshot!(mock_run("20us,30us,25us,2.5ms", &["-D", "3s", "-t", "2"]));
}

#[test]
fn quiet_run_prints_the_summary_and_the_settings() {
    insta::assert_snapshot!(mock_run("12us,14us", &["-l", "2000", "-q"]));
}

#[test]
fn every_method_compared() {
    insta::assert_snapshot!(mock_run(
        "15us,18us,40us",
        &["--method", "all", "-D", "2s", "--rounds", "2"]
    ));
}

#[test]
fn the_same_script_gives_the_same_output() {
    let args = ["-D", "2s", "-t", "3"];
    assert_eq!(mock_run("9us,1ms", &args), mock_run("9us,1ms", &args));
}

/// The windows the result file spools while the run goes on are exactly those a run that
/// keeps them in memory (because `--csv` needs them) puts in the same file; in a comparison
/// every run's windows come back to that run, thread and summary.
#[test]
fn spooled_windows_equal_the_windows_kept_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let read = |name: &str, args: &[&str]| {
        let json = dir.path().join(format!("{name}.json"));
        let mut a = args.to_vec();
        a.extend(["-q", "--json", json.to_str().unwrap()]);
        mock_run("20us,30us,2.5ms", &a);
        let mut doc = crate::common::result_json(&std::fs::read_to_string(&json).unwrap());
        doc["command_line"] = serde_json::Value::Null; // differs by the flags
        doc
    };
    let csv = dir.path().join("kept.csv");
    let spooled = read("spooled", &["-D", "4s", "-t", "2"]);
    let kept = read(
        "kept",
        &["-D", "4s", "-t", "2", "--csv", csv.to_str().unwrap()],
    );
    assert_eq!(spooled, kept);

    let compared = read(
        "compared",
        &[
            "-D",
            "2s",
            "--method",
            "nanosleep-abs,timerfd",
            "--rounds",
            "2",
            "-t",
            "2",
        ],
    );
    let runs = compared["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let sum = |t: &serde_json::Value| -> u64 {
        let w = t["windows"].as_array().unwrap();
        assert_eq!(w.len(), 2, "two windows of 1 s each");
        w.iter().map(|w| w["samples"].as_u64().unwrap()).sum()
    };
    for r in runs {
        for t in r["threads"].as_array().unwrap() {
            assert_eq!(sum(t), t["samples"].as_u64().unwrap());
        }
        assert_eq!(
            sum(&r["summary"]),
            r["summary"]["samples"].as_u64().unwrap()
        );
    }
    assert_eq!(
        compared["summary"]["windows"],
        runs[0]["summary"]["windows"]
    );
}
