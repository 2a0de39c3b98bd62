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

/// The CSV table, its rows spooled while the run goes on, is byte for byte the one the
/// program wrote when it rendered the table from every window kept in memory and ran virtual
/// time one wake-up at a time (fixtures recorded then, `tests/fixtures/csv/README.md`): with
/// overruns (still one wake-up at a time) and without (now each window counted at once).
#[test]
fn csv_tables_equal_the_ones_recorded_before_spooling() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/csv");
    for (script, args, file) in [
        (
            "20us,30us,2.5ms",
            ["-D", "4s", "-t", "2"],
            "overruns-2-threads-4s.csv",
        ),
        (
            "15us,40us,17us,900us,1ms",
            ["-D", "5s", "-t", "3"],
            "in-period-3-threads-5s.csv",
        ),
    ] {
        let csv = dir.path().join(file);
        let mut a = args.to_vec();
        a.extend(["-q", "--csv", csv.to_str().unwrap()]);
        mock_run(script, &a);
        let want = std::fs::read_to_string(fixtures.join(file)).unwrap();
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), want, "{file}");
    }
}

/// In a comparison every run's spooled windows come back to that run, thread and summary.
#[test]
fn spooled_windows_come_back_to_their_runs() {
    let dir = tempfile::tempdir().unwrap();
    let read = |name: &str, args: &[&str]| {
        let json = dir.path().join(format!("{name}.json"));
        let mut a = args.to_vec();
        a.extend(["-q", "--json", json.to_str().unwrap()]);
        mock_run("20us,30us,2.5ms", &a);
        crate::common::result_json(&std::fs::read_to_string(&json).unwrap())
    };
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
