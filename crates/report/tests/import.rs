//! The importers on real result files made on the project's machine (see
//! `fixtures/README.md`), and on truncated and malformed copies of them.

use serde_json::Value;
use std::path::PathBuf;
use tickscope_report::import::{self, Measurement, Setting, SourceFormat};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

fn one(name: &str) -> Measurement {
    let mut m = import::read(&fixture(name)).unwrap();
    assert_eq!(m.len(), 1);
    m.remove(0)
}

fn parse_value(name: &str, v: &Value) -> Result<Vec<Measurement>, import::ImportError> {
    import::parse(name, "x", &v.to_string())
}

#[test]
fn cyclictest_us_file_with_overflows() {
    let m = one("cyclictest-fifo-2threads.json");
    assert_eq!(m.format, SourceFormat::Cyclictest);
    assert_eq!(m.label, "cyclictest-fifo-2threads");
    assert_eq!(m.samples, 4000);
    assert_eq!(m.resolution_ns, Some(1000));
    let l = m.latency_ns.unwrap();
    assert_eq!(l.min, 5_000);
    assert_eq!(l.max, 2_463_000);
    // (15.89·2000 + 14.63·2000) / 4000 µs
    assert!((l.mean - 15_260.0).abs() < 0.01, "{}", l.mean);
    assert_eq!(l.p50, Some(12_000));
    // 6 of 4000 wake-ups lie beyond the 400 µs histogram (-h 400): p99.9 (rank 3996) is
    // among them, so only its lower bound is known.
    assert!(l.p99.unwrap() < 400_000);
    assert_eq!(l.p99_9, Some(400_000));
    assert_eq!(l.lower_bounds, ["p99_9"]);
    assert!(m
        .notes
        .iter()
        .any(|n| n.starts_with("6 wake-ups at or beyond the histogram's end (400 µs)")));
    assert!(m.notes.iter().any(|n| n.contains("1 µs histogram buckets")));
    assert_eq!(m.settings[&Setting::Policy], "fifo");
    assert_eq!(m.settings[&Setting::Priority], "90");
    assert_eq!(m.settings[&Setting::Interval], "1.00 ms");
    assert_eq!(m.settings[&Setting::Threads], "2");
    assert_eq!(m.settings[&Setting::Tool], "cyclictest 2.40");
    assert_eq!(m.settings[&Setting::Kernel], "6.18.44-fc-v595");
    assert_eq!(m.dt_sd_ns, None);
    assert_eq!(m.overruns, None);
}

#[test]
fn cyclictest_ns_file_reads_ns_buckets() {
    let m = one("cyclictest-other-ns.json");
    assert_eq!(m.resolution_ns, Some(1));
    assert!(m.notes.iter().any(|n| n.contains("1 ns histogram buckets")));
    let l = m.latency_ns.unwrap();
    assert_eq!(l.min, 41_428);
    assert_eq!(l.max, 1_656_270);
    let (p50, p99) = (l.p50.unwrap(), l.p99.unwrap());
    assert!(l.min <= p50 && p50 <= p99 && p99 <= l.max);
    // ns buckets: the median is not a whole µs value in general.
    assert_eq!(m.settings[&Setting::Policy], "other");
    assert_eq!(m.settings[&Setting::Priority], "nice 0");
}

#[test]
fn cyclictest_without_histogram_has_no_percentiles() {
    let m = one("cyclictest-no-histogram.json");
    let l = m.latency_ns.unwrap();
    assert_eq!((l.p50, l.p99, l.p99_9), (None, None, None));
    assert_eq!(l.min, 4_000);
    assert!(m.notes.iter().any(|n| n.contains("no histogram")));
}

#[test]
fn jitterdebugger_file() {
    let m = one("jitterdebugger-2cpus.json");
    assert_eq!(m.format, SourceFormat::Jitterdebugger);
    assert_eq!(m.samples, 1971 + 1969);
    assert_eq!(m.resolution_ns, Some(1000));
    let l = m.latency_ns.unwrap();
    assert_eq!(l.min, 5_000);
    assert_eq!(l.max, 1_148_000);
    assert!(l.p50.unwrap() <= l.p99.unwrap());
    assert!(m
        .notes
        .iter()
        .any(|n| n.starts_with("1 wake-up at or beyond")));
    assert!(l.lower_bounds.is_empty());
    assert_eq!(m.settings[&Setting::Threads], "2");
    assert!(!m.settings.contains_key(&Setting::Policy));
}

#[test]
fn tickscope_file() {
    let m = one("tickscope-fifo-2threads.json");
    assert_eq!(m.format, SourceFormat::Tickscope);
    assert_eq!(m.samples, 600);
    assert_eq!(m.resolution_ns, None);
    assert!(m.dt_sd_ns.is_some() && m.cpu_percent.is_some());
    assert_eq!(m.overruns, Some(0));
    let l = m.latency_ns.unwrap();
    assert!(l.min <= l.p50.unwrap() && l.p99_9.unwrap() <= l.max);
    assert_eq!(m.settings[&Setting::Method], "nanosleep-abs");
}

#[test]
fn tickscope_file_with_several_runs_gives_a_column_per_run() {
    let mut v: Value = serde_json::from_str(&text("tickscope-fifo-2threads.json")).unwrap();
    let mut run = serde_json::json!({
        "method": "nanosleep-abs", "round": 1, "order": 0,
        "started_at": v["started_at"], "ended_at": v["ended_at"], "interrupted": false,
        "applied": v["applied"], "threads": v["threads"], "summary": v["summary"],
    });
    let first = run.clone();
    run["method"] = "nanosleep-rel".into();
    run["order"] = 1.into();
    run["applied"]["method"] = "nanosleep-rel".into();
    v["runs"] = Value::Array(vec![first, run]);
    let m = parse_value("multi.json", &v).unwrap();
    let labels: Vec<&str> = m.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["x: nanosleep-abs", "x: nanosleep-rel"]);
    assert_eq!(m[1].settings[&Setting::Method], "nanosleep-rel");
}

#[test]
fn truncated_files_say_so() {
    for name in [
        "cyclictest-fifo-2threads.json",
        "jitterdebugger-2cpus.json",
        "tickscope-fifo-2threads.json",
    ] {
        let t = text(name);
        let cut = &t[..t.len() / 2];
        let e = import::parse(name, "x", cut).unwrap_err();
        assert!(e.problem.starts_with("truncated"), "{e}");
        assert!(e.to_string().starts_with(&format!("'{name}'")));
        assert_eq!(e.to_string().lines().count(), 1);
    }
}

#[test]
fn malformed_files_name_what_is_wrong() {
    let ct: Value = serde_json::from_str(&text("cyclictest-fifo-2threads.json")).unwrap();
    let mut no_cycles = ct.clone();
    no_cycles["thread"]["1"]
        .as_object_mut()
        .unwrap()
        .remove("cycles");
    let e = parse_value("c.json", &no_cycles).unwrap_err();
    assert_eq!(
        e.to_string(),
        "'c.json': cyclictest result: thread 1 has no whole number 'cycles'"
    );
    let mut bad_bucket = ct.clone();
    bad_bucket["thread"]["0"]["histogram"]["abc"] = 1.into();
    let e = parse_value("c.json", &bad_bucket).unwrap_err();
    assert!(e.problem.contains("bucket 'abc' is not a number"), "{e}");
    let mut too_many = ct;
    too_many["thread"]["0"]["cycles"] = 10.into();
    let e = parse_value("c.json", &too_many).unwrap_err();
    assert!(e.problem.contains("histogram holds 1996 samples"), "{e}");

    let jd: Value = serde_json::from_str(&text("jitterdebugger-2cpus.json")).unwrap();
    let mut no_cpus = jd.clone();
    no_cpus["cpu"] = serde_json::json!({});
    let e = parse_value("j.json", &no_cpus).unwrap_err();
    assert_eq!(
        e.to_string(),
        "'j.json': jitterdebugger result: no cpu in the file"
    );
    let mut odd_unit = jd;
    odd_unit["sysinfo"]["resolution_in_ns"] = 7.into();
    assert!(parse_value("j.json", &odd_unit).is_err());

    let ts: Value = serde_json::from_str(&text("tickscope-fifo-2threads.json")).unwrap();
    let mut future = ts.clone();
    future["schema"] = "tickscope.run/9".into();
    let e = parse_value("t.json", &future).unwrap_err();
    assert!(e.problem.contains("schema 'tickscope.run/9'"), "{e}");
    let mut no_summary = ts;
    no_summary.as_object_mut().unwrap().remove("summary");
    let e = parse_value("t.json", &no_summary).unwrap_err();
    assert!(e.problem.contains("missing field `summary`"), "{e}");
}

#[test]
fn missing_file_is_an_error_naming_it() {
    let e = import::read(&fixture("nope.json")).unwrap_err();
    assert!(e.to_string().contains("nope.json': cannot read"), "{e}");
}

/// The cases found by trying files a careless or hostile user could give: a maximum below
/// the minimum (which made `report` panic in its plots) and counts of 2^64 − 1 (whose sum
/// used to wrap) are refused, naming the problem.
#[test]
fn inconsistent_documents_are_refused() {
    let mut ts: Value = serde_json::from_str(&text("tickscope-fifo-2threads.json")).unwrap();
    ts["summary"]["latency_ns"]["max"] = Value::from(1);
    let e = parse_value("t.json", &ts).unwrap_err();
    assert!(e.problem.contains("is above max"), "{e}");

    let mut ct: Value = serde_json::from_str(&text("cyclictest-fifo-2threads.json")).unwrap();
    for t in ["0", "1"] {
        ct["thread"][t]["cycles"] = Value::from(u64::MAX);
        ct["thread"][t]["histogram"]["5"] = Value::from(u64::MAX);
    }
    let e = parse_value("c.json", &ct).unwrap_err();
    assert!(e.problem.contains("more than any run holds"), "{e}");
}
