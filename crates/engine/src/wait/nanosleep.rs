//! `nanosleep`: the plain `nanosleep(2)` call, relative, on CLOCK_MONOTONIC.
//!
//! POSIX says `nanosleep` measures against CLOCK_REALTIME; Linux measures against
//! CLOCK_MONOTONIC (`nanosleep(2)`, NOTES), and the call takes no clock argument, so this
//! method runs on CLOCK_MONOTONIC only ([`super::check`] refuses other clocks). Like
//! `nanosleep-rel`, each sleep asks for `expiry − last_woke` from the previous wake-up's
//! clock read.

use super::{relative_wait, syscall_result, MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, Nanos};
use std::io;

/// `nanosleep` in the registry ([`super::registry`]): CLOCK_MONOTONIC only.
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    fixed_clock: Some(crate::time::ClockId::Monotonic),
    ..MethodDescriptor::sleeping(
        "nanosleep(2)",
        Wakes::hrtimer_sleep(&[libc::SYS_nanosleep, libc::SYS_clock_nanosleep]),
        |_, _| Ok(Box::new(Nanosleep::new())),
    )
};

/// Sleeps for a relative duration with `nanosleep`.
#[derive(Debug, Default)]
pub struct Nanosleep;

impl Nanosleep {
    /// The method (CLOCK_MONOTONIC).
    pub fn new() -> Self {
        Nanosleep
    }
}

impl WakeMethod for Nanosleep {
    fn now(&self) -> Nanos {
        read_clock(libc::CLOCK_MONOTONIC)
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos> {
        relative_wait(expiry, last_woke, libc::CLOCK_MONOTONIC, |ts| {
            // SAFETY: `ts` is a valid timespec; the remainder pointer may be null.
            syscall_result(unsafe { libc::nanosleep(ts, std::ptr::null_mut()) })
        })
    }

    fn interface(&self) -> &'static str {
        "nanosleep(relative, CLOCK_MONOTONIC)"
    }
}
