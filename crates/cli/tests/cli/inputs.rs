//! Inputs a careless or hostile user could give `compare` and `report`: a seeded corpus of
//! broken files made from every fixture, run through the real binary (exit status 0 or 2,
//! never a panic, never a hang, one line when refused); a FIFO, a directory and an oversized
//! file refused at once; `-` read from standard input.

#[path = "../../../report/tests/mutants/mod.rs"]
mod mutants;

use std::path::PathBuf;
use std::time::Duration;

/// Mutants per fixture through the binary (the full corpus runs at library level in the
/// report crate's tests/mutation.rs).
const PER_FIXTURE: usize = 24;

use super::common::tickscope;

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

/// Runs `args`, which must end within 20 s with status 0 or 2 (one line on stderr).
fn exits_cleanly(args: &[&std::ffi::OsStr], what: &str) {
    let out = tickscope()
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(2) => assert_eq!(err.lines().count(), 1, "{what}: {err}"),
        other => panic!("{what}: status {other:?} (killed by the timeout or a panic): {err}"),
    }
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn broken_files_end_with_status_0_or_2_through_compare_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    for (i, fixture) in fixtures().iter().enumerate() {
        let text = std::fs::read_to_string(fixture).unwrap();
        for (k, (what, mutant)) in mutants::mutants(&text, 0xC11 + i as u64, PER_FIXTURE)
            .into_iter()
            .enumerate()
        {
            let file = dir.path().join(format!("m{i}-{k}.json"));
            std::fs::write(&file, mutant).unwrap();
            let what = format!("{}: {what}", fixture.display());
            exits_cleanly(&["compare".as_ref(), file.as_os_str()], &what);
            exits_cleanly(
                &[
                    "report".as_ref(),
                    file.as_os_str(),
                    "-o".as_ref(),
                    html.as_os_str(),
                ],
                &what,
            );
        }
    }
}

#[test]
fn fifos_directories_and_oversized_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let big = dir.path().join("big.json");
    // Sparse: larger than the limit without writing it.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    for (file, why) in [
        (&fifo, "not a regular file"),
        (&dir.path().to_path_buf(), "not a regular file"),
        (&big, "larger than any result file (at most 256 MiB)"),
    ] {
        for cmd in ["compare", "report"] {
            let out = tickscope()
                .arg(cmd)
                .arg(file)
                .timeout(Duration::from_secs(10))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{cmd} {}: {err}",
                file.display()
            );
            assert!(err.contains(why), "{cmd}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
}

#[test]
fn dash_reads_standard_input() {
    let fixture = fixtures()
        .into_iter()
        .find(|p| p.ends_with("tickscope-fifo-2threads.json"))
        .unwrap();
    let text = std::fs::read(&fixture).unwrap();
    let out = tickscope()
        .args(["compare", "-", "--format", "csv"])
        .write_stdin(text.clone())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("latency_p99"));
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    tickscope()
        .args(["report", "-", "-o"])
        .arg(&html)
        .write_stdin(text.clone())
        .assert()
        .success();
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    let out = tickscope()
        .args(["report", "-"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "report - needs -o");
}
