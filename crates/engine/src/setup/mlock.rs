//! Locking the process's memory (`mlockall(2)`), so the measuring loop never takes a page fault.

use super::last_os_error;
use std::io;

/// Holds `mlockall`; `munlockall` when dropped.
///
/// With `MCL_FUTURE`, every later mapping is locked too and counts against
/// `RLIMIT_MEMLOCK`; under a finite limit a later allocation would then fail and abort the
/// program (`mlockall(2)`, `setrlimit(2)`). So [`MlockGuard::lock`] asks for `MCL_FUTURE`
/// only when no limit applies (CAP_IPC_LOCK or an unlimited `ulimit -l`); otherwise it locks
/// the current mappings only, which is enough when it is called after everything the
/// measuring loop touches has been allocated.
#[derive(Debug)]
pub struct MlockGuard {
    future: bool,
}

impl MlockGuard {
    /// Locks the process's current mappings into RAM, and its future ones where no
    /// `RLIMIT_MEMLOCK` applies. Call it after the measuring threads are set up.
    ///
    /// # Errors
    /// `EPERM` without CAP_IPC_LOCK and with a zero limit, `ENOMEM` when the mappings exceed
    /// `RLIMIT_MEMLOCK` (`ulimit -l`).
    pub fn lock() -> io::Result<Self> {
        let future = super::privileges::memlock_unlimited();
        let flags = if future {
            libc::MCL_CURRENT | libc::MCL_FUTURE
        } else {
            libc::MCL_CURRENT
        };
        // SAFETY: mlockall takes flags only.
        if unsafe { libc::mlockall(flags) } != 0 {
            return Err(last_os_error());
        }
        Ok(MlockGuard { future })
    }

    /// Like [`MlockGuard::lock`], but with `MCL_ONFAULT` (Linux ≥ 4.4, `mlockall(2)`): pages
    /// are locked as they are touched instead of all being made resident at once, so the
    /// process's RSS is what it uses rather than its whole binary and libraries. Whatever
    /// the measuring loop touches must then be touched before it starts (its stack, its
    /// window records, the sample ring: the engine pre-faults them), so that it takes no
    /// page fault. A kernel without `MCL_ONFAULT` refuses it with `EINVAL`; then everything
    /// is locked as [`MlockGuard::lock`] does.
    ///
    /// # Errors
    /// As [`MlockGuard::lock`].
    pub(crate) fn lock_touched() -> io::Result<Self> {
        let future = super::privileges::memlock_unlimited();
        let flags = if future {
            libc::MCL_CURRENT | libc::MCL_FUTURE
        } else {
            libc::MCL_CURRENT
        };
        // SAFETY: mlockall takes flags only.
        if unsafe { libc::mlockall(flags | libc::MCL_ONFAULT) } == 0 {
            return Ok(MlockGuard { future });
        }
        let err = last_os_error();
        if err.raw_os_error() != Some(libc::EINVAL) {
            return Err(err);
        }
        Self::lock()
    }

    /// Whether later mappings are locked too (`MCL_FUTURE`).
    pub(crate) fn locks_future(&self) -> bool {
        self.future
    }
}

impl Drop for MlockGuard {
    fn drop(&mut self) {
        // SAFETY: munlockall takes no arguments.
        unsafe { libc::munlockall() };
    }
}
