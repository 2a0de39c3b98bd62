//! The load as a managed child: its own process group, placed on the load CPUs before
//! `exec`, stopped (SIGTERM to the group, SIGKILL after [`GRACE`]) and reaped when the guard
//! is dropped — at the normal end, after Ctrl-C, on an error or a panic (unwinding drops
//! it) — and killed at once by [`kill_all_now`] when a second signal makes the process exit
//! without unwinding. `PR_SET_PDEATHSIG` (prctl(2)) kills the leader if tickscope dies
//! without either.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tickscope_report::load::LoadProcess;

/// How long the load may take to end after SIGTERM before it gets SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// Process groups of running loads, for [`kill_all_now`].
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Sends SIGKILL to every running load's process group (for an exit that does not unwind,
/// such as the second Ctrl-C). Safe to call at any time.
pub fn kill_all_now() {
    if let Ok(groups) = GROUPS.lock() {
        for &g in groups.iter() {
            // SAFETY: killpg with a group id we created; no memory is involved.
            unsafe { libc::killpg(g, libc::SIGKILL) };
        }
    }
}

/// A running load. Dropping it stops and reaps it.
pub struct LoadChild {
    child: Option<Child>,
    record: Arc<Mutex<LoadProcess>>,
    stderr: Arc<Mutex<String>>,
}

/// The name of a signal number, for the exit line.
fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("killed by {}", signal_name(s)),
        _ => "ended".into(),
    }
}

impl LoadChild {
    /// Starts `argv` in a process group of its own, on `cpus` (all allowed CPUs when empty),
    /// with standard input and output on /dev/null and standard error kept (its end is
    /// quoted when the load fails early). `record` is filled with the command and pid now
    /// and with the exit when it stops.
    ///
    /// # Errors
    /// The OS error of `fork`/`exec` as one sentence.
    pub fn spawn(
        argv: &[String],
        cpus: &[usize],
        record: Arc<Mutex<LoadProcess>>,
    ) -> Result<LoadChild, String> {
        let (prog, args) = argv.split_first().ok_or("an empty load command")?;
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let cpus = cpus.to_vec();
        // SAFETY: only async-signal-safe calls (prctl, sched_setaffinity) on a set built
        // before the fork; nothing allocates after it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in &cpus {
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if !cpus.is_empty()
                    && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the load '{}': {e}", argv.join(" ")))?;
        let pid = child.id() as i32;
        if let Ok(mut g) = GROUPS.lock() {
            g.push(pid);
        }
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = child.stderr.take() {
            let keep = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut k) = keep.lock() {
                        k.push_str(&String::from_utf8_lossy(&buf[..n]));
                        let len = k.len();
                        if len > 8192 {
                            let mut cut = len - 4096;
                            while !k.is_char_boundary(cut) {
                                cut += 1;
                            }
                            k.drain(..cut);
                        }
                    }
                }
            });
        }
        if let Ok(mut r) = record.lock() {
            r.command = argv.to_vec();
            r.pid = pid;
        }
        Ok(LoadChild {
            child: Some(child),
            record,
            stderr,
        })
    }

    /// The leader's pid (= its process group id).
    pub fn pid(&self) -> i32 {
        self.record.lock().map(|r| r.pid).unwrap_or(0)
    }

    /// If the load has already ended: how (it is then reaped), with the last line it wrote
    /// on standard error.
    pub fn ended(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        let status = child.try_wait().ok().flatten()?;
        self.child = None;
        self.forget_group();
        let how = describe(status);
        if let Ok(mut r) = self.record.lock() {
            r.exit = Some(how.clone());
        }
        std::thread::sleep(Duration::from_millis(20)); // let the stderr reader catch up
        let last = self.stderr.lock().ok().and_then(|s| {
            s.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        });
        Some(match last {
            Some(l) => format!("{how}: {}", l.trim()),
            None => how,
        })
    }

    fn forget_group(&self) {
        let pid = self.pid();
        if let Ok(mut g) = GROUPS.lock() {
            g.retain(|&p| p != pid);
        }
    }

    /// Stops the load (SIGTERM to its group, SIGKILL after [`GRACE`]), reaps it and records
    /// how it ended. Does nothing when it already ended.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id() as i32;
        if let Ok(Some(status)) = child.try_wait() {
            self.forget_group();
            if let Ok(mut r) = self.record.lock() {
                r.exit = Some(describe(status));
            }
            return;
        }
        // SAFETY: signals to the group we created; its leader is not reaped yet, so the
        // group id cannot have been reused.
        unsafe { libc::killpg(pid, libc::SIGTERM) };
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline && !exited_unreaped(pid) {
            std::thread::sleep(Duration::from_millis(10));
        }
        // Whatever is left of the group (stragglers, or a leader that ignored SIGTERM).
        unsafe { libc::killpg(pid, libc::SIGKILL) };
        let status = child.wait();
        self.forget_group();
        if let Ok(mut r) = self.record.lock() {
            r.stopped_by_tickscope = true;
            r.exit = Some(match status {
                Ok(s) => format!("{} (stopped by tickscope)", describe(s)),
                Err(e) => format!("cannot be reaped: {e}"),
            });
        }
    }
}

/// True when `pid` has exited; leaves it unreaped (`waitid` with `WNOWAIT`), so its
/// process group id stays reserved.
fn exited_unreaped(pid: i32) -> bool {
    // SAFETY: waitid fills a zeroed siginfo_t we own.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    r == 0 && unsafe { info.si_pid() } == pid
}

impl Drop for LoadChild {
    fn drop(&mut self) {
        self.stop();
    }
}
