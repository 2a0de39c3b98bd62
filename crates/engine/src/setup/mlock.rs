//! Locking the process's memory (`mlockall(2)`), so the measuring loop never takes a page fault.

use super::last_os_error;
use std::io;

/// Holds `mlockall(MCL_CURRENT | MCL_FUTURE)`; `munlockall` when dropped.
#[derive(Debug)]
pub struct MlockGuard(());

impl MlockGuard {
    /// Locks all current and future mappings of the process into RAM.
    ///
    /// # Errors
    /// `EPERM` without CAP_IPC_LOCK, `ENOMEM` when the mappings exceed `RLIMIT_MEMLOCK`
    /// (`ulimit -l`).
    pub fn lock() -> io::Result<Self> {
        // SAFETY: mlockall takes flags only.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            return Err(last_os_error());
        }
        Ok(MlockGuard(()))
    }
}

impl Drop for MlockGuard {
    fn drop(&mut self) {
        // SAFETY: munlockall takes no arguments.
        unsafe { libc::munlockall() };
    }
}
