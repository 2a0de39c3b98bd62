//! The absolute sleep every sleeping method ends in: `clock_nanosleep(clock, TIMER_ABSTIME,
//! expiry)`, entered as a direct system call.
//!
//! glibc's `clock_nanosleep` is a POSIX cancellation point: it brackets the system call with
//! `__pthread_enable_asynccancel` / `__pthread_disable_asynccancel` so that
//! `pthread_cancel(3)` can end the thread while it sleeps (POSIX.1-2017, "Thread
//! Cancellation", 2.9.5; glibc `sysdeps/unix/sysv/linux/clock_nanosleep.c`). tickscope never
//! cancels a measuring thread — it stops through a flag — so that bracket is pure overhead:
//! 31 of the 59 user-space instructions glibc spends per sleep on the project's machine
//! (callgrind, `bench/lightness.sh`), about a sixth of the measuring thread's work per
//! wake-up. `syscall(2)` enters the same system call with the same arguments without it.
//! The kernel side (an hrtimer armed for the expiry, `kernel/time/hrtimer.c`) is identical.
//! What changes is that the sleep is no longer a cancellation point, for the periodic library
//! too, whose documentation says so: a thread cancelled there would have to unwind through
//! Rust frames, which Rust does not allow anyway ("The Rust Reference", *Unwinding*,
//! <https://doc.rust-lang.org/reference/panic.html#unwinding-across-ffi-boundaries>).
//!
//! Only on 64-bit Linux, where `struct timespec` is the kernel's `__kernel_timespec` and
//! `SYS_clock_nanosleep` takes it; elsewhere glibc's wrapper picks the right system call
//! (`clock_nanosleep_time64` on 32-bit targets) and is used as before.

use std::io;

/// Sleeps until `expiry` on `clock` (`clock_nanosleep(2)` with `TIMER_ABSTIME`); returns at
/// once when `expiry` has passed. Makes exactly one system call; allocates nothing.
///
/// # Errors
/// [`io::ErrorKind::Interrupted`] (`EINTR`) when a signal handler cut the sleep short;
/// `EINVAL` for a clock the kernel cannot sleep on (such as `CLOCK_THREAD_CPUTIME_ID`) or a
/// `tv_nsec` outside 0..10⁹; `ENOTSUP` where the kernel does not support sleeping on the
/// clock (`clock_nanosleep(2)`).
#[inline(always)]
pub(crate) fn sleep_until(clock: libc::clockid_t, expiry: &libc::timespec) -> io::Result<()> {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        // SAFETY: `expiry` is a valid timespec with the kernel's layout on 64-bit Linux;
        // the remainder pointer may be null with TIMER_ABSTIME.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_clock_nanosleep,
                clock as libc::c_long,
                libc::TIMER_ABSTIME as libc::c_long,
                expiry as *const libc::timespec,
                std::ptr::null_mut::<libc::timespec>(),
            )
        };
        if ret == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    {
        // SAFETY: `expiry` is a valid timespec; the remainder pointer may be null.
        let ret = unsafe {
            libc::clock_nanosleep(clock, libc::TIMER_ABSTIME, expiry, std::ptr::null_mut())
        };
        super::nanosleep_result(ret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{read_clock, to_timespec};

    #[test]
    fn a_past_expiry_returns_at_once_and_a_future_one_is_reached() {
        let clock = libc::CLOCK_MONOTONIC;
        sleep_until(clock, &to_timespec(0)).unwrap();
        let target = read_clock(clock) + 200_000;
        sleep_until(clock, &to_timespec(target)).unwrap();
        // Structure, not timing: the kernel never wakes an absolute sleep early.
        assert!(read_clock(clock) >= target);
    }

    #[test]
    fn errors_come_back_as_os_errors() {
        let bad = libc::timespec {
            tv_sec: 0,
            tv_nsec: 2_000_000_000,
        };
        let e = sleep_until(libc::CLOCK_MONOTONIC, &bad).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }
}
