//! `poll`: sleep through the timeout of `ppoll(2)` with no file descriptors.
//!
//! The finest form of the poll call: `ppoll` takes a `timespec` (ns), where `poll` takes
//! ms. The kernel turns the timeout into an absolute end on CLOCK_MONOTONIC and sleeps on
//! an hrtimer with a slack of its own choosing (`select_estimate_accuracy` in
//! fs/select.c): none for real-time threads, else the larger of the thread's timer slack
//! and 0.1 % of the timeout (0.5 % at a positive nice value). The timeout is relative:
//! `expiry − last_woke`, as for `nanosleep-rel`. The call takes no clock, so the method
//! runs on CLOCK_MONOTONIC only.

use super::{relative_wait, syscall_result, MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, Nanos};
use std::io;

/// `poll` in the registry ([`super::registry`]): CLOCK_MONOTONIC only.
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    fixed_clock: Some(crate::time::ClockId::Monotonic),
    ..MethodDescriptor::sleeping(
        "ppoll(2)",
        Wakes::hrtimer_sleep(&[libc::SYS_ppoll]),
        |_, _| Ok(Box::new(Poll::new())),
    )
};

/// Sleeps through `ppoll`'s timeout.
#[derive(Debug, Default)]
pub struct Poll;

impl Poll {
    /// The method (CLOCK_MONOTONIC).
    pub fn new() -> Self {
        Poll
    }
}

impl WakeMethod for Poll {
    fn now(&self) -> Nanos {
        read_clock(libc::CLOCK_MONOTONIC)
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos> {
        relative_wait(expiry, last_woke, libc::CLOCK_MONOTONIC, |ts| {
            // SAFETY: no descriptors (null, 0); `ts` is valid; a null mask keeps the mask.
            syscall_result(unsafe { libc::ppoll(std::ptr::null_mut(), 0, ts, std::ptr::null()) })
        })
    }

    fn interface(&self) -> &'static str {
        "ppoll(timespec)"
    }
}
