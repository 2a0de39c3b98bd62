//! The C ABI of the [`Executive`]: several periodic tasks in one thread, declared in
//! `include/tickscope.h` next to the loop's functions.
//!
//! Same rules as [`crate::ffi`]: no panic crosses the boundary (`catch_unwind`), NULL
//! pointers and values out of range are errors (`-EINVAL` or NULL) with the reason in
//! `ts_last_error`, enumerations are `int32_t` values. A `ts_executive` belongs to the thread
//! that created it. A task's callback is a C function pointer plus a `void *` the library
//! hands back untouched.

#![allow(non_camel_case_types)]

use crate::error::Error;
use crate::executive::{Control, Executive, Release, Task};
use crate::ffi::{
    null, overrun_from_c, set_last_error, shielded, status, strategy_from_c, ts_overrun,
    ts_strategy, TS_MARGIN_AUTO,
};
use crate::strategy::DEFAULT_SLEEP_EVERY;
use std::ffi::{c_int, c_void};
use tickscope_engine::time::Nanos;

/// An executive (opaque): several periodic tasks run in the calling thread. Create it with
/// `ts_executive_new`, free it with `ts_executive_free`, on the thread that runs it.
pub struct ts_executive {
    inner: Executive<'static>,
}

/// What a task's callback is told at each release. Times are ns on the executive's clock.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ts_release {
    /// The task: the id `ts_executive_add` returned.
    pub task: i32,
    /// Position on the task's grid: `expiry_ns = t0 + phase + index * period`.
    pub index: u64,
    /// The expiry this release is for (absolute ns).
    pub expiry_ns: i64,
    /// When the callback was called (absolute ns).
    pub start_ns: i64,
    /// `start_ns - expiry_ns`: wake-up latency plus queueing behind tasks due earlier.
    pub latency_ns: i64,
    /// Later expiries of this task already passed at `start_ns` (skipped, or released next
    /// and late with `TS_OVERRUN_CATCH_UP`).
    pub overruns: u64,
}

/// A task's callback: return 0 to go on, anything else to make the current
/// `ts_executive_run_*` call return after this release. `user` is the pointer given to
/// `ts_executive_add`.
pub type ts_task_fn =
    Option<unsafe extern "C" fn(release: *const ts_release, user: *mut c_void) -> c_int>;

/// A task's timing. Fill it with `ts_task_options_init`, then change fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ts_task_options {
    /// The period, ns, 1 ..= 3 600 000 000 000 (1 hour).
    pub period_ns: u64,
    /// Offset of the first expiry after the executive's start, ns (default 0).
    pub phase_ns: u64,
    /// Relative deadline, ns; 0 (the default): the period.
    pub deadline_ns: u64,
    /// Declared worst-case execution time, ns; 0 (the default): none.
    pub budget_ns: u64,
    /// Among tasks due together, higher runs first; ties by shorter period (rate-monotonic),
    /// then the order added. Default 0.
    pub priority: i32,
    /// After an overrun: a `TS_OVERRUN_*` value (default `TS_OVERRUN_SKIP`;
    /// `TS_OVERRUN_RELATIVE` moves the task's grid to one period after the late release).
    pub overrun: ts_overrun,
}

/// One task's statistics since the executive first ran. All times in ns; fields of a
/// distribution with no sample are 0.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ts_task_stats {
    /// Releases run.
    pub releases: u64,
    /// Missed releases (expiries passed before a release of the task started).
    pub overruns: u64,
    /// Releases that ended after expiry + deadline.
    pub deadline_misses: u64,
    /// Releases that ran longer than the budget.
    pub budget_overruns: u64,
    /// Smallest release latency (start - expiry).
    pub latency_min_ns: i64,
    /// Largest release latency.
    pub latency_max_ns: i64,
    /// Mean release latency.
    pub latency_mean_ns: f64,
    /// 99th percentile of the release latency (histogram bucket upper bound).
    pub latency_p99_ns: i64,
    /// Largest response time (end - expiry).
    pub response_max_ns: i64,
    /// Mean response time.
    pub response_mean_ns: f64,
    /// 99th percentile of the response time.
    pub response_p99_ns: i64,
    /// Largest execution time on the thread CPU clock (0 unless measured).
    pub execution_max_ns: i64,
    /// Mean interval between consecutive starts.
    pub start_period_mean_ns: f64,
    /// Standard deviation of that interval: the start jitter.
    pub start_period_stddev_ns: f64,
    /// Median release latency.
    pub latency_p50_ns: i64,
    /// 99.9th percentile of the release latency.
    pub latency_p99_9_ns: i64,
    /// Median response time.
    pub response_p50_ns: i64,
    /// 99.9th percentile of the response time.
    pub response_p99_9_ns: i64,
    /// Mean execution time on the thread CPU clock (0 unless measured).
    pub execution_mean_ns: f64,
    /// 99th percentile of the execution time (0 unless measured).
    pub execution_p99_ns: i64,
    /// Releases that started straight from the executive's wait (not queued behind another
    /// task due at the same instant).
    pub woken: u64,
    /// Largest latency of those releases: the OS wake-up latency alone (0 without any).
    pub wakeup_latency_max_ns: i64,
}

/// The schedulability analysis of the task set (see `ts_executive_plan`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ts_plan {
    /// Least common multiple of the periods, ns; 0 when above 60 s or 10^6 releases.
    pub hyperperiod_ns: i64,
    /// Sum of budget / period.
    pub utilisation: f64,
    /// Liu & Layland's bound n(2^(1/n) - 1) (preemptive; for reference).
    pub liu_layland_bound: f64,
    /// 1 when every task's worst-case response time (non-preemptive fixed-priority
    /// analysis from the budgets) is within its deadline, else 0.
    pub schedulable: i32,
    /// Instants of the hyperperiod at which several tasks are due.
    pub coincidences: u64,
}

fn inner_mut<'a>(ex: *mut ts_executive) -> Result<&'a mut Executive<'static>, Error> {
    // SAFETY: the public functions' contracts: NULL or a live executive of this thread.
    unsafe { ex.as_mut() }
        .map(|e| &mut e.inner)
        .ok_or_else(|| null("the executive"))
}

fn as_ns(what: &str, v: u64) -> Result<Nanos, Error> {
    Nanos::try_from(v).map_err(|_| Error::InvalidArgument(format!("{what} {v} ns is too large")))
}

fn task_from_c(o: &ts_task_options) -> Result<Task, Error> {
    let mut t = Task::new(as_ns("the period", o.period_ns)?)
        .phase(as_ns("the phase", o.phase_ns)?)
        .priority(o.priority)
        .overrun(overrun_from_c(o.overrun)?);
    if o.deadline_ns > 0 {
        t = t.deadline(as_ns("the deadline", o.deadline_ns)?);
    }
    if o.budget_ns > 0 {
        t = t.budget(as_ns("the budget", o.budget_ns)?);
    }
    Ok(t)
}

/// The count, or the error's negative errno (with `ts_last_error` set).
fn count(r: Result<u64, Error>) -> i64 {
    match r {
        Ok(n) => n.min(i64::MAX as u64) as i64,
        Err(e) => {
            set_last_error(&e.to_string());
            -i64::from(e.errno())
        }
    }
}

/// An executive with no task, waiting with `strategy` (a `TS_STRATEGY_*` value, default
/// tunables: busy guard every 1000 clock reads, auto hybrid margin) on `CLOCK_MONOTONIC`.
/// Changes nothing on the system. Returns NULL, with the reason in `ts_last_error`, for an
/// unknown strategy. Free it with `ts_executive_free`.
#[no_mangle]
pub extern "C" fn ts_executive_new(strategy: ts_strategy) -> *mut ts_executive {
    shielded(std::ptr::null_mut(), || {
        match strategy_from_c(strategy, DEFAULT_SLEEP_EVERY, TS_MARGIN_AUTO) {
            Ok(s) => Box::into_raw(Box::new(ts_executive {
                inner: Executive::new(s),
            })),
            Err(e) => {
                set_last_error(&e.to_string());
                std::ptr::null_mut()
            }
        }
    })
}

/// Whether to measure each release's execution time on the thread CPU clock (`on` ≠ 0;
/// about 200 ns per read, two reads per release). Before the first run and before adding
/// tasks. Returns 0, `-EINVAL` for NULL `ex` or once the executive has run.
///
/// # Safety
/// `ex` is NULL or a live executive of this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_executive_measure_execution_time(
    ex: *mut ts_executive,
    on: c_int,
) -> c_int {
    shielded(-libc::EIO, || {
        status(inner_mut(ex).and_then(|e| e.measure_execution_time(on != 0)))
    })
}

/// Fills `*opts` with the defaults for a task of period `period_ns`: phase 0, deadline =
/// period, no budget, priority 0, `TS_OVERRUN_SKIP`. Returns 0, or `-EINVAL` if `opts` is
/// NULL.
///
/// # Safety
/// `opts` is NULL or points to writable memory for one `ts_task_options`.
#[no_mangle]
pub unsafe extern "C" fn ts_task_options_init(opts: *mut ts_task_options, period_ns: u64) -> c_int {
    shielded(-libc::EIO, || {
        if opts.is_null() {
            return status(Err(null("opts")));
        }
        let o = ts_task_options {
            period_ns,
            ..ts_task_options::default()
        };
        // SAFETY: non-null, and the caller guarantees it is writable.
        unsafe { opts.write(o) };
        0
    })
}

/// Adds a task with timing `*opts`; `callback(release, user)` runs at each release.
/// Returns the task's id (0, 1, … in the order added), or `-EINVAL` for NULL `ex`, `opts`
/// or `callback`, a field out of range, or once the executive has run.
///
/// # Safety
/// `ex` is NULL or a live executive of this thread; `opts` is NULL or an initialised
/// `ts_task_options`; `callback` and `user` stay valid while the executive lives.
#[no_mangle]
pub unsafe extern "C" fn ts_executive_add(
    ex: *mut ts_executive,
    opts: *const ts_task_options,
    callback: ts_task_fn,
    user: *mut c_void,
) -> c_int {
    shielded(-libc::EIO, || {
        let r = (|| {
            let ex = inner_mut(ex)?;
            // SAFETY: the caller guarantees a non-null `opts` is initialised.
            let o = unsafe { opts.as_ref() }.ok_or_else(|| null("opts"))?;
            let f = callback.ok_or_else(|| null("the callback"))?;
            let task = task_from_c(o)?;
            let id = ex.add(task, move |r: &Release| {
                let c = ts_release {
                    task: r.task.0 as i32,
                    index: r.index,
                    expiry_ns: r.expiry,
                    start_ns: r.start,
                    latency_ns: r.latency,
                    overruns: r.overruns,
                };
                // SAFETY: the caller guarantees `f` and `user` stay valid.
                match unsafe { f(&c, user) } {
                    0 => Control::Continue,
                    _ => Control::Stop,
                }
            })?;
            Ok(id.0 as c_int)
        })();
        match r {
            Ok(id) => id,
            Err(e) => status(Err(e)),
        }
    })
}

/// Runs every release whose expiry is at most `duration_ns` from now (the first run starts
/// the grids one shortest period from now; later runs continue them). Returns the number of
/// releases run, or a negative errno: `-EINVAL` (NULL `ex`, no task, negative duration),
/// `-ENOTSUP` (strategy), or the error of a failed wait.
///
/// # Safety
/// `ex` is NULL or a live executive of this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_executive_run_for(ex: *mut ts_executive, duration_ns: i64) -> i64 {
    shielded(-i64::from(libc::EIO), || {
        count(inner_mut(ex).and_then(|e| e.run_for(duration_ns)))
    })
}

/// Runs `releases` releases (fewer if a callback stops the run). Returns the number run or a
/// negative errno as `ts_executive_run_for`.
///
/// # Safety
/// `ex` is NULL or a live executive of this thread.
#[no_mangle]
pub unsafe extern "C" fn ts_executive_run_until(ex: *mut ts_executive, releases: u64) -> i64 {
    shielded(-i64::from(libc::EIO), || {
        count(inner_mut(ex).and_then(|e| e.run_until(releases)))
    })
}

/// Stores task `task`'s statistics in `*out`. Returns 0, or `-EINVAL` for NULL pointers or
/// an unknown task id.
///
/// # Safety
/// `ex` is NULL or a live executive of this thread; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ts_executive_task_stats(
    ex: *mut ts_executive,
    task: c_int,
    out: *mut ts_task_stats,
) -> c_int {
    shielded(-libc::EIO, || {
        status((|| {
            let ex = inner_mut(ex)?;
            if out.is_null() {
                return Err(null("out"));
            }
            let all = ex.stats();
            let s = usize::try_from(task)
                .ok()
                .and_then(|i| all.get(i))
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "unknown task {task}: the executive has {} tasks",
                        all.len()
                    ))
                })?;
            let l = s.latency.as_ref();
            let r = s.response.as_ref();
            let p = s.start_period.as_ref();
            let e = s.execution.as_ref();
            let c = ts_task_stats {
                releases: s.releases,
                overruns: s.overruns,
                deadline_misses: s.deadline_misses,
                budget_overruns: s.budget_overruns,
                latency_min_ns: l.map_or(0, |l| l.min),
                latency_max_ns: l.map_or(0, |l| l.max),
                latency_mean_ns: l.map_or(0.0, |l| l.mean),
                latency_p99_ns: l.map_or(0, |l| l.p99),
                response_max_ns: r.map_or(0, |r| r.max),
                response_mean_ns: r.map_or(0.0, |r| r.mean),
                response_p99_ns: r.map_or(0, |r| r.p99),
                execution_max_ns: e.map_or(0, |e| e.max),
                start_period_mean_ns: p.map_or(0.0, |p| p.mean),
                start_period_stddev_ns: p.map_or(0.0, |p| p.stddev),
                latency_p50_ns: l.map_or(0, |l| l.p50),
                latency_p99_9_ns: l.map_or(0, |l| l.p99_9),
                response_p50_ns: r.map_or(0, |r| r.p50),
                response_p99_9_ns: r.map_or(0, |r| r.p99_9),
                execution_mean_ns: e.map_or(0.0, |e| e.mean),
                execution_p99_ns: e.map_or(0, |e| e.p99),
                woken: s.woken,
                wakeup_latency_max_ns: s.wakeup_latency_max.unwrap_or(0),
            };
            // SAFETY: non-null, and the caller guarantees it is writable.
            unsafe { out.write(c) };
            Ok(())
        })())
    })
}

/// Stores the schedulability analysis of the tasks added so far in `*out` (see
/// `Executive::plan` in the Rust documentation for the formulas and their sources).
/// Returns 0, or `-EINVAL` for NULL pointers.
///
/// # Safety
/// `ex` is NULL or a live executive of this thread; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ts_executive_plan(ex: *mut ts_executive, out: *mut ts_plan) -> c_int {
    shielded(-libc::EIO, || {
        status((|| {
            let ex = inner_mut(ex)?;
            if out.is_null() {
                return Err(null("out"));
            }
            let p = ex.plan();
            let c = ts_plan {
                hyperperiod_ns: p.hyperperiod_ns.unwrap_or(0),
                utilisation: p.utilisation,
                liu_layland_bound: p.liu_layland_bound,
                schedulable: i32::from(p.schedulable()),
                coincidences: p.coincidences.len() as u64,
            };
            // SAFETY: non-null, and the caller guarantees it is writable.
            unsafe { out.write(c) };
            Ok(())
        })())
    })
}

/// Frees the executive. NULL is ignored.
///
/// # Safety
/// `ex` is NULL or a live executive from `ts_executive_new`, freed once on its thread.
#[no_mangle]
pub unsafe extern "C" fn ts_executive_free(ex: *mut ts_executive) {
    shielded((), || {
        if !ex.is_null() {
            // SAFETY: from Box::into_raw in ts_executive_new, freed once.
            drop(unsafe { Box::from_raw(ex) });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::tests::last_error;
    use crate::ffi::TS_STRATEGY_SLEEP;

    unsafe extern "C" fn counter(r: *const ts_release, user: *mut c_void) -> c_int {
        // SAFETY: the test passes a [u64; 2] and the library a valid release.
        let (counts, r) = unsafe { (&mut *(user as *mut [u64; 2]), &*r) };
        counts[r.task as usize] += 1;
        0
    }

    #[test]
    fn two_tasks_through_the_abi() {
        let mut counts = [0u64; 2];
        // SAFETY: pointers are valid for the calls; `counts` outlives the executive.
        unsafe {
            let ex = ts_executive_new(TS_STRATEGY_SLEEP);
            assert!(!ex.is_null());
            let mut o = ts_task_options::default();
            assert_eq!(ts_task_options_init(&mut o, 200_000), 0);
            let user = &mut counts as *mut [u64; 2] as *mut c_void;
            assert_eq!(ts_executive_add(ex, &o, Some(counter), user), 0);
            o.period_ns = 500_000;
            o.budget_ns = 10_000;
            assert_eq!(ts_executive_add(ex, &o, Some(counter), user), 1);
            let mut plan = ts_plan::default();
            assert_eq!(ts_executive_plan(ex, &mut plan), 0);
            assert_eq!((plan.hyperperiod_ns, plan.schedulable), (1_000_000, 1));
            assert_eq!(ts_executive_run_until(ex, 7), 7);
            let mut s = ts_task_stats::default();
            assert_eq!(ts_executive_task_stats(ex, 1, &mut s), 0);
            assert_eq!(s.releases, counts[1]);
            // The figures the CLI's task table shows are all there, in order.
            assert!(s.latency_p50_ns <= s.latency_p99_ns && s.latency_p99_ns <= s.latency_max_ns);
            assert!(
                s.latency_p99_ns <= s.latency_p99_9_ns && s.latency_p99_9_ns <= s.latency_max_ns
            );
            assert!(
                s.response_p50_ns >= s.latency_p50_ns && s.response_p99_9_ns <= s.response_max_ns
            );
            assert!(s.woken <= s.releases);
            assert!(s.wakeup_latency_max_ns <= s.latency_max_ns);
            assert_eq!(
                (s.execution_mean_ns, s.execution_p99_ns),
                (0.0, 0),
                "not measured"
            );
            assert_eq!(ts_executive_task_stats(ex, 2, &mut s), -libc::EINVAL);
            assert!(last_error().contains("unknown task 2"), "{}", last_error());
            assert_eq!(ts_executive_add(ex, &o, Some(counter), user), -libc::EINVAL);
            assert_eq!(ts_executive_run_for(ex, -1), -i64::from(libc::EINVAL));
            ts_executive_free(ex);
        }
        assert_eq!(counts[0] + counts[1], 7);
    }

    #[test]
    fn nulls_and_unknown_values_are_errors() {
        // SAFETY: NULLs are allowed by every function's contract.
        unsafe {
            assert!(ts_executive_new(9).is_null());
            assert_eq!(
                ts_executive_run_until(std::ptr::null_mut(), 1),
                -i64::from(libc::EINVAL)
            );
            let ex = ts_executive_new(TS_STRATEGY_SLEEP);
            let o = ts_task_options {
                period_ns: 1000,
                overrun: 7,
                ..Default::default()
            };
            assert_eq!(
                ts_executive_add(ex, &o, Some(counter), std::ptr::null_mut()),
                -libc::EINVAL
            );
            assert!(last_error().contains("overrun"));
            assert_eq!(
                ts_executive_add(ex, &o, None, std::ptr::null_mut()),
                -libc::EINVAL
            );
            assert_eq!(
                ts_executive_run_until(ex, 1),
                -i64::from(libc::EINVAL),
                "no task"
            );
            ts_executive_free(ex);
            ts_executive_free(std::ptr::null_mut());
        }
    }
}
