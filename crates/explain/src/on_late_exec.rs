//! `--on-late THRESHOLD:exec=CMD`: the commands a late wake-up starts, bounded and
//! accounted for.
//!
//! Each command runs as `/bin/sh -c CMD` in a process group of its own
//! ([`tickscope_engine::child::ManagedChild`]), off the measuring threads. The bounds:
//!
//! * at most one command per exec action at a time — a hit while that action's previous
//!   command still runs is recorded as `skipped: previous command still running`;
//! * at most [`MAX_RUNNING`] commands at once over all rules (`skipped: N commands already
//!   running`);
//! * a command running longer than [`TIMEOUT`] has its whole group killed (SIGKILL);
//! * when a run ends, commands still running get [`END_GRACE`] to finish, then SIGTERM,
//!   then SIGKILL after [`TERM_GRACE`], so a run outlasts its duration by at most the sum.
//!
//! Ends are seen without a thread per command: the `--explain` controller calls [`ExecActions::poll`]
//! from the collector's pump, which it runs for every batch of wake-ups and every window.
//! The action's record gets the outcome: `exit 0 in 12.0 ms`, `failed: exit 3 in 4.10 ms`,
//! `failed: killed by SIGSEGV after 1.20 s`, `failed: killed after 10.0 s (timeout)`,
//! `stopped at the end of the run after 2.10 s (SIGTERM)`.

use crate::section::CaptureRecord;
use std::process::{Command, Stdio};
use std::time::Duration;
use tickscope_engine::child::{Ended, ManagedChild};

/// A command running longer than this is killed.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// At most this many `exec` commands run at once, over all rules.
pub const MAX_RUNNING: usize = 4;
/// How long commands still running at the end of a run get to finish on their own.
pub const END_GRACE: Duration = Duration::from_secs(1);
/// How long they then get between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(250);

/// Which exec action: (rule index, action index within the rule).
pub type ActionKey = (usize, usize);

struct Running {
    key: ActionKey,
    child: ManagedChild,
    /// The status to update: (hit index in the captures, action index in the hit).
    slot: (usize, usize),
    timed_out: bool,
}

/// The running `exec` commands of one `--explain` sink.
pub struct ExecActions {
    running: Vec<Running>,
    timeout: Duration,
}

impl Default for ExecActions {
    fn default() -> Self {
        ExecActions {
            running: Vec::new(),
            timeout: TIMEOUT,
        }
    }
}

/// The name of a signal, for a status line (`SIGTERM`, or `signal N`).
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGPIPE => "SIGPIPE".into(),
        n => format!("signal {n}"),
    }
}

/// How an ended command reads in its action's status (see the module doc).
fn describe(e: &Ended, timed_out: bool, at_end: bool) -> String {
    let took = tickscope_engine::units::ns(e.after.as_nanos() as f64);
    if timed_out {
        return format!("failed: killed after {took} (timeout)");
    }
    if at_end {
        let how = match (e.code(), e.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => signal_name(s),
            _ => "ended".into(),
        };
        return format!("stopped at the end of the run after {took} ({how})");
    }
    match (e.code(), e.signal()) {
        (Some(0), _) => format!("exit 0 in {took}"),
        (Some(c), _) => format!("failed: exit {c} in {took}"),
        (None, Some(s)) => format!("failed: killed by {} after {took}", signal_name(s)),
        _ => format!("ended after {took}"),
    }
}

impl ExecActions {
    /// Starts the warden that kills commands if tickscope is killed (call before measuring
    /// when a rule has an exec action). Returns a warning when it cannot run.
    pub fn prepare() -> Option<String> {
        tickscope_engine::child::warden::start()
            .err()
            .map(|e| format!("--on-late exec: {e}"))
    }

    /// Commands running now.
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// Starts `cmd` for action `key` with `env` added, unless a bound says no; the outcome
    /// is written later into `captures[slot.0].actions[slot.1]` by [`ExecActions::poll`].
    /// Returns the status to record now (`running`, or `skipped: …`).
    ///
    /// # Errors
    /// The command cannot be started (`exec: …`).
    pub fn start(
        &mut self,
        key: ActionKey,
        cmd: &str,
        env: &[(&str, String)],
        slot: (usize, usize),
    ) -> Result<String, String> {
        if self.running.iter().any(|r| r.key == key) {
            return Ok("skipped: previous command still running".into());
        }
        if self.running.len() >= MAX_RUNNING {
            return Ok(format!("skipped: {MAX_RUNNING} commands already running"));
        }
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(cmd).stdin(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let child = ManagedChild::spawn(&mut command).map_err(|e| format!("exec: {e}"))?;
        self.running.push(Running {
            key,
            child,
            slot,
            timed_out: false,
        });
        Ok("running".into())
    }

    /// Records the commands that ended, and kills those past [`TIMEOUT`]. Never blocks.
    pub fn poll(&mut self, captures: &mut [CaptureRecord]) {
        let mut i = 0;
        while i < self.running.len() {
            let r = &mut self.running[i];
            if r.child.poll().is_none() && r.child.started().elapsed() >= self.timeout {
                r.timed_out = true;
                r.child.signal(libc::SIGKILL);
            }
            match r.child.poll() {
                Some(e) => {
                    let r = self.running.swap_remove(i);
                    set_status(captures, r.slot, describe(&e, r.timed_out, false));
                }
                None => i += 1,
            }
        }
    }

    /// Ends every command still running — [`END_GRACE`] to finish, then SIGTERM, then
    /// SIGKILL after [`TERM_GRACE`] — and records how each ended. Blocks for at most about
    /// the sum of the two.
    pub fn stop_all(&mut self, captures: &mut [CaptureRecord]) {
        self.poll(captures);
        self.wait(END_GRACE, captures);
        for r in &mut self.running {
            r.child.signal(libc::SIGTERM);
        }
        self.wait(TERM_GRACE, captures);
        for mut r in self.running.drain(..) {
            let e = r.child.stop(Duration::ZERO);
            set_status(captures, r.slot, describe(&e, r.timed_out, true));
        }
    }

    /// Records the commands that end within `grace`; an end seen after a signal from
    /// tickscope reads "stopped at the end of the run".
    fn wait(&mut self, grace: Duration, captures: &mut [CaptureRecord]) {
        let deadline = std::time::Instant::now() + grace;
        while !self.running.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            let mut i = 0;
            while i < self.running.len() {
                match self.running[i].child.poll() {
                    Some(e) => {
                        let r = self.running.swap_remove(i);
                        let at_end = e.signalled && !r.timed_out;
                        set_status(captures, r.slot, describe(&e, r.timed_out, at_end));
                    }
                    None => i += 1,
                }
            }
        }
    }
}

fn set_status(captures: &mut [CaptureRecord], (hit, action): (usize, usize), status: String) {
    if let Some(a) = captures
        .get_mut(hit)
        .and_then(|c| c.actions.get_mut(action))
    {
        a.status = status;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::ActionStatus;
    use std::time::Instant;

    fn hits(n: usize) -> Vec<CaptureRecord> {
        (0..n)
            .map(|i| CaptureRecord {
                index: i as u32 + 1,
                thread: 0,
                seq: i as u64,
                path: String::new(),
                latency_ns: 1,
                cause: String::new(),
                actions: vec![ActionStatus {
                    name: "exec".into(),
                    status: String::new(),
                }],
            })
            .collect()
    }

    fn wait_all(x: &mut ExecActions, caps: &mut [CaptureRecord]) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while x.running() > 0 {
            assert!(Instant::now() < deadline, "commands did not end");
            x.poll(caps);
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn one_command_per_action_and_statuses() {
        let mut x = ExecActions::default();
        let mut caps = hits(4);
        assert_eq!(
            x.start((0, 0), "sleep 0.3", &[], (0, 0)).unwrap(),
            "running"
        );
        assert_eq!(
            x.start((0, 0), "sleep 0.3", &[], (1, 0)).unwrap(),
            "skipped: previous command still running"
        );
        assert_eq!(x.start((1, 0), "exit 3", &[], (2, 0)).unwrap(), "running");
        wait_all(&mut x, &mut caps);
        assert!(
            caps[0].actions[0].status.starts_with("exit 0 in "),
            "{:?}",
            caps[0]
        );
        assert!(
            caps[2].actions[0].status.starts_with("failed: exit 3 in "),
            "{:?}",
            caps[2]
        );
    }

    #[test]
    fn overall_cap_and_end_of_run() {
        let mut x = ExecActions::default();
        let mut caps = hits(MAX_RUNNING + 1);
        for i in 0..MAX_RUNNING {
            let env = [("TICKSCOPE_TEST", i.to_string())];
            assert_eq!(
                x.start((i, 0), "sleep 30", &env, (i, 0)).unwrap(),
                "running"
            );
        }
        assert_eq!(
            x.start((99, 0), "true", &[], (MAX_RUNNING, 0)).unwrap(),
            format!("skipped: {MAX_RUNNING} commands already running")
        );
        x.stop_all(&mut caps);
        assert_eq!(x.running(), 0);
        for c in &caps[..MAX_RUNNING] {
            assert!(
                c.actions[0]
                    .status
                    .starts_with("stopped at the end of the run after "),
                "{c:?}"
            );
        }
    }

    #[test]
    fn a_command_past_the_timeout_is_killed_with_its_group() {
        let mut x = ExecActions {
            timeout: Duration::from_millis(200),
            ..ExecActions::default()
        };
        let mut caps = hits(1);
        x.start((0, 0), "sleep 30 & sleep 30", &[], (0, 0)).unwrap();
        wait_all(&mut x, &mut caps);
        let status = &caps[0].actions[0].status;
        assert!(status.starts_with("failed: killed after "), "{status}");
        assert!(status.ends_with(" (timeout)"), "{status}");
    }

    #[test]
    fn describes_signals_and_timeouts() {
        use std::os::unix::process::ExitStatusExt;
        let e = Ended {
            status: std::process::ExitStatus::from_raw(libc::SIGSEGV),
            after: Duration::from_millis(1200),
            signalled: false,
        };
        assert_eq!(
            describe(&e, false, false),
            "failed: killed by SIGSEGV after 1.20 s"
        );
        assert_eq!(
            describe(&e, true, false),
            "failed: killed after 1.20 s (timeout)"
        );
        assert_eq!(
            describe(&e, false, true),
            "stopped at the end of the run after 1.20 s (SIGSEGV)"
        );
    }
}
