//! What every module of the CLI tests needs: the binary under test.

use assert_cmd::Command;
use std::path::PathBuf;

/// `tickscope`, as cargo built it for this test run; without `COLUMNS`, so that its output
/// is not fitted to the width of whatever terminal runs the tests.
pub fn tickscope() -> Command {
    let mut c = Command::cargo_bin("tickscope").unwrap();
    c.env_remove("COLUMNS");
    c
}

/// The path of the `tickscope` binary, for `std::process::Command` (signals, pipes).
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("tickscope")
}

/// Reads a `tickscope run --json` file: checks the `tickscope.run/2` layout on disk (the
/// `windows` list is the last key, every entry names its run and thread) and returns the
/// document as the program reads it back — windows inside each thread's statistics, as the
/// structure tests expect them.
pub fn result_json(text: &str) -> serde_json::Value {
    let raw: serde_json::Value = serde_json::from_str(text).expect("the result is valid JSON");
    assert_eq!(raw["schema"], tickscope_report::RUN_SCHEMA);
    let tail = text
        .rfind("\n  \"windows\": [")
        .expect("a windows list at the top level");
    assert!(
        !text[tail + 1..].contains("\n  \""),
        "the windows list is the last key"
    );
    for w in raw["windows"].as_array().expect("windows is a list") {
        assert!(
            w["run"].as_u64().is_some() && w.get("thread").is_some(),
            "{w}"
        );
    }
    let doc = tickscope_report::RunDocument::from_json(text).expect("the result reads back");
    serde_json::to_value(&doc).unwrap()
}

/// Pids of running (not zombie) processes whose command line contains `marker`, other than
/// this test process.
pub fn running_with(marker: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

/// Waits up to `within` until no process runs with `marker` in its command line; returns
/// those still running then (empty: all gone).
pub fn gone_within(marker: &str, within: std::time::Duration) -> Vec<i32> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let left = running_with(marker);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether one of `--explain`'s kept breakdowns (`explain.breakdowns` of a result) found the
/// thread's own timer start (no `no_timer_start` flag; `flags` is left out when there is none).
pub fn a_breakdown_found_the_timer_start(kept: &[serde_json::Value]) -> bool {
    kept.iter().any(|b| {
        b["flags"]
            .as_array()
            .is_none_or(|f| !f.iter().any(|f| f == "no_timer_start"))
    })
}
