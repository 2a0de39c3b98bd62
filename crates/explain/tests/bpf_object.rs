//! The checked-in BPF object is what its C source builds to: `bpf/build.sh` is rerun with
//! clang into a temporary file and the bytes compared. Skips with a reason without clang or
//! llvm-strip, and when clang is another version than the one that built the object (its
//! output differs between versions; `bpf/clang-version.txt` names the one used).

use std::path::Path;
use std::process::Command;

#[test]
fn bpf_object_matches_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
    let version = match Command::new("clang").arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
        _ => {
            eprintln!("skipping bpf_object_matches_source: clang not installed");
            return;
        }
    };
    if Command::new("llvm-strip")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipping bpf_object_matches_source: llvm-strip not installed");
        return;
    }
    let wanted = std::fs::read_to_string(dir.join("clang-version.txt")).unwrap();
    if version.trim() != wanted.trim() {
        eprintln!(
            "skipping bpf_object_matches_source: clang is '{}', the object was built by '{}'",
            version.trim(),
            wanted.trim()
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("capture.bpf.o");
    let status = Command::new("sh")
        .arg(dir.join("build.sh"))
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "bpf/build.sh failed");
    let built = std::fs::read(&out).unwrap();
    let checked_in = std::fs::read(dir.join("capture.bpf.o")).unwrap();
    assert!(
        built == checked_in,
        "bpf/capture.bpf.o is not what bpf/capture.bpf.c builds to: run crates/explain/bpf/build.sh and commit the object"
    );
}
