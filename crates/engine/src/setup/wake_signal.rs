//! Interrupting a measuring thread's wait when the run is stopped.
//!
//! A thread blocked in `clock_nanosleep`, `poll`, `read` or `sigwaitinfo` returns `EINTR`
//! when a signal with a handler installed *without* `SA_RESTART` is delivered to it
//! (`signal(7)`, "Interruption of system calls and library functions by signal handlers";
//! `clock_nanosleep` is never restarted). [`WakeSignalGuard`] installs such a no-op handler
//! for [`WAKE_SIGNAL`] and restores the previous action when dropped; [`kick`] sends it to
//! one thread, whose measuring loop then sees its stop flag.

use super::last_os_error;
use std::io;

/// The signal used to interrupt waits: SIGUSR2.
pub(crate) const WAKE_SIGNAL: libc::c_int = libc::SIGUSR2;

extern "C" fn ignore(_: libc::c_int) {}

/// Installs a no-op, non-restarting handler for [`WAKE_SIGNAL`]; restores the previous
/// disposition when dropped.
pub(crate) struct WakeSignalGuard {
    saved: libc::sigaction,
}

impl WakeSignalGuard {
    /// Installs the handler.
    ///
    /// # Errors
    /// The OS error of `sigaction`.
    pub(crate) fn install() -> io::Result<Self> {
        // SAFETY: sigaction structs are plain data; zeroed means no flags and an empty mask.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = ignore as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = 0; // no SA_RESTART: blocked calls return EINTR
                             // SAFETY: as above.
        let mut saved: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are valid sigaction structs; the handler is async-signal-safe.
        if unsafe { libc::sigaction(WAKE_SIGNAL, &action, &mut saved) } != 0 {
            return Err(last_os_error());
        }
        Ok(WakeSignalGuard { saved })
    }
}

impl Drop for WakeSignalGuard {
    fn drop(&mut self) {
        // SAFETY: restores the action saved by `install`.
        unsafe { libc::sigaction(WAKE_SIGNAL, &self.saved, std::ptr::null_mut()) };
    }
}

/// Sends [`WAKE_SIGNAL`] to one thread of this process, cutting its current wait short.
/// A thread that has already exited is ignored (`ESRCH`).
pub(crate) fn kick(thread: libc::pthread_t) {
    // SAFETY: pthread_kill with a live or joinable thread id; errors are ignored.
    unsafe { libc::pthread_kill(thread, WAKE_SIGNAL) };
}
