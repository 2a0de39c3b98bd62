//! The oracle's scorer (`bench/oracle/score.py`) on a plant run laid out by hand: ten 2 ms
//! bursts 10 ms apart, eight late wake-ups inside them named correctly, two inside named
//! `hypervisor` (the misses) and four outside named `hypervisor` — so precision 1, recall
//! 0.8, and the background check's rates for `hypervisor`: 2 inside an exposure of the
//! bursts' 20 ms plus ten times its median latency (100 µs), 4 outside in the rest of the
//! 92 ms span. Then a spinner (never to be blamed): its only miss is where it is named.

use serde_json::{json, Value};

mod common;

const TEST: &str = "the_scorer_counts_misses_and_checks_them_against_the_background";

const MS: i64 = 1_000_000;

fn late(expiry: i64, category: &str, detail: Option<&str>) -> String {
    json!({
        "sample": {"tid": 7, "expiry": expiry, "woke": expiry + MS / 10},
        "cause": {"category": category, "detail": detail},
        "marks": [],
    })
    .to_string()
}

#[test]
fn the_scorer_counts_misses_and_checks_them_against_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let plant = dir.path().join("fifo-hi");
    std::fs::create_dir(&plant).unwrap();
    let plant_json = json!({
        "name": "fifo-hi", "comm": "plant-fifo",
        "correct": {"category": ["other thread"], "detail": "plant-fifo"},
        "blame_forbidden": false, "threshold": "100us", "max_latency_ns": 0,
        "command": "by hand",
    });
    std::fs::write(plant.join("plant.json"), plant_json.to_string()).unwrap();
    let t0 = 1_000 * MS;
    let bursts: Vec<String> = (0..10)
        .map(|k| format!("{} {}", t0 + k * 10 * MS, t0 + k * 10 * MS + 2 * MS))
        .collect();
    std::fs::write(plant.join("truth.txt"), bursts.join("\n") + "\n").unwrap();
    let mut lines = Vec::new();
    for k in 0..8 {
        lines.push(late(
            t0 + k * 10 * MS + MS / 2,
            "other thread",
            Some("plant-fifo"),
        ));
    }
    for k in 8..10 {
        lines.push(late(t0 + k * 10 * MS + MS / 2, "hypervisor", None));
    }
    for k in 0..4 {
        lines.push(late(t0 + k * 10 * MS + 5 * MS, "hypervisor", None));
    }
    std::fs::write(plant.join("late.jsonl"), lines.join("\n") + "\n").unwrap();

    let (out_json, out_md) = (dir.path().join("o.json"), dir.path().join("o.md"));
    if common::oracle_script(TEST, "score.py", &[&out_json, &out_md, &plant]).is_none() {
        return;
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out_json).unwrap()).unwrap();
    let r = &report["plants"][0];
    assert_eq!(r["truth_plant"], 10);
    assert_eq!(r["precision"], 1.0);
    assert_eq!(r["recall"], 0.8);
    let bg = &r["misses_background"][0];
    assert_eq!(bg["cause"], "hypervisor");
    assert_eq!(bg["missed"], 2);
    // Inside: 2 in 20 ms + 10 × 0.1 ms; outside: 4 in the rest of the 92 ms span.
    let near = |v: &Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-6 * want;
    assert!(near(&bg["per_s_in_bursts"], 2.0 / 0.021), "{bg}");
    assert!(near(&bg["per_s_outside"], 4.0 / 0.071), "{bg}");
    let md = std::fs::read_to_string(&out_md).unwrap();
    assert!(
        md.contains("- fifo-hi: its misses by cause") && md.contains("hypervisor 2 (95.2 / 56.3)"),
        "{md}"
    );
    // A plant that must never be blamed (the spinner) misses only where it is named: its
    // `page fault` is no correct cause, yet no miss either.
    let spinner = dir.path().join("spinner");
    std::fs::create_dir(&spinner).unwrap();
    let mut plant_json = plant_json;
    plant_json["name"] = json!("spinner");
    plant_json["comm"] = json!("plant-other");
    plant_json["correct"] = json!({"category": ["hypervisor", "other thread"], "detail": null});
    plant_json["blame_forbidden"] = json!(true);
    std::fs::write(spinner.join("plant.json"), plant_json.to_string()).unwrap();
    std::fs::copy(plant.join("truth.txt"), spinner.join("truth.txt")).unwrap();
    let lines = [
        late(t0 + MS / 2, "other thread", Some("plant-other")),
        late(t0 + 10 * MS + MS / 2, "hypervisor", None),
        late(t0 + 20 * MS + MS / 2, "page fault", Some("user mode")),
    ];
    std::fs::write(spinner.join("late.jsonl"), lines.join("\n") + "\n").unwrap();
    common::oracle_script(TEST, "score.py", &[&out_json, &out_md, &spinner]);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out_json).unwrap()).unwrap();
    let bg = &report["plants"][0]["misses_background"];
    assert_eq!(bg.as_array().unwrap().len(), 1, "{bg}");
    assert_eq!(bg[0]["cause"], "other thread (plant)");
    assert_eq!(bg[0]["missed"], 1);
}
