//! Signal masks for the signal-driven methods (`posix-timer`, `itimer`), per `sigprocmask(2)`,
//! `pthread_sigmask(3)` and `sigtimedwait(2)`.

use std::io;

/// A set holding only `sig`.
pub(crate) fn set_of(sig: libc::c_int) -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the zeroed set; sigaddset adds a valid signal number.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        set
    }
}

/// Blocks `sig` in the calling thread; returns the mask before.
///
/// # Errors
/// The error of `pthread_sigmask` (an invalid signal number).
pub(crate) fn block(sig: libc::c_int) -> io::Result<libc::sigset_t> {
    let set = set_of(sig);
    // SAFETY: both sets are valid; `old` is written by the call.
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        match libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) {
            0 => Ok(old),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
}

/// Restores a mask saved by [`block`] in the calling thread.
pub(crate) fn restore(old: &libc::sigset_t) {
    // SAFETY: `old` is a valid set; the previous mask is not wanted.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
}

/// Takes every pending instance of `sig` (directed at this thread or at the process) without
/// waiting, so that unblocking it afterwards cannot run its default action. `sig` must be
/// blocked in the calling thread.
pub(crate) fn drain(sig: libc::c_int) {
    let set = set_of(sig);
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid set and timeout; the siginfo pointer may be null. Returns -1 (EAGAIN)
    // once nothing is pending.
    while unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) } == sig {}
}

/// The calling thread's mask with `sig` removed (for `sigsuspend(2)`).
pub(crate) fn current_mask_without(sig: libc::c_int) -> libc::sigset_t {
    // SAFETY: a null new set only reads the current mask into `cur`.
    unsafe {
        let mut cur: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut cur);
        libc::sigdelset(&mut cur, sig);
        cur
    }
}
