//! `tickscope attach`: a periodic target (`tickscope run` itself, whose measuring thread
//! sleeps to an absolute 1 ms grid) measured from outside. Counts and structure only.

use super::common::{a_breakdown_found_the_timer_start, bin, result_json, tickscope};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One attach at a time in this binary (the instance check below counts every `-attach`).
static ATTACHING: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(super) fn serial() -> std::sync::MutexGuard<'static, ()> {
    ATTACHING.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn cannot_trace() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root");
    }
    if !Path::new("/sys/kernel/tracing").is_dir() {
        return Some("no tracefs mount point");
    }
    None
}

/// `tickscope run -i 1ms -D SECS -q` as a target, and the tid of its measuring thread
/// (`tickscope-0`), once it exists.
fn target(secs: u32) -> (Child, i32) {
    target_with(secs, "nanosleep-abs")
}

/// The same with `--method method`.
fn target_with(secs: u32, method: &str) -> (Child, i32) {
    target_args(secs, &["--method", method])
}

/// `tickscope run -i 1ms -D SECS -q ARGS…` as a target.
fn target_args(secs: u32, args: &[&str]) -> (Child, i32) {
    let mut child = Command::new(bin())
        .args(["run", "-i", "1ms", "-D", &format!("{secs}s"), "-q"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        for entry in std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
        {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            if comm.trim_end() == "tickscope-0" {
                let tid = entry.file_name().to_str().unwrap().parse().unwrap();
                return (child, tid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the target's measuring thread never appeared");
}

#[test]
fn a_running_loop_is_measured_and_attach_ends_with_it() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipping a_running_loop_is_measured_and_attach_ends_with_it: {why}");
        return;
    }
    let _one = serial();
    let (mut child, tid) = target(4);
    let pid = child.id();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("a.json");
    let out = tickscope()
        .args([
            "attach",
            "--pid",
            &pid.to_string(),
            "--tid",
            &tid.to_string(),
        ])
        .args(["--discover", "500ms", "--explain", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    child.wait().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("process {pid} (tickscope) exited")),
        "{stderr}"
    );
    // The observer's threads are placed (or the reason they share the target's CPUs given).
    assert!(
        stderr.contains("tickscope's own threads on CPU") || stderr.contains("not separated"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("thread {tid} (tickscope-0): periodic, every 1.00 ms, clock_nanosleep(TIMER_ABSTIME) on monotonic")), "{stdout}");
    let doc = result_json(&std::fs::read_to_string(&json).unwrap());
    let t = &doc["target"];
    assert_eq!(t["pid"], pid);
    assert_eq!(t["comm"], "tickscope");
    assert_eq!(t["woke_point"], "sys_exit");
    assert_eq!(t["threads"][0]["tid"], tid);
    assert_eq!(t["threads"][0]["period_ns"], 1_000_000);
    assert_eq!(t["threads"][0]["wait"], "clock_nanosleep(TIMER_ABSTIME)");
    assert_eq!(doc["applied"]["method"], "nanosleep-abs");
    assert_eq!(doc["threads"].as_array().unwrap().len(), 1);
    assert_eq!(doc["threads"][0]["tid"], tid);
    let samples = doc["threads"][0]["samples"].as_u64().unwrap();
    // About 3.5 s of a 1 ms loop were watched; at least a second's worth is certain.
    assert!((1000..5000).contains(&samples), "{samples}");
    assert_eq!(doc["summary"]["samples"].as_u64().unwrap(), samples);
    assert!(!doc["threads"][0]["windows"].as_array().unwrap().is_empty());
    // BPF by default, the tracefs text path where BPF cannot load (docs/explain.md).
    let backend = doc["explain"]["backend"].as_str().unwrap_or_default();
    assert!(["bpf", "tracefs"].contains(&backend), "{backend}");
    // attach's own instance is gone (no other attach runs in these tests at once).
    let left: Vec<String> = tickscope_explain::tracefs::list_instances()
        .into_iter()
        .filter(|n| n.ends_with("-attach"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// What attach says of the target's settings is what the target says of its own: policy,
/// locked memory, the CPU latency limit it holds, the CPU it is pinned to, that a real-time
/// thread gets no timer slack. Before, attach
/// reported every target as unpinned, without locked memory or a PM QoS limit.
#[test]
fn the_targets_settings_are_what_the_target_reports() {
    const TEST: &str = "the_targets_settings_are_what_the_target_reports";
    if let Some(why) = cannot_trace() {
        eprintln!("skipping {TEST}: {why}");
        return;
    }
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if cpus < 2 {
        eprintln!("skipping {TEST}: one CPU (the target is pinned off attach's own)");
        return;
    }
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let (own, seen) = (dir.path().join("own.json"), dir.path().join("seen.json"));
    let last = (cpus - 1).to_string();
    let (child, tid) = target_args(3, &["-a", &last, "--json", own.to_str().unwrap()]);
    attach_for_a_second(child, tid, &[], &seen);
    let own = result_json(&std::fs::read_to_string(&own).unwrap());
    let seen = result_json(&std::fs::read_to_string(&seen).unwrap());
    let (own, seen) = (&own["applied"], &seen["applied"]);
    assert_eq!(seen["policy"], own["policy"]);
    assert_eq!(seen["mlock"], own["mlock"]);
    assert_eq!(seen["timer_slack_note"], own["timer_slack_note"]);
    assert_eq!(seen["threads"][0]["tid"], tid);
    assert_eq!(seen["threads"][0]["cpu"], own["threads"][0]["cpu"]);
    assert_eq!(seen["threads"][0]["cpu"], cpus - 1);
    // The limit in force is the smallest request: the target's, or a smaller one of another
    // process's.
    if let Some(held) = own["pm_qos_us"].as_i64() {
        let limit = seen["pm_qos_us"].as_i64();
        assert!(limit.is_some_and(|l| l <= held), "{limit:?} against {held}");
    }
}

/// A target on CLOCK_REALTIME (`tickscope run --clock realtime`) is explained: attach
/// streams its wake-ups on CLOCK_MONOTONIC, and the thread's timer carries its expiries on
/// CLOCK_REALTIME in the trace; before they were moved to one clock every late wake-up of
/// such a thread was `unexplained (events missing)`, its timer start not found. Structure
/// only: some kept breakdown found the thread's timer start.
#[test]
fn a_realtime_target_is_explained() {
    const TEST: &str = "a_realtime_target_is_explained";
    if let Some(why) = cannot_trace() {
        eprintln!("skipping {TEST}: {why}");
        return;
    }
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let (child, tid) = target_args(3, &["--clock", "realtime"]);
    let explain = ["--explain", "--explain-threshold", "1ns"];
    attach_for_a_second(child, tid, &explain, &seen);
    let doc = result_json(&std::fs::read_to_string(&seen).unwrap());
    assert_eq!(doc["applied"]["clock"], "realtime");
    let kept = doc["explain"]["breakdowns"].as_array().unwrap();
    assert!(!kept.is_empty(), "{}", doc["explain"]);
    assert!(a_breakdown_found_the_timer_start(kept), "{}", kept[0]);
}

/// `tickscope attach` to thread `tid` of the target `child` for 1 s (after 300 ms of
/// discovery) with `extra` flags, its result to `json`; waits for the target to end and
/// fails the test with attach's stderr unless attach succeeded.
fn attach_for_a_second(mut child: Child, tid: i32, extra: &[&str], json: &Path) {
    let out = tickscope()
        .args(["attach", "--pid", &child.id().to_string()])
        .args(["--tid", &tid.to_string(), "--discover", "300ms", "-D", "1s"])
        .args(extra)
        .arg("--json")
        .arg(json)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    child.wait().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn list_names_the_periodic_thread_and_measures_nothing() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipping list_names_the_periodic_thread_and_measures_nothing: {why}");
        return;
    }
    let _one = serial();
    let (mut child, tid) = target(3);
    let out = tickscope()
        .args(["attach", "--pid", &child.id().to_string(), "--list"])
        .args(["--discover", "500ms"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let _ = child.kill();
    child.wait().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("thread {tid} (tickscope-0): periodic")),
        "{stdout}"
    );
    assert!(!stdout.contains("latency"), "{stdout}");
}

#[test]
fn a_futex_timeout_loop_is_measured() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipping a_futex_timeout_loop_is_measured: {why}");
        return;
    }
    let _one = serial();
    let (mut child, tid) = target_with(3, "futex");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("a.json");
    let out = tickscope()
        .args([
            "attach",
            "--pid",
            &child.id().to_string(),
            "--tid",
            &tid.to_string(),
        ])
        .args(["--discover", "500ms", "-D", "1s", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let _ = child.kill();
    child.wait().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "thread {tid} (tickscope-0): periodic, every 1.00 ms, futex timeout on monotonic"
        )),
        "{stdout}"
    );
    let doc = result_json(&std::fs::read_to_string(&json).unwrap());
    assert_eq!(doc["applied"]["method"], "futex");
    assert_eq!(doc["target"]["threads"][0]["wait"], "futex timeout");
    assert!(doc["threads"][0]["samples"].as_u64().unwrap() > 0);
}

#[test]
fn a_missing_process_or_thread_is_one_line_and_status_2() {
    let out = tickscope()
        .args(["attach", "--pid", "999999999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--pid 999999999: no such process"), "{err}");
    let me = std::process::id().to_string();
    let out = tickscope()
        .args(["attach", "--pid", &me, "--tid", "999999999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--tid 999999999 is not a thread of process"),
        "{err}"
    );
    let out = tickscope()
        .args(["attach", "--pid", &me, "-D", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Sleeps to an absolute grid of `period` on CLOCK_MONOTONIC until `until` returns true.
pub(super) fn tick(period: Duration, until: &dyn Fn() -> bool) {
    let mut next = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `next` is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut next) };
    while !until() {
        next.tv_nsec += period.as_nanos() as i64;
        while next.tv_nsec >= 1_000_000_000 {
            next.tv_nsec -= 1_000_000_000;
            next.tv_sec += 1;
        }
        // SAFETY: `next` is a valid timespec; no remainder is asked for.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &next,
                std::ptr::null_mut(),
            )
        };
    }
}

/// The target of `a_thread_started_later_is_measured_and_its_exit_noted`, run in a child
/// process of this test binary (the variable names the file that starts its second loop):
/// a 2 ms loop from the start; once the file exists, a 1 ms loop on a new thread for 1.5 s,
/// which then exits; the process exits 1 s later (or after 30 s without the file).
#[test]
fn late_thread_target() {
    let Some(go) = std::env::var_os("TICKSCOPE_LATE_THREAD_GO") else {
        eprintln!("late_thread_target: the target of a test, idle unless that test starts it");
        return;
    };
    let go = std::path::PathBuf::from(go);
    let started = Instant::now();
    tick(Duration::from_millis(2), &|| {
        go.exists() || started.elapsed() > Duration::from_secs(30)
    });
    let late = std::thread::Builder::new()
        .name("late-loop".into())
        .spawn(|| {
            let t = Instant::now();
            tick(Duration::from_millis(1), &|| {
                t.elapsed() > Duration::from_millis(1500)
            });
        })
        .unwrap();
    let t = Instant::now();
    tick(Duration::from_millis(2), &|| {
        t.elapsed() > Duration::from_millis(2500)
    });
    late.join().unwrap();
}

#[test]
fn a_thread_started_later_is_measured_and_its_exit_noted() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipping a_thread_started_later_is_measured_and_its_exit_noted: {why}");
        return;
    }
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "attach::late_thread_target", "--nocapture"])
        .env("TICKSCOPE_LATE_THREAD_GO", &go)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let json = dir.path().join("a.json");
    let hlog = dir.path().join("a.hlog");
    let mut attach = Command::new(bin())
        .args(["attach", "--pid", &pid.to_string(), "--discover", "500ms"])
        .args(["--explain", "--explain-threshold", "10us"])
        .arg("--json")
        .arg(&json)
        .arg("--hlog")
        .arg(&hlog)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The second loop starts once attach has chosen its threads (its list is printed).
    let mut stdout = std::io::BufReader::new(attach.stdout.take().unwrap());
    let mut listed = String::new();
    while !listed.contains("periodic") {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() == 0 {
            break;
        }
        listed += &line;
    }
    std::fs::write(&go, "").unwrap();
    let rest = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = attach.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = attach.kill();
            let _ = child.kill();
            panic!("attach did not end with its target: {listed}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    child.wait().unwrap();
    let stderr = std::io::read_to_string(attach.stderr.take().unwrap()).unwrap_or_default();
    let _ = rest.join();
    assert!(status.success(), "{listed}\n{stderr}");
    assert!(stderr.contains("exited; detached"), "{stderr}");
    let doc = result_json(&std::fs::read_to_string(&json).unwrap());
    let threads = doc["target"]["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2, "{}", doc["target"]);
    assert_eq!(threads[0]["period_ns"], 2_000_000);
    assert_eq!(threads[1]["period_ns"], 1_000_000);
    assert_eq!(threads[1]["comm"], "late-loop");
    let late_tid = threads[1]["tid"].as_i64().unwrap();
    assert_eq!(doc["threads"][1]["tid"], late_tid);
    // 1.5 s of a 1 ms loop; some hundreds at least, whatever the load.
    let late = doc["threads"][1]["samples"].as_u64().unwrap();
    assert!((100..=1600).contains(&late), "{late}");
    let notes: Vec<&str> = doc["target"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    let began = format!("thread {late_tid} (late-loop) began waking from a timer");
    assert!(notes.iter().any(|n| n.starts_with(&began)), "{notes:?}");
    let exited = format!("thread {late_tid} (T1) exited after");
    assert!(notes.iter().any(|n| n.starts_with(&exited)), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.ends_with("exited; detached")),
        "{notes:?}"
    );
    // The thread that joined is in every product: its hlog tag and its explain row.
    let tags: Vec<&str> = doc["hlog"]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    assert!(tags.contains(&"T1"), "{tags:?}");
    let log = std::fs::read_to_string(&hlog).unwrap();
    assert!(log.lines().any(|l| l.starts_with("Tag=T1,")), "{log}");
    let rows = doc["explain"]["threads"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["thread"] == 1 && r["tid"] == late_tid),
        "{rows:?}"
    );
    let backend = doc["explain"]["backend"].as_str().unwrap_or_default();
    assert!(["bpf", "tracefs"].contains(&backend), "{backend}");
}
