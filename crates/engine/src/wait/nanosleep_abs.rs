//! `clock_nanosleep(TIMER_ABSTIME)`: sleep until an absolute expiry.
//!
//! The kernel arms an hrtimer for exactly the expiry, so nothing between two wake-ups shifts
//! the grid (`clock_nanosleep(2)`; Gleixner & Niehaus, "hrtimers and beyond", OLS 2006).
//! The call is made without glibc's cancellation bracket ([`super::sleep_until`]).

use super::sleep_until::sleep_until;
use super::{MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, to_timespec, ClockId, Nanos};
use std::io;

/// `nanosleep-abs` in the registry ([`super::registry`]).
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor::sleeping(
    "clock_nanosleep(2)",
    Wakes::hrtimer_sleep(&[libc::SYS_clock_nanosleep]),
    |clock, _| Ok(Box::new(NanosleepAbs::new(clock))),
);

/// Sleeps to an absolute expiry with `clock_nanosleep(clock, TIMER_ABSTIME, …)`.
#[derive(Debug)]
pub struct NanosleepAbs {
    clock: libc::clockid_t,
}

impl NanosleepAbs {
    /// A method sleeping on `clock`.
    pub fn new(clock: ClockId) -> Self {
        NanosleepAbs { clock: clock.raw() }
    }
}

impl WakeMethod for NanosleepAbs {
    fn now(&self) -> Nanos {
        read_clock(self.clock)
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos> {
        self.wait_at(expiry, &to_timespec(expiry), last_woke)
    }

    #[inline]
    fn wait_at(
        &mut self,
        _expiry: Nanos,
        expiry_ts: &libc::timespec,
        _last_woke: Nanos,
    ) -> io::Result<Nanos> {
        sleep_until(self.clock, expiry_ts)?;
        Ok(read_clock(self.clock))
    }

    fn interface(&self) -> &'static str {
        "clock_nanosleep(TIMER_ABSTIME)"
    }
}
