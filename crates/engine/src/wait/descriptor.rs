//! What a method says about itself: [`MethodDescriptor`], one `DESCRIPTOR` per method file,
//! listed by the [`super::registry`].

use super::{MethodOptions, WakeMethod};
use crate::time::{ClockId, Nanos};
use std::io;

/// A guard a method needs for the whole run, held by the coordinating thread (for example
/// `itimer`'s SIGALRM blocked there, so that the signal lands on the measuring thread).
pub type ProcessGuard = Box<dyn std::any::Any>;

/// What a method is and needs; each method file defines one as `DESCRIPTOR`.
#[derive(Clone, Copy)]
pub struct MethodDescriptor {
    /// The kernel call that makes the method, with its manual section (for messages).
    pub kernel_call: &'static str,
    /// The one clock the method's kernel timer runs on, for methods whose call takes no
    /// clock; `None` for methods that take the run's clock.
    pub fixed_clock: Option<ClockId>,
    /// Builds the method on the measuring thread (signal-driven methods aim at the caller).
    pub create: fn(ClockId, &MethodOptions) -> io::Result<Box<dyn WakeMethod>>,
    /// Limits beyond the clock: `(clock, threads, period ns)`; one sentence when refused.
    pub limits: fn(ClockId, usize, Nanos) -> Result<(), String>,
    /// Set-up the whole process needs while the method runs, if any.
    pub process_guard: Option<fn() -> io::Result<ProcessGuard>>,
    /// The share of each period (0 < share ≤ 1) the method spins instead of sleeping, for
    /// RT-throttling advice; `None` for methods that sleep.
    pub spin_share: fn(&MethodOptions, Nanos) -> Option<f64>,
    /// Where the method's wait shows in a kernel trace (what `--explain` follows).
    pub wakes: Wakes,
}

/// Where a method's wait shows in a kernel trace: the system calls it returns from (their
/// `sys_exit` marks "running again") and the hrtimer callbacks that end it
/// (`kernel/time/hrtimer.c`, `fs/timerfd.c`, `kernel/time/posix-timers.c`,
/// `kernel/time/itimer.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wakes {
    /// System call numbers (`libc::SYS_*`, 64-bit Linux) the wait returns from; empty when
    /// the wake-up is not the return of a system call (a signal handler, a spin).
    pub syscalls: &'static [i64],
    /// Names of the kernel functions the method's timer expiry runs (hrtimer callbacks).
    pub callbacks: &'static [&'static str],
    /// Whether the expiry a thread waits for is known only when its timer fires (the first
    /// of `callbacks`), not from an `hrtimer_start` of the thread: setitimer's timer is
    /// re-armed by whichever thread of the process takes its SIGALRM (`dequeue_signal`,
    /// kernel/signal.c).
    pub expiry_at_fire: bool,
    /// Whether the method's timer ends its sleep before the expiry, the rest spun (`hybrid`:
    /// a margin): the expiry waited for is then the first grid point at or after the timer's,
    /// not the timer's own.
    pub timer_before_expiry: bool,
}

impl Wakes {
    /// A sleep in one of `syscalls` that an on-stack hrtimer ends (`hrtimer_wakeup`, the
    /// callback of `hrtimer_sleeper`, `kernel/time/hrtimer.c`).
    pub(crate) const fn hrtimer_sleep(syscalls: &'static [i64]) -> Self {
        Wakes {
            syscalls,
            callbacks: &["hrtimer_wakeup"],
            expiry_at_fire: false,
            timer_before_expiry: false,
        }
    }
}

impl MethodDescriptor {
    /// A descriptor for a method that sleeps on the run's clock with no further limits:
    /// fill in `kernel_call`, `wakes` and `create`, override the rest with struct update
    /// syntax.
    pub const fn sleeping(
        kernel_call: &'static str,
        wakes: Wakes,
        create: fn(ClockId, &MethodOptions) -> io::Result<Box<dyn WakeMethod>>,
    ) -> Self {
        MethodDescriptor {
            kernel_call,
            wakes,
            fixed_clock: None,
            create,
            limits: no_limits,
            process_guard: None,
            spin_share: sleeps,
        }
    }
}

/// No limits beyond the clock.
pub(crate) fn no_limits(_: ClockId, _: usize, _: Nanos) -> Result<(), String> {
    Ok(())
}

/// Spins never.
pub fn sleeps(_: &MethodOptions, _: Nanos) -> Option<f64> {
    None
}
