//! `posix-timer`: a periodic POSIX timer that signals the measuring thread itself.
//!
//! `timer_create(2)` on the run's clock with `SIGEV_THREAD_ID`, aimed at the kernel id of the
//! measuring thread (the thread that creates the method) (a Linux extension: the signal goes to that thread, not to the
//! process), armed once with `timer_settime(TIMER_ABSTIME)` for the first expiry and the
//! period. The signal ([`timer_signal`], a real-time signal) stays blocked in the thread,
//! which takes it with `sigwaitinfo(2)` — no handler runs. After each signal
//! `timer_getoverrun(2)` says how many further expiries passed while it was pending; the
//! clock is read before that call, so it does not add to the latency. How the kernel's
//! re-arming fits the engine's skip / catch-up rule: [`super::periodic`].

use super::kernel_timer::{periodic_spec, wait_for, Fire, Fired};
use super::{signals, MethodDescriptor, MethodObservations, WakeMethod, Wakes};
use crate::time::{read_clock, ClockId, Nanos};
use std::io;

/// `posix-timer` in the registry ([`super::registry`]).
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor::sleeping(
    "timer_create(2)",
    Wakes {
        syscalls: &[libc::SYS_rt_sigtimedwait],
        callbacks: &["posix_timer_fn"],
        expiry_at_fire: false,
        timer_before_expiry: false,
    },
    |clock, _| Ok(Box::new(PosixTimer::new(clock)?)),
);

/// The signal the timers send: `SIGRTMIN + 4` (glibc keeps the first real-time signals for
/// itself; real-time signals queue and carry the overrun count, `signal(7)`).
pub(crate) fn timer_signal() -> libc::c_int {
    libc::SIGRTMIN() + 4
}

/// A kernel timer id, usable from any thread of the process.
#[derive(Debug)]
struct TimerId(libc::timer_t);

// SAFETY: a timer id names a process-wide kernel object; nothing in it is tied to the
// thread that created it, and only the owning `PosixTimer` uses it.
unsafe impl Send for TimerId {}

/// Waits for a thread-directed POSIX timer signal with `sigwaitinfo`.
#[derive(Debug)]
pub struct PosixTimer {
    clock: libc::clockid_t,
    signo: libc::c_int,
    set: libc::sigset_t,
    timer: Option<TimerId>,
    saved_mask: Option<(i32, libc::sigset_t)>,
    fired: Option<Fired>,
}

impl PosixTimer {
    /// Blocks the timer signal in the calling thread and creates a timer on `clock` aimed
    /// at it (not armed yet). Call on the measuring thread.
    ///
    /// # Errors
    /// The error of `pthread_sigmask` or `timer_create`: `EINVAL` for a clock it does not
    /// take, `ENOSYS` on a kernel without POSIX timers, `EAGAIN` when out of timers.
    pub fn new(clock: ClockId) -> io::Result<Self> {
        let signo = timer_signal();
        let tid = crate::setup::gettid();
        let mut t = PosixTimer {
            clock: clock.raw(),
            signo,
            set: signals::set_of(signo),
            timer: None,
            saved_mask: Some((tid, signals::block(signo)?)),
            fired: None,
        };
        // SAFETY: sigevent is plain data; the fields the kernel reads are set below.
        let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
        sev.sigev_notify = libc::SIGEV_THREAD_ID;
        sev.sigev_signo = signo;
        sev.sigev_notify_thread_id = tid;
        let mut id: libc::timer_t = std::ptr::null_mut();
        // SAFETY: `sev` and `id` are valid for the call.
        if unsafe { libc::timer_create(t.clock, &mut sev, &mut id) } != 0 {
            return Err(io::Error::last_os_error());
        }
        t.timer = Some(TimerId(id));
        Ok(t)
    }
}

impl WakeMethod for PosixTimer {
    fn now(&self) -> Nanos {
        read_clock(self.clock)
    }

    fn arm(&mut self, first_expiry: Nanos, period: Nanos) -> io::Result<()> {
        let Some(timer) = self.timer.as_ref() else {
            return Err(super::not_armed());
        };
        let spec = periodic_spec(first_expiry, period);
        // SAFETY: `timer.0` is a live timer; `spec` is valid; the old value is not wanted.
        if unsafe { libc::timer_settime(timer.0, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) }
            != 0
        {
            return Err(io::Error::last_os_error());
        }
        self.fired = Some(Fired::new(first_expiry, period));
        Ok(())
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, _last_woke: Nanos) -> io::Result<Nanos> {
        let (Some(fired), Some(timer)) = (self.fired.as_mut(), self.timer.as_ref()) else {
            return Err(super::not_armed());
        };
        let (set, signo, clock, id) = (&self.set, self.signo, self.clock, timer.0);
        wait_for(fired, clock, expiry, || {
            // SAFETY: `set` is a valid set; the siginfo pointer may be null.
            let r = unsafe { libc::sigwaitinfo(set, std::ptr::null_mut()) };
            let woke = read_clock(clock);
            if r != signo {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `id` is a live timer.
            let over = unsafe { libc::timer_getoverrun(id) };
            Ok(Fire {
                woke,
                count: Some(1 + over.max(0) as u64),
            })
        })
    }

    fn interface(&self) -> &'static str {
        "timer_settime(TIMER_ABSTIME, SIGEV_THREAD_ID) + sigwaitinfo"
    }

    fn observations(&self) -> MethodObservations {
        MethodObservations {
            timer_overruns: self.fired.as_ref().map(Fired::overruns),
            ..MethodObservations::default()
        }
    }
}

impl Drop for PosixTimer {
    /// Deletes the timer and, on the thread that armed it, takes any signal it left pending
    /// and restores that thread's mask.
    fn drop(&mut self) {
        if let Some(t) = self.timer.take() {
            // SAFETY: `t.0` is a live timer, deleted once.
            unsafe { libc::timer_delete(t.0) };
        }
        if let Some((tid, old)) = self.saved_mask.take() {
            if tid == crate::setup::gettid() {
                signals::drain(self.signo);
                signals::restore(&old);
            }
        }
    }
}
