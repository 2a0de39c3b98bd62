//! `tickscope doctor`: exit statuses on fixture trees, the JSON document, the live machine as
//! root and as an ordinary user, and `--measure` (structure only, never timing thresholds).

use crate::common::{bin, tickscope};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../system/tests/fixtures/doctor")
        .join(name)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn read_doc(path: &Path) -> Value {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(doc["schema"], "tickscope.doctor/1");
    let findings = doc["findings"].as_array().unwrap();
    assert!(findings.len() >= 20);
    for f in findings {
        for key in [
            "id", "title", "severity", "expected", "found", "source", "effect",
        ] {
            assert!(f[key].is_string(), "{key} missing in {f}");
        }
        if f["severity"] == "unknown" {
            assert!(f["reason"].is_string(), "{f}");
        }
    }
    doc
}

/// A stock kernel (this VM: PREEMPT_NONE, a fatal finding by the kernel's checklist) can be
/// measured: `doctor && …` goes on. `--fail-on` turns a severity into status 1.
#[test]
fn exit_status_is_0_when_the_machine_can_be_measured() {
    let dir = tempfile::tempdir().unwrap();
    for (tree, cpus, fail_on, status) in [
        ("rt-quiet", "1", None, 0),
        ("rt-isolated", "2-3", None, 0),
        ("this-vm", "0-1", None, 0),
        ("rt-quiet", "1", Some("medium"), 0),
        ("rt-isolated", "2-3", Some("medium"), 1),
        ("this-vm", "0-1", Some("fatal"), 1),
        ("this-vm", "0-1", Some("info"), 1),
    ] {
        let json = dir.path().join(format!("{tree}.json"));
        let mut cmd = tickscope();
        cmd.args(["doctor", "--steal-sample", "0", "--cpus", cpus, "--root"])
            .arg(fixture(tree))
            .arg("--json")
            .arg(&json);
        if let Some(s) = fail_on {
            cmd.args(["--fail-on", s]);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(status), "{tree}:\n{stdout}");
        assert!(
            stdout.contains(&format!("(exit status {status})")),
            "{stdout}"
        );
        let doc = read_doc(&json);
        assert_eq!(doc["summary"]["exit_status"], status);
        assert!(doc.get("measure").is_none());
    }
}

/// Copies the fixture tree `name` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Timers rounded to the tick (no high-resolution timers) make every measurement invalid:
/// status 3, the finding first, marked so; `--fail-on` does not lower it.
#[test]
fn a_finding_that_invalidates_measurements_is_status_3() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("lowres");
    copy_tree(&fixture("rt-quiet"), &tree);
    let timer_list = tree.join("proc/timer_list");
    let text = std::fs::read_to_string(&timer_list).unwrap();
    std::fs::write(
        &timer_list,
        text.replace(".resolution: 1 nsecs", ".resolution: 4000000 nsecs"),
    )
    .unwrap();
    for extra in [&[][..], &["--fail-on", "fatal"][..]] {
        let out = tickscope()
            .args(["doctor", "--steal-sample", "0", "--cpus", "1", "--root"])
            .arg(&tree)
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "{stdout}");
        let first = stdout
            .find("[FATAL] kernel.hrtimers")
            .expect("the finding's block");
        assert!(
            stdout[first..]
                .lines()
                .next()
                .unwrap()
                .contains("invalid until fixed"),
            "{stdout}"
        );
        let fix_first = stdout.find("Fix these first").unwrap();
        assert!(fix_first < first, "{stdout}");
    }
}

/// Findings come most important first, grouped: "Fix these first", then "Advice".
#[test]
fn findings_come_most_important_first() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("d.json");
    let out = tickscope()
        .args(["doctor", "--steal-sample", "0", "--cpus", "0-1", "--root"])
        .arg(fixture("this-vm"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (first, advice) = (
        stdout.find("Fix these first").unwrap(),
        stdout.find("Advice").unwrap(),
    );
    assert!(first < advice, "{stdout}");
    let preempt = stdout.find("[FATAL] kernel.preempt").unwrap();
    assert!(first < preempt && preempt < advice, "{stdout}");
    let doc = read_doc(&json);
    let severities: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["severity"].as_str().unwrap())
        .collect();
    let rank = |s: &str| {
        ["fatal", "high", "medium", "unknown", "info", "ok"]
            .iter()
            .position(|r| *r == s)
            .unwrap()
    };
    assert!(
        severities.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
        "{severities:?}"
    );
}

#[test]
fn bad_input_is_status_2() {
    for args in [
        vec!["doctor", "--cpus", "x"],
        vec!["doctor", "--cpus", "9999", "--steal-sample", "0"],
        vec!["doctor", "--measure-duration", "soon"],
        vec!["doctor", "--rounds", "0"],
        vec!["doctor", "--measure", "--root", "/"],
    ] {
        let out = tickscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn live_machine() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("doctor.json");
    let out = tickscope()
        .args(["doctor", "--steal-sample", "100ms", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!([0, 1, 3].contains(&code), "status {code}");
    let doc = read_doc(&json);
    assert_eq!(doc["summary"]["exit_status"], code);
}

/// Runs `tickscope doctor ARGS` as uid/gid 65534 (nobody), or `None` with a printed reason.
fn as_nobody(args: &[&str], dir: &Path) -> Option<std::process::Output> {
    if !is_root() {
        eprintln!("skipped: switching to an ordinary user needs root");
        return None;
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(setpriv) = setpriv else {
        eprintln!("skipped: setpriv (util-linux) is not installed");
        return None;
    };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = bin();
    let out = std::process::Command::new(setpriv)
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    Some(out)
}

#[test]
fn ordinary_user_gets_unknown_needs_root() {
    let dir = tempfile::tempdir().unwrap();
    let Some(out) = as_nobody(
        &["doctor", "--steal-sample", "0", "--json", "doctor.json"],
        dir.path(),
    ) else {
        return;
    };
    let code = out.status.code().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!([0, 1, 3].contains(&code), "status {code}: {stderr}");
    let doc = read_doc(&dir.path().join("doctor.json"));
    let find = |id: &str| {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .cloned()
            .unwrap()
    };
    // /proc/timer_list is root-only.
    let hr = find("kernel.hrtimers");
    assert_eq!(hr["severity"], "unknown");
    assert!(
        hr["reason"].as_str().unwrap().starts_with("needs root"),
        "{hr}"
    );
    let p = find("privileges");
    assert!(p["found"].as_str().unwrap().contains("euid 65534"), "{p}");
    // Other processes' fds are root-only: who holds PM QoS is partly unknown, and says so.
    let q = find("power.pm-qos");
    let found = q["found"].as_str().unwrap();
    if found.contains("processes' fds") {
        assert!(found.contains("unknown: needs root"), "{q}");
    }
    // The preemption model is still read (from the build configuration here, if debugfs and
    // the kernel log are root-only), and the finding names every source it skipped.
    let pre = find("kernel.preempt");
    assert_ne!(pre["severity"], "unknown", "{pre}");
}

fn check_measure(doc: &Value, root: bool) {
    let rows = doc["measure"].as_array().unwrap();
    let knobs: Vec<&str> = rows.iter().map(|r| r["knob"].as_str().unwrap()).collect();
    assert_eq!(
        knobs,
        ["policy", "pm-qos", "timer-slack", "placement", "method"]
    );
    for r in rows {
        let v = r["verdict"].as_str().unwrap();
        let needs_root = ["policy", "pm-qos"].contains(&r["knob"].as_str().unwrap());
        if !root && needs_root {
            assert!(v.starts_with("unknown: needs root"), "{v}");
        } else {
            assert!(v.starts_with("on this machine"), "{v}");
            assert!(r["without_stats"]["p99_ns"].is_i64() && r["with_stats"]["max_ns"].is_i64());
            // One round a side can never show an effect: said so, never "raised"/"lowered".
            assert!(v.contains("no measurable effect"), "{v}");
            assert!(v.contains("µs") && !v.contains(" ns,"), "one unit: {v}");
            assert!(r["p_value"].as_f64().is_some_and(|p| p > 0.05), "{r}");
            assert_eq!(r["rounds_p99_with_ns"].as_array().unwrap().len(), 1);
        }
    }
}

#[test]
fn measure_as_root_and_as_ordinary_user() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let args = [
        "doctor",
        "--steal-sample",
        "0",
        "--measure",
        "--measure-duration",
        "200ms",
        "--rounds",
        "1",
        "--json",
    ];
    let out = tickscope().args(args).arg(&json).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!([0, 1, 3].contains(&out.status.code().unwrap()), "{stdout}");
    assert!(stdout.contains("p99 ratio"), "{stdout}");
    check_measure(&read_doc(&json), is_root());
    let mut nobody_args = args.to_vec();
    nobody_args.push("nobody.json");
    if let Some(out) = as_nobody(&nobody_args, dir.path()) {
        assert!(
            [0, 1, 3].contains(&out.status.code().unwrap()),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        check_measure(&read_doc(&dir.path().join("nobody.json")), false);
    }
}
