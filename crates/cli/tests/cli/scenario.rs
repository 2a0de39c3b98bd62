//! `tickscope scenario`: listing, bad files, every built-in with `--quick` (structure of the
//! output and of the JSON), and a user-written scenario with a load and a timed action.

use std::time::Duration;

const BUILTINS: &[(&str, bool)] = &[
    // (name, needs stress-ng)
    ("hrtimers-2007", false),
    ("ols-2006", true),
    ("rt-2013", false),
    ("periodic-task", false),
    ("clock-gettime-2010", true),
];

fn have_stress_ng() -> bool {
    std::process::Command::new("stress-ng")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

use super::common::tickscope;

#[test]
fn list_and_show() {
    let out = tickscope().args(["scenario", "list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for (name, _) in BUILTINS {
        assert!(
            text.lines().any(|l| l.starts_with(name)),
            "{name} in {text}"
        );
    }
    let out = tickscope()
        .args(["scenario", "show", "rt-2013"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("name = \"rt-2013\""));
    let out = tickscope()
        .args(["scenario", "show", "no-such"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_bad_file_is_one_line_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("name = \"x\"\nabout = 3\n", "line 2"),
        ("name = \"x\"\nabout = \"a\"\n[source]\ntitle = \"t\"\nauthor = \"a\"\nyear = 1\n[[steps]]\nname = \"s\"\nargs = [\"--bogus\"]\n[table]\ntitle = \"t\"\nrows = [{label = \"m\", metric = \"latency.max\"}]\ncolumns = [\"s\"]\n", "--bogus"),
        ("name = [\n", "line "),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let out = tickscope()
            .args(["scenario", "run"])
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "case {i}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("bad{i}.toml")) && err.contains(want),
            "{err}"
        );
    }
}

#[test]
fn every_builtin_runs_quick() {
    let stress = have_stress_ng();
    for (name, needs_stress) in BUILTINS {
        if *needs_stress && !stress {
            eprintln!("skipped {name}: stress-ng is not installed (apt-get install stress-ng)");
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("s.json");
        let out = tickscope()
            .args(["scenario", "run", name, "--quick", "--json"])
            .arg(&json)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("--quick"), "{name} says it is quick");
        assert!(text.contains("this machine"), "{name}");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc["schema"], "tickscope.scenario/1");
        assert_eq!(doc["quick"], true);
        assert_eq!(doc["scenario"]["name"], *name);
        let steps = doc["steps"].as_array().unwrap();
        assert_eq!(
            steps.len(),
            doc["scenario"]["steps"].as_array().unwrap().len()
        );
        for s in steps {
            if let Some(why) = s["skipped"].as_str() {
                eprintln!("{name}: step {} skipped: {why}", s["name"]);
                continue;
            }
            assert!(
                s["run"].is_object() || s["clocks"].is_object(),
                "{name}: {s}"
            );
        }
        let header = doc["table"]["header"].as_array().unwrap();
        assert!(header.len() >= 2);
        for row in doc["table"]["rows"].as_array().unwrap() {
            assert_eq!(row.as_array().unwrap().len(), header.len(), "{name}");
        }
    }
}

#[test]
fn a_user_scenario_with_a_load_and_a_timed_action() {
    if !have_stress_ng() {
        eprintln!("skipped: stress-ng is not installed (apt-get install stress-ng)");
        return;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("skipped: the example places the load on CPU 1; this machine has one CPU");
        return;
    }
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/loaded-switch.toml"
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = tickscope()
        .args(["scenario", "run", file, "--quick", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let step = &doc["steps"][0];
    let load = &step["run"]["load"];
    assert_eq!(load["process"]["command"][1], "--sockpair");
    assert_eq!(load["measured_cpus"], serde_json::json!([1]));
    let pid = load["process"]["pid"].as_i64().unwrap();
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    let action = &step["actions"][0];
    assert_eq!(action["action"], "fifo 50");
    assert_eq!(action["at_ns"], 1_000_000_000i64);
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        assert!(action["done_at_ns"].as_i64().unwrap() >= 1_000_000_000);
        assert!(action["error"].is_null(), "{action}");
    } else {
        eprintln!(
            "not root: the SCHED_FIFO action is expected to fail: {}",
            action["error"]
        );
    }
}
