//! `clock_nanosleep` with a relative timeout, aimed at the same absolute grid.
//!
//! The sleep asks for `expiry - last_woke`, computed from the previous wake-up's clock read,
//! so the time spent between that read and the call is part of the measured latency: the
//! inherent cost of relative sleeps (cyclictest's `-r` reads the clock again instead, which
//! costs a second read per wake-up and moves its grid by that amount).

use super::{nanosleep_result, relative_wait, MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, ClockId, Nanos};
use std::io;

/// `nanosleep-rel` in the registry ([`super::registry`]).
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor::sleeping(
    "clock_nanosleep(2)",
    Wakes::hrtimer_sleep(&[libc::SYS_clock_nanosleep]),
    |clock, _| Ok(Box::new(NanosleepRel::new(clock))),
);

/// Sleeps for a relative duration with `clock_nanosleep(clock, 0, …)`.
#[derive(Debug)]
pub struct NanosleepRel {
    clock: libc::clockid_t,
}

impl NanosleepRel {
    /// A method sleeping on `clock`.
    pub fn new(clock: ClockId) -> Self {
        NanosleepRel { clock: clock.raw() }
    }
}

impl WakeMethod for NanosleepRel {
    fn now(&self) -> Nanos {
        read_clock(self.clock)
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos> {
        let clock = self.clock;
        relative_wait(expiry, last_woke, clock, |ts| {
            // SAFETY: `ts` is a valid timespec; the remainder pointer may be null.
            nanosleep_result(unsafe { libc::clock_nanosleep(clock, 0, ts, std::ptr::null_mut()) })
        })
    }

    fn interface(&self) -> &'static str {
        "clock_nanosleep(relative)"
    }
}
