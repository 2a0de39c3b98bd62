//! Whether a CPU quota (CFS bandwidth control) applies to a thread: the evidence that lets
//! the attribution name `cpu quota` at all.
//!
//! A fair thread is throttled only when its cpu cgroup or one of its ancestors has a quota:
//! `cpu.cfs_quota_us` other than −1 (cgroup v1) or a `cpu.max` other than `max` (cgroup v2)
//! (Documentation/scheduler/sched-bwc.rst; Documentation/admin-guide/cgroup-v2.rst, "CPU").
//! Without one the kernel never throttles it, whatever the trace looks like: the IPI that a
//! remote unthrottle sends (`call_function_single`) is also the one a remote wake-up sends
//! (a calm oracle run once named `cpu quota` on a machine without any quota; which rule fired
//! was not recorded). The thread's group is read when its late wake-up is explained, since a thread
//! can be moved between groups while it runs (systemd, Kubernetes, the oracle's quota plant).

use std::io::ErrorKind;
use std::path::Path;

/// Where the cgroup hierarchies are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// Whether a CPU quota applies to thread `tid` (of any process): `Some(true)` if its cpu
/// cgroup or an ancestor has one, `Some(false)` if none has, `None` when it cannot be told
/// (the thread is gone, a file unreadable, no cpu controller found). Reads
/// `/proc/TID/cgroup` (cgroups(7)) and one quota file per level of the group's path.
///
/// # Panics
/// Never: every failure to read or parse is `None`.
pub fn applies(tid: i32) -> Option<bool> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/cgroup")).ok()?;
    applies_under(Path::new(CGROUP_ROOT), &text)
}

/// [`applies`] for the text of a `/proc/TID/cgroup` file, the hierarchies mounted under
/// `root`. Version 1 where a hierarchy lists the `cpu` controller (`N:cpu,cpuacct:/path`,
/// mounted at `root/cpu` or `root/cpu,cpuacct`), else the unified hierarchy (`0::/path`).
fn applies_under(root: &Path, cgroup: &str) -> Option<bool> {
    let field = |l: &str, i: usize| l.splitn(3, ':').nth(i).map(str::to_owned);
    let v1 = cgroup
        .lines()
        .find(|l| field(l, 1).is_some_and(|c| c.split(',').any(|c| c == "cpu")));
    let (dir, path, file) = match v1 {
        Some(l) => {
            let dir = ["cpu", "cpu,cpuacct", "cpuacct,cpu"]
                .iter()
                .map(|d| root.join(d))
                .find(|d| d.join("cpu.cfs_quota_us").exists())?;
            (dir, field(l, 2)?, "cpu.cfs_quota_us")
        }
        None => {
            let l = cgroup.lines().find(|l| l.starts_with("0::"))?;
            (root.to_path_buf(), field(l, 2)?, "cpu.max")
        }
    };
    // The group and every ancestor below the root (whose quota file, where there is one,
    // is -1 / "max" or absent), from the top down.
    let mut level = dir;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        level.push(part);
        match std::fs::read_to_string(level.join(file)) {
            Ok(text) => {
                let first = text.split_whitespace().next()?;
                let limited = match file {
                    "cpu.max" => first != "max",
                    _ => first.parse::<i64>().ok()? > 0,
                };
                if limited {
                    return Some(true);
                }
            }
            // cgroup v2: no cpu.max where the cpu controller is not enabled for the group
            // (no quota at that level).
            Err(e) if e.kind() == ErrorKind::NotFound && file == "cpu.max" => {}
            Err(_) => return None,
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = t.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        t
    }

    #[test]
    fn v1_a_quota_on_the_group_or_an_ancestor_applies() {
        let t = tree(&[
            ("cpu/cpu.cfs_quota_us", "-1\n"),
            ("cpu/a/cpu.cfs_quota_us", "-1\n"),
            ("cpu/a/b/cpu.cfs_quota_us", "1000\n"),
            ("cpu/a/c/cpu.cfs_quota_us", "-1\n"),
            ("cpu/q/cpu.cfs_quota_us", "50000\n"),
            ("cpu/q/d/cpu.cfs_quota_us", "-1\n"),
        ]);
        let r = t.path();
        let text = |p: &str| format!("12:memory:/x\n5:cpu,cpuacct:{p}\n0::/y\n");
        assert_eq!(applies_under(r, &text("/")), Some(false));
        assert_eq!(applies_under(r, &text("/a")), Some(false));
        assert_eq!(applies_under(r, &text("/a/b")), Some(true));
        assert_eq!(applies_under(r, &text("/a/c")), Some(false));
        assert_eq!(applies_under(r, &text("/q/d")), Some(true), "an ancestor's");
        assert_eq!(
            applies_under(r, &text("/gone")),
            None,
            "unreadable: cannot tell"
        );
    }

    #[test]
    fn v2_a_cpu_max_other_than_max_applies() {
        let t = tree(&[
            ("cgroup.controllers", "cpu memory\n"),
            ("a/cpu.max", "max 100000\n"),
            ("a/b/cpu.max", "20000 100000\n"),
            ("a/c/cgroup.procs", ""),
        ]);
        let r = t.path();
        assert_eq!(applies_under(r, "0::/\n"), Some(false));
        assert_eq!(applies_under(r, "0::/a\n"), Some(false));
        assert_eq!(applies_under(r, "0::/a/b\n"), Some(true));
        assert_eq!(
            applies_under(r, "0::/a/c\n"),
            Some(false),
            "controller off there"
        );
    }

    #[test]
    fn no_cpu_controller_cannot_tell() {
        let t = tree(&[("memory/x", "")]);
        assert_eq!(applies_under(t.path(), "4:memory:/x\n"), None);
        assert_eq!(applies_under(t.path(), "5:cpu,cpuacct:/x\n"), None);
    }
}
