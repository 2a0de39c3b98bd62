use super::*;
use std::fs;
use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn planted_links_and_fifos_at_predictable_names_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, b"precious").unwrap();
    // The old scheme's names for the next PIDs: links to the victim, and one FIFO.
    let pid = std::process::id();
    for p in pid..pid + 50 {
        symlink(&victim, dir.path().join(format!(".r.json.{p}.tmp"))).unwrap();
    }
    mkfifo(&dir.path().join(format!(".r.json.{}.tmp", pid + 50)));
    let out = dir.path().join("r.json");
    write_atomic(&out, b"{}").unwrap();
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
    assert_eq!(fs::read(&out).unwrap(), b"{}");
    assert_eq!(entries(dir.path()).len(), 53, "no temporary file left");
}

#[test]
fn a_fifo_destination_is_written_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    write_atomic(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_device_destination_is_written_not_replaced() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: creating a device node needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let c = std::ffi::CString::new(null.to_str().unwrap()).unwrap();
    let dev = libc::makedev(1, 3);
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, dev) } != 0 {
        eprintln!(
            "skipped: mknod failed here ({})",
            std::io::Error::last_os_error()
        );
        return;
    }
    let link = dir.path().join("link-to-null");
    symlink(&null, &link).unwrap();
    for p in [&null, &link] {
        write_atomic(p, b"gone").unwrap();
        let mut s = Output::prepare(p).unwrap().stream().unwrap();
        s.write_all(b"samples").unwrap();
        s.commit().unwrap();
    }
    assert!(fs::metadata(&null).unwrap().file_type().is_char_device());
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(entries(dir.path()), ["link-to-null", "null"]);
}

#[test]
fn replacing_keeps_the_permission_bits_and_new_files_follow_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    fs::write(&p, b"old").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
    write_atomic(&p, b"new").unwrap();
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let fresh = dir.path().join("fresh.json");
    write_atomic(&fresh, b"x").unwrap();
    assert_eq!(
        fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
        0o666 & !umask()
    );
}

#[test]
fn a_link_to_a_regular_file_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.json");
    fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.json");
    symlink(&target, &link).unwrap();
    write_atomic(&link, b"new").unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read(&target).unwrap(), b"new");
}

#[test]
fn bad_destinations_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("sub")).unwrap();
    symlink(d.join("nowhere"), d.join("dangling")).unwrap();
    let long = d.join("x".repeat(300));
    let cases: Vec<(PathBuf, &str)> = vec![
        (d.join("sub"), "is a directory"),
        (
            PathBuf::from(format!("{}/sub/", d.display())),
            "is a directory",
        ),
        (PathBuf::from("."), "is a directory"),
        (d.join("missing/r.json"), "does not exist"),
        (long, "bytes; this file system allows"),
        (d.join("dangling"), "symbolic link to nothing"),
        (
            PathBuf::from("/proc/self/tickscope-test.json"),
            "cannot write",
        ),
    ];
    for (p, want) in cases {
        let e = Output::prepare(&p).expect_err(&p.display().to_string());
        let text = e.to_string();
        assert!(text.contains(want), "{p:?}: {text}");
        assert!(!text.contains('\n'));
    }
    assert_eq!(entries(d), ["dangling", "sub"]);
}

#[test]
fn checkpoints_replace_and_an_unfinished_output_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    let mut out = Output::prepare(&p).unwrap();
    assert_eq!(
        entries(dir.path()).len(),
        1,
        "the temporary file exists up front"
    );
    out.checkpoint(b"1").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"1");
    out.checkpoint(b"2").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"2");
    drop(out);
    assert_eq!(entries(dir.path()), ["r.json"]);
    let out = Output::prepare(&p).unwrap();
    out.finish(b"3").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"3");
    assert_eq!(entries(dir.path()), ["r.json"]);
}

#[test]
fn a_failed_checkpoint_keeps_the_file_and_the_next_one_retries() {
    // A write error injected as a full disk would give it (ENOSPC), as a monitor's textfile
    // meets it: the destination stays as it was, no temporary file is left behind, and the
    // next checkpoint and the finish start afresh.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.prom");
    let mut out = Output::prepare(&p).unwrap();
    out.checkpoint(b"1").unwrap();
    let full = || std::io::Error::from_raw_os_error(libc::ENOSPC);
    for _ in 0..2 {
        let e = out.checkpoint_with(&mut |_| Err(full())).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        assert_eq!(fs::read(&p).unwrap(), b"1");
        assert_eq!(
            entries(dir.path()),
            ["t.prom"],
            "the failed file is removed"
        );
    }
    out.checkpoint(b"2").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"2");
    assert!(out.checkpoint_with(&mut |_| Err(full())).is_err());
    out.finish(b"3").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"3");
    assert_eq!(entries(dir.path()), ["t.prom"]);
}

#[test]
fn a_stream_appears_only_when_committed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.csv");
    let mut s = Output::prepare(&p).unwrap().stream().unwrap();
    s.write_all(b"a,b\n").unwrap();
    drop(s);
    assert!(entries(dir.path()).is_empty());
    let mut s = Output::prepare(&p).unwrap().stream().unwrap();
    s.write_all(b"a,b\n").unwrap();
    s.commit().unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"a,b\n");
}

#[test]
fn descriptor_names_are_recognised() {
    assert_eq!(descriptor_alias(Path::new("/dev/fd/1")), Some(1));
    assert_eq!(descriptor_alias(Path::new("/proc/self/fd/2")), Some(2));
    let own = format!("/proc/{}/fd/1", std::process::id());
    assert_eq!(descriptor_alias(Path::new(&own)), Some(1));
    if fs::symlink_metadata("/dev/stdout").is_ok() {
        assert_eq!(descriptor_alias(Path::new("/dev/stdout")), Some(1));
    }
    assert_eq!(descriptor_alias(Path::new("/tmp/r.json")), None);
    assert!(Output::prepare(Path::new("-")).unwrap().is_stdout());
}

#[test]
fn identities_see_through_links_and_new_names() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    fs::write(&a, b"x").unwrap();
    let link = dir.path().join("l.json");
    symlink(&a, &link).unwrap();
    let dotted = dir.path().join("sub/../a.json");
    fs::create_dir(dir.path().join("sub")).unwrap();
    let ids = [Identity::of_path(&a), Identity::of_path(&link)];
    assert_eq!(identity::first_clash(&ids), Some((0, 1)));
    assert!(Identity::of_path(&dotted).clashes_with(&Identity::of_path(&a)));
    let n1 = Identity::of_path(&dir.path().join("new.csv"));
    let n2 = Identity::of_path(&dir.path().join("sub/../new.csv"));
    assert!(n1.clashes_with(&n2));
    assert!(!n1.clashes_with(&Identity::of_path(&a)));
    let o1 = Output::prepare(Path::new("-")).unwrap().identity();
    let o2 = Output::prepare(Path::new("/dev/fd/1")).unwrap().identity();
    assert!(o1.clashes_with(&o2));
}
