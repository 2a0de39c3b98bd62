//! `itimer`: `setitimer(ITIMER_REAL)` and SIGALRM, the rt 2013 post's way.
//!
//! The interval timer is one per process and its SIGALRM is sent to the process, not to a
//! thread (`setitimer(2)`, `signal(7)`), so it can drive only one measuring thread;
//! [`super::check`] refuses more, and a second `Itimer` in the process fails with `EBUSY`.
//! It is armed relative to now (`it_value`, rounded up to whole µs — a `timeval`) and runs
//! on CLOCK_MONOTONIC with a period of whole µs, so its grid lies up to about a µs (the
//! rounding plus the time `setitimer` takes to read the clock) after the engine's, and that
//! offset is part of every latency measured. Missed periods merge into one pending SIGALRM
//! and are not counted by the kernel; the engine counts them.
//!
//! The rt 2013 post does its periodic work in the SIGALRM handler, so the wake time is read there:
//! the handler reads the clock first and stores it; the measuring thread keeps SIGALRM blocked
//! except inside `sigsuspend(2)`, where the handler runs on it. The handler tells the measuring
//! thread by its `pthread_self` (a read of the thread pointer, no system call), so nothing but
//! the one clock read lies between the signal's delivery and the wake time — a `gettid` and a
//! `getpid` there cost about 0.6 µs per wake-up (docs/benchmarks.md, "itimer: where the
//! extra latency came from"). A SIGALRM that lands on another thread (one that does not block
//! it) is passed on to the measuring thread with `tgkill(2)`; `run` blocks SIGALRM in the
//! coordinating thread so that this is rare.

use super::kernel_timer::{wait_for, Fire, Fired};
use super::{signals, MethodDescriptor, WakeMethod, Wakes};
use crate::time::{read_clock, Nanos, NS_PER_US};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, AtomicUsize, Ordering};

/// `itimer` in the registry ([`super::registry`]): CLOCK_MONOTONIC, one measuring thread,
/// whole µs, and SIGALRM blocked in the coordinating thread for the run ([`AlarmBlock`]).
pub(crate) const DESCRIPTOR: MethodDescriptor = MethodDescriptor {
    fixed_clock: Some(crate::time::ClockId::Monotonic),
    limits: |_, threads, period| {
        if threads > 1 {
            return Err(format!(
                "method itimer: setitimer(ITIMER_REAL) is one timer per process and its \
                 SIGALRM goes to the whole process, so it can drive only one measuring thread \
                 (asked for {threads}); use one thread, or the posix-timer method, which aims \
                 a timer at each thread"
            ));
        }
        if period % crate::time::NS_PER_US != 0 {
            return Err(format!(
                "method itimer: setitimer(2) takes its interval in whole µs (a struct \
                 timeval) and {period} ns is not; choose an interval of whole µs"
            ));
        }
        Ok(())
    },
    process_guard: Some(|| Ok(Box::new(AlarmBlock::new()?))),
    ..MethodDescriptor::sleeping(
        "setitimer(2)",
        // The handler runs on the return from rt_sigsuspend(2), where the thread waits.
        Wakes {
            syscalls: &[libc::SYS_rt_sigsuspend],
            callbacks: &["it_real_fn"],
            expiry_at_fire: true,
            timer_before_expiry: false,
        },
        |_, _| Ok(Box::new(Itimer::new()?)),
    )
};

/// Set while an `Itimer` exists: the interval timer is one per process.
static IN_USE: AtomicBool = AtomicBool::new(false);
/// The kernel id of the thread that waits for SIGALRM (the target of a forwarded signal).
static TARGET_TID: AtomicI32 = AtomicI32::new(0);
/// The `pthread_t` of the thread that waits for SIGALRM, as a number; 0 while none does
/// (glibc and musl never hand out 0: it is the address of the thread's descriptor).
static TARGET_THREAD: AtomicUsize = AtomicUsize::new(0);
/// The wake time the handler read last (ns on CLOCK_MONOTONIC); 0 before the first.
static STAMP: AtomicI64 = AtomicI64::new(0);
/// SIGALRMs that landed on another thread and were passed on since the last `Itimer::new`.
static FORWARDED: AtomicU64 = AtomicU64::new(0);

/// Blocks SIGALRM in the calling thread for the rest of the process's life, so that every
/// thread created after this call (from this thread or from its descendants) starts with it
/// blocked (`pthread_create(3)`: a new thread inherits its creator's signal mask) and the
/// kernel delivers the process's SIGALRM to the one thread that unblocks it: `itimer`'s
/// measuring thread, inside `sigsuspend(2)` (`signal(7)`). Call first thing in `main`,
/// before any thread is started. Child processes are unaffected: the standard library's
/// `Command` gives them an empty signal mask.
///
/// # Errors
/// The error of `pthread_sigmask`.
pub fn reserve_alarm() -> io::Result<()> {
    signals::block(libc::SIGALRM).map(|_| ())
}

/// The calling thread's `pthread_t` as a number. `pthread_self` reads the thread pointer
/// (glibc `nptl/pthread_self.c`: `THREAD_SELF`; musl `__pthread_self`): no system call, no
/// allocation, so the SIGALRM handler may call it.
fn thread_self() -> usize {
    // SAFETY: pthread_self cannot fail.
    unsafe { libc::pthread_self() as usize }
}

/// The SIGALRM handler: reads the clock first (the rt 2013 post's point of measurement, so
/// that nothing else lies between the delivery and the wake time), then keeps it if it runs
/// on the measuring thread, or passes the signal on from any other thread. Async-signal-safe:
/// only `clock_gettime`, `pthread_self` (a read of the thread pointer, [`thread_self`]),
/// `getpid`, `tgkill` and atomics (`signal-safety(7)`); `getpid` and `tgkill` only on the
/// rare path of a SIGALRM that landed on another thread.
extern "C" fn on_alarm(_sig: libc::c_int) {
    let woke = read_clock(libc::CLOCK_MONOTONIC);
    if thread_self() == TARGET_THREAD.load(Ordering::Relaxed) {
        STAMP.store(woke, Ordering::Release);
        return;
    }
    let target = TARGET_TID.load(Ordering::Relaxed);
    if target != 0 {
        FORWARDED.fetch_add(1, Ordering::Relaxed);
        // SAFETY: plain system calls; a failure (the thread is gone) loses one signal.
        unsafe { libc::tgkill(libc::getpid(), target, libc::SIGALRM) };
    }
}

/// Blocks SIGALRM in the calling thread for as long as it lives, so that the process's
/// SIGALRM goes to the measuring thread; restores the mask when dropped (on the same
/// thread).
#[derive(Debug)]
pub(crate) struct AlarmBlock {
    old: libc::sigset_t,
}

impl AlarmBlock {
    /// Blocks SIGALRM in the calling thread.
    ///
    /// # Errors
    /// The error of `pthread_sigmask`.
    pub(crate) fn new() -> io::Result<Self> {
        Ok(AlarmBlock {
            old: signals::block(libc::SIGALRM)?,
        })
    }
}

impl Drop for AlarmBlock {
    fn drop(&mut self) {
        signals::restore(&self.old);
    }
}

/// Waits for the process's SIGALRM from `setitimer(ITIMER_REAL)`.
#[derive(Debug)]
pub struct Itimer {
    armed: Option<Armed>,
    seen: Nanos,
    fired: Option<Fired>,
}

/// What arming changed, to restore in `drop`.
#[derive(Debug)]
struct Armed {
    tid: i32,
    old_mask: libc::sigset_t,
    old_action: libc::sigaction,
    suspend_mask: libc::sigset_t,
}

impl Itimer {
    /// Claims the process's interval timer, installs the SIGALRM handler and blocks SIGALRM
    /// in the calling thread, which becomes the measuring thread (the timer starts with
    /// [`WakeMethod::arm`]). Call on the measuring thread.
    ///
    /// # Errors
    /// `EBUSY` when another `Itimer` exists in the process; the error of `pthread_sigmask`
    /// or `sigaction`.
    pub fn new() -> io::Result<Self> {
        if IN_USE
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(io::Error::from_raw_os_error(libc::EBUSY));
        }
        let mut it = Itimer {
            armed: None,
            seen: 0,
            fired: None,
        };
        it.install()?;
        Ok(it)
    }

    fn install(&mut self) -> io::Result<()> {
        let old_mask = signals::block(libc::SIGALRM)?;
        let tid = crate::setup::gettid();
        TARGET_TID.store(tid, Ordering::Relaxed);
        TARGET_THREAD.store(thread_self(), Ordering::Relaxed);
        STAMP.store(0, Ordering::Relaxed);
        FORWARDED.store(0, Ordering::Relaxed);
        // SAFETY: sigaction is plain data; the handler is an extern "C" fn(c_int) and the
        // flags say it is not an sa_sigaction handler.
        let old_action = unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as usize;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGALRM, &act, &mut old) != 0 {
                let e = io::Error::last_os_error();
                signals::restore(&old_mask);
                return Err(e);
            }
            old
        };
        self.armed = Some(Armed {
            tid,
            old_mask,
            old_action,
            suspend_mask: signals::current_mask_without(libc::SIGALRM),
        });
        Ok(())
    }
}

/// At most this many `setitimer` calls in [`Itimer::arm`] (see [`arm_settled`]).
const ARM_ATTEMPTS: u32 = 8;
/// A bracket this narrow (ns between the clock reads around `setitimer`) is always taken:
/// a system call's round trip on a guest with the usual mitigations.
const ARM_BRACKET_NS: Nanos = 2 * NS_PER_US;

/// Whether an arming whose clock reads around `setitimer` lay `bracket` ns apart can stand:
/// the kernel read its clock within the bracket, so the itimer's grid lies at most the
/// bracket (plus the rounding up to whole µs) after the engine's. Taken when it is at most
/// [`ARM_BRACKET_NS`], or at most 5/4 of the `narrowest` bracket of the earlier attempts (a
/// machine whose system calls all take longer); a wider one — a page fault, an interrupt or
/// a host preemption in between — is armed again. Measured: without it the grid lay
/// 5.9–11.4 µs late in 3 of 7 runs (a page fault on the first call), with it 0.8–1.4 µs
/// (docs/benchmarks.md, "itimer: where the extra latency came from").
fn arm_settled(bracket: Nanos, narrowest: Option<Nanos>) -> bool {
    bracket <= ARM_BRACKET_NS || narrowest.is_some_and(|n| 4 * bracket <= 5 * n)
}

/// The `it_value` (ns from `now`) that starts the interval timer on the engine's grid
/// (`first_expiry + k·period`): `first_expiry − now` while that is at least 1 µs ahead,
/// else the next grid point at least 1 µs ahead. A thread that arms after its first expiry
/// (held up between the start signal and `arm`) would otherwise start the kernel's grid at
/// `now`, and every wake-up of the run would read late by that offset modulo the period;
/// the engine counts the skipped expiries instead, as it does for the absolute methods.
/// (Seen once under load, traced: a run whose kernel grid lay 836 µs after the engine's
/// read 856 µs at the median.)
fn first_value(first_expiry: Nanos, now: Nanos, period: Nanos) -> Nanos {
    let ahead = first_expiry - now;
    if ahead >= NS_PER_US {
        return ahead;
    }
    let behind = NS_PER_US - ahead;
    ahead + (behind + period - 1) / period * period
}

/// A `timeval` holding `ns` rounded up to whole µs.
fn timeval_ceil(ns: Nanos) -> libc::timeval {
    let us = (ns.max(0) + NS_PER_US - 1) / NS_PER_US;
    libc::timeval {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_usec: (us % 1_000_000) as libc::suseconds_t,
    }
}

fn set_itimer(value: libc::timeval, interval: libc::timeval) -> io::Result<()> {
    let it = libc::itimerval {
        it_interval: interval,
        it_value: value,
    };
    // SAFETY: `it` is valid; the old value is not wanted.
    if unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl WakeMethod for Itimer {
    fn now(&self) -> Nanos {
        read_clock(libc::CLOCK_MONOTONIC)
    }

    /// Starts the timer: first signal at `first_expiry` (relative to now, rounded up to
    /// whole µs), then every `period` (whole µs).
    fn arm(&mut self, first_expiry: Nanos, period: Nanos) -> io::Result<()> {
        if period <= 0 || period % NS_PER_US != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "setitimer takes its interval in whole µs",
            ));
        }
        // `setitimer` is relative: the kernel's grid lies after the engine's by the time from
        // the clock read here to the kernel's own, for the whole run. A page fault in between
        // (the first call of libc's wrapper under `mlockall(MCL_ONFAULT)`), an interrupt or a
        // host preemption would shift every wake-up of the run by up to tens of µs, so the
        // call is bracketed by two clock reads and repeated while the bracket is wide.
        let mut narrowest = None;
        for _ in 0..ARM_ATTEMPTS {
            let before = self.now();
            let first = first_value(first_expiry, before, period);
            set_itimer(timeval_ceil(first), timeval_ceil(period))?;
            let bracket = self.now() - before;
            if arm_settled(bracket, narrowest) {
                break;
            }
            narrowest = Some(narrowest.map_or(bracket, |n: Nanos| n.min(bracket)));
        }
        self.fired = Some(Fired::new(first_expiry, period));
        Ok(())
    }

    #[inline]
    fn wait(&mut self, expiry: Nanos, _last_woke: Nanos) -> io::Result<Nanos> {
        let (Some(fired), Some(armed)) = (self.fired.as_mut(), self.armed.as_ref()) else {
            return Err(super::not_armed());
        };
        let seen = &mut self.seen;
        let suspend = &armed.suspend_mask;
        let mut take = move || {
            let stamp = STAMP.load(Ordering::Acquire);
            (stamp != *seen).then(|| {
                *seen = stamp;
                Fire {
                    woke: stamp,
                    count: None,
                }
            })
        };
        wait_for(fired, libc::CLOCK_MONOTONIC, expiry, || {
            if let Some(fire) = take() {
                return Ok(fire);
            }
            // SAFETY: `suspend` is a valid mask; sigsuspend returns -1 (EINTR) after a
            // handler ran on this thread.
            unsafe { libc::sigsuspend(suspend) };
            // Another signal than SIGALRM (a stop's wake-up signal) is an interruption.
            take().ok_or_else(|| io::Error::from_raw_os_error(libc::EINTR))
        })
    }

    fn interface(&self) -> &'static str {
        "setitimer(ITIMER_REAL) + SIGALRM handler"
    }

    fn granularity_ns(&self) -> Nanos {
        NS_PER_US
    }

    fn observations(&self) -> super::MethodObservations {
        super::MethodObservations {
            signals_forwarded: Some(FORWARDED.load(Ordering::Relaxed)),
            ..super::MethodObservations::default()
        }
    }
}

impl Drop for Itimer {
    /// Stops the timer, takes a SIGALRM left pending, restores the handler and the mask,
    /// and frees the process's interval timer for the next run.
    fn drop(&mut self) {
        if let Some(a) = self.armed.take() {
            let zero = timeval_ceil(0);
            let _ = set_itimer(zero, zero);
            if a.tid == crate::setup::gettid() {
                signals::drain(libc::SIGALRM);
            }
            TARGET_TID.store(0, Ordering::Relaxed);
            TARGET_THREAD.store(0, Ordering::Relaxed);
            // A SIGALRM generated before the timer stopped may still be pending for the
            // process and be delivered to any thread that does not block it — after the old
            // action (often the default: terminate) is back. Ignoring the signal discards a
            // pending one (sigaction(2), signal(7)); the timer is stopped, so none follows.
            // SAFETY: plain-data sigaction set to SIG_IGN, then the action saved in `install`.
            unsafe {
                let mut ignore: libc::sigaction = std::mem::zeroed();
                ignore.sa_sigaction = libc::SIG_IGN;
                libc::sigaction(libc::SIGALRM, &ignore, std::ptr::null_mut());
                libc::sigaction(libc::SIGALRM, &a.old_action, std::ptr::null_mut());
            }
            if a.tid == crate::setup::gettid() {
                signals::restore(&a.old_mask);
            }
        }
        IN_USE.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arming_stands_when_its_bracket_is_narrow() {
        // Narrow at once: taken without another call.
        assert!(arm_settled(1_500, None));
        assert!(arm_settled(ARM_BRACKET_NS, None));
        // A first call held up by a page fault: armed again.
        assert!(!arm_settled(9_000, None));
        // The next call is as fast as the machine's system calls get: taken.
        assert!(arm_settled(2_400, Some(9_000)));
        // A slow machine: every bracket near 3 µs, the second one stands.
        assert!(!arm_settled(3_000, None));
        assert!(arm_settled(3_100, Some(3_000)));
        // An interrupt in the second call of a slow machine: armed again.
        assert!(!arm_settled(12_000, Some(3_000)));
    }

    #[test]
    fn a_late_arming_keeps_the_engines_grid() {
        const P: Nanos = 1_000_000;
        // Ahead: the time to the first expiry.
        assert_eq!(first_value(10_000_000, 0, P), 10_000_000);
        assert_eq!(first_value(1_000, 0, P), 1_000);
        // Less than 1 µs ahead, or behind: the next grid point at least 1 µs ahead.
        assert_eq!(first_value(500, 0, P), 1_000_500);
        assert_eq!(first_value(0, 836_000, P), 164_000);
        assert_eq!(first_value(0, 540_836_000, P), 164_000);
        assert_eq!(first_value(0, 3 * P, P), P);
        for now in [0, 999, 1_000, 12_345, 3 * P - 1, 7 * P + 999_500] {
            let v = first_value(0, now, P);
            assert!(v >= 1_000, "{now}: {v}");
            assert_eq!((now + v) % P, 0, "{now}: off the grid");
        }
    }

    #[test]
    fn timevals_round_up_to_whole_microseconds() {
        let t = timeval_ceil(1_000_001);
        assert_eq!((t.tv_sec, t.tv_usec), (0, 1_001));
        let t = timeval_ceil(2_500_000_000);
        assert_eq!((t.tv_sec, t.tv_usec), (2, 500_000));
        let t = timeval_ceil(-5);
        assert_eq!((t.tv_sec, t.tv_usec), (0, 0));
    }
}
