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
