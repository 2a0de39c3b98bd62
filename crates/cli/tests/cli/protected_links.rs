//! Output paths through symbolic links (docs/run.md, "Output files"): a link to a regular file is
//! written through, except a link the kernel's `fs.protected_symlinks` rule forbids
//! following — in a sticky world-writable directory, owned neither by the caller nor by the
//! directory's owner (Documentation/admin-guide/sysctl/fs.rst) — which is refused before
//! measuring whatever the sysctl says. Giving a link to another user needs root (`lchown`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use super::common::tickscope;

const NOBODY: u32 = 65534;

fn lchown(path: &Path, uid: u32) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string; lchown changes the link itself, not its target.
    assert_eq!(
        unsafe { libc::lchown(c.as_ptr(), uid, uid) },
        0,
        "lchown {path:?}"
    );
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `tickscope run` (mock, 1 s of virtual time) writing its result to `json`.
fn run_to(json: &Path) -> std::process::Output {
    tickscope()
        .args([
            "run",
            "--debug-mock",
            "20us,30us",
            "-D",
            "1s",
            "-q",
            "--json",
        ])
        .arg(json)
        .output()
        .unwrap()
}

fn refused(out: &std::process::Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: one line: {err}");
    assert!(
        err.contains("fs.protected_symlinks") && err.contains("uid 65534"),
        "{what}: names the rule and the owner: {err}"
    );
    assert!(out.stdout.is_empty(), "{what}: refused before measuring");
}

fn written(out: &std::process::Output, victim: &Path, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(victim).unwrap();
    assert!(text.contains("tickscope.run/2"), "{what}: written through");
    std::fs::write(victim, "precious").unwrap();
}

#[test]
fn another_users_link_in_a_sticky_world_writable_directory_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: giving a link to another user (lchown) needs root");
        return;
    }
    let shared = tempfile::tempdir().unwrap();
    let private = tempfile::tempdir().unwrap();
    let s = shared.path();
    chmod(s, 0o1777); // like /tmp
    let victim = private.path().join("victim.json");
    std::fs::write(&victim, "precious").unwrap();

    // The final component: another user's link to the victim.
    let link = s.join("r.json");
    symlink(&victim, &link).unwrap();
    lchown(&link, NOBODY);
    refused(&run_to(&link), "final link");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    // An intermediate component: another user's link to a directory.
    let dir_link = s.join("d");
    symlink(private.path(), &dir_link).unwrap();
    lchown(&dir_link, NOBODY);
    refused(&run_to(&dir_link.join("new.json")), "directory link");
    assert!(!private.path().join("new.json").exists());

    // Allowed: the caller's own link.
    lchown(&link, 0);
    written(&run_to(&link), &victim, "the caller's link");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());

    // Allowed: the link of the directory's owner.
    chown(s, NOBODY);
    lchown(&link, NOBODY);
    written(&run_to(&link), &victim, "the directory owner's link");
    chown(s, 0);

    // Allowed: a directory that is world-writable but not sticky, or sticky but not
    // world-writable.
    for mode in [0o777, 0o1775] {
        chmod(s, mode);
        written(&run_to(&link), &victim, &format!("mode {mode:o}"));
    }
}
