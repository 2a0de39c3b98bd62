//! Wake-up methods: the ways Linux can wake a periodic task.
//!
//! A method is asked to block until an absolute expiry on the run's clock and to return the
//! time it woke, read once from that clock. Everything else — latency, period, overruns — is
//! the worker's business, so a new method is one file behind [`WakeMethod`] with its
//! `DESCRIPTOR` ([`MethodDescriptor`]: kernel call, clock, constructor, limits, process-wide
//! set-up, spin share, trace [`Wakes`]) plus one line in the [`registry`]. What a method cannot do (a clock,
//! several threads) is said before a run starts by [`check`]; methods that spin share
//! [`spin`], periodic kernel timers share `kernel_timer`.

mod busy;
mod descriptor;
mod epoll;
mod futex;
mod hybrid;
mod itimer;
pub(crate) mod kernel_timer;
mod limits;
pub mod margin;
mod method;
mod nanosleep;
mod nanosleep_abs;
mod nanosleep_rel;
mod poll;
mod posix_timer;
pub mod registry;
mod select;
mod signals;
mod sleep_until;
pub mod spin;
mod spin_clock;
mod syscall;
mod throttle;
mod timerfd;

pub use busy::Busy;
pub use descriptor::{sleeps, MethodDescriptor, ProcessGuard, Wakes};
pub use epoll::Epoll;
pub use futex::Futex;
pub use hybrid::Hybrid;
pub use itimer::{reserve_alarm, Itimer};
pub use limits::{check, explain_setup_error};
pub use margin::{Margin, MarginStats};
pub use method::{MethodObservations, MethodOptions, WakeMethod};
pub use nanosleep::Nanosleep;
pub use nanosleep_abs::NanosleepAbs;
pub use nanosleep_rel::NanosleepRel;
pub use poll::Poll;
pub use posix_timer::PosixTimer;
pub use registry::MethodKind;
pub use select::Select;
pub use spin::KernelClock;
pub use spin_clock::SpinClock;
pub(crate) use syscall::{nanosleep_result, not_armed, relative_wait, syscall_result};
pub use throttle::{spin_share, starvation, throttle_warning, Starvation};
pub use timerfd::Timerfd;

use crate::time::ClockId;
use std::io;

/// Builds a method that waits on `clock`. Call it on the measuring thread: the signal-driven
/// methods aim their signal at the calling thread.
///
/// # Errors
/// [`io::ErrorKind::Unsupported`] when the method cannot run on `clock` (see [`check`]); an
/// OS error if the method's kernel objects cannot be created (for example `ENOSYS`, or
/// `EBUSY` for a second `itimer` in the process); [`explain_setup_error`] words it.
pub fn create(
    kind: MethodKind,
    clock: ClockId,
    options: &MethodOptions,
) -> io::Result<Box<dyn WakeMethod>> {
    limits::check_clock(kind, clock)
        .map_err(|msg| io::Error::new(io::ErrorKind::Unsupported, msg))?;
    (kind.descriptor().create)(clock, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for &m in MethodKind::ALL {
            assert_eq!(MethodKind::from_name(m.name()), Some(m));
        }
        assert_eq!(MethodKind::from_name("bogus"), None);
    }

    #[test]
    fn every_method_wakes_after_its_expiry_on_the_real_kernel() {
        for &kind in MethodKind::ALL {
            let mut m = create(kind, ClockId::Monotonic, &MethodOptions::default()).unwrap();
            let start = m.now();
            let period = 200_000;
            m.arm(start + period, period).unwrap();
            let mut last = start;
            for k in 1..=20 {
                let expiry = start + k * period;
                let woke = m.wait(expiry, last).unwrap();
                assert!(woke >= last, "{}: time went backwards", kind.name());
                last = woke;
            }
        }
    }

    #[test]
    fn create_refuses_a_clock_the_method_cannot_use() {
        let o = MethodOptions::default();
        let Err(e) = create(MethodKind::Nanosleep, ClockId::Boottime, &o) else {
            panic!("nanosleep was created on CLOCK_BOOTTIME");
        };
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(explain_setup_error(MethodKind::Nanosleep, &e).contains("CLOCK_BOOTTIME"));
    }
}
