//! Child processes tickscope starts — the `--load` command and `--on-late … exec=`
//! commands — managed so that none outlives tickscope.
//!
//! A [`ManagedChild`] is the leader of a process group of its own (`setpgid(0, 0)` at
//! spawn, see setpgid(2)), so everything it forks — the command a shell runs, the workers of
//! stress-ng — is signalled as a whole (`killpg`). Its end is seen without a thread per
//! child: the owner calls [`ManagedChild::poll`] from a loop it already has. When the leader
//! has exited, whatever is left of its group is killed before the leader is reaped, so the
//! group id cannot have been reused when it is signalled. The group is killed
//!
//! * when the owner stops it ([`ManagedChild::stop`]: SIGTERM, SIGKILL after a grace) or
//!   drops it (SIGKILL),
//! * on an immediate exit that runs no destructors ([`kill_all_now`], called by the second
//!   Ctrl-C), and
//! * when tickscope dies without either (SIGKILL, a crash), by the [`warden`].
//!
//! At most 64 managed children (`MAX_LIVE`) run at once. What cannot be caught: a process that
//! leaves its group (`setsid`, `setpgid`, a daemon's double fork) is neither stopped nor
//! killed; only a cgroup could follow it.

pub mod warden;

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStderr, Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most this many managed children run at once (per process).
pub(crate) const MAX_LIVE: usize = 64;

/// Process groups of running managed children, for [`kill_all_now`].
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends SIGKILL to every managed child's process group, for an exit that does not unwind
/// (the second Ctrl-C). Safe to call at any time, from any thread.
pub fn kill_all_now() {
    for &g in live().iter() {
        // SAFETY: killpg with a group id we created and have not reaped; no memory involved.
        unsafe { libc::killpg(g, libc::SIGKILL) };
    }
}

/// How a managed child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// The leader's wait status.
    pub status: ExitStatus,
    /// From the spawn to the moment its end was seen.
    pub after: Duration,
    /// Whether tickscope signalled the group ([`ManagedChild::signal`],
    /// [`ManagedChild::stop`], drop) before it ended.
    pub signalled: bool,
}

impl Ended {
    /// The exit status, when the leader exited (0–255).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The signal that ended the leader, if one did.
    pub fn signal(&self) -> Option<i32> {
        self.status.signal()
    }
}

/// A running child in a process group of its own; dropping it kills and reaps the group.
#[derive(Debug)]
pub struct ManagedChild {
    child: Child,
    pgid: i32,
    started: Instant,
    signalled: bool,
    ended: Option<Ended>,
}

impl ManagedChild {
    /// Starts `cmd` as the leader of a new process group and registers the group with the
    /// warden. `cmd` keeps its standard streams, environment and `pre_exec` hooks; without
    /// hooks the standard library spawns with `posix_spawn` (no copy of this process's memory).
    ///
    /// # Errors
    /// More than 64 children (`MAX_LIVE`) would run, or the OS error of the spawn. A warden
    /// that cannot run is no error here (see [`warden::start`] to report it).
    pub fn spawn(cmd: &mut Command) -> io::Result<ManagedChild> {
        let mut groups = live();
        if groups.len() >= MAX_LIVE {
            return Err(io::Error::other(format!(
                "{MAX_LIVE} commands started by tickscope are already running"
            )));
        }
        let child = cmd.process_group(0).spawn()?;
        let pgid = child.id() as i32;
        groups.push(pgid);
        drop(groups);
        let _ = warden::guard(pgid);
        Ok(ManagedChild {
            child,
            pgid,
            started: Instant::now(),
            signalled: false,
            ended: None,
        })
    }

    /// The leader's process id, which is also the group id.
    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// When it was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The leader's standard error, if it was piped and not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Sends `sig` to the whole group (nothing once it has ended).
    pub fn signal(&mut self, sig: i32) {
        if self.ended.is_some() {
            return;
        }
        self.signalled = true;
        // SAFETY: the leader is not reaped yet (ended is None), so the group id is ours.
        unsafe { libc::killpg(self.pgid, sig) };
    }

    /// How it ended, if it has: the leader has exited (the rest of its group is then killed
    /// and the leader reaped). Never blocks.
    pub fn poll(&mut self) -> Option<Ended> {
        if self.ended.is_none() && exited_unreaped(self.pgid) {
            self.reap();
        }
        self.ended
    }

    /// Stops the group: SIGTERM, then SIGKILL to what is left after `grace` (at once for a
    /// zero grace), and reaps the leader. Returns how it ended (also when it had already).
    pub fn stop(&mut self, grace: Duration) -> Ended {
        if let Some(e) = self.poll() {
            return e;
        }
        if !grace.is_zero() {
            self.signal(libc::SIGTERM);
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline && !exited_unreaped(self.pgid) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.signalled = true;
        self.reap()
    }

    /// Kills what is left of the group, reaps the leader (waiting for it) and forgets the
    /// group.
    fn reap(&mut self) -> Ended {
        if let Some(e) = self.ended {
            return e;
        }
        // SAFETY: the leader is unreaped, so the group id is still ours.
        unsafe { libc::killpg(self.pgid, libc::SIGKILL) };
        live().retain(|&g| g != self.pgid);
        let _ = warden::release(self.pgid);
        let status = match self.child.wait() {
            Ok(s) => s,
            // Only when someone else reaped it: say "killed" rather than invent a code.
            Err(_) => ExitStatus::from_raw(libc::SIGKILL),
        };
        let e = Ended {
            status,
            after: self.started.elapsed(),
            signalled: self.signalled,
        };
        self.ended = Some(e);
        e
    }
}

impl Drop for ManagedChild {
    fn drop(&mut self) {
        if self.ended.is_none() {
            self.signalled = true;
            self.reap();
        }
    }
}

/// True when `pid` has exited; leaves it unreaped (`waitid` with `WNOWAIT`, waitid(2)), so
/// its process group id stays reserved.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Processes of group `pgid` that are not zombies (killed orphans wait for init, which
    /// reaps them only every few seconds on some machines).
    fn running_in_group(pgid: i32) -> usize {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return 0;
        };
        dir.flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .filter(|stat| {
                // pid (comm) state ppid pgrp …; comm may hold spaces, so split after ')'.
                let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
                let f: Vec<&str> = rest.split_whitespace().collect();
                f.len() > 2 && f[0] != "Z" && f[2] == pgid.to_string()
            })
            .count()
    }

    /// Whether the group has no running process within 5 s (generous for a loaded CI VM).
    fn group_gone(pgid: i32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while running_in_group(pgid) > 0 {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn stop_kills_the_whole_group() {
        let mut c = ManagedChild::spawn(&mut sh("sleep 30 & sleep 30 & wait")).unwrap();
        let g = c.pid();
        std::thread::sleep(Duration::from_millis(100));
        assert!(c.poll().is_none());
        let e = c.stop(Duration::from_millis(500));
        assert!(e.signalled);
        assert_eq!(e.code(), None, "{e:?}");
        assert!(group_gone(g));
        assert!(!live().contains(&g));
    }

    #[test]
    fn exit_status_is_kept_and_stragglers_are_killed() {
        let mut c = ManagedChild::spawn(&mut sh("sleep 30 & exit 3")).unwrap();
        let g = c.pid();
        let deadline = Instant::now() + Duration::from_secs(10);
        let e = loop {
            if let Some(e) = c.poll() {
                break e;
            }
            assert!(Instant::now() < deadline, "sh did not exit");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!((e.code(), e.signalled), (Some(3), false));
        assert!(group_gone(g), "the backgrounded sleep survived");
    }

    #[test]
    fn drop_kills() {
        let c = ManagedChild::spawn(&mut sh("sleep 30")).unwrap();
        let g = c.pid();
        drop(c);
        assert!(group_gone(g));
    }
}
