//! The C ABI: the loop for C and C++ programs, declared in `include/tickscope.h`.
//!
//! The header is generated from this file by cbindgen (`crates/periodic/cbindgen.toml`) and
//! a test checks that the committed copy is up to date. Rules every function here keeps:
//!
//! * No panic crosses the boundary: each body runs inside `std::panic::catch_unwind`; a
//!   panic (a bug) is reported as `-EIO` (or NULL) with the reason in [`ts_last_error`].
//! * NULL pointers and values out of range are errors (`-EINVAL` or NULL), never a crash.
//! * Enumerations are plain `int32_t` typedefs with `#define`d values, not C enums, so that
//!   a value outside the list reaches the library as a number it can reject (a Rust enum
//!   holding an unknown value would be undefined behaviour).
//! * Functions returning `int` return 0 on success or a negative `errno` value; functions
//!   returning a pointer return NULL on failure. The reason, one sentence, is then
//!   available from [`ts_last_error`] on the same thread.
//! * A `ts_periodic` belongs to the thread that created it: its settings (policy, affinity,
//!   timer slack) are that thread's, and its waits and statistics must be called there.

#![allow(non_camel_case_types)]

use crate::error::Error;
use crate::periodic::{Periodic, Stats, Tick};
use crate::strategy::{Strategy, DEFAULT_SLEEP_EVERY};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::setup::Policy;
use tickscope_engine::time::{ClockId, Nanos};
use tickscope_engine::wait::Margin;

/// A wait strategy: one of the `TS_STRATEGY_*` values.
pub type ts_strategy = i32;
/// Sleep to each expiry with an absolute `clock_nanosleep`: low CPU, kernel-sized latency.
pub const TS_STRATEGY_SLEEP: ts_strategy = 0;
/// Spin on the clock to each expiry, entering the kernel every `busy_sleep_every` reads.
pub const TS_STRATEGY_BUSY: ts_strategy = 1;
/// Sleep until a margin before each expiry, then spin.
pub const TS_STRATEGY_HYBRID: ts_strategy = 2;

/// What to do after a wake-up later than the next expiry: one of the `TS_OVERRUN_*` values.
pub type ts_overrun = i32;
/// Continue at the first expiry after the wake-up; the passed ones are counted as overruns.
pub const TS_OVERRUN_SKIP: ts_overrun = 0;
/// Return every passed expiry in turn, at once and late (they are counted as overruns too).
pub const TS_OVERRUN_CATCH_UP: ts_overrun = 1;
/// Move the grid: the next expiry is one period after the late wake-up (counted as
/// overruns too).
pub const TS_OVERRUN_RELATIVE: ts_overrun = 2;

/// The clock of the grid: one of the `TS_CLOCK_*` values.
pub type ts_clock = i32;
/// `CLOCK_MONOTONIC` (the default).
pub const TS_CLOCK_MONOTONIC: ts_clock = 0;
/// `CLOCK_REALTIME`: wall-clock time, steps when the time is set.
pub const TS_CLOCK_REALTIME: ts_clock = 1;
/// `CLOCK_BOOTTIME`: monotonic, counting suspend.
pub const TS_CLOCK_BOOTTIME: ts_clock = 2;
/// `CLOCK_TAI`: International Atomic Time.
pub const TS_CLOCK_TAI: ts_clock = 3;

/// A scheduling policy for `ts_periodic_set_policy`: one of the `TS_POLICY_*` values.
pub type ts_policy = i32;
/// `SCHED_OTHER`; the priority argument is the nice value, -20 ..= 19.
pub const TS_POLICY_OTHER: ts_policy = 0;
/// `SCHED_FIFO`; priority 1 ..= 99.
pub const TS_POLICY_FIFO: ts_policy = 1;
/// `SCHED_RR`; priority 1 ..= 99.
pub const TS_POLICY_RR: ts_policy = 2;
/// `SCHED_BATCH`; the priority argument is the nice value, -20 ..= 19.
pub const TS_POLICY_BATCH: ts_policy = 3;
/// `SCHED_IDLE`; the priority argument must be 0.
pub const TS_POLICY_IDLE: ts_policy = 4;

/// `hybrid_margin_ns` value asking for a margin calibrated while the loop runs.
pub const TS_MARGIN_AUTO: i64 = 0;

/// A periodic loop (opaque). Create it with `ts_periodic_new` or `ts_periodic_new_with`,
/// free it with `ts_periodic_free`, on the thread that runs the loop.
pub struct ts_periodic {
    inner: Periodic,
}

/// One wake-up of the loop. Times are ns on the loop's clock.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ts_tick {
    /// Position on the grid: `expiry_ns = t0 + index * period`, 0 for the first tick.
    pub index: u64,
    /// The expiry waited for (absolute ns).
    pub expiry_ns: i64,
    /// When the thread woke (absolute ns).
    pub woke_ns: i64,
    /// `woke_ns - expiry_ns`, ns (negative if early).
    pub latency_ns: i64,
    /// Expiries after this one that had already passed when it woke (skipped, or returned
    /// next and late with `TS_OVERRUN_CATCH_UP`).
    pub overruns: u64,
}

/// The loop's statistics since its first wait (or `ts_periodic_reset_stats`). All times in
/// ns. Fields of a distribution with no sample are 0: latency needs one tick, period two.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ts_stats {
    /// The nominal period, ns.
    pub period_ns: i64,
    /// Ticks recorded.
    pub samples: u64,
    /// Missed periods.
    pub overruns: u64,
    /// Smallest wake-up latency, ns.
    pub latency_min_ns: i64,
    /// Largest wake-up latency, ns.
    pub latency_max_ns: i64,
    /// Mean wake-up latency, ns.
    pub latency_mean_ns: f64,
    /// 99th percentile of the wake-up latency, ns (upper bound of its histogram bucket: 2 significant digits).
    pub latency_p99_ns: i64,
    /// Number of periods measured (dt between consecutive wake-ups): `samples - 1`.
    pub period_samples: u64,
    /// Mean period dt, ns.
    pub period_mean_ns: f64,
    /// Standard deviation of dt about its mean, ns.
    pub period_stddev_ns: f64,
    /// Smallest dt, ns.
    pub period_min_ns: i64,
    /// Largest dt, ns.
    pub period_max_ns: i64,
    /// 99th percentile of |dt - period|, ns (upper bound of its histogram bucket: 2 significant digits).
    pub period_abs_dev_p99_ns: i64,
    /// CPU time of the loop's thread, ns.
    pub cpu_time_ns: i64,
    /// Wall time, ns.
    pub wall_time_ns: i64,
    /// `cpu_time_ns / wall_time_ns` in % of one core.
    pub cpu_percent: f64,
    /// `TS_STRATEGY_HYBRID`: the margin in force now, ns (0 for other strategies).
    pub hybrid_margin_ns: i64,
    /// `TS_STRATEGY_HYBRID`: sleeps that ended after the margin (each a late wake-up).
    pub hybrid_overshoots: u64,
    /// `TS_STRATEGY_BUSY`: trips through the kernel taken (`busy_sleep_every`).
    pub busy_naps: u64,
}

/// Everything `ts_periodic_new_with` takes. Fill it with `ts_options_init`, then change
/// fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ts_options {
    /// The period, ns, 1 ..= 3 600 000 000 000 (1 hour).
    pub period_ns: u64,
    /// How to wait: a `TS_STRATEGY_*` value.
    pub strategy: ts_strategy,
    /// After an overrun: `TS_OVERRUN_SKIP` (the default) or `TS_OVERRUN_CATCH_UP`
    /// (`TS_OVERRUN_RELATIVE` is for executive tasks and refused here).
    pub overrun: ts_overrun,
    /// The clock: a `TS_CLOCK_*` value (default `TS_CLOCK_MONOTONIC`).
    pub clock: ts_clock,
    /// `TS_STRATEGY_BUSY`: clock reads between two trips through the kernel (a
    /// `clock_nanosleep` to the time just read, returning at once: a point where the
    /// scheduler may run something else), default 1000; 0: never.
    pub busy_sleep_every: u32,
    /// `TS_STRATEGY_HYBRID`: how long before each expiry the sleep ends, ns, 1 ..= period, or
    /// `TS_MARGIN_AUTO` (the default) to calibrate it while the loop runs.
    pub hybrid_margin_ns: i64,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

pub(crate) fn set_last_error(message: &str) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Runs `f`, turning a panic into `on_panic` with the reason in `ts_last_error`.
pub(crate) fn shielded<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            set_last_error(&format!("tickscope internal error (panic): {why}"));
            on_panic
        }
    }
}

/// 0, or the error's negative errno with its message kept for `ts_last_error`.
pub(crate) fn status(r: Result<(), Error>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => {
            set_last_error(&e.to_string());
            -e.errno()
        }
    }
}

pub(crate) fn null(what: &str) -> Error {
    Error::InvalidArgument(format!("{what} is NULL"))
}

pub(crate) fn strategy_from_c(
    strategy: ts_strategy,
    sleep_every: u32,
    margin_ns: i64,
) -> Result<Strategy, Error> {
    Ok(match strategy {
        TS_STRATEGY_SLEEP => Strategy::Sleep,
        TS_STRATEGY_BUSY => Strategy::Busy {
            sleep_every: (sleep_every > 0).then_some(sleep_every),
        },
        TS_STRATEGY_HYBRID => Strategy::Hybrid {
            margin: match margin_ns {
                TS_MARGIN_AUTO => Margin::Auto,
                m => Margin::Fixed(m),
            },
        },
        s => {
            return Err(Error::InvalidArgument(format!(
                "unknown strategy {s}: use TS_STRATEGY_SLEEP (0), TS_STRATEGY_BUSY (1) or \
                 TS_STRATEGY_HYBRID (2)"
            )))
        }
    })
}

/// The policy of a `TS_OVERRUN_*` value.
pub(crate) fn overrun_from_c(v: ts_overrun) -> Result<OverrunPolicy, Error> {
    match v {
        TS_OVERRUN_SKIP => Ok(OverrunPolicy::Skip),
        TS_OVERRUN_CATCH_UP => Ok(OverrunPolicy::CatchUp),
        TS_OVERRUN_RELATIVE => Ok(OverrunPolicy::Relative),
        v => Err(Error::InvalidArgument(format!(
            "unknown overrun policy {v}: use TS_OVERRUN_SKIP (0), TS_OVERRUN_CATCH_UP (1) or \
             TS_OVERRUN_RELATIVE (2)"
        ))),
    }
}

fn period_from_c(period_ns: u64) -> Result<Nanos, Error> {
    // Out-of-range values (also above i64::MAX) are refused by the builder.
    Ok(Nanos::try_from(period_ns).unwrap_or(Nanos::MAX))
}

fn new_loop(o: &ts_options) -> Result<Periodic, Error> {
    let strategy = strategy_from_c(o.strategy, o.busy_sleep_every, o.hybrid_margin_ns)?;
    let overrun = overrun_from_c(o.overrun)?;
    let clock = match o.clock {
        TS_CLOCK_MONOTONIC => ClockId::Monotonic,
        TS_CLOCK_REALTIME => ClockId::Realtime,
        TS_CLOCK_BOOTTIME => ClockId::Boottime,
        TS_CLOCK_TAI => ClockId::Tai,
        v => {
            return Err(Error::InvalidArgument(format!(
                "unknown clock {v}: use one of the TS_CLOCK_* values (0 ..= 3)"
            )))
        }
    };
    Periodic::builder(period_from_c(o.period_ns)?)
        .strategy(strategy)
        .overrun(overrun)
        .clock(clock)
        .build()
}

fn boxed(r: Result<Periodic, Error>) -> *mut ts_periodic {
    match r {
        Ok(inner) => Box::into_raw(Box::new(ts_periodic { inner })),
        Err(e) => {
            set_last_error(&e.to_string());
            std::ptr::null_mut()
        }
    }
}

fn default_options(period_ns: u64, strategy: ts_strategy) -> ts_options {
    ts_options {
        period_ns,
        strategy,
        overrun: TS_OVERRUN_SKIP,
        clock: TS_CLOCK_MONOTONIC,
        busy_sleep_every: DEFAULT_SLEEP_EVERY,
        hybrid_margin_ns: TS_MARGIN_AUTO,
    }
}

/// The reason for the last failure on the calling thread: one sentence, never NULL (empty
/// before any failure). Successful calls leave it unchanged. The string belongs to the
/// library and stays valid until the next failing call on the same thread.
#[no_mangle]
pub extern "C" fn ts_last_error() -> *const c_char {
    shielded(c"".as_ptr(), || LAST_ERROR.with(|e| e.borrow().as_ptr()))
}

/// A loop waking every `period_ns` ns (1 ..= 3 600 000 000 000) with `strategy` (a
/// `TS_STRATEGY_*` value) and default options: `CLOCK_MONOTONIC`, skip passed expiries (overruns),
/// busy guard every 1000 clock reads, auto hybrid margin. Changes nothing on the system.
///
/// Returns NULL, with the reason in `ts_last_error`, for a period out of range or an
/// unknown strategy. Free the loop with `ts_periodic_free`.
#[no_mangle]
pub extern "C" fn ts_periodic_new(period_ns: u64, strategy: ts_strategy) -> *mut ts_periodic {
    shielded(std::ptr::null_mut(), || {
        boxed(new_loop(&default_options(period_ns, strategy)))
    })
}

/// Fills `*opts` with the defaults of `ts_periodic_new` for `period_ns` and `strategy`
/// (checked later, by `ts_periodic_new_with`).
///
/// Returns 0, or `-EINVAL` if `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or points to writable memory for one `ts_options`.
#[no_mangle]
pub unsafe extern "C" fn ts_options_init(
    opts: *mut ts_options,
    period_ns: u64,
    strategy: ts_strategy,
) -> c_int {
    shielded(-libc::EIO, || {
        if opts.is_null() {
            return status(Err(null("opts")));
        }
        // SAFETY: non-null, and the caller guarantees it points to a writable ts_options.
        unsafe { opts.write(default_options(period_ns, strategy)) };
        0
    })
}

/// A loop built from `*opts` (see `ts_options`). Returns NULL, with the reason in
/// `ts_last_error`, if `opts` is NULL or a field is out of range or unknown.
///
/// # Safety
/// `opts` is NULL or points to an initialised `ts_options`.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_new_with(opts: *const ts_options) -> *mut ts_periodic {
    shielded(std::ptr::null_mut(), || {
        // SAFETY: the caller guarantees a non-null `opts` points to a valid ts_options.
        match unsafe { opts.as_ref() } {
            Some(o) => boxed(new_loop(o)),
            None => boxed(Err(null("opts"))),
        }
    })
}

/// Borrows the loop behind `p`, or says that it is NULL.
///
/// # Safety
/// `p` is NULL or a live pointer from `ts_periodic_new*`, not used elsewhere meanwhile.
unsafe fn inner_mut<'a>(p: *mut ts_periodic) -> Result<&'a mut Periodic, Error> {
    // SAFETY: guaranteed by the caller.
    unsafe { p.as_mut() }
        .map(|p| &mut p.inner)
        .ok_or_else(|| null("the loop"))
}

/// Blocks until the loop's next expiry and stores the tick in `*tick`. The first call starts
/// the grid one period later; every expiry is `t0 + k * period`, so lateness never
/// accumulates. Signals that interrupt the wait are absorbed. It is not a cancellation point
/// (`pthread_cancel(3)`): the sleep is a direct system call, and a cancelled thread would unwind
/// through the library's Rust frames, which Rust does not allow; end a periodic thread with a flag.
///
/// Returns 0, `-EINVAL` if `p` or `tick` is NULL, or the negative errno of a failed wait
/// (`*tick` is then unchanged and the next call waits for the same expiry).
///
/// # Safety
/// `p` is NULL or a live loop from this thread; `tick` is NULL or points to writable memory
/// for one `ts_tick`.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_wait(p: *mut ts_periodic, tick: *mut ts_tick) -> c_int {
    shielded(-libc::EIO, || {
        status((|| {
            if tick.is_null() {
                return Err(null("tick"));
            }
            // SAFETY: the caller's guarantee for `p`.
            let t: Tick = unsafe { inner_mut(p) }?.wait()?;
            let out = ts_tick {
                index: t.index,
                expiry_ns: t.expiry,
                woke_ns: t.woke,
                latency_ns: t.latency,
                overruns: t.overruns,
            };
            // SAFETY: non-null, and the caller guarantees it is writable.
            unsafe { tick.write(out) };
            Ok(())
        })())
    })
}

impl From<&Stats> for ts_stats {
    fn from(s: &Stats) -> ts_stats {
        let mut out = ts_stats {
            period_ns: s.period_ns,
            samples: s.samples,
            overruns: s.overruns,
            cpu_time_ns: s.cpu_time_ns,
            wall_time_ns: s.wall_time_ns,
            cpu_percent: s.cpu_percent,
            ..ts_stats::default()
        };
        if let Some(l) = &s.latency {
            out.latency_min_ns = l.min;
            out.latency_max_ns = l.max;
            out.latency_mean_ns = l.mean;
            out.latency_p99_ns = l.p99;
        }
        if let Some(m) = &s.method.margin {
            out.hybrid_margin_ns = m.final_ns;
            out.hybrid_overshoots = m.overshot;
        }
        out.busy_naps = s.method.naps.unwrap_or(0);
        if let Some(p) = &s.period {
            out.period_samples = p.samples;
            out.period_mean_ns = p.mean;
            out.period_stddev_ns = p.stddev;
            out.period_min_ns = p.min;
            out.period_max_ns = p.max;
            out.period_abs_dev_p99_ns = p.abs_deviation_p99;
        }
        out
    }
}

/// Stores the loop's statistics so far in `*out`; the loop goes on undisturbed. Allocates:
/// call it outside the time-critical part of a period.
///
/// Returns 0, or `-EINVAL` if `p` or `out` is NULL.
///
/// # Safety
/// `p` is NULL or a live loop from this thread; `out` is NULL or points to writable memory
/// for one `ts_stats`.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_stats(p: *const ts_periodic, out: *mut ts_stats) -> c_int {
    shielded(-libc::EIO, || {
        status((|| {
            // SAFETY: the caller guarantees a non-null `p` is a live loop.
            let p = unsafe { p.as_ref() }.ok_or_else(|| null("the loop"))?;
            if out.is_null() {
                return Err(null("out"));
            }
            let s = ts_stats::from(&p.inner.stats());
            // SAFETY: non-null, and the caller guarantees it is writable.
            unsafe { out.write(s) };
            Ok(())
        })())
    })
}

/// Forgets the statistics (for example after a warm-up); the grid goes on.
///
/// Returns 0, or `-EINVAL` if `p` is NULL.
///
/// # Safety
/// `p` is NULL or a live loop from this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_reset_stats(p: *mut ts_periodic) -> c_int {
    shielded(-libc::EIO, || {
        // SAFETY: the caller's guarantee for `p`.
        status(unsafe { inner_mut(p) }.map(|p| p.reset_stats()))
    })
}

fn policy_from_c(policy: ts_policy, priority: i32) -> Result<Policy, Error> {
    let rt = |make: fn(u8) -> Policy| match u8::try_from(priority) {
        Ok(v @ 1..=99) => Ok(make(v)),
        _ => Err(Error::InvalidArgument(format!(
            "a real-time priority must be 1 ..= 99, not {priority}"
        ))),
    };
    let nice = |make: fn(i32) -> Policy| match priority {
        -20..=19 => Ok(make(priority)),
        _ => Err(Error::InvalidArgument(format!(
            "a nice value must be -20 ..= 19, not {priority}"
        ))),
    };
    match policy {
        TS_POLICY_OTHER => nice(|nice| Policy::Other { nice }),
        TS_POLICY_BATCH => nice(|nice| Policy::Batch { nice }),
        TS_POLICY_FIFO => rt(|priority| Policy::Fifo { priority }),
        TS_POLICY_RR => rt(|priority| Policy::Rr { priority }),
        TS_POLICY_IDLE if priority == 0 => Ok(Policy::Idle),
        TS_POLICY_IDLE => Err(Error::InvalidArgument(format!(
            "TS_POLICY_IDLE takes priority 0, not {priority}"
        ))),
        v => Err(Error::InvalidArgument(format!(
            "unknown policy {v}: use one of the TS_POLICY_* values (0 ..= 4)"
        ))),
    }
}

/// Runs the calling thread under `policy` (a `TS_POLICY_*` value) with `priority` (1 ..= 99
/// for FIFO and RR; the nice value -20 ..= 19 for OTHER and BATCH; 0 for IDLE) until the
/// loop is freed, which restores the previous policy. Calling it again replaces the setting.
///
/// Returns 0, `-EINVAL` for NULL `p` or values out of range, `-EPERM` when the process may
/// not use the policy (`ts_last_error` says how to allow it), or another negative errno.
///
/// # Safety
/// `p` is NULL or a live loop from this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_set_policy(
    p: *mut ts_periodic,
    policy: ts_policy,
    priority: i32,
) -> c_int {
    shielded(-libc::EIO, || {
        status((|| {
            // SAFETY: the caller's guarantee for `p`.
            let p = unsafe { inner_mut(p) }?;
            p.set_policy(policy_from_c(policy, priority)?)
        })())
    })
}

/// Pins the calling thread to CPU `cpu` (0-based) until the loop is freed, which restores
/// the previous affinity. Calling it again replaces the setting.
///
/// Returns 0, `-EINVAL` for NULL `p`, a negative `cpu`, or a CPU that is offline or outside
/// the process's cpuset, or another negative errno.
///
/// # Safety
/// `p` is NULL or a live loop from this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_set_affinity(p: *mut ts_periodic, cpu: i32) -> c_int {
    shielded(-libc::EIO, || {
        status((|| {
            // SAFETY: the caller's guarantee for `p`.
            let p = unsafe { inner_mut(p) }?;
            let cpu = usize::try_from(cpu).map_err(|_| {
                Error::InvalidArgument(format!("a CPU number must be 0 or more, not {cpu}"))
            })?;
            p.pin_to_cpu(cpu)
        })())
    })
}

/// Locks the process's memory (`mlockall`: current mappings, and future ones where no
/// `RLIMIT_MEMLOCK` applies) until the loop is freed (then `munlockall`, process-wide).
/// Call it once the program's memory is allocated.
///
/// Returns 0, `-EINVAL` for NULL `p`, `-EPERM` or `-ENOMEM` when the process may not lock
/// that much (`ts_last_error` says why), or another negative errno.
///
/// # Safety
/// `p` is NULL or a live loop.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_lock_memory(p: *mut ts_periodic) -> c_int {
    shielded(-libc::EIO, || {
        // SAFETY: the caller's guarantee for `p`.
        status(unsafe { inner_mut(p) }.and_then(|p| p.lock_memory()))
    })
}

/// Sets the calling thread's timer slack to `ns` (0 is taken as 1) until the loop is freed.
/// Real-time policies ignore the slack; under SCHED_OTHER the default 50 us slack delays
/// every sleep by up to that much.
///
/// Returns 0, `-EINVAL` for NULL `p`, or another negative errno.
///
/// # Safety
/// `p` is NULL or a live loop from this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_set_timer_slack(p: *mut ts_periodic, ns: u64) -> c_int {
    shielded(-libc::EIO, || {
        // SAFETY: the caller's guarantee for `p`.
        status(unsafe { inner_mut(p) }.and_then(|p| p.set_timer_slack(ns)))
    })
}

/// Frees the loop and restores every setting it changed. NULL is ignored.
///
/// # Safety
/// `p` is NULL or a live loop from `ts_periodic_new*`, freed on the thread that created it;
/// it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_free(p: *mut ts_periodic) {
    shielded((), || {
        if !p.is_null() {
            // SAFETY: the caller guarantees `p` came from Box::into_raw in `boxed` and is
            // freed once.
            drop(unsafe { Box::from_raw(p) });
        }
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::ffi::CStr;
    use tickscope_engine::setup::{current_policy, current_timer_slack};

    /// The calling thread's last error message, as an owned string.
    pub(crate) fn last_error() -> String {
        // SAFETY: ts_last_error never returns NULL and the string lives until the next
        // failing call on this thread.
        unsafe { CStr::from_ptr(ts_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_an_error_code_and_a_reason() {
        let rc = shielded(-libc::EIO, || -> c_int { panic!("deliberate") });
        assert_eq!(rc, -libc::EIO);
        assert!(last_error().contains("panic") && last_error().contains("deliberate"));
    }

    #[test]
    fn the_loop_through_the_abi_ticks_and_restores_its_settings_when_freed() {
        let slack = current_timer_slack();
        let policy = current_policy().unwrap();
        let mut opts = default_options(0, TS_STRATEGY_SLEEP);
        // SAFETY: `opts` is a valid, writable ts_options.
        assert_eq!(
            unsafe { ts_options_init(&mut opts, 300_000, TS_STRATEGY_SLEEP) },
            0
        );
        opts.overrun = TS_OVERRUN_CATCH_UP;
        // SAFETY: `opts` is initialised.
        let p = unsafe { ts_periodic_new_with(&opts) };
        assert!(!p.is_null(), "{}", last_error());
        // SAFETY: `p` is live on this thread; the out-pointers are valid.
        unsafe {
            assert_eq!(ts_periodic_set_timer_slack(p, 7), 0);
            assert_eq!(ts_periodic_set_policy(p, TS_POLICY_BATCH, 0), 0);
            assert_eq!(current_timer_slack(), 7);
            let mut ticks = [ts_tick::default(); 3];
            for t in &mut ticks {
                assert_eq!(ts_periodic_wait(p, t), 0);
            }
            assert_eq!(ticks[2].expiry_ns - ticks[0].expiry_ns, 600_000);
            let mut s = ts_stats::default();
            assert_eq!(ts_periodic_stats(p, &mut s), 0);
            assert_eq!((s.samples, s.period_samples, s.period_ns), (3, 2, 300_000));
            assert!(s.latency_min_ns <= s.latency_p99_ns && s.latency_p99_ns <= s.latency_max_ns);
            assert_eq!(ts_periodic_reset_stats(p), 0);
            assert_eq!(ts_periodic_stats(p, &mut s), 0);
            assert_eq!(s.samples, 0);
            ts_periodic_free(p);
        }
        assert_eq!(current_timer_slack(), slack);
        assert_eq!(current_policy().unwrap(), policy);
    }

    #[test]
    fn busy_and_hybrid_through_the_abi_report_their_guard_and_margin() {
        let mut opts = default_options(200_000, TS_STRATEGY_BUSY);
        opts.busy_sleep_every = 1;
        // SAFETY: `opts` is initialised; `p` is live on this thread until freed here.
        unsafe {
            let p = ts_periodic_new_with(&opts);
            assert!(!p.is_null(), "{}", last_error());
            let mut t = ts_tick::default();
            let mut s = ts_stats::default();
            for _ in 0..20 {
                assert_eq!(ts_periodic_wait(p, &mut t), 0);
            }
            assert_eq!(ts_periodic_stats(p, &mut s), 0);
            assert!(s.busy_naps > 0 && s.hybrid_margin_ns == 0, "{s:?}");
            ts_periodic_free(p);

            let p = ts_periodic_new(200_000, TS_STRATEGY_HYBRID);
            assert!(!p.is_null(), "{}", last_error());
            for _ in 0..20 {
                assert_eq!(ts_periodic_wait(p, &mut t), 0);
            }
            assert_eq!(ts_periodic_stats(p, &mut s), 0);
            assert!(s.hybrid_margin_ns > 0 && s.busy_naps == 0, "{s:?}");
            ts_periodic_free(p);
        }
    }

    #[test]
    fn unknown_values_are_named_in_the_error() {
        assert!(ts_periodic_new(1_000_000, 5).is_null());
        assert!(
            last_error().contains("unknown strategy 5"),
            "{}",
            last_error()
        );
        assert!(policy_from_c(TS_POLICY_FIFO, 99).is_ok());
        assert!(policy_from_c(TS_POLICY_FIFO, 256 + 50).is_err());
        assert!(policy_from_c(TS_POLICY_OTHER, -21).is_err());
        assert_eq!(
            strategy_from_c(TS_STRATEGY_SLEEP, 0, 0).unwrap(),
            Strategy::Sleep
        );
    }
}

/// Causes a `ts_explanation` holds at most (the most frequent ones).
pub const TS_EXPLAIN_CAUSES: usize = 16;

/// One cause of late wake-ups (`ts_periodic_explanation`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ts_explain_cause {
    /// The cause, NUL-terminated, in `tickscope run --explain`'s words (`other thread`,
    /// `irq`, `exit from idle`, …), cut at 31 bytes.
    pub cause: [c_char; 32],
    /// Late wake-ups it caused.
    pub count: u64,
    /// Their latencies summed, ns.
    pub total_ns: i64,
    /// The largest of them, ns.
    pub max_ns: i64,
}

/// Why a loop's wake-ups were late, so far (`ts_periodic_explanation`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ts_explanation {
    /// Where the causes come from, NUL-terminated: `bpf` or `tracefs`.
    pub backend: [c_char; 16],
    /// Wake-ups later than the threshold since explanation was turned on.
    pub late: u64,
    /// Of those, not attributed yet (in the ring, or waiting for their trace events).
    pub pending: u64,
    /// Of those, dropped because the ring was full (never explained); the causes' counts
    /// add up to `late - pending - dropped`.
    pub dropped: u64,
    /// Entries used in `causes`.
    pub n_causes: u32,
    /// The causes, most frequent first (at most `TS_EXPLAIN_CAUSES`).
    pub causes: [ts_explain_cause; 16],
}

/// Copies `text` into `out`, cut so that a NUL always ends it.
#[cfg_attr(not(feature = "explain"), allow(dead_code))]
fn c_text<const N: usize>(text: &str, out: &mut [c_char; N]) {
    *out = [0; N];
    for (o, b) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *o = b as c_char;
    }
}

#[cfg(feature = "explain")]
fn explain_on(p: &mut Periodic, threshold_ns: i64) -> Result<(), Error> {
    p.explain(threshold_ns)
}

#[cfg(not(feature = "explain"))]
fn explain_on(_: &mut Periodic, _: i64) -> Result<(), Error> {
    Err(Error::Unsupported(
        "this libtickscope was built without the explain feature (cargo build -p tickscope \
         --features explain)"
            .into(),
    ))
}

#[cfg(feature = "explain")]
fn explanation_of(p: &Periodic) -> Result<ts_explanation, Error> {
    let e = p.explanation().ok_or_else(|| {
        Error::InvalidArgument("explanation is off: call ts_periodic_explain first".into())
    })?;
    let mut out = ts_explanation {
        late: e.late,
        pending: e.pending,
        dropped: e.dropped,
        ..ts_explanation::default()
    };
    c_text(&e.backend, &mut out.backend);
    for (slot, c) in out.causes.iter_mut().zip(&e.causes) {
        c_text(&c.cause, &mut slot.cause);
        slot.count = c.count;
        slot.total_ns = c.total_ns;
        slot.max_ns = c.max_ns;
        out.n_causes += 1;
    }
    Ok(out)
}

#[cfg(not(feature = "explain"))]
fn explanation_of(p: &Periodic) -> Result<ts_explanation, Error> {
    let _ = p;
    Err(Error::Unsupported(
        "this libtickscope was built without the explain feature".into(),
    ))
}

/// Turns on explanation of the loop's wake-ups later than `threshold_ns`: each is broken
/// into its causes by the trace capture and attribution of `tickscope run --explain`, on a
/// housekeeping thread the library starts; `ts_periodic_wait` only hands late wake-ups over
/// (no lock, no allocation, no system call). Read the result with `ts_periodic_explanation`.
///
/// Returns 0; `-EPERM` when tracing is not permitted (root, or `CAP_BPF` and `CAP_PERFMON`:
/// `ts_last_error` says so); `-ENOTSUP` when the library was built without its `explain`
/// feature; `-EINVAL` if `p` is NULL or the threshold is negative.
///
/// # Safety
/// `p` is NULL or a live loop from this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_explain(p: *mut ts_periodic, threshold_ns: i64) -> c_int {
    shielded(-libc::EIO, || {
        // SAFETY: the caller's guarantee for `p`.
        status(unsafe { inner_mut(p) }.and_then(|p| explain_on(p, threshold_ns)))
    })
}

/// Fills `out` with why the loop's wake-ups were late so far (`ts_periodic_explain`). Takes
/// a lock and copies: call it between waits, like `ts_periodic_stats`.
///
/// Returns 0; `-EINVAL` if `p` or `out` is NULL or explanation is off; `-ENOTSUP` when the
/// library was built without its `explain` feature.
///
/// # Safety
/// `p` is NULL or a live loop from this thread; `out` is NULL or points to writable memory
/// for one `ts_explanation`.
#[no_mangle]
pub unsafe extern "C" fn ts_periodic_explanation(
    p: *const ts_periodic,
    out: *mut ts_explanation,
) -> c_int {
    shielded(-libc::EIO, || {
        status((|| {
            // SAFETY: the caller guarantees a non-null `p` is a live loop.
            let p = unsafe { p.as_ref() }.ok_or_else(|| null("the loop"))?;
            if out.is_null() {
                return Err(null("out"));
            }
            let e = explanation_of(&p.inner)?;
            // SAFETY: non-null, and the caller guarantees it is writable.
            unsafe { out.write(e) };
            Ok(())
        })())
    })
}
