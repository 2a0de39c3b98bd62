//! `select`: sleep through the timeout of `pselect(2)` with empty descriptor sets.
//!
//! The finest form of the select call: `pselect` takes a `timespec` (ns), where `select`
//! takes a `timeval` (µs). Timeout handling and slack are those of `poll` (fs/select.c);
//! the timeout is relative, `expiry − last_woke`, and the method runs on CLOCK_MONOTONIC
//! only.

use super::{relative_wait, syscall_result, MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, Nanos};
use std::io;

/// `select` in the registry ([`super::registry`]): CLOCK_MONOTONIC only.
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    fixed_clock: Some(crate::time::ClockId::Monotonic),
    ..MethodDescriptor::sleeping(
        "pselect(2)",
        Wakes::hrtimer_sleep(&[libc::SYS_pselect6]),
        |_, _| Ok(Box::new(Select::new())),
    )
};

/// Sleeps through `pselect`'s timeout.
#[derive(Debug, Default)]
pub struct Select;

impl Select {
    /// The method (CLOCK_MONOTONIC).
    pub fn new() -> Self {
        Select
    }
}

impl WakeMethod for Select {
    fn now(&self) -> Nanos {
        read_clock(libc::CLOCK_MONOTONIC)
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos> {
        relative_wait(expiry, last_woke, libc::CLOCK_MONOTONIC, |ts| {
            let null = std::ptr::null_mut();
            // SAFETY: no descriptors (0 and null sets); `ts` is valid; a null mask keeps
            // the mask.
            syscall_result(unsafe { libc::pselect(0, null, null, null, ts, std::ptr::null()) })
        })
    }

    fn interface(&self) -> &'static str {
        "pselect(timespec)"
    }
}
