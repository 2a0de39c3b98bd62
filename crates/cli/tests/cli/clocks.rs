//! `tickscope clocks` on the real machine: the structure of what it prints and writes, never
//! timing thresholds (CI runs on a noisy 2-core VM).

use predicates::str::contains;
use serde_json::Value;
use std::path::Path;

const KERNEL_CLOCKS: [&str; 9] = [
    "realtime",
    "realtime_coarse",
    "monotonic",
    "monotonic_coarse",
    "monotonic_raw",
    "boottime",
    "tai",
    "process_cputime_id",
    "thread_cputime_id",
];

use super::common::tickscope;

/// Runs `tickscope clocks --duration 300ms --json FILE <extra>` and returns the document.
fn clocks_json(dir: &Path, extra: &[&str]) -> Value {
    let path = dir.join("clocks.json");
    tickscope()
        .args(["clocks", "--duration", "300ms", "--json"])
        .arg(&path)
        .args(extra)
        .assert()
        .success()
        .stdout(contains("CLOCK_MONOTONIC"))
        .stdout(contains("floor for 'tickscope run'"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn expected_clocks() -> Vec<&'static str> {
    let mut names = KERNEL_CLOCKS.to_vec();
    if cfg!(target_arch = "x86_64") {
        names.extend(["rdtsc", "rdtscp"]);
    }
    names
}

/// Checks one clock entry: status, and for a measured clock every field and its sign.
fn check_clock(c: &Value) {
    let name = c["clock"].as_str().unwrap();
    match c["status"].as_str().unwrap() {
        "unsupported" => assert!(c["reason"].is_string(), "{name}"),
        "measured" => {
            assert!(c["resolution_ns"].as_i64().unwrap() > 0, "{name}");
            assert!(c["cost"]["median_ns"].as_f64().unwrap() > 0.0, "{name}");
            assert!(c["cost"]["batches"].as_u64().unwrap() >= 1, "{name}");
            for f in ["p10_ns", "p90_ns", "min_ns", "reads_per_batch"] {
                assert!(c["cost"][f].is_number(), "{name}: cost.{f}");
            }
            let d = &c["deltas"];
            assert!(d["samples"].as_u64().unwrap() > 0, "{name}");
            for f in ["min", "p50", "p99", "max", "zero", "backward_steps"] {
                assert!(d[f].is_number(), "{name}: deltas.{f}");
            }
            assert!(d["granularity"].is_number() || d["granularity"].is_null());
            assert!(d["min"].as_i64() <= d["max"].as_i64(), "{name}");
            if c["monotonic"].as_bool().unwrap() {
                assert_eq!(d["backward_steps"], 0, "{name} stepped back");
            }
            assert!(c["after_idle"]["samples"].as_u64().unwrap() >= 1, "{name}");
            let access = c["access"].as_str().unwrap();
            if name.starts_with("rdtsc") {
                assert_eq!(access, "instruction");
                assert!(c["delta_ticks"]["samples"].as_u64().unwrap() > 0);
            } else {
                assert!(matches!(access, "vdso" | "syscall"), "{name}: {access}");
                assert!(c["syscall_cost"]["median_ns"].as_f64().unwrap() > 0.0);
            }
        }
        other => panic!("{name}: unknown status {other}"),
    }
}

#[test]
fn every_clock_is_in_the_result_file() {
    let dir = tempfile::tempdir().unwrap();
    let v = clocks_json(dir.path(), &[]);
    assert_eq!(v["schema"], "tickscope.clocks/1");
    assert_eq!(v["tool"]["name"], "tickscope");
    assert!(v["system"]["kernel_release"].is_string());
    assert_eq!(v["config"]["budget_ns"], 300_000_000);
    assert_eq!(v["batch_clock"], "CLOCK_MONOTONIC_RAW");
    assert!(v.get("idle_compare").is_none());
    let clocks = v["clocks"].as_array().unwrap();
    let names: Vec<&str> = clocks
        .iter()
        .map(|c| c["clock"].as_str().unwrap())
        .collect();
    assert_eq!(names, expected_clocks());
    clocks.iter().for_each(check_clock);
    // Always there since Linux 2.6: these must be measured, not unsupported.
    for always in ["realtime", "monotonic", "process_cputime_id"] {
        let c = clocks.iter().find(|c| c["clock"] == always).unwrap();
        assert_eq!(c["status"], "measured", "{always}");
    }
    if cfg!(target_arch = "x86_64")
        && clocks
            .iter()
            .any(|c| c["clock"] == "rdtsc" && c["status"] == "measured")
    {
        assert!(v["tsc"]["hz"].as_u64().unwrap() > 0);
        assert!(v["tsc"]["source"].is_string() && v["tsc"]["detail"].is_string());
    }
}

#[test]
fn idle_compare_adds_two_conditions_on_a_pinned_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let v = clocks_json(dir.path(), &["--idle-compare"]);
    assert!(v["cpu"].is_number(), "idle compare pins the measurement");
    let passes = v["idle_compare"].as_array().unwrap();
    let conditions: Vec<&str> = passes
        .iter()
        .map(|p| p["condition"].as_str().unwrap())
        .collect();
    assert_eq!(conditions, ["pm-qos-zero", "sibling-spin"]);
    if tickscope_engine::setup::allowed_cpus().unwrap().len() > 1 {
        let spin = &passes[1];
        assert!(
            spin["skipped"].is_null(),
            "spin skipped: {}",
            spin["skipped"]
        );
        assert!(spin["note"].as_str().unwrap().contains("spinning on CPU"));
    }
    for p in passes {
        if p["skipped"].is_string() {
            assert!(p["clocks"].as_array().unwrap().is_empty());
        } else {
            let clocks = p["clocks"].as_array().unwrap();
            assert_eq!(clocks.len(), expected_clocks().len());
            clocks.iter().for_each(check_clock);
        }
    }
}

#[test]
fn pins_to_the_cpu_asked_for() {
    let cpu = tickscope_engine::setup::allowed_cpus().unwrap()[0];
    let dir = tempfile::tempdir().unwrap();
    let v = clocks_json(dir.path(), &["--cpu", &cpu.to_string()]);
    assert_eq!(v["cpu"], cpu);
    assert_eq!(v["config"]["cpu"], cpu);
}

#[test]
fn bad_input_is_one_line_on_stderr_and_status_2() {
    let cases: [&[&str]; 6] = [
        &["--cpu", "x"],
        &["--cpu", "99999"],
        &["--duration", "1ms"],
        &["--duration", "soon"],
        &["--bogus"],
        &["--json", "/nonexistent-dir/clocks.json"],
    ];
    for extra in cases {
        let out = tickscope().arg("clocks").args(extra).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.starts_with("tickscope: "), "{extra:?}: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    }
}
