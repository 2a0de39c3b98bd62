//! The calling thread's timer slack (`prctl(PR_SET_TIMERSLACK)`).
//!
//! The kernel may delay a normal thread's timer by up to its slack (default 50 µs) to batch
//! wake-ups; threads with a real-time policy get no slack (`prctl(2)`). A value of 0 would
//! reset the slack to the default, so the finest slack that can be asked for is 1 ns.

use super::last_os_error;
use std::io;

/// The calling thread's timer slack in ns (`PR_GET_TIMERSLACK`).
pub fn current_timer_slack() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
    unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) as u64 }
}

/// Sets the calling thread's timer slack; restores the previous value when dropped.
/// Must be dropped on the thread that created it.
#[derive(Debug)]
pub struct TimerSlackGuard {
    saved: u64,
}

impl TimerSlackGuard {
    /// Sets the slack to `ns` (≥ 1; 0 is taken as 1, since 0 means "default" to the kernel).
    ///
    /// # Errors
    /// The OS error of `prctl`.
    pub fn set(ns: u64) -> io::Result<Self> {
        let saved = current_timer_slack();
        // SAFETY: PR_SET_TIMERSLACK takes the value as an unsigned long.
        if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns.max(1) as libc::c_ulong, 0, 0, 0) } != 0
        {
            return Err(last_os_error());
        }
        Ok(TimerSlackGuard { saved })
    }
}

impl Drop for TimerSlackGuard {
    fn drop(&mut self) {
        // SAFETY: as in `set`.
        unsafe {
            libc::prctl(
                libc::PR_SET_TIMERSLACK,
                self.saved as libc::c_ulong,
                0,
                0,
                0,
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_restore() {
        let before = current_timer_slack();
        {
            let _g = TimerSlackGuard::set(1).unwrap();
            assert_eq!(current_timer_slack(), 1);
        }
        assert_eq!(current_timer_slack(), before);
    }
}
