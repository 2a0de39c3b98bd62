//! The oracle's miss listing (`bench/oracle/misses.py`) on plant runs laid out by hand: a
//! thread plant whose three misses are, by the oracle's own `sched_switch` record, two where
//! another task ran longer than the plant and one where the plant ran longest; a plant
//! without a thread of its own whose misses are one with its burst under way at the expiry
//! and one with the burst beginning after it. Correct causes and wake-ups outside every burst
//! are never listed.

use serde_json::json;
use std::path::Path;

mod common;

const TEST: &str = "misses_are_listed_beside_the_oracles_own_record";

const MS: i64 = 1_000_000;
const T0: i64 = 1_000_000 * MS;
const TID: i64 = 7;

fn late(expiry: i64, woke: i64, category: &str, detail: Option<&str>) -> String {
    json!({
        "sample": {"tid": TID, "expiry": expiry, "woke": woke},
        "cause": {"category": category, "detail": detail},
        "marks": [],
    })
    .to_string()
}

/// One `sched_switch` line as the oracle's tracefs text record has it.
fn switch(ts: i64, prev: i64, next_comm: &str, next: i64) -> String {
    format!(
        "  x-{prev} [001] d..2. {}.{:06}: sched_switch: prev_comm=x prev_pid={prev} prev_prio=120 \
         prev_state=R ==> next_comm={next_comm} next_pid={next} next_prio=120",
        ts / 1_000_000_000,
        ts % 1_000_000_000 / 1_000
    )
}

fn plant(dir: &Path, name: &str, comm: &str, correct: serde_json::Value, lines: &[String]) {
    std::fs::create_dir(dir).unwrap();
    let p = json!({
        "name": name, "comm": comm, "correct": correct, "blame_forbidden": false,
        "threshold": "100us", "max_latency_ns": 0, "command": "by hand",
    });
    std::fs::write(dir.join("plant.json"), p.to_string()).unwrap();
    // Two bursts: [0, 3 ms) and [11 ms, 13 ms).
    let truth = format!(
        "{} {}\n{} {}\n",
        T0,
        T0 + 3 * MS,
        T0 + 11 * MS,
        T0 + 13 * MS
    );
    std::fs::write(dir.join("truth.txt"), truth).unwrap();
    std::fs::write(dir.join("late.jsonl"), lines.join("\n") + "\n").unwrap();
}

#[test]
fn misses_are_listed_beside_the_oracles_own_record() {
    let dir = tempfile::tempdir().unwrap();
    let hog = dir.path().join("other-hog");
    let correct = json!({"category": ["other thread"], "detail": "plant-other"});
    plant(
        &hog,
        "other-hog",
        "plant-other",
        correct,
        &[
            // Inside the first burst: stress-ng holds the CPU 2.97 ms, the plant 20 µs.
            late(
                T0 + MS / 2,
                T0 + 7 * MS / 2,
                "other thread",
                Some("stress-ng"),
            ),
            // Correct: not listed.
            late(T0 + MS, T0 + 2 * MS, "other thread", Some("plant-other")),
            // Inside the first burst, after the plant's 20 µs: stress-ng alone.
            late(T0 + 3 * MS / 2, T0 + 3 * MS, "hypervisor", None),
            // Inside the second burst, which begins 1 ms after the expiry: the plant runs
            // 1.99 ms, stress-ng 1 ms.
            late(
                T0 + 10 * MS,
                T0 + 13 * MS,
                "other thread",
                Some("stress-ng"),
            ),
            // Outside every burst: not the plant's.
            late(T0 + 20 * MS, T0 + 21 * MS, "hypervisor", None),
        ],
    );
    let record = [
        switch(T0 + 2 * MS / 5, TID, "stress-ng", 500),
        switch(T0 + MS, 500, "plant-other", 600),
        switch(T0 + MS + MS / 50, 600, "stress-ng", 500),
        switch(T0 + 3_490_000, 500, "tickscope-0", TID),
        switch(T0 + 9_900_000, TID, "stress-ng", 500),
        switch(T0 + 11 * MS, 500, "plant-other", 600),
        switch(T0 + 12_990_000, 600, "tickscope-0", TID),
    ];
    std::fs::write(hog.join("switch.txt"), record.join("\n") + "\n").unwrap();
    let quota = dir.path().join("quota");
    plant(
        &quota,
        "quota",
        "",
        json!({"category": ["cpu quota"], "detail": null}),
        &[
            late(T0 + MS, T0 + 2 * MS, "hypervisor", None),
            late(
                T0 + 10 * MS,
                T0 + 12 * MS,
                "other thread",
                Some("stress-ng"),
            ),
            late(T0 + 11 * MS, T0 + 12 * MS, "cpu quota", None),
        ],
    );
    let not_a_plant = dir.path().join("plant");
    std::fs::create_dir(&not_a_plant).unwrap();

    let Some(out) = common::oracle_script(TEST, "misses.py", &[&hog, &quota, &not_a_plant]) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let tally = |plant: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with(&format!("{plant}: ")))
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert!(text.contains("other-hog: 3 misses"), "{text}");
    let mut hog_tally = tally("other-hog");
    hog_tally.sort();
    assert_eq!(
        hog_tally,
        [
            "1  hypervisor, another task ran longer",
            "1  other thread, another task ran longer",
            "1  other thread, the plant ran longer or alike"
        ],
        "{text}"
    );
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "burst 2500.0 µs from -500.0 plant ran 20.0 µs busiest other stress-ng 2970.0 µs"
        ),
        "{text}"
    );
    assert!(text.contains("quota: 2 misses"), "{text}");
    let mut quota_tally = tally("quota");
    quota_tally.sort();
    assert_eq!(
        quota_tally,
        [
            "1  hypervisor, burst under way at the expiry",
            "1  other thread, burst began after the expiry"
        ],
        "{text}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no plant.json"),
        "the directory without plant.json is named as skipped"
    );
}
