//! The warden: a small process that kills every managed child's process group when
//! tickscope dies, however it dies — SIGKILL and a crash included.
//!
//! `PR_SET_PDEATHSIG` (prctl(2)) reaches only the one process it is set on, so a shell that
//! forks its command (dash does, for all but the simplest command lines) leaves that command
//! running when tickscope is killed. The warden closes that gap without a cgroup: it is
//! `/bin/sh` running [`SCRIPT`] in a process group of its own (terminal signals such as
//! Ctrl-C do not reach it, and it ignores SIGHUP, SIGINT, SIGQUIT and SIGTERM), reading
//! `+PGID` and `-PGID` lines from a pipe whose only writer is tickscope. When tickscope ends,
//! the kernel closes that pipe, `read` sees end-of-file, and the warden sends SIGKILL to each
//! group still listed, then exits. It is started with `posix_spawn` (no copy of tickscope's
//! memory is shared with a long-lived process, so the measuring threads take no
//! copy-on-write faults), at most once per process, before measuring when the caller asks
//! ([`start`]).
//!
//! What it cannot catch: a process that leaves the group (`setsid`, `setpgid`, a daemon's
//! double fork), and a command started in the microseconds between its spawn and the line
//! that registers it, if tickscope is killed exactly then.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// The warden's shell program: keeps the list of guarded process groups and kills those
/// still listed when its standard input reaches end-of-file.
pub const SCRIPT: &str = "trap '' HUP INT QUIT TERM
groups=
while read -r line; do
  case $line in
    +*) groups=\"$groups ${line#+}\" ;;
    -*) keep=; for g in $groups; do [ \"$g\" = \"${line#-}\" ] || keep=\"$keep $g\"; done; groups=$keep ;;
  esac
done
for g in $groups; do kill -KILL \"-$g\" 2>/dev/null; done
";

enum State {
    NotStarted,
    Running { _child: Child, input: ChildStdin },
    Failed(String),
}

static WARDEN: Mutex<State> = Mutex::new(State::NotStarted);

fn lock() -> std::sync::MutexGuard<'static, State> {
    WARDEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the warden if it is not running yet. Call before measuring, so that the spawn
/// does not happen while wake-ups are measured.
///
/// # Errors
/// Why the warden cannot run (no `/bin/sh`, or the spawn failed), as one sentence; the
/// same error is returned by every later call.
pub fn start() -> Result<(), String> {
    let mut state = lock();
    ensure(&mut state)
}

fn ensure(state: &mut State) -> Result<(), String> {
    match state {
        State::Running { .. } => return Ok(()),
        State::Failed(e) => return Err(e.clone()),
        State::NotStarted => {}
    }
    let spawned = Command::new("/bin/sh")
        .arg("-c")
        .arg(SCRIPT)
        .arg("tickscope-warden")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        .process_group(0)
        .spawn();
    match spawned {
        Ok(mut child) => match child.stdin.take() {
            Some(input) => {
                *state = State::Running {
                    _child: child,
                    input,
                };
                Ok(())
            }
            None => {
                *state = State::Failed("the warden has no input pipe".into());
                Err("the warden has no input pipe".into())
            }
        },
        Err(e) => {
            let e = format!(
                "cannot start the warden (/bin/sh) that stops commands if tickscope is killed: {e}"
            );
            *state = State::Failed(e.clone());
            Err(e)
        }
    }
}

fn send(line: String) -> Result<(), String> {
    let mut state = lock();
    ensure(&mut state)?;
    if let State::Running { input, .. } = &mut *state {
        // One line is far below PIPE_BUF, so the write is atomic (pipe(7)).
        input
            .write_all(line.as_bytes())
            .map_err(|e| format!("the warden stopped listening: {e}"))?;
    }
    Ok(())
}

/// Asks the warden to kill process group `pgid` if tickscope dies.
///
/// # Errors
/// The warden cannot be started or no longer reads its pipe.
pub fn guard(pgid: i32) -> Result<(), String> {
    send(format!("+{pgid}\n"))
}

/// Tells the warden that group `pgid` is ended (call before its leader is reaped, so that
/// the group id cannot have been reused by then).
///
/// # Errors
/// As [`guard`].
pub fn release(pgid: i32) -> Result<(), String> {
    send(format!("-{pgid}\n"))
}
