//! `tickscope plan` and `tickscope run --tasks` from the outside: output structure, exit
//! statuses, one-line errors.

use crate::common::tickscope;
use predicates::prelude::*;

#[test]
fn plan_prints_the_analysis_of_the_issue_example() {
    tickscope()
        .args(["plan", "--tasks", "1ms:50us,2.5ms:200us,10ms"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "3 tasks, utilisation 0.130 (Liu & Layland bound for 3: 0.780, within), hyperperiod 10.0 ms",
        ))
        .stdout(predicate::str::contains("1ms → 2.5ms → 10ms"))
        .stdout(predicate::str::contains("250 µs"));
}

#[test]
fn bad_task_lists_are_one_line_and_exit_2() {
    for args in [
        vec!["plan", "--tasks", "1ms:bogus=1"],
        vec!["run", "--tasks", "0ms", "-D", "1s"],
        vec!["run", "--tasks", "1ms", "--method", "timerfd", "-D", "1s"],
    ] {
        let out = tickscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("tickscope: "), "{err}");
    }
}

/// `plan`, `run` and `monitor` read `--tasks` with one value parser: the same list gives the
/// same one-line error, exit status 2, in all three, before anything runs; `run` and
/// `monitor` refuse a budget without work (it would run no work), `plan` takes it.
#[test]
fn the_three_commands_share_one_task_list_parser() {
    let cases = [
        ("1ms:bogus=1", "task 1 '1ms:bogus=1': unknown field 'bogus'"),
        ("1ms,2ms 3ms", "task 2 '2ms 3ms'"),
        (" , ", "--tasks is empty"),
        ("1ms:work=5us:work=6us", "work is given twice"),
    ];
    for (list, says) in cases {
        for cmd in [
            vec!["plan", "--tasks", list],
            vec!["run", "--tasks", list, "-D", "1s"],
            vec!["monitor", "--tasks", list, "-D", "1s"],
        ] {
            let out = tickscope().args(&cmd).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd:?}: {err}");
            assert!(
                err.starts_with("tickscope: invalid value ") && err.contains(says),
                "{cmd:?}: {err}"
            );
            let help = format!("(see 'tickscope {} --help')", cmd[0]);
            assert!(err.trim_end().ends_with(&help), "{cmd:?}: {err}");
            assert!(out.stdout.is_empty(), "{cmd:?}");
        }
    }
    let budget_only = "1ms:50us,10ms";
    for cmd in [
        vec!["run", "--tasks", budget_only, "-D", "1s"],
        vec!["monitor", "--tasks", budget_only, "-D", "1s"],
    ] {
        let out = tickscope().args(&cmd).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd:?}: {err}");
        assert!(
            err.contains("task 1 '1ms:50us' has a budget (50.0 µs) and no work")
                && err.contains("write 1ms:work=D"),
            "{cmd:?}: {err}"
        );
    }
    tickscope()
        .args(["plan", "--tasks", budget_only])
        .assert()
        .success();
}

#[test]
fn run_tasks_prints_a_row_per_task() {
    let out = tickscope()
        .args([
            "run",
            "--tasks",
            "1ms:work=20us,2.5ms:work=50us,10ms",
            "-D",
            "300ms",
            "--policy",
            "other",
            "--no-mlock",
            "--no-pm-qos",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["1ms (1.00 ms)", "2.5ms (2.50 ms)", "10ms (10.0 ms)"] {
        assert_eq!(
            text.lines().filter(|l| l.contains(name)).count(),
            1,
            "{name}:\n{text}"
        );
    }
    assert!(
        text.contains("lat p99") && text.contains("deadline misses"),
        "{text}"
    );
}

/// Runs `args` with standard output a pipe whose reading end is already closed.
fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let mut fds = [0; 2];
    // SAFETY: plain system calls on descriptors this test owns.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { libc::close(fds[0]) };
    let write_end = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
    std::process::Command::new(crate::common::bin())
        .args(args)
        .stdout(std::process::Stdio::from(write_end))
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

const SHORT_TASKS: &[&str] = &[
    "run",
    "--tasks",
    "1ms:work=20us,10ms",
    "-D",
    "300ms",
    "--policy",
    "other",
    "--no-mlock",
    "--no-pm-qos",
];

#[test]
fn plan_and_run_tasks_survive_a_closed_or_full_stdout() {
    let plan: &[&str] = &["plan", "--tasks", "1ms:50us,2.5ms:200us,10ms"];
    for args in [plan, SHORT_TASKS] {
        let out = with_closed_stdout(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            !err.contains("interrupted"),
            "a closed pipe is a quiet end: {err}"
        );

        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            eprintln!("skipping the /dev/full half: /dev/full is not available here");
            continue;
        };
        let out = std::process::Command::new(crate::common::bin())
            .args(args)
            .stdout(std::process::Stdio::from(full))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        let failure: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("standard output"))
            .collect();
        assert_eq!(failure.len(), 1, "{err}");
    }
}

#[test]
fn ambiguous_task_lists_are_refused() {
    for (args, needle) in [
        (
            vec!["plan", "--tasks", "1ms 2ms"],
            "holds two values; separate tasks with commas",
        ),
        (
            vec!["run", "--tasks", "1ms 2ms", "-D", "1s"],
            "holds two values",
        ),
        (
            vec!["plan", "--tasks", "1ms:work=10us:work=20us"],
            "work is given twice",
        ),
        (
            vec!["run", "--tasks", "1ms:work=10us:work=20us", "-D", "1s"],
            "work is given twice",
        ),
        (
            vec!["run", "--tasks", "1ms:50us", "-D", "1s"],
            "has a budget (50.0 µs) and no work",
        ),
    ] {
        let out = tickscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing ran");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn task_names_with_control_characters_are_escaped() {
    let out = tickscope()
        .args(["plan", "--tasks", "1ms:name=a\u{1b}]0;x\u{7}\u{1b}[2J,2ms"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!out.stdout.iter().any(|&b| b == 0x1b || b == 0x07));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("a\\u{1b}]0;x\\u{7}\\u{1b}[2J"), "{text}");
}

#[test]
fn plan_run_and_monitor_share_one_task_help_text() {
    let help = |args: &[&str]| {
        let out = tickscope().args(args).output().unwrap();
        // clap wraps at the terminal's width: compare the words.
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    // The whole help of --tasks, as the three commands print it.
    let tasks_help = |args: &[&str]| {
        let all = help(args);
        let start = all.find("--tasks <TASKS> ").expect("--tasks in the help");
        let end = all[start..]
            .find("--tasks-file")
            .expect("--tasks-file after it");
        all[start..start + end].to_string()
    };
    let plan = tasks_help(&["plan", "--help"]);
    let run = tasks_help(&["run", "--help"]);
    let monitor = tasks_help(&["monitor", "--help"]);
    assert!(
        plan.contains("Separated by commas: PERIOD[+PHASE][:FIELD]…, for example"),
        "{plan}"
    );
    assert_eq!(plan, run);
    assert_eq!(plan, monitor);
    assert!(plan.contains("work=D") && plan.contains("overrun=skip|catch-up|relative"));
}

/// A task-set run writes the outputs of a single-rate run, task `i` as thread `i`, plus
/// its `tasks` section; `report` and `compare` read the result (a column per task).
#[test]
fn run_tasks_writes_the_outputs_of_a_run_and_report_and_compare_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let out = tickscope()
        .args([
            "run",
            "--tasks",
            "1ms:work=20us,2.5ms:work=50us:overrun=relative,10ms:name=logger",
            "-D",
            "1500ms",
            "--policy",
            "other",
            "--no-mlock",
            "--no-pm-qos",
            "--json",
            &p("t.json"),
            "--csv",
            &p("t.csv"),
            "--hlog",
            &p("t.hlog"),
            "--histogram-file",
            &p("t.hist"),
            "--samples",
            &p("t.samples"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A line per task for the first second, while it runs.
    for name in ["1ms ", "2.5ms ", "logger "] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with("1s") && l.contains(name)),
            "{name}:\n{text}"
        );
    }
    let doc = crate::common::result_json(&std::fs::read_to_string(p("t.json")).unwrap());
    let tasks = doc["tasks"]["tasks"].as_array().unwrap();
    let threads = doc["threads"].as_array().unwrap();
    assert_eq!((tasks.len(), threads.len()), (3, 3));
    assert_eq!(tasks[2]["name"], "logger");
    assert_eq!(tasks[1]["overrun_policy"], "relative");
    assert_eq!(
        tasks[0]["period_exact_ns"],
        serde_json::json!([1_000_000, 1])
    );
    for (t, th) in tasks.iter().zip(threads) {
        assert_eq!(t["releases"], th["samples"], "{t}");
        assert_eq!(t["overruns"], th["overruns"], "{t}");
        assert!(t["response_ns"]["histogram"].is_object(), "{t}");
        assert!(th["latency_ns"]["histogram"].is_object(), "{th}");
        // Each task's CPU time is its releases' execution times added up (thread CPU
        // clock): the execution histogram's count is the releases.
        let counted: u64 = t["execution_ns"]["histogram"]["buckets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b[1].as_u64())
            .sum();
        assert_eq!(Some(counted), t["releases"].as_u64(), "{t}");
        assert!(th["cpu_time_ns"].as_i64().is_some_and(|c| c >= 0), "{th}");
    }
    // The tasks with work used CPU time for it (it was reported as 0 before).
    for th in &threads[..2] {
        assert!(th["cpu_time_ns"].as_i64().is_some_and(|c| c > 0), "{th}");
    }
    // Per-second windows of every task (read back into its thread).
    for th in threads {
        assert!(
            th["windows"].as_array().is_some_and(|w| !w.is_empty()),
            "{th}"
        );
    }
    for f in ["t.csv", "t.hlog", "t.hist", "t.samples"] {
        let len = std::fs::metadata(p(f)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{f} is empty or missing");
    }
    // The interval log: a tag per task, and `all` (every task merged) holds releases.
    let hlog = std::fs::read_to_string(p("t.hlog")).unwrap();
    for tag in ["Tag=T0,", "Tag=T1,", "Tag=T2,"] {
        assert!(hlog.lines().any(|l| l.starts_with(tag)), "{tag}\n{hlog}");
    }
    assert!(
        hlog.lines()
            .filter(|l| l.starts_with("Tag=all,"))
            .any(|l| l.split(',').nth(3).is_some_and(|max| max != "0.000")),
        "{hlog}"
    );
    // The log's header names the tasks (tag T<k> = task k).
    assert!(
        hlog.lines()
            .any(|l| l == "#tasks (tag T<k> = task k): [\"1ms\",\"2.5ms\",\"logger\"]"),
        "{hlog}"
    );
    // The gate reads the result and the log task by task (1.5 s: too few windows to judge,
    // status 3).
    for file in ["t.json", "t.hlog"] {
        let gate = tickscope()
            .args(["gate", &p(file), &p(file)])
            .output()
            .unwrap();
        let gate_text = String::from_utf8_lossy(&gate.stdout);
        assert_eq!(gate.status.code(), Some(3), "{gate_text}");
        for task in ["1ms", "2.5ms", "logger"] {
            assert!(
                gate_text.contains(&format!(", task {task} (")),
                "{gate_text}"
            );
        }
    }
    let cmp = tickscope()
        .args(["compare", &p("t.json"), &p("t.json")])
        .output()
        .unwrap();
    let cmp_text = String::from_utf8_lossy(&cmp.stdout);
    assert!(cmp.status.success(), "{cmp_text}");
    for col in ["t: 1ms", "t: 2.5ms", "t: logger"] {
        assert!(cmp_text.contains(col), "{col}:\n{cmp_text}");
    }
    // The interval log too: a column per task (its tag T<k>), named as the result's.
    let cmp = tickscope()
        .args(["compare", &p("t.hlog")])
        .output()
        .unwrap();
    let log_text = String::from_utf8_lossy(&cmp.stdout);
    assert!(cmp.status.success(), "{log_text}");
    for col in ["t: 1ms", "t: 2.5ms", "t: logger"] {
        assert!(log_text.contains(col), "{col}:\n{log_text}");
    }
    let samples = |text: &str| -> Vec<String> {
        let row = text
            .lines()
            .find(|l| l.contains("│ samples "))
            .unwrap_or("");
        row.split('┆')
            .skip(1)
            .map(|c| c.trim().trim_end_matches('│').trim().to_string())
            .collect()
    };
    assert_eq!(
        samples(&log_text),
        samples(&cmp_text)[..3].to_vec(),
        "each task's releases, from the log as from the result:\n{log_text}\n{cmp_text}"
    );
    // Each task's CPU time (its releases' execution times) is a column's CPU figure.
    let cpu = cmp_text
        .lines()
        .find(|l| l.contains("CPU (% of one core)"))
        .unwrap_or_default();
    let cells: Vec<&str> = cpu.split('┆').skip(1).map(str::trim).collect();
    assert!(
        cells.len() >= 2 && cells[..2].iter().all(|c| c.contains('%')),
        "{cmp_text}"
    );
    let report = tickscope()
        .current_dir(dir.path())
        .args(["report", "t.json", "--svg", "plots"])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    // The report has a section of the tasks: a column per task with every statistic, the
    // response and execution times by percentile (a curve per task), and the plots name the
    // tasks rather than threads.
    let html = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    assert!(html.contains("<h2>Tasks</h2>"), "no task section");
    for file in [
        "tasks-response.svg",
        "tasks-execution.svg",
        "percentiles.svg",
    ] {
        assert!(dir.path().join("plots").join(file).exists(), "{file}");
    }
    assert!(html.contains("3 periodic tasks in one thread"), "intro");
    for row in [
        "<th>overrun policy</th>",
        "<th>deadline misses</th>",
        "<th>response p99</th>",
        "<th>execution max</th>",
        "<th>logger</th>",
        "<td class=\"n\">relative</td>",
        "<th>logger</th><th>all tasks</th>",
    ] {
        assert!(html.contains(row), "{row} missing from the report");
    }
    for figure in ["id=\"tasks-response\"", "id=\"tasks-execution\""] {
        assert!(html.contains(figure), "{figure} missing from the report");
    }
    let histogram = html
        .split("<figure id=\"histogram\">")
        .nth(1)
        .and_then(|f| f.split("</figure>").next())
        .unwrap_or_default();
    assert!(
        histogram.contains("\nlogger\n</text>") && !histogram.contains("\nT2\n</text>"),
        "the histogram's legend names the tasks"
    );
}

#[test]
fn run_tasks_refuses_what_a_task_set_cannot_do_in_one_line() {
    for args in [
        vec![
            "run",
            "--tasks",
            "1ms:work=10us",
            "-D",
            "1s",
            "--load",
            "cpu",
        ],
        vec![
            "run",
            "--tasks",
            "1ms:work=10us",
            "-D",
            "1s",
            "--debug-mock",
            "20us",
        ],
    ] {
        let out = tickscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

/// `--tasks-file` reads the TOML set of examples/tasks.toml for `plan` and `run`; a bad
/// file, a budget without work, both sources, or `monitor --tasks-file` is one line, exit 2.
#[test]
fn task_set_files_plan_and_run_and_bad_ones_are_one_line() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tasks.toml");
    tickscope()
        .args(["plan", "--tasks-file", example])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("4 tasks,"))
        .stdout(predicate::str::contains("camera"));
    let out = tickscope()
        .args(["run", "--tasks-file", example, "-D", "300ms", "-q"])
        .args(["--policy", "other", "--no-mlock", "--no-pm-qos"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for name in ["control", "imu", "camera", "logger"] {
        assert!(text.contains(name), "{name}:\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[task]]\nperiod = \"1ms\"\nbudget = \"50us\"\n").unwrap();
    let bad = bad.to_string_lossy().into_owned();
    let unknown = dir.path().join("unknown.toml");
    std::fs::write(&unknown, "[[task]]\nperiod = \"1ms\"\ncolour = 1\n").unwrap();
    let unknown = unknown.to_string_lossy().into_owned();
    for (args, want) in [
        (vec!["run", "--tasks-file", &bad, "-D", "1s"], "no work"),
        (vec!["plan", "--tasks-file", &unknown], "unknown field"),
        (
            vec!["plan", "--tasks-file", "/nonexistent/t.toml"],
            "--tasks-file",
        ),
        (
            vec!["plan", "--tasks", "1ms", "--tasks-file", example],
            "cannot be used",
        ),
        (vec!["monitor", "--tasks-file", &bad, "-D", "1s"], "no work"),
    ] {
        let out = tickscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
