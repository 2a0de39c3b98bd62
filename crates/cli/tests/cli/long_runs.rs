//! Day-long runs stay small (docs/result-schema.md, "Long runs"): after the first hour the
//! result's windows and each thread's interval-log intervals are one per minute. On virtual
//! time (`--debug-mock`) at a 100 ms interval, so that hours of run take a second.

use assert_cmd::Command;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `threads` mock threads for `duration` with `--json` and `--hlog` into `dir`; returns
/// the document and the log's text.
fn run(dir: &Path, duration: &str, threads: &str) -> (serde_json::Value, String, u64) {
    let (json, hlog) = (
        dir.join(format!("{duration}.json")),
        dir.join(format!("{duration}.hlog")),
    );
    let out = Command::cargo_bin("tickscope")
        .unwrap()
        .args(["run", "--debug-mock", "20us,30us,45us", "-i", "100ms", "-q"])
        .args(["-t", threads, "-D", duration, "--json"])
        .arg(&json)
        .arg("--hlog")
        .arg(&hlog)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size = std::fs::metadata(&json).unwrap().len();
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (doc, std::fs::read_to_string(&hlog).unwrap(), size)
}

/// Per series (`thread`, null for merged): (windows, windows with span 1, spans summed).
fn series(doc: &serde_json::Value) -> BTreeMap<String, (u64, u64, u64)> {
    let mut out: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    for w in doc["windows"].as_array().unwrap() {
        let e = out.entry(w["thread"].to_string()).or_default();
        let span = w["span"].as_u64().unwrap();
        e.0 += 1;
        e.1 += u64::from(span == 1);
        e.2 += span;
    }
    out
}

/// Lines of the log per tag.
fn tags(log: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for l in log.lines().filter(|l| l.starts_with("Tag=")) {
        let tag = l[4..].split(',').next().unwrap().to_string();
        *out.entry(tag).or_default() += 1;
    }
    out
}

#[test]
fn after_the_first_hour_windows_are_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let (doc, log, long) = run(dir.path(), "2h30m", "2");
    // 3600 windows of a second, then 90 minutes: every second of the run is covered.
    let want = (3600 + 90, 3600, 9000);
    let got = series(&doc);
    assert_eq!(got.len(), 3, "two threads and the merged series: {got:?}");
    for (thread, s) in &got {
        assert_eq!(*s, want, "thread {thread}");
    }
    let coarse = doc["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["span"] == 60)
        .unwrap();
    assert_eq!(
        (coarse["index"].as_u64(), coarse["start_ns"].as_i64()),
        (Some(3600), Some(3_600_000_000_000))
    );
    assert_eq!(coarse["samples"], 600, "a minute of 100 ms wake-ups");
    // The log keeps every second for `all`, minutes for each thread after the first hour.
    let t = tags(&log);
    assert_eq!(t.get("all"), Some(&9000));
    assert_eq!((t.get("T0"), t.get("T1")), (Some(&3690), Some(&3690)));
    // The totals do not change.
    assert_eq!(doc["summary"]["samples"], 2 * 90_000);
    // The file grows by minutes, not seconds, after the first hour: 3 × 60 windows an hour
    // against the first hour's 3 × 3600.
    let (_, _, hour) = run(dir.path(), "1h", "2");
    let per_hour = (long - hour) * 2 / 3;
    assert!(per_hour * 20 < hour, "1 h: {hour} B, 2.5 h: {long} B");
}

#[test]
fn many_threads_keep_full_grain_for_a_shorter_time() {
    let dir = tempfile::tempdir().unwrap();
    let (doc, log, _) = run(dir.path(), "20m", "16");
    let got = series(&doc);
    // 4 thread-hours over 16 threads: 15 minutes of seconds, then minutes.
    assert_eq!(got["0"], (900 + 5, 900, 1200), "a thread");
    assert_eq!(
        got["null"],
        (1200, 1200, 1200),
        "merged: the first hour in seconds"
    );
    let t = tags(&log);
    assert_eq!((t.get("all"), t.get("T15")), (Some(&1200), Some(&905)));
}

/// `--csv` coarsens as the result file does: its window rows after the first hour are the
/// same minutes (index, wake-ups, p99, maximum), series by series.
#[test]
fn csv_rows_are_the_result_files_windows() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let out = Command::cargo_bin("tickscope")
        .unwrap()
        .args(["run", "--debug-mock", "20us,30us,45us", "-i", "100ms", "-q"])
        .args(["-t", "2", "-D", "1h10m", "--json"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut from_json: BTreeMap<String, Vec<[String; 4]>> = BTreeMap::new();
    for w in doc["windows"].as_array().unwrap() {
        let thread = match w["thread"].as_u64() {
            Some(t) => t.to_string(),
            None => "all".to_string(),
        };
        let field = |k: &str| w[k].to_string();
        from_json.entry(thread).or_default().push([
            field("index"),
            field("samples"),
            field("latency_p99"),
            field("latency_max"),
        ]);
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut from_csv: BTreeMap<String, Vec<[String; 4]>> = BTreeMap::new();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let cols = [
        col("window"),
        col("samples"),
        col("latency_p99_ns"),
        col("latency_max_ns"),
    ];
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if f[col("scope")] == "window" {
            from_csv
                .entry(f[col("thread")].to_string())
                .or_default()
                .push(cols.map(|c| f[c].to_string()));
        }
    }
    assert_eq!(from_csv, from_json);
    // 3600 seconds, then 10 minutes, per series.
    assert!(from_csv.values().all(|rows| rows.len() == 3610));
}
