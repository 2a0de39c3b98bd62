//! Output files and standard output that cannot hurt (docs/run.md, "Errors" and "Stopping"):
//! planted links, special files, `-`, destinations checked before measuring, two outputs on
//! one file, closed and full standard output, and temporary files after signals. Every case
//! runs in a temporary directory; the real `/dev` is only written to as standard output
//! (`/dev/full`), never replaced. Real time is involved, so only structure is asserted.

use serde_json::Value;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use super::common::tickscope;

use super::common::bin;

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn json(path: &Path) -> Value {
    crate::common::result_json(&fs::read_to_string(path).unwrap())
}

/// A short run's flags: no root needed, a few hundred ms.
const SHORT: [&str; 6] = ["run", "-l", "200", "-i", "1ms", "--policy"];

fn short(extra: &[&str]) -> Vec<String> {
    SHORT
        .iter()
        .chain(["other"].iter())
        .chain(extra.iter())
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn planted_links_at_old_temporary_names_cannot_redirect_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    // Links for the next PIDs, as the old `.NAME.PID.tmp` scheme would have used.
    let next = std::process::id();
    for pid in next..next + 200 {
        symlink(&victim, dir.path().join(format!(".r.json.{pid}.tmp"))).unwrap();
    }
    let out = dir.path().join("r.json");
    tickscope()
        .args(short(&["-q", "--json", out.to_str().unwrap()]))
        .assert()
        .success();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(json(&out)["schema"], "tickscope.run/2");
    assert_eq!(names(dir.path()).len(), 202, "no temporary file left");
}

#[test]
fn a_fifo_output_is_written_into_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    tickscope()
        .args(short(&["-q", "--json", fifo.to_str().unwrap()]))
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let text = reader.join().unwrap();
    let v: Value = crate::common::result_json(&text);
    assert_eq!(v["schema"], "tickscope.run/2");
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn dash_is_standard_output_and_the_text_moves_to_standard_error() {
    let out = tickscope().args(short(&["--json", "-"])).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is the document only");
    assert_eq!(v["schema"], "tickscope.run/2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("result written to standard output"), "{err}");
    for flag in ["--csv", "--samples", "--histogram-file"] {
        let out = tickscope()
            .args(short(&["-q", flag, "-"]))
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag}");
        assert!(!out.stdout.is_empty(), "{flag} wrote to stdout");
    }
}

#[test]
fn a_replaced_file_keeps_its_permission_bits() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    fs::write(&out, "old").unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o600)).unwrap();
    tickscope()
        .args(short(&["-q", "--json", out.to_str().unwrap()]))
        .assert()
        .success();
    assert_eq!(
        fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(json(&out)["schema"], "tickscope.run/2");
}

/// Each bad destination is refused with one line and exit 2 before the header of a run
/// is printed — that is, before anything is measured.
#[test]
fn bad_destinations_are_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let long = format!("{d}/{}", "x".repeat(300));
    let newline = format!("{d}/a\nb/r.json");
    let cases: Vec<Vec<String>> = vec![
        vec!["--json".into(), format!("{d}/sub")],
        vec!["--json".into(), ".".into()],
        vec!["--json".into(), format!("{d}/sub/")],
        vec!["--csv".into(), format!("{d}/missing/r.csv")],
        vec!["--samples".into(), long],
        vec![
            "--histogram-file".into(),
            "/proc/self/tickscope.hist".into(),
        ],
        vec!["--json".into(), newline],
        vec![
            "--json".into(),
            format!("{d}/x"),
            "--csv".into(),
            format!("{d}/x"),
        ],
        vec![
            "--samples".into(),
            format!("{d}/y"),
            "--histogram-file".into(),
            format!("{d}/sub/../y"),
        ],
        vec![
            "--json".into(),
            "-".into(),
            "--csv".into(),
            "/dev/fd/1".into(),
        ],
    ];
    for extra in cases {
        let mut args = short(&[]);
        args.extend(["-D".to_string(), "1h".to_string()]);
        args.extend(extra.iter().cloned());
        let out = tickscope()
            .args(&args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{extra:?} measured: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(names(dir.path()), ["sub"], "nothing was created");
}

#[test]
fn report_never_overwrites_its_input_and_checks_plot_directories_first() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.json");
    tickscope()
        .args(short(&["-q", "--json", r.to_str().unwrap()]))
        .assert()
        .success();
    let before = fs::read(&r).unwrap();
    let html_named = dir.path().join("in.html");
    fs::copy(&r, &html_named).unwrap();
    let blocker = dir.path().join("file");
    fs::write(&blocker, "x").unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec![
            r.display().to_string(),
            "-o".into(),
            r.display().to_string(),
        ],
        vec![html_named.display().to_string()],
        vec![
            r.display().to_string(),
            "--png".into(),
            blocker.join("png").display().to_string(),
        ],
        vec![
            r.display().to_string(),
            "-o".into(),
            dir.path().join("no/r.html").display().to_string(),
            "--svg".into(),
            dir.path().join("svg").display().to_string(),
        ],
    ];
    for c in cases {
        let out = tickscope().arg("report").args(&c).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{c:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{c:?}: {err}");
    }
    assert_eq!(fs::read(&r).unwrap(), before);
    assert!(
        !dir.path().join("svg").exists(),
        "no plot directory before the report was checked"
    );
}

/// Runs `args` with standard output a pipe whose reading end is already closed.
fn with_closed_stdout(args: &[String]) -> std::process::Output {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    unsafe { libc::close(fds[0]) };
    let write_end = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
    std::process::Command::new(bin())
        .args(args)
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_standard_output_is_a_quiet_end_and_files_are_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.json");
    let out = with_closed_stdout(&short(&["--json", r.to_str().unwrap()]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(json(&r)["schema"], "tickscope.run/2");

    let c = dir.path().join("c.json");
    let out = with_closed_stdout(&[
        "clocks".into(),
        "-D".into(),
        "200ms".into(),
        "--json".into(),
        c.display().to_string(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clocks: Value = serde_json::from_str(&fs::read_to_string(&c).unwrap()).unwrap();
    assert_eq!(clocks["schema"], "tickscope.clocks/1");

    for args in [
        vec!["compare".to_string(), r.display().to_string()],
        vec!["report".to_string(), r.display().to_string()],
    ] {
        let out = with_closed_stdout(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(dir.path().join("r.html").exists());
}

#[test]
fn a_full_standard_output_is_one_line_exit_1_after_the_files() {
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: /dev/full is not available here");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.json");
    let out = std::process::Command::new(bin())
        .args(short(&["--json", r.to_str().unwrap()]))
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // A noisy machine may add the "did not keep up" warning; the failure itself is one line.
    let failure: Vec<&str> = err
        .lines()
        .filter(|l| !l.contains("did not keep up"))
        .collect();
    assert_eq!(failure.len(), 1, "{err}");
    assert!(failure[0].contains("standard output"), "{err}");
    assert_eq!(json(&r)["schema"], "tickscope.run/2");
}

fn signal(child: &Child, sig: i32) {
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn sighup_stops_like_sigterm_and_a_second_signal_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // SIGHUP: summary printed, files complete.
    let r = d.join("r.json");
    let s = d.join("s.csv");
    let mut child = std::process::Command::new(bin())
        .args(short(&[
            "-D",
            "1h",
            "--json",
            r.to_str().unwrap(),
            "--samples",
            s.to_str().unwrap(),
        ]))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first_line = [0u8; 1];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first_line)
        .unwrap(); // the header: running
    signal(&child, libc::SIGHUP);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("samples written to"));
    assert_eq!(json(&r)["interrupted"], true);
    fs::remove_file(&r).unwrap();
    fs::remove_file(&s).unwrap();

    // A second Ctrl-C while the result waits for a reader on a FIFO: the samples stream
    // was not committed yet, and its temporary file must go with the process.
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let mut child = std::process::Command::new(bin())
        .args(short(&[
            "-D",
            "1h",
            "--json",
            fifo.to_str().unwrap(),
            "--samples",
            s.to_str().unwrap(),
        ]))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first_line)
        .unwrap();
    assert!(
        names(d).iter().any(|n| n.ends_with(".tmp")),
        "the stream is being written"
    );
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(500)); // the run ends, the FIFO open blocks
    signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        names(d),
        ["fifo"],
        "no temporary file and no half-written samples"
    );
}

#[test]
fn export_format_path_is_the_same_as_the_long_flags() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let exports: Vec<String> = [
        "json=r.json",
        "csv=r.csv",
        "histogram=h.txt",
        "samples=s.csv",
    ]
    .iter()
    .map(|e| {
        let (f, n) = e.split_once('=').unwrap();
        format!("{f}={}", p(n))
    })
    .collect();
    let mut args = short(&["-q"]);
    for e in &exports {
        args.extend(["--export".to_string(), e.clone()]);
    }
    tickscope().args(&args).assert().success();
    assert_eq!(names(dir.path()), ["h.txt", "r.csv", "r.json", "s.csv"]);
    assert_eq!(
        json(&dir.path().join("r.json"))["schema"],
        "tickscope.run/2"
    );
    for bad in [
        vec!["--export".to_string(), "xml=x".to_string()],
        vec!["--export".to_string(), "json".to_string()],
        vec![
            "--json".to_string(),
            p("x"),
            "--export".to_string(),
            format!("csv={}", p("x")),
        ],
    ] {
        let mut args = short(&[]);
        args.extend(bad.iter().cloned());
        let out = tickscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?}");
    }
}

#[test]
fn a_write_error_on_a_device_output_is_one_line() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipping: /dev/full does not exist here");
        return;
    }
    let out = tickscope()
        .args(["run", "--debug-mock", "20us,30us", "-D", "1s", "-q"])
        .args(["--json", "/dev/full"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("tickscope: cannot write '/dev/full'"),
        "{err}"
    );
}
