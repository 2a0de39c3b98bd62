//! The result document's two on-disk layouts — a single run at the top level, a comparison
//! with `runs` — map to the one in-memory shape (`runs: Vec<MethodRun>`) and back unchanged.

mod common;

use serde_json::Value;
use tickscope_report::RunDocument;

fn json(doc: &RunDocument) -> Value {
    serde_json::from_str(&doc.to_json()).unwrap()
}

#[test]
fn a_single_run_is_written_at_the_top_level_without_runs() {
    let doc = common::document(2, 3);
    assert_eq!((doc.runs.len(), doc.comparison), (1, false));
    let v = json(&doc);
    assert!(v.get("runs").is_none());
    let run = doc.first();
    assert_eq!(v["started_at"], Value::from(run.started_at.clone()));
    assert_eq!(v["applied"], serde_json::to_value(&run.applied).unwrap());
    assert_eq!(v["threads"].as_array().unwrap().len(), 2);
    // Keys in the order of tickscope.run/1 and /2, windows last.
    let text = doc.to_json();
    let at = |k: &str| text.find(&format!("\n  \"{k}\":")).unwrap_or(usize::MAX);
    let keys: Vec<usize> = [
        "schema",
        "tool",
        "started_at",
        "ended_at",
        "interrupted",
        "error",
        "system",
        "config",
        "applied",
        "threads",
        "summary",
        "windows",
    ]
    .iter()
    .map(|k| at(k))
    .collect();
    assert!(keys.windows(2).all(|p| p[0] < p[1]), "{keys:?}");
    assert!(keys.iter().all(|&k| k < usize::MAX));
    assert!(same_after_reading(&doc));
}

/// Read back and written again, the document is the same JSON (floats to 12 significant
/// digits: serde_json may change the last digit of an `f64` when it reads one).
fn same_after_reading(doc: &RunDocument) -> bool {
    fn norm(v: Value) -> Value {
        match v {
            Value::Number(n) if n.is_f64() => Value::from(format!("{:.11e}", n.as_f64().unwrap())),
            Value::Array(a) => Value::Array(a.into_iter().map(norm).collect()),
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, norm(v))).collect()),
            v => v,
        }
    }
    let back = RunDocument::from_json(&doc.to_json()).unwrap();
    norm(json(&back)) == norm(json(doc))
        && back.runs.len() == doc.runs.len()
        && back.comparison == doc.comparison
}

#[test]
fn a_comparison_repeats_its_first_run_at_the_top_level_and_lists_every_run() {
    let mut doc = common::two_method_document(2, 3);
    doc.runs[1].ended_at = "2026-11-21T12:00:09.000000000Z".into();
    doc.runs[1].interrupted = true;
    let v = json(&doc);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(v["applied"], runs[0]["applied"]);
    assert_eq!(v["summary"]["samples"], runs[0]["summary"]["samples"]);
    // The whole invocation: first start, last end, cut short if any run was.
    assert_eq!(v["started_at"], runs[0]["started_at"]);
    assert_eq!(v["ended_at"], Value::from("2026-11-21T12:00:09.000000000Z"));
    assert_eq!(v["interrupted"], Value::from(true));
    assert!(same_after_reading(&doc));
    assert!(RunDocument::from_json(&doc.to_json()).unwrap().comparison);
}

#[test]
fn a_comparison_stopped_after_one_run_stays_a_comparison() {
    let mut doc = common::two_method_document(1, 2);
    doc.runs.truncate(1);
    assert!(json(&doc)["runs"].as_array().is_some());
    let back = RunDocument::from_json(&doc.to_json()).unwrap();
    assert_eq!((back.runs.len(), back.comparison), (1, true));
}
