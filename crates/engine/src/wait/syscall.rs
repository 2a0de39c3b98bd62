//! Helpers the methods share for their system calls: results from return values, the
//! relative sleep aimed at an absolute grid, the error of a wait before arming.

use crate::time::{read_clock, to_timespec, Nanos};
use std::io;

/// The error of a wait before [`WakeMethod::arm`](super::WakeMethod::arm) set the method up.
pub(crate) fn not_armed() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "wait before arm")
}

/// A relative wait aimed at an absolute grid: sleeps (with `sleep`) for `expiry − last_woke`
/// — the time from the previous wake-up's clock read, so that everything between that read
/// and the call counts as latency — unless that is not positive, then reads `clock` once.
///
/// # Errors
/// The error of `sleep`.
#[inline]
pub(crate) fn relative_wait(
    expiry: Nanos,
    last_woke: Nanos,
    clock: libc::clockid_t,
    sleep: impl FnOnce(&libc::timespec) -> io::Result<()>,
) -> io::Result<Nanos> {
    let remaining = expiry - last_woke;
    if remaining > 0 {
        sleep(&to_timespec(remaining))?;
    }
    Ok(read_clock(clock))
}

/// Turns a system call's return value (negative on failure, with `errno`) into a result.
#[inline]
pub(crate) fn syscall_result(ret: impl Into<i64>) -> io::Result<()> {
    if ret.into() < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Turns the return value of `clock_nanosleep(2)` (0 or an error number) into a result.
pub(crate) fn nanosleep_result(ret: libc::c_int) -> io::Result<()> {
    match ret {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}
