//! A cyclictest user's habits: `-h N` and `-H N` histograms on standard output, `--histfile`,
//! the classic recipes verbatim, `-q`'s per-thread lines, cyclictest's flags answered with
//! tickscope's equivalent, `-D 1d`, `--policy normal`, and
//! clap's errors kept whole on one line. Real time is involved only in structure.

use super::common::tickscope;

/// The error line of a refused command line.
fn refusal(args: &[&str]) -> String {
    let out = tickscope().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn dash_h_prints_only_the_histogram_on_standard_output() {
    let out = tickscope()
        .args([
            "run", "-m", "-i1000", "-l200", "-h5", "-q", "--policy", "other",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let data: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(data.len(), 5, "0-4 µs and nothing else on stdout:\n{text}");
    assert!(
        data.iter()
            .all(|l| l.len() == 13 && l.as_bytes()[6] == b' '),
        "{data:?}"
    );
    let field = |label: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..].trim().parse().unwrap()
    };
    assert_eq!(field("# Total:") + field("# Histogram Overflows:"), 200);
    let cycles = text
        .lines()
        .find(|l| l.starts_with("# Thread 0:"))
        .unwrap()
        .split_whitespace()
        .skip(3)
        .take_while(|w| *w != "#")
        .count() as u64;
    assert_eq!(
        cycles,
        field("# Histogram Overflows:").min(5),
        "as many overflow cycles as buckets, as cyclictest keeps"
    );
    // The summary went to standard error.
    assert!(String::from_utf8_lossy(&out.stderr).contains("latency p99"));
}

#[test]
fn dash_capital_h_adds_the_summed_column_and_histfile_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hist.txt");
    tickscope()
        .args([
            "run", "-l", "100", "-t", "2", "-H", "30", "--policy", "other", "-q",
        ])
        .arg("--histfile")
        .arg(&file)
        .assert()
        .success();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("columns: T0, T1, all"), "{text}");
    let data: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(data.len(), 30);
    assert!(data.iter().all(|l| l.split_whitespace().count() == 4));
}

#[test]
fn help_is_still_long_help_and_bad_ranges_are_refused() {
    let out = tickscope().args(["run", "--help"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--histogram <US>"));
    assert!(refusal(&["run", "-h", "0"]).contains("histogram range"));
    assert!(refusal(&["run", "-h", "lots"]).contains("histogram range"));
}

#[test]
fn cyclictest_flags_are_answered_with_the_equivalent() {
    insta::assert_snapshot!([
        refusal(&["run", "-x"]),
        refusal(&["run", "-c", "1"]),
        refusal(&["run", "--latency", "0"]),
        refusal(&["run", "-v"]),
        refusal(&["run", "-N"]),
        refusal(&["run", "-d", "500"]),
        refusal(&["run", "-S", "-t", "2"]),
    ]
    .concat());
}

/// The classic recipes, verbatim, on the virtual-time backend (so no root is needed): the
/// rt wiki's cyclictest page and RT-Preempt HOWTO, and OSADL's latency-plot recipe
/// (<https://www.osadl.org/Create-a-latency-plot-from-cyclictest-hi.bash-script-for-latency-plot.0.html>,
/// with -l100 for -l100000000). Each must run; with -h the standard output is the histogram
/// alone, with -q and no -h it ends with cyclictest's line per thread.
#[test]
fn classic_recipes_run_verbatim() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let recipes: &[(&str, usize)] = &[
        // OSADL: one pinned thread per CPU, histogram to 400 µs on standard output.
        ("-l100 -m -Sp90 -i200 -h400 -q", cpus),
        // rt wiki, cyclictest "start" page.
        (
            "--mlockall --smp --priority=80 --interval=200 --distance=0",
            cpus,
        ),
        ("--smp -p95 -m -l1000 -q", cpus),
        // RT-Preempt HOWTO.
        ("-t1 -p 80 -n -i 10000 -l 10000", 1),
        ("-a -t -n -p99 -l100 -q", cpus),
        ("-m -y fifo -p 90 -b 500 -l 100 -q", 1),
        ("-m -Sp90 -i200 -l200 -q --breaktrace=300", cpus),
    ];
    for (recipe, threads) in recipes {
        let out = tickscope()
            .arg("run")
            .args(recipe.split_whitespace())
            .args(["--debug-mock", "20us,30us"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{recipe}: {err}");
        let text = String::from_utf8(out.stdout).unwrap();
        let stat_lines = text.lines().filter(|l| l.starts_with("T:")).count();
        if recipe.contains("-h400") {
            let data = text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .count();
            assert_eq!(data, 400, "{recipe}: the histogram alone:\n{text}");
            assert_eq!(stat_lines, 0, "{recipe}: no T: lines with -h");
        } else if recipe.contains("-q") {
            let last: Vec<&str> = text.lines().rev().take(*threads).collect();
            assert_eq!(stat_lines, *threads, "{recipe}:\n{text}");
            assert!(
                last.iter().all(|l| l.starts_with("T:")),
                "{recipe}:\n{text}"
            );
        } else {
            assert_eq!(stat_lines, 0, "{recipe}: T: lines only with -q");
        }
    }
}

#[test]
fn quiet_ends_with_cyclictests_line_per_thread() {
    let out = tickscope()
        .args([
            "run",
            "-t",
            "2",
            "-l",
            "50",
            "-q",
            "--debug-mock",
            "20us,30.9us",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let last: Vec<&str> = text.lines().rev().take(2).collect();
    // Truncated µs: 20 and 30; the mock thread ids are 1000 and 1001; P:0 under other.
    assert_eq!(
        last,
        [
            "T: 1 ( 1001) P: 0 I:1000 C:     50 Min:     20 Act:   30 Avg:   25 Max:      30",
            "T: 0 ( 1000) P: 0 I:1000 C:     50 Min:     20 Act:   30 Avg:   25 Max:      30",
        ]
    );
}

/// `-h400 -q > hist.txt` gives what cyclictest gives, but for the digits and the comment
/// lines each tool adds at the top. Needs root (cyclictest refuses without) and cyclictest.
#[test]
fn the_osadl_histogram_matches_cyclictests_layout() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping the cyclictest comparison: cyclictest needs root");
        return;
    }
    let args = ["-l100", "-m", "-Sp90", "-i200", "-h400", "-q"];
    let Ok(theirs) = std::process::Command::new("cyclictest").args(args).output() else {
        eprintln!("skipping the cyclictest comparison: no cyclictest (apt-get install rt-tests)");
        return;
    };
    let ours = tickscope().arg("run").args(args).output().unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let shape = |bytes: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .lines()
            .skip_while(|l| l.starts_with('#') && !l.starts_with("# Histogram"))
            // The overflows' cycle numbers depend on the run: only the thread's label stays.
            .map(|l| match l.strip_prefix("# Thread ") {
                Some(rest) => format!("# Thread {}", rest.split(':').next().unwrap_or("")),
                None => l.to_string(),
            })
            .map(|l| l.replace(|c: char| c.is_ascii_digit(), "N"))
            .collect()
    };
    // A line that depends on the run rather than the format: the early-wake-up note (a
    // comment cyclictest cannot print).
    let shape = |bytes: &[u8]| -> Vec<String> {
        shape(bytes)
            .into_iter()
            .filter(|l| !l.starts_with("# Early wake-ups"))
            .collect()
    };
    let (ours, theirs) = (shape(&ours.stdout), shape(&theirs.stdout));
    assert_eq!(ours.len(), theirs.len(), "line count");
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t);
    }
}

#[test]
fn clap_errors_keep_their_hints_on_one_line() {
    insta::assert_snapshot!([
        refusal(&["run", "--metod", "x"]),
        refusal(&["compare", "--format", "html", "x.json"]),
        refusal(&["compare"]),
        refusal(&[]),
    ]
    .concat());
}

#[test]
fn days_compound_durations_and_policy_normal_are_accepted() {
    // Parsed, then refused for another reason, so nothing is measured.
    for args in [
        ["run", "-D", "1d", "--timer-slack", "10ms"],
        ["run", "-D", "1m30s", "--timer-slack", "10ms"],
    ] {
        let err = refusal(&args);
        assert!(err.contains("--timer-slack"), "{args:?} parsed: {err}");
    }
    tickscope()
        .args(["run", "-l", "10", "--policy", "normal", "-q"])
        .assert()
        .success();
}

/// A parse error points at the help of the command it is about, and a flag named like a
/// subcommand (`scenario --list`) gets the subcommand.
#[test]
fn errors_point_at_the_subcommands_help() {
    insta::assert_snapshot!([
        refusal(&["scenario", "--list"]),
        refusal(&["hlog", "stat", "--bogus"]),
        refusal(&["scenario", "run"]),
        refusal(&["bogus"]),
    ]
    .concat());
}

/// `hlog stat` says in its help what its output says: percentiles at bucket tops.
#[test]
fn hlog_stat_help_is_honest() {
    let out = tickscope()
        .args(["hlog", "stat", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.to_lowercase().contains("exact percentiles"), "{text}");
    assert!(text.contains("bucket"), "{text}");
}
