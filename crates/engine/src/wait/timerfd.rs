//! `timerfd`: a periodic timer file descriptor, read for its expiration count.
//!
//! `timerfd_create(2)` on the run's clock, armed once with `timerfd_settime(TFD_TIMER_ABSTIME)`
//! for the first expiry and the period; each wait is a blocking `read(2)` of the 8-byte
//! count of expirations since the last read, the way event loops wait on timers. How the
//! count and the kernel's own re-arming fit the engine's skip / catch-up rule:
//! [`super::periodic`]. `timerfd_create` accepts CLOCK_MONOTONIC, CLOCK_REALTIME and
//! CLOCK_BOOTTIME (and their alarm variants), not CLOCK_TAI.

use super::kernel_timer::{periodic_spec, wait_for, Fire, Fired};
use super::{MethodDescriptor, MethodObservations, WakeMethod, Wakes};
use crate::time::{read_clock, ClockId, Nanos};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `timerfd` in the registry ([`super::registry`]): any clock but CLOCK_TAI.
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    limits: |clock, _, _| {
        if clock == ClockId::Tai {
            return Err(
                "method timerfd: timerfd_create(2) does not accept CLOCK_TAI; measure \
                 CLOCK_MONOTONIC, CLOCK_REALTIME or CLOCK_BOOTTIME"
                    .into(),
            );
        }
        Ok(())
    },
    ..MethodDescriptor::sleeping(
        "timerfd_create(2)",
        Wakes {
            syscalls: &[libc::SYS_read],
            callbacks: &["timerfd_tmrproc"],
            expiry_at_fire: false,
            timer_before_expiry: false,
        },
        |clock, _| Ok(Box::new(Timerfd::new(clock)?)),
    )
};

/// Waits by reading a periodic `timerfd`.
#[derive(Debug)]
pub struct Timerfd {
    fd: OwnedFd,
    clock: libc::clockid_t,
    fired: Option<Fired>,
}

impl Timerfd {
    /// Creates the timer on `clock` (not armed yet).
    ///
    /// # Errors
    /// The error of `timerfd_create`: `EINVAL` for a clock it does not take (CLOCK_TAI),
    /// `ENOSYS` on a kernel without timerfd, `EMFILE` without a free descriptor.
    pub fn new(clock: ClockId) -> io::Result<Self> {
        // SAFETY: plain system call with a clock id and flags.
        let fd = unsafe { libc::timerfd_create(clock.raw(), libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Timerfd {
            // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            clock: clock.raw(),
            fired: None,
        })
    }
}

/// One blocking read of `fd`: the wake time (read on `clock` right after it) and the number
/// of expirations the read reports.
#[inline]
fn read_count(fd: &OwnedFd, clock: libc::clockid_t) -> io::Result<Fire> {
    let mut count: u64 = 0;
    // SAFETY: reads at most 8 bytes into `count`, which is 8 bytes long.
    let n = unsafe {
        libc::read(
            fd.as_raw_fd(),
            (&mut count as *mut u64).cast(),
            std::mem::size_of::<u64>(),
        )
    };
    let woke = read_clock(clock);
    if n != std::mem::size_of::<u64>() as isize {
        return Err(if n < 0 {
            io::Error::last_os_error()
        } else {
            io::Error::new(io::ErrorKind::UnexpectedEof, "short read from a timerfd")
        });
    }
    Ok(Fire {
        woke,
        count: Some(count),
    })
}

impl WakeMethod for Timerfd {
    fn now(&self) -> Nanos {
        read_clock(self.clock)
    }

    fn arm(&mut self, first_expiry: Nanos, period: Nanos) -> io::Result<()> {
        let spec = periodic_spec(first_expiry, period);
        // SAFETY: `spec` is valid; the old value is not wanted.
        let r = unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        self.fired = Some(Fired::new(first_expiry, period));
        Ok(())
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, _last_woke: Nanos) -> io::Result<Nanos> {
        let Some(fired) = self.fired.as_mut() else {
            return Err(super::not_armed());
        };
        let (fd, clock) = (&self.fd, self.clock);
        wait_for(fired, clock, expiry, || read_count(fd, clock))
    }

    fn interface(&self) -> &'static str {
        "timerfd_settime(TFD_TIMER_ABSTIME, periodic) + read"
    }

    fn observations(&self) -> MethodObservations {
        MethodObservations {
            timer_overruns: self.fired.as_ref().map(Fired::overruns),
            ..MethodObservations::default()
        }
    }
}
