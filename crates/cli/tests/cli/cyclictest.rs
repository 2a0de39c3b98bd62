//! A cyclictest user's habits: `-h N` and `-H N` histograms on standard output, `--histfile`,
//! cyclictest's flags answered with tickscope's equivalent, `-D 1d`, `--policy normal`, and
//! clap's errors kept whole on one line. Real time is involved only in structure.

use super::common::tickscope;

/// The error line of a refused command line.
fn refusal(args: &[&str]) -> String {
    let out = tickscope().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn dash_h_prints_only_the_histogram_on_standard_output() {
    let out = tickscope()
        .args([
            "run", "-m", "-i1000", "-l200", "-h5", "-q", "--policy", "other",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let data: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(data.len(), 5, "0-4 µs and nothing else on stdout:\n{text}");
    assert!(
        data.iter()
            .all(|l| l.len() == 13 && l.as_bytes()[6] == b' '),
        "{data:?}"
    );
    let field = |label: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..].trim().parse().unwrap()
    };
    assert_eq!(field("# Total:") + field("# Histogram Overflows:"), 200);
    let cycles = text
        .lines()
        .find(|l| l.starts_with("# Thread 0:"))
        .unwrap()
        .split_whitespace()
        .skip(3)
        .take_while(|w| *w != "#")
        .count() as u64;
    assert_eq!(
        cycles,
        field("# Histogram Overflows:").min(1000),
        "every overflow's cycle"
    );
    // The summary went to standard error.
    assert!(String::from_utf8_lossy(&out.stderr).contains("latency p99"));
}

#[test]
fn dash_capital_h_adds_the_summed_column_and_histfile_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hist.txt");
    tickscope()
        .args([
            "run", "-l", "100", "-t", "2", "-H", "30", "--policy", "other", "-q",
        ])
        .arg("--histfile")
        .arg(&file)
        .assert()
        .success();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("columns: T0, T1, all"), "{text}");
    let data: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(data.len(), 30);
    assert!(data.iter().all(|l| l.split_whitespace().count() == 4));
}

#[test]
fn help_is_still_long_help_and_bad_ranges_are_refused() {
    let out = tickscope().args(["run", "--help"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--histogram <US>"));
    assert!(refusal(&["run", "-h", "0"]).contains("histogram range"));
    assert!(refusal(&["run", "-h", "lots"]).contains("histogram range"));
}

#[test]
fn cyclictest_flags_are_answered_with_the_equivalent() {
    insta::assert_snapshot!([
        refusal(&["run", "-S"]),
        refusal(&["run", "-x"]),
        refusal(&["run", "-c", "1"]),
        refusal(&["run", "--latency", "0"]),
        refusal(&["run", "-v"]),
        refusal(&["run", "-N"]),
        refusal(&["run", "-b", "100"]),
    ]
    .concat());
}

#[test]
fn clap_errors_keep_their_hints_on_one_line() {
    insta::assert_snapshot!([
        refusal(&["run", "--metod", "x"]),
        refusal(&["compare", "--format", "html", "x.json"]),
        refusal(&["compare"]),
        refusal(&[]),
    ]
    .concat());
}

#[test]
fn days_compound_durations_and_policy_normal_are_accepted() {
    // Parsed, then refused for another reason, so nothing is measured.
    for args in [
        ["run", "-D", "1d", "--timer-slack", "10ms"],
        ["run", "-D", "1m30s", "--timer-slack", "10ms"],
    ] {
        let err = refusal(&args);
        assert!(err.contains("--timer-slack"), "{args:?} parsed: {err}");
    }
    tickscope()
        .args(["run", "-l", "10", "--policy", "normal", "-q"])
        .assert()
        .success();
}
