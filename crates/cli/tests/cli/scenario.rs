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
    // How long each takes: ols-2006 is 2 steps of 10 000 wake-ups at 10 ms.
    let ols = text.lines().find(|l| l.starts_with("ols-2006")).unwrap();
    assert!(ols.contains("≈ 3 min 20 s, --quick ≈ 2.00 s"), "{ols}");
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
        ("name = \"x\"\nabout = \"a\"\n[source]\ntitle = \"t\"\nauthor = \"a\"\nyear = 1\n[[steps]]\nname = \"s\"\nkind = \"clocks\"\nargs = [\"--json\", \"c.json\"]\n[table]\ntitle = \"t\"\nrows = [{label = \"m\", metric = \"latency.max\"}]\ncolumns = [\"s\"]\n", "--json belongs to 'scenario run'"),
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
        assert!(
            text.contains("   measuring for "),
            "{name} says how long each step measures"
        );
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

/// A scenario of one short run step `a` (no privilege needed) with `extra` TOML in the step
/// and `args` added to its options.
fn one_step(name: &str, args: &str, extra: &str) -> String {
    format!(
        "name = \"mine\"\nabout = \"a\"\n[source]\ntitle = \"t\"\nauthor = \"a\"\nyear = 2024\n\
         [[steps]]\nname = \"{name}\"\nargs = [\"-i\", \"1ms\", \"-l\", \"3\", \"--policy\", \
         \"other\", \"--no-mlock\", \"--no-pm-qos\", \"-q\"{args}]\n{extra}\n[table]\n\
         title = \"t\"\nunit = \"us\"\nrows = [{{ label = \"max\", metric = \"latency.max\" }}]\n\
         columns = [\"{name}\"]\n"
    )
}

#[test]
fn commands_in_a_scenario_run_only_with_allow_exec() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let cmd = format!("touch {}", marker.display());
    let f = dir.path().join("cmd.toml");
    let text = one_step(
        "a",
        &format!(", \"--on-late\", \"1s:exec={cmd}\""),
        &format!("load = 'exec:\"{cmd}\"'"),
    );
    std::fs::write(&f, &text).unwrap();
    let out = tickscope()
        .args(["scenario", "run"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("runs commands")
            && err.contains("step 'a': load exec:")
            && err.contains("step 'a': --on-late exec=")
            && err.contains("--allow-exec"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    assert!(!marker.exists(), "the command did not run");

    // `show` lists them before the text.
    let out = tickscope()
        .args(["scenario", "show"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    let shown = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].starts_with("# WARNING: this scenario runs 2 command(s)"),
        "{shown}"
    );
    assert!(lines[1].contains("load exec:touch") && lines[2].contains("--on-late exec=touch"));
    assert!(shown.contains("name = \"mine\""));

    let out = tickscope()
        .args(["scenario", "run", "--allow-exec"])
        .arg(&f)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(marker.exists(), "the load ran with --allow-exec");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("runs (--allow-exec): step 'a': load exec:touch"),
        "{text}"
    );
}

#[test]
fn outputs_outside_the_working_directory_need_allow_paths() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let abs = outside.path().join("x.hlog");
    let f = dir.path().join("paths.toml");
    let args = format!(
        ", \"--hlog\", \"{}\", \"--csv\", \"../up.csv\"",
        abs.display()
    );
    std::fs::write(&f, one_step("a", &args, "")).unwrap();
    let out = tickscope()
        .args(["scenario", "run"])
        .arg(&f)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("writes outside the working directory")
            && err.contains("--hlog")
            && err.contains("--csv '../up.csv'")
            && err.contains("--allow-paths")
            && !err.contains("--allow-exec"),
        "{err}"
    );
    assert!(!abs.exists());

    // Inside the working directory: no flag needed.
    let f2 = dir.path().join("inside.toml");
    std::fs::write(&f2, one_step("a", ", \"--hlog\", \"sub.hlog\"", "")).unwrap();
    let out = tickscope()
        .args(["scenario", "run"])
        .arg(&f2)
        .current_dir(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("sub.hlog").exists());

    let f3 = dir.path().join("abs.toml");
    let args = format!(", \"--hlog\", \"{}\"", abs.display());
    std::fs::write(&f3, one_step("a", &args, "")).unwrap();
    let out = tickscope()
        .args(["scenario", "run", "--allow-paths"])
        .arg(&f3)
        .current_dir(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(abs.exists(), "written with --allow-paths");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("writes (--allow-paths): step 'a': --hlog '/"),
        "{text}"
    );
}

#[test]
fn control_characters_in_names_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("esc.toml");
    // TOML escapes: the parsed name holds ESC ] 0 ; … BEL ESC [ 2 J.
    let name = "x\\u001b]0;owned\\u0007\\u001b[2J";
    std::fs::write(&f, one_step(name, "", "")).unwrap();
    let out = tickscope()
        .args(["scenario", "run"])
        .arg(&f)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for stream in [&out.stdout, &out.stderr] {
        assert!(
            !stream.iter().any(|&b| b == 0x1b || b == 0x07),
            "{}",
            String::from_utf8_lossy(stream)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("x\\u{1b}]0;owned\\u{7}\\u{1b}[2J"), "{text}");

    // Commands, allowed, are shown escaped too: the step line, the load's line and its end.
    let load = "load = \"exec:\\\"sleep 0.1 \\u001b]0;x\\u0007\\\"\"";
    let args = ", \"--on-late\", \"1s:exec=true \\u001b[2J\"";
    std::fs::write(&f, one_step("a", args, load)).unwrap();
    let out = tickscope()
        .args(["scenario", "run", "--allow-exec"])
        .arg(&f)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(!stream.iter().any(|&b| b == 0x1b || b == 0x07), "{text}");
    }
    assert!(String::from_utf8_lossy(&out.stdout).contains("sleep 0.1 \\u{1b}]0;x\\u{7}"));

    // A name that does not parse as a step's column: the error is escaped too.
    let bad =
        one_step("a", "", "").replace("columns = [\"a\"]", &format!("columns = [\"{name}\"]"));
    std::fs::write(&f, bad).unwrap();
    let out = tickscope()
        .args(["scenario", "run"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.iter().any(|&b| b == 0x1b || b == 0x07));
}

#[test]
fn a_label_too_long_for_a_table_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("long.toml");
    let text = one_step("a", "", "").replace(
        "label = \"max\"",
        &format!("label = \"{}\"", "m".repeat(70_000)),
    );
    std::fs::write(&f, text).unwrap();
    let out = tickscope()
        .args(["scenario", "run"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.contains("a row's label is 70000 characters long; at most 200"),
        "{}",
        &err[..err.len().min(300)]
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_fifo_or_a_directory_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("s.toml");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a plain system call with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for sub in ["show", "run"] {
        for target in [&fifo, &dir.path().to_path_buf()] {
            let out = tickscope()
                .args(["scenario", sub])
                .arg(target)
                .timeout(Duration::from_secs(20))
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{sub} {}", target.display());
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains("is not a regular file"), "{err}");
        }
    }
}

#[test]
fn a_generated_file_of_fifty_thousand_steps_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.toml");
    let mut text = String::from(
        "name = \"big\"\nabout = \"a\"\n[source]\ntitle = \"t\"\nauthor = \"a\"\nyear = 1\n",
    );
    for i in 0..50_000 {
        text.push_str(&format!(
            "[[steps]]\nname = \"s{i}\"\nargs = [\"-l\", \"1\"]\n"
        ));
    }
    text.push_str(
        "[table]\ntitle = \"t\"\nrows = [{label = \"m\", metric = \"latency.max\"}]\n\
         columns = [\"s0\", \"s49999\"]\n",
    );
    std::fs::write(&f, &text).unwrap();
    // No timing is asserted; the timeout only ends a hung run (the quadratic reader took 11 s
    // in a release build, the linear one about 3 s in a debug build).
    let out = tickscope()
        .args(["scenario", "show"])
        .arg(&f)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), text.trim_end().len() + 1);
}
