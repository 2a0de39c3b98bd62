//! `futex`: sleep through the absolute timeout of a futex wait nobody wakes — the wait
//! under `pthread_cond_timedwait(3)` and `sem_clockwait(3)`, how many programs time their
//! loops.
//!
//! `FUTEX_WAIT_BITSET` takes an absolute timeout, on CLOCK_MONOTONIC, or on CLOCK_REALTIME
//! with `FUTEX_CLOCK_REALTIME` (futex(2), The Linux man-pages project,
//! <https://man7.org/linux/man-pages/man2/futex.2.html>); the kernel arms an hrtimer sleeper
//! for it with the thread's timer slack (`futex_setup_timer()`, kernel/futex/core.c), the
//! same timer `clock_nanosleep` arms. glibc's condition variables make this call with the
//! clock of the condition's attributes (`__futex_abstimed_wait_common`,
//! sysdeps/nptl/futex-internal.c). The word waited on is the method's own and never
//! changes, so only the timeout ends the wait.

use super::{MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, to_timespec, ClockId, Nanos};
use std::io;
use std::sync::atomic::AtomicU32;

/// `futex` in the registry ([`super::registry`]): CLOCK_MONOTONIC or CLOCK_REALTIME.
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    limits: futex_clocks,
    ..MethodDescriptor::sleeping(
        "futex(2)",
        Wakes::hrtimer_sleep(&[libc::SYS_futex]),
        |clock, _| Ok(Box::new(Futex::new(clock))),
    )
};

/// futex timeouts run on CLOCK_MONOTONIC or CLOCK_REALTIME only (futex(2)).
fn futex_clocks(clock: ClockId, _: usize, _: Nanos) -> Result<(), String> {
    match clock {
        ClockId::Monotonic | ClockId::Realtime => Ok(()),
        other => Err(format!(
            "--method futex waits on CLOCK_MONOTONIC or CLOCK_REALTIME only (futex(2)), \
             not {}",
            other.name()
        )),
    }
}

/// Sleeps to an absolute expiry with `futex(FUTEX_WAIT_BITSET_PRIVATE, …)` on a word of
/// its own.
#[derive(Debug)]
pub struct Futex {
    clock: libc::clockid_t,
    op: libc::c_int,
    word: AtomicU32,
}

impl Futex {
    /// A method waiting on `clock` (monotonic unless `clock` is CLOCK_REALTIME).
    pub fn new(clock: ClockId) -> Self {
        let realtime = clock == ClockId::Realtime;
        Futex {
            clock: match realtime {
                true => libc::CLOCK_REALTIME,
                false => libc::CLOCK_MONOTONIC,
            },
            op: libc::FUTEX_WAIT_BITSET
                | libc::FUTEX_PRIVATE_FLAG
                | if realtime {
                    libc::FUTEX_CLOCK_REALTIME
                } else {
                    0
                },
            word: AtomicU32::new(0),
        }
    }
}

impl WakeMethod for Futex {
    fn now(&self) -> Nanos {
        read_clock(self.clock)
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, _last_woke: Nanos) -> io::Result<Nanos> {
        let ts = to_timespec(expiry);
        loop {
            // SAFETY: `word` is a valid, aligned u32 for the whole call; `ts` is a valid
            // timespec; the second address is unused by FUTEX_WAIT_BITSET; the mask matches
            // any waker (FUTEX_BITSET_MATCH_ANY).
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.word.as_ptr(),
                    self.op,
                    0u32,
                    &ts as *const libc::timespec,
                    std::ptr::null::<u32>(),
                    u32::MAX,
                )
            };
            if ret == 0 {
                // Woken without a waker (the word is this method's own): wait on.
                continue;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ETIMEDOUT) => return Ok(read_clock(self.clock)),
                Some(libc::EAGAIN) => continue,
                _ => return Err(e),
            }
        }
    }

    fn interface(&self) -> &'static str {
        "futex(FUTEX_WAIT_BITSET)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_ends_the_wait_never_before_the_expiry() {
        let mut f = Futex::new(ClockId::Monotonic);
        let past = f.now() - 1_000;
        assert!(f.wait(past, 0).unwrap() >= past);
        let target = f.now() + 200_000;
        // Structure, not timing: an absolute futex timeout never ends early.
        assert!(f.wait(target, 0).unwrap() >= target);
        let mut f = Futex::new(ClockId::Realtime);
        let past = f.now() - 1_000;
        assert!(f.wait(past, 0).is_ok());
        assert!(futex_clocks(ClockId::Boottime, 1, 1_000_000).is_err());
        assert!(futex_clocks(ClockId::Realtime, 1, 1_000_000).is_ok());
    }
}
