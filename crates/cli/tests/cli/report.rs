//! `tickscope run` with its exports, then `report` and `compare` on the result — the whole
//! path on this machine. Real timing: only structure is checked, never values.

use predicates::prelude::*;
use std::path::{Path, PathBuf};

use super::common::tickscope;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(name)
}

#[test]
fn run_then_report_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    tickscope()
        .args(["run", "-l", "300", "-i", "1ms", "-q", "--json"])
        .arg(p("r.json"))
        .arg("--histogram-file")
        .arg(p("h.txt"))
        .arg("--csv")
        .arg(p("s.csv"))
        .arg("--samples")
        .arg(p("samples.csv"))
        .assert()
        .success();

    // Exports: the cyclictest histogram, summary + windows, every wake-up.
    let hist = std::fs::read_to_string(p("h.txt")).unwrap();
    assert!(hist.contains("# Histogram\n000000 "));
    assert!(hist.contains("# Total: 000000300\n"));
    let csv = std::fs::read_to_string(p("s.csv")).unwrap();
    assert!(csv.starts_with("run,method,round,thread,scope,window,"));
    assert!(csv.lines().nth(1).unwrap().contains(",total,"));
    let samples = std::fs::read_to_string(p("samples.csv")).unwrap();
    let rows: Vec<&str> = samples.lines().collect();
    assert_eq!(
        rows[0],
        "run,method,thread,index,expiry_ns,woke_ns,latency_ns"
    );
    assert_eq!(rows.len(), 301);
    assert!(rows[1].starts_with("0,nanosleep-abs,0,0,"));
    let no_temporaries = std::fs::read_dir(dir.path())
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp"));
    assert!(no_temporaries);

    // Report: HTML with inline plots, and the plots as files.
    tickscope()
        .arg("report")
        .arg(p("r.json"))
        .arg("-o")
        .arg(p("r.html"))
        .arg("--png")
        .arg(p("png"))
        .arg("--svg")
        .arg(p("svg"))
        .assert()
        .success()
        .stdout(predicate::str::contains("4 plots written"));
    let html = std::fs::read_to_string(p("r.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 4);
    // Self-contained: nothing loaded from elsewhere (a checkout path may contain "http").
    assert!(!html.contains("http://") && !html.contains("https://"));
    for stem in ["histogram", "percentiles", "period", "timeline"] {
        let png = std::fs::read(p("png").join(format!("{stem}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let svg = std::fs::read_to_string(p("svg").join(format!("{stem}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"));
    }

    // Compare: the run next to a cyclictest result, in every format.
    let cyclictest = fixture("cyclictest-fifo-2threads.json");
    tickscope()
        .arg("compare")
        .arg(p("r.json"))
        .arg(&cyclictest)
        .args(["--label", "tickscope", "--label", "cyclictest"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("latency p99.9")
                .and(predicate::str::contains("tickscope"))
                .and(predicate::str::contains("cyclictest 2.40")),
        );
    for (format, start) in [("markdown", "| "), ("csv", "quantity,"), ("json", "{")] {
        tickscope()
            .arg("compare")
            .arg(p("r.json"))
            .arg(&cyclictest)
            .args(["--format", format])
            .assert()
            .success()
            .stdout(predicate::str::starts_with(start));
    }
}

#[test]
fn bad_files_give_one_line_and_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("jitterdebugger-2cpus.json")).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 3]).unwrap();
    let unknown = dir.path().join("other.json");
    std::fs::write(&unknown, "{\"hello\": 1}").unwrap();
    for (cmd, file, what) in [
        ("compare", &cut, "truncated"),
        (
            "compare",
            &unknown,
            "not a tickscope, cyclictest --json or jitterdebugger result",
        ),
        ("report", &cut, "truncated"),
        ("report", &dir.path().join("missing.json"), "cannot read"),
    ] {
        let out = tickscope().arg(cmd).arg(file).assert().code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&*file.display().to_string()), "{stderr}");
        assert!(stderr.contains(what), "{stderr}");
    }
}

/// Another tool's result gets a report too (it used to be refused with "use compare"):
/// what the file records and its histogram and percentile plots.
#[test]
fn cyclictest_and_jitterdebugger_files_get_a_report_with_plots() {
    let dir = tempfile::tempdir().unwrap();
    for (name, tool) in [
        ("cyclictest-fifo-2threads.json", "cyclictest"),
        ("jitterdebugger-2cpus.json", "jitterdebugger"),
    ] {
        let html = dir.path().join(format!("{tool}.html"));
        let png = dir.path().join(format!("{tool}-png"));
        tickscope()
            .arg("report")
            .arg(fixture(name))
            .arg("-o")
            .arg(&html)
            .arg("--png")
            .arg(&png)
            .assert()
            .success()
            .stdout(predicate::str::contains(format!(
                "report of a {tool} result"
            )));
        let page = std::fs::read_to_string(&html).unwrap();
        assert_eq!(page.matches("<svg").count(), 2, "{tool}");
        assert!(page.contains("latency p99"), "{tool}: the figures");
        for stem in ["histogram", "percentiles"] {
            let bytes = std::fs::read(png.join(format!("{stem}.png"))).unwrap();
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        }
    }
}

#[test]
fn export_to_a_missing_directory_is_refused_before_measuring() {
    tickscope()
        .args(["run", "-l", "10", "--samples", "/nonexistent-dir/s.csv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--samples: directory '/nonexistent-dir'",
        ));
}

/// A result written with `--hlog` names its interval log; the report draws per-interval
/// bands from it (found through the recorded path, or `--hlog`); a log moved away is a note,
/// not a failure; a missing `--hlog FILE` is exit 2.
#[test]
fn the_report_draws_bands_from_the_interval_log_the_result_names() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    tickscope()
        .args([
            "run",
            "--debug-mock",
            "20us,30us,2.5ms",
            "-D",
            "4s",
            "-t",
            "2",
            "-q",
        ])
        .arg("--json")
        .arg(p("r.json"))
        .arg("--hlog")
        .arg(p("r.hlog"))
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("r.json")).unwrap()).unwrap();
    assert_eq!(doc["hlog"]["tags"], serde_json::json!(["T0", "T1", "all"]));
    tickscope()
        .arg("report")
        .arg(p("r.json"))
        .arg("--png")
        .arg(p("png"))
        .assert()
        .success();
    assert!(p("png/bands.png").exists());
    let html = std::fs::read_to_string(p("r.html")).unwrap();
    assert!(
        html.contains("From the interval log (tag all)"),
        "the bands are in the page"
    );

    std::fs::rename(p("r.hlog"), p("moved.hlog")).unwrap();
    tickscope()
        .arg("report")
        .arg(p("r.json"))
        .assert()
        .success()
        .stderr(predicate::str::contains("note: the interval log"));
    tickscope()
        .arg("report")
        .arg(p("r.json"))
        .arg("--hlog")
        .arg(p("moved.hlog"))
        .assert()
        .success();
    tickscope()
        .arg("report")
        .arg(p("r.json"))
        .arg("--hlog")
        .arg(p("nothere.hlog"))
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("tickscope: --hlog: "));
}

/// An interval log given as the report's input gets its own per-interval bands; a result
/// whose log cannot be drawn says so in the page as well as on stderr.
#[test]
fn an_interval_log_on_its_own_gets_bands_and_a_missing_one_a_note_in_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    tickscope()
        .args(["run", "--debug-mock", "20us,30us,2.5ms", "-D", "3s", "-q"])
        .arg("--json")
        .arg(p("r.json"))
        .arg("--hlog")
        .arg(p("r.hlog"))
        .assert()
        .success();
    tickscope()
        .arg("report")
        .arg(p("r.hlog"))
        .arg("--png")
        .arg(p("png"))
        .assert()
        .success();
    assert!(p("png/bands.png").exists());
    let html = std::fs::read_to_string(p("r.html")).unwrap();
    assert!(html.contains("From the interval log (tag all)"), "{html}");

    std::fs::remove_file(p("r.hlog")).unwrap();
    tickscope()
        .arg("report")
        .arg(p("r.json"))
        .assert()
        .success()
        .stderr(predicate::str::contains("note: the interval log"));
    let html = std::fs::read_to_string(p("r.html")).unwrap();
    assert!(
        html.contains("<p class=\"note\">Note: the interval log the result names cannot be drawn"),
        "the note is in the page"
    );
}

/// `compare a.hlog a.json` of one run: the log's header carries the run's settings, so the
/// two columns differ only in what the log cannot record (the load beside the run).
#[test]
fn an_interval_log_and_the_result_of_one_run_compare_equal_in_their_settings() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    tickscope()
        .args([
            "run",
            "--debug-mock",
            "20us,30us",
            "-t",
            "2",
            "-l",
            "2000",
            "-q",
        ])
        .arg("--json")
        .arg(p("a.json"))
        .arg("--hlog")
        .arg(p("a.hlog"))
        .assert()
        .success();
    let out = tickscope()
        .args(["compare", "--format", "csv"])
        .arg(p("a.hlog"))
        .arg(p("a.json"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let settings = [
        "tool",
        "kernel",
        "preemption",
        "method",
        "policy",
        "priority",
        "interval",
        "threads",
        "clock",
        "pm_qos",
        "timer_slack",
        "load",
    ];
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows.iter().filter(|r| settings.contains(&r[0])).count(),
        settings.len(),
        "{text}"
    );
    let differing: Vec<&str> = rows
        .iter()
        .filter(|r| settings.contains(&r[0]) && r[1] != r[2])
        .map(|r| r[0])
        .collect();
    assert_eq!(differing, ["load"], "{text}");
}
