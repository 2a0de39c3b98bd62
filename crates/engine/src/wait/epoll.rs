//! `epoll`: sleep through the timeout of an `epoll` wait on an empty interest list.
//!
//! The finest form the kernel offers: `epoll_pwait2(2)` takes a `timespec` (Linux ≥ 5.11);
//! older kernels answer `ENOSYS` and the method falls back to `epoll_wait(2)`, whose
//! timeout is whole ms, rounded up here so that it never wakes before the expiry (it can
//! wake up to 1 ms after it: the method's granularity). Which form ran is in the result
//! ([`WakeMethod::interface`], [`WakeMethod::granularity_ns`]). The timeout is relative,
//! `expiry − last_woke`, with the slack rules of `poll`; the method runs on
//! CLOCK_MONOTONIC only.

use super::{relative_wait, syscall_result, MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, Nanos, NS_PER_MS};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `epoll` in the registry ([`super::registry`]): CLOCK_MONOTONIC only.
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    fixed_clock: Some(crate::time::ClockId::Monotonic),
    ..MethodDescriptor::sleeping(
        "epoll_wait(2)",
        Wakes::hrtimer_sleep(&[
            libc::SYS_epoll_pwait2,
            libc::SYS_epoll_wait,
            libc::SYS_epoll_pwait,
        ]),
        |_, _| Ok(Box::new(Epoll::new()?)),
    )
};

/// Which epoll call waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EpollForm {
    /// `epoll_pwait2`, timeout in ns.
    Pwait2,
    /// `epoll_wait`, timeout in whole ms.
    Wait,
}

impl EpollForm {
    /// Picks the form from a probe of `epoll_pwait2`: `ENOSYS` means the kernel lacks it.
    ///
    /// # Errors
    /// Any other error of the probe.
    pub(crate) fn from_probe(probe: io::Result<()>) -> io::Result<EpollForm> {
        match probe {
            Ok(()) => Ok(EpollForm::Pwait2),
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => Ok(EpollForm::Wait),
            Err(e) => Err(e),
        }
    }
}

/// Sleeps through an epoll wait's timeout.
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
    form: EpollForm,
    event: libc::epoll_event,
}

impl Epoll {
    /// Creates the epoll instance and picks the finest form this kernel offers.
    ///
    /// # Errors
    /// The error of `epoll_create1`, or of the `epoll_pwait2` probe other than `ENOSYS`.
    pub fn new() -> io::Result<Self> {
        let mut e = Epoll::with_form(EpollForm::Pwait2)?;
        e.form = EpollForm::from_probe(e.pwait2(&libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        }))?;
        Ok(e)
    }

    /// Creates the epoll instance with a given form (to measure `epoll_wait` on a kernel
    /// that has `epoll_pwait2`).
    ///
    /// # Errors
    /// The error of `epoll_create1`.
    pub(crate) fn with_form(form: EpollForm) -> io::Result<Self> {
        // SAFETY: plain system call with a flag.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        syscall_result(fd)?;
        Ok(Epoll {
            // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            form,
            event: libc::epoll_event { events: 0, u64: 0 },
        })
    }

    /// `epoll_pwait2` with timeout `ts`, through `syscall(2)` (glibc wraps it only since
    /// 2.35).
    #[inline]
    fn pwait2(&mut self, ts: &libc::timespec) -> io::Result<()> {
        // SAFETY: one writable event; `ts` is valid; a null mask keeps the mask.
        let r = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.fd.as_raw_fd(),
                &mut self.event as *mut libc::epoll_event,
                1,
                ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0,
            )
        };
        syscall_result(r)
    }

    /// `epoll_wait` with timeout `ts` rounded up to whole ms.
    #[inline]
    fn wait_ms(&mut self, ts: &libc::timespec) -> io::Result<()> {
        let ns = crate::time::from_timespec(ts);
        let ms =
            ((ns.max(0) + NS_PER_MS - 1) / NS_PER_MS).min(libc::c_int::MAX as Nanos) as libc::c_int;
        // SAFETY: one writable event.
        syscall_result(unsafe { libc::epoll_wait(self.fd.as_raw_fd(), &mut self.event, 1, ms) })
    }
}

impl WakeMethod for Epoll {
    fn now(&self) -> Nanos {
        read_clock(libc::CLOCK_MONOTONIC)
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, last_woke: Nanos) -> io::Result<Nanos> {
        relative_wait(expiry, last_woke, libc::CLOCK_MONOTONIC, |ts| {
            match self.form {
                EpollForm::Pwait2 => self.pwait2(ts),
                EpollForm::Wait => self.wait_ms(ts),
            }
        })
    }

    fn interface(&self) -> &'static str {
        match self.form {
            EpollForm::Pwait2 => "epoll_pwait2(timespec)",
            EpollForm::Wait => "epoll_wait(ms, rounded up)",
        }
    }

    fn granularity_ns(&self) -> Nanos {
        match self.form {
            EpollForm::Pwait2 => 1,
            EpollForm::Wait => NS_PER_MS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_epoll_pwait2_falls_back_to_milliseconds() {
        let enosys = Err(io::Error::from_raw_os_error(libc::ENOSYS));
        assert_eq!(EpollForm::from_probe(enosys).unwrap(), EpollForm::Wait);
        assert_eq!(EpollForm::from_probe(Ok(())).unwrap(), EpollForm::Pwait2);
        let other = Err(io::Error::from_raw_os_error(libc::EBADF));
        assert!(EpollForm::from_probe(other).is_err());
    }

    #[test]
    fn the_millisecond_form_rounds_up_and_says_so() {
        let mut e = Epoll::with_form(EpollForm::Wait).unwrap();
        assert_eq!(
            (e.granularity_ns(), e.interface()),
            (NS_PER_MS, "epoll_wait(ms, rounded up)")
        );
        let start = e.now();
        // 1.2 ms asked: epoll_wait sleeps 2 ms, never less than asked.
        let woke = e.wait(start + 1_200_000, start).unwrap();
        assert!(woke >= start + 1_200_000);
    }

    #[test]
    fn this_kernel_has_a_form() {
        let e = Epoll::new().unwrap();
        assert!(e.interface().starts_with("epoll_"));
    }
}
