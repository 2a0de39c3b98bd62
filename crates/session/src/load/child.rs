//! The load as a managed child ([`tickscope_engine::child::ManagedChild`]): its own process
//! group, placed on the load CPUs before `exec`, stopped (SIGTERM to the group, SIGKILL
//! after [`GRACE`]) and reaped when the guard is dropped — at the normal end, after Ctrl-C,
//! on an error or a panic (unwinding drops it) — killed at once by
//! [`tickscope_engine::child::kill_all_now`] when a second signal makes the process exit
//! without unwinding, and killed by the warden ([`tickscope_engine::child::warden`]) when
//! tickscope dies without either (SIGKILL). A process that leaves the group (`setsid`) is
//! not caught.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tickscope_engine::child::{Ended, ManagedChild};
use tickscope_report::load::LoadProcess;

/// How long the load may take to end after SIGTERM before it gets SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// A running load. Dropping it stops and reaps it.
pub struct LoadChild {
    child: Option<ManagedChild>,
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

fn describe(status: &Ended) -> String {
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
            .stderr(Stdio::piped());
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
        if let Err(e) = tickscope_engine::child::warden::start() {
            eprintln!("tickscope: --load: {e}");
        }
        let mut child = ManagedChild::spawn(&mut cmd)
            .map_err(|e| format!("cannot start the load '{}': {e}", argv.join(" ")))?;
        let pid = child.pid();
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = child.take_stderr() {
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
        let status = child.poll()?;
        self.child = None;
        let how = describe(&status);
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

    /// Stops the load (SIGTERM to its group, SIGKILL after [`GRACE`]), reaps it and records
    /// how it ended. Does nothing when it already ended.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Some(status) = child.poll() {
            if let Ok(mut r) = self.record.lock() {
                r.exit = Some(describe(&status));
            }
            return;
        }
        let status = child.stop(GRACE);
        if let Ok(mut r) = self.record.lock() {
            r.stopped_by_tickscope = true;
            r.exit = Some(format!("{} (stopped by tickscope)", describe(&status)));
        }
    }
}

impl Drop for LoadChild {
    fn drop(&mut self) {
        self.stop();
    }
}
