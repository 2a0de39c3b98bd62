//! `run --explain`: causes named from a real trace (root), context mode for an ordinary
//! user, and no trace instance left behind on any exit path. Structure, never timing.

use super::common::{bin, tickscope};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// The tests that trace run one at a time (each checks the instances it made).
static TRACING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    TRACING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the instance of process `pid` exists.
fn left_by(pid: u32) -> bool {
    Path::new(INSTANCES)
        .join(format!("tickscope-{pid}"))
        .exists()
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Why the root tests cannot run here, if they cannot.
fn cannot_trace() -> Option<&'static str> {
    if !root() {
        return Some("not root");
    }
    if !Path::new("/sys/kernel/tracing").is_dir() {
        return Some("no tracefs mount point");
    }
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return Some("fewer than 2 CPUs");
    }
    None
}

/// A thread named `spin99` at SCHED_FIFO 99 on CPU 1 spinning 2 ms every 200 ms until the
/// flag is set (joined by the caller: never left running).
fn spinner(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        // SAFETY: plain syscalls on the calling thread with valid arguments.
        unsafe {
            libc::prctl(libc::PR_SET_NAME, c"spin99".as_ptr());
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(1, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            let p = libc::sched_param { sched_priority: 99 };
            libc::sched_setscheduler(0, libc::SCHED_FIFO, &p);
        }
        let end = Instant::now() + Duration::from_secs(30);
        while !stop.load(Ordering::Relaxed) && Instant::now() < end {
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(2) {
                std::hint::spin_loop();
            }
            std::thread::sleep(Duration::from_millis(198));
        }
    })
}

#[test]
fn the_thread_that_held_the_cpu_is_named() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let caps = dir.path().join("caps");
    let stop = Arc::new(AtomicBool::new(false));
    let spin = spinner(Arc::clone(&stop));
    let out = tickscope()
        .args([
            "run",
            "-a",
            "1",
            "-p",
            "90",
            "-D",
            "3s",
            "--explain",
            "--on-late",
            "1ms:capture",
        ])
        .arg("--capture-dir")
        .arg(&caps)
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    spin.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("causes of wake-ups > 100 µs"), "{stdout}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let ex = &doc["explain"];
    assert_eq!(ex["backend"], "tracefs");
    // The cause table counts every late wake-up (the breakdowns keep only the worst 20,
    // which other users of this CPU may fill).
    let named = ex["threads"][0]["causes"]["other thread"]["details"]["spin99"]
        .as_u64()
        .unwrap_or(0)
        > 0;
    assert!(named, "no breakdown names spin99: {}", ex["threads"]);
    let caps_written = ex["captures"].as_array().unwrap();
    assert!(!caps_written.is_empty());
    let first = caps_written[0]["path"].as_str().unwrap();
    assert!(Path::new(first).join("capture.json").is_file());
}

#[test]
fn own_threads_run_on_housekeeping_cpus_and_every_late_wake_up_is_logged() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let log = dir.path().join("late.jsonl");
    let out = tickscope()
        .args([
            "run",
            "-a",
            "1",
            "-D",
            "2s",
            "--explain",
            "--explain-threshold",
            "20us",
        ])
        .args(["--housekeeping-cpus", "0", "--json"])
        .arg(&json)
        .arg("--explain-log")
        .arg(&log)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("housekeeping: tickscope's own threads on CPU 0"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let late = doc["explain"]["threads"][0]["late"].as_u64().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, late, "one line per late wake-up");
    for b in &lines {
        assert!(
            b["cause"]["category"].is_string() && b["segments"].is_array(),
            "{b}"
        );
    }
}

#[test]
fn housekeeping_overlapping_the_measured_cpu_is_refused() {
    let out = Command::new(bin())
        .args(["run", "-a", "0", "--housekeeping-cpus", "0", "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("overlaps the measured CPUs"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn hypervisor_stalls_are_interrupt_delivery() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    tickscope()
        .args(["run", "-a", "1", "-D", "2s", "--explain"])
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let list = doc["explain"]["breakdowns"].as_array().unwrap().clone();
    if list.is_empty() {
        eprintln!("no wake-up later than 100 µs in this run: nothing to attribute");
    }
    for b in list
        .iter()
        .filter(|b| b["cause"]["category"] == "hypervisor")
    {
        let segs = b["segments"].as_array().unwrap();
        let largest = segs
            .iter()
            .max_by_key(|s| s["ns"].as_i64().unwrap())
            .unwrap();
        assert_eq!(largest["id"], "interrupt_delivery", "{b}");
        assert_eq!(segs[1]["details"][0]["kind"], "hypervisor");
    }
}

#[test]
fn an_ordinary_user_gets_context_mode_and_trace_is_refused() {
    if !root() || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root to switch to user nobody with setpriv");
        return;
    }
    let as_nobody = |explain: &str| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin())
            .args(["run", "-D", "1s", explain])
            .current_dir("/tmp")
            .output()
            .unwrap()
    };
    let out = as_nobody("--explain");
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("Permission denied") {
        eprintln!("skipped: user nobody cannot run the test binary here");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("context mode"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("explain (context)"));
    let out = as_nobody("--explain=trace");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("needs root"), "{err}");
}

#[test]
fn no_instance_remains_after_any_end() {
    if let Some(why) = cannot_trace() {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = serial();
    let was_mounted = Path::new(INSTANCES).is_dir();
    let run = |args: &[&str]| {
        Command::new(bin())
            .args(["run", "--explain=trace", "-q"])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // A normal end, and an error after the instance was made (a CPU that does not exist).
    let child = run(&["-D", "1s"]);
    let pid = child.id();
    assert!(child.wait_with_output().unwrap().status.success());
    assert!(!left_by(pid), "after a normal end");
    let child = run(&["-a", "999", "-D", "1s"]);
    let pid = child.id();
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(2));
    assert!(!left_by(pid), "after an error");
    // Ctrl-C.
    let mut child = run(&["-D", "30s"]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(left_by(child.id()), "traced while running");
    // SAFETY: a signal to our own child, by PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    assert!(!left_by(child.id()), "after Ctrl-C");
    // SIGKILL leaves one; the next start removes it.
    let mut child = run(&["-D", "30s"]);
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(left_by(pid), "SIGKILL leaves the instance");
    let next = run(&["-D", "1s"]);
    let out = next.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(!left_by(pid), "after SIGKILL + next start");
    let err = String::from_utf8_lossy(&out.stderr);
    if !err.contains(&format!("tickscope-{pid}")) {
        eprintln!("note: another process removed the stale instance first");
    }
    if !was_mounted {
        // The killed run mounted tracefs and could not unmount it; leave the machine as found.
        let _ = Command::new("umount").arg("/sys/kernel/tracing").status();
    }
}

#[test]
fn on_late_stop_ends_the_run_with_status_3_and_exec_gets_the_wake_up() {
    // Virtual time (no root, nothing changed on the system), context mode.
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("env");
    let json = dir.path().join("r.json");
    let exec = format!(
        "exec=env | grep ^TICKSCOPE_ | sort > '{}'",
        env_file.display()
    );
    let out = tickscope()
        .args(["run", "--debug-mock", "20us,30us,2.5ms", "-l", "3000"])
        .args([
            "--explain=context",
            "--on-late",
            &format!("1ms:{exec}"),
            "--on-late",
            "2ms:stop",
        ])
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let ex = &doc["explain"];
    assert_eq!(ex["backend"], "context");
    let caps = ex["captures"].as_array().unwrap();
    assert_eq!(caps[0]["actions"][0]["name"], "exec");
    assert_eq!(caps[0]["actions"][1]["name"], "stop");
    assert_eq!(
        ex["threads"][0]["causes"]["not traced"]["count"]
            .as_u64()
            .map(|n| n > 0),
        Some(true)
    );
    // The command ran off the measuring thread and was waited for before the exit.
    let env = std::fs::read_to_string(&env_file).unwrap();
    assert!(env.contains("TICKSCOPE_LATENCY_NS=2500000"), "{env}");
    assert!(
        env.contains("TICKSCOPE_TID=") && env.contains("TICKSCOPE_EXPIRY_NS="),
        "{env}"
    );
}

#[test]
fn bad_explain_flags_are_one_line_and_exit_2() {
    for args in [
        ["--on-late", "1ms"],
        ["--on-late", "1ms:jump"],
        ["--explain-threshold", "fast"],
        ["--break", "x"],
    ] {
        let out = tickscope()
            .args(["run", "-D", "1s"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "{args:?}"
        );
    }
}
