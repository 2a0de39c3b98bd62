//! The C and C++ programs in `examples/` build with the system's gcc and g++ against the
//! library cargo built for this test run, run a short 1 kHz loop and print the Cpp-Periodic-Task
//! statistics block; `tests/c/bad_args.c` drives bad arguments through the C ABI.
//!
//! Linking is tested three ways: the C example against `libtickscope.a` (static), the C++
//! example against `libtickscope.so` through the pkg-config file made from
//! `tickscope.pc.in`, and the bad-argument program against the static library.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

mod common;

const TICKS: &str = "200";

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn repo_dir() -> PathBuf {
    crate_dir().join("../..").canonicalize().unwrap()
}

/// The folder holding the freshest `libtickscope.a` and `.so` of this build profile. Cargo
/// builds the library for the integration tests into `target/<profile>/deps` and uplifts
/// it to `target/<profile>` only for `cargo build`, so either may be the current one.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let candidates = [deps.clone(), deps.parent().unwrap().to_path_buf()];
    let modified = |d: &Path| -> Option<SystemTime> {
        let a = d.join("libtickscope.a").metadata().ok()?.modified().ok()?;
        let so = d.join("libtickscope.so").metadata().ok()?.modified().ok()?;
        Some(a.min(so))
    };
    candidates
        .iter()
        .filter_map(|d| modified(d).map(|t| (t, d)))
        .max()
        .map(|(_, d)| d.clone())
        .expect("cargo built libtickscope.a and libtickscope.so for this test")
}

/// A scratch folder under the target directory, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = lib_dir().join("c-examples").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a command, failing the test with its output if it fails; returns stdout.
fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The libraries a program linked with the static library needs, from the .pc template.
fn static_deps() -> Vec<String> {
    let pc = std::fs::read_to_string(crate_dir().join("tickscope.pc.in")).unwrap();
    let line = pc
        .lines()
        .find_map(|l| l.strip_prefix("Libs.private:"))
        .expect("Libs.private in tickscope.pc.in");
    line.split_whitespace().map(String::from).collect()
}

/// Compiles the C program `src` with warnings as errors into `exe`, linked with the static
/// library.
fn gcc_static(src: &Path, exe: &Path) {
    const FLAGS: [&str; 6] = [
        "-std=c99",
        "-O2",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
    ];
    run(Command::new("gcc")
        .args(FLAGS)
        .arg("-I")
        .arg(repo_dir().join("include"))
        .arg(src)
        .arg(lib_dir().join("libtickscope.a"))
        .args(static_deps())
        .arg("-o")
        .arg(exe));
}

/// Checks the Cpp-Periodic-Task statistics block: every line, in order, with plausible numbers.
fn check_block(output: &str, title: &str) {
    let lines: Vec<&str> = output.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == format!("============ {title} ============"))
        .unwrap_or_else(|| panic!("no {title} block in:\n{output}"));
    let labels = [
        "Sample Size",
        "Task Period",
        "mean",
        "deviation",
        "min",
        "max",
        "diff min max",
        "% deviation",
        "% minmax",
    ];
    let mut values = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let line = lines[start + 1 + i];
        let (name, rest) = line.split_once(':').unwrap_or_else(|| panic!("{line}"));
        assert_eq!(name.trim_end(), *label, "line {i} of the block:\n{output}");
        assert_eq!(name.len(), 13, "labels are padded to one column: {line:?}");
        let value: f64 = rest.split_whitespace().next().unwrap().parse().unwrap();
        values.push(value);
    }
    assert_eq!(
        values[0],
        TICKS.parse::<f64>().unwrap() - 1.0,
        "periods measured"
    );
    assert_eq!(values[1], 1000.0, "task period in µs");
    assert!(lines[start + 2].ends_with("us (1000.000 Hz)"), "{output}");
    assert!(
        values[4] <= values[2] && values[2] <= values[5],
        "min <= mean <= max"
    );
    assert!(
        (values[6] - (values[5] - values[4])).abs() < 1e-3,
        "diff min max"
    );
    assert!(
        (values[7] - values[3] / 10.0).abs() < 1e-3,
        "% deviation of 1000 µs"
    );
    assert_eq!(lines[start + 10], "------------------------------");
    for extra in ["latency p99", "overruns", "cpu"] {
        assert!(
            lines[start + 11..].iter().any(|l| l.starts_with(extra)),
            "{extra} line missing:\n{output}"
        );
    }
}

#[test]
fn c_example_links_statically_and_prints_the_statistics_block() {
    let dir = scratch("c");
    let exe = dir.join("periodic_c");
    gcc_static(&repo_dir().join("examples/periodic.c"), &exe);
    for (name, title) in [("sleep", "SLEEP"), ("hybrid", "HYBRID")] {
        let out = run(Command::new(&exe).args([TICKS, name]));
        check_block(&out, title);
    }
    // A bad strategy name is the program's usage error, not the library's.
    let status = Command::new(&exe).args([TICKS, "bogus"]).status().unwrap();
    assert_eq!(status.code(), Some(2));
}

/// The shared library installed as a system would hold it: `libtickscope.so.<major>` (its
/// SONAME) and the `libtickscope.so` link the linker looks for, in `dir`.
fn install_shared_library(dir: &Path) {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    let versioned = format!("libtickscope.so.{major}");
    std::fs::copy(lib_dir().join("libtickscope.so"), dir.join(&versioned)).unwrap();
    std::os::unix::fs::symlink(&versioned, dir.join("libtickscope.so")).unwrap();
    match Command::new("readelf")
        .arg("-d")
        .arg(dir.join(&versioned))
        .output()
    {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains(&format!("Library soname: [{versioned}]")),
                "the library's SONAME:\n{text}"
            );
        }
        Err(e) => eprintln!("SONAME not checked: readelf is not available ({e})"),
    }
}

#[test]
fn cpp_example_links_the_shared_library_through_pkg_config() {
    let dir = scratch("cpp");
    let libdir = dir.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    install_shared_library(&libdir);
    let pc = std::fs::read_to_string(crate_dir().join("tickscope.pc.in"))
        .unwrap()
        .replace("@LIBDIR@", libdir.to_str().unwrap())
        .replace("@INCLUDEDIR@", repo_dir().join("include").to_str().unwrap())
        .replace("@VERSION@", env!("CARGO_PKG_VERSION"));
    std::fs::write(dir.join("tickscope.pc"), pc).unwrap();
    let flags = run(Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", &dir)
        .args(["--cflags", "--libs", "tickscope"]));
    assert!(flags.contains("-ltickscope"), "{flags}");
    let exe = dir.join("periodic_cpp");
    run(Command::new("g++")
        .args([
            "-std=c++17",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
        ])
        .arg(repo_dir().join("examples/periodic.cpp"))
        .args(flags.split_whitespace())
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-o")
        .arg(&exe));
    for (name, title) in [("sleep", "SLEEP"), ("busy", "BUSY WAIT")] {
        let out = run(Command::new(&exe).args([TICKS, name]));
        check_block(&out, title);
    }
}

#[test]
fn bad_arguments_through_the_c_abi_are_errors() {
    let dir = scratch("bad_args");
    let exe = dir.join("bad_args");
    gcc_static(&crate_dir().join("tests/c/bad_args.c"), &exe);
    let out = run(&mut Command::new(&exe));
    assert!(out.trim_end().ends_with(", 0 failed"), "{out}");
}

#[test]
fn library_page_c_snippet_compiles_and_runs() {
    let dir = scratch("library_page");
    let src = dir.join("main.c");
    std::fs::write(&src, common::library_page_block("c")).unwrap();
    let exe = dir.join("main");
    gcc_static(&src, &exe);
    let out = run(&mut Command::new(&exe));
    assert!(out.starts_with("1000 ticks, p99 latency "), "{out}");
}

/// Checks the executive examples' output: a plan line, a count line and three task lines
/// whose release counts add up to it.
fn check_executive_output(out: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("plan: hyperperiod 10000 us"), "{out}");
    let total: u64 = lines
        .iter()
        .find(|l| l.ends_with("releases in 200 ms"))
        .unwrap_or_else(|| panic!("no count line:\n{out}"))
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let tasks: Vec<&&str> = lines.iter().filter(|l| l.starts_with("task ")).collect();
    assert_eq!(tasks.len(), 3, "{out}");
    let sum: u64 = tasks
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = f.iter().position(|w| *w == "releases").unwrap();
            f[at + 1].parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(sum, total, "{out}");
    assert!(total > 0, "{out}");
    // Under each task its percentiles; the execution time was measured (the tasks spin).
    let details: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("  latency p50 "))
        .collect();
    assert_eq!(details.len(), 3, "{out}");
    for l in details {
        let mean = l
            .split("execution mean ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok());
        assert!(mean.is_some_and(|m| m > 0.0), "{l}\n{out}");
    }
}

#[test]
fn c_executive_example_runs_three_tasks() {
    let dir = scratch("executive");
    let exe = dir.join("executive_c");
    gcc_static(&repo_dir().join("examples/executive.c"), &exe);
    let out = run(Command::new(&exe).arg("200"));
    check_executive_output(&out);
    let status = Command::new(&exe).arg("-5").status().unwrap();
    assert_eq!(status.code(), Some(2));
}

/// `examples/explain.c`: compiled against the static library of this build and run. With
/// the `explain` feature and root it prints the causes (the late wake-ups add up); else one
/// line says why explanation is off, and the loop runs on.
#[test]
fn c_explain_example_explains_or_says_why_not() {
    if Command::new("gcc").arg("--version").output().is_err() {
        eprintln!("skipping c_explain_example_explains_or_says_why_not: gcc is not installed");
        return;
    }
    let dir = scratch("explain");
    let exe = dir.join("explain_c");
    gcc_static(&repo_dir().join("examples/explain.c"), &exe);
    let out = run(&mut Command::new(&exe));
    let first = out.lines().next().unwrap_or_default();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if cfg!(feature = "explain") && root {
        assert!(
            first.starts_with("explain: bpf,") || first.starts_with("explain: tracefs,"),
            "{out}"
        );
    } else {
        assert!(first.starts_with("explain: off ("), "{out}");
        assert_eq!(out.lines().count(), 1, "{out}");
    }
}
