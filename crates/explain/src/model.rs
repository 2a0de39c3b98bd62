//! Which model breaks a late wake-up down: the timer's ([`crate::attribution`], a thread
//! that waits on a timer: expiry → interrupt → callback → switch-in → return) or the
//! spinning thread's ([`crate::spin`], a thread that reads the clock until its expiry, so
//! that no timer stands between the expiry and it). The method's descriptor says which
//! ([`Setting::spins`], [`Setting::timer_before_expiry`]); the events say whether a
//! `hybrid` wake-up was late in its sleep (the timer's model) or in its spin.

use crate::attribution::{self, Breakdown, LateSample, Setting};
use crate::events::Event;
use crate::spin;

/// Breaks `sample` into segments and names its cause from `events` (every traced CPU, in
/// time order): by the spinning thread's model for a method that spins to its expiry
/// (`busy`) and for a `hybrid` wake-up whose sleep's timer fired before the expiry (late
/// while spinning) — where the events show the thread's state at the expiry — else by the
/// timer's. Segments and residual sum to the latency exactly, in either model.
pub fn attribute(sample: &LateSample, setting: &Setting, events: &[Event]) -> Breakdown {
    if setting.spins {
        if let Some(b) = spin::attribute(sample, setting, events) {
            return b;
        }
    }
    let b = attribution::attribute_timer(sample, setting, events);
    // The timer's model flags `no_timer` for a hybrid thread whose timer fired before the
    // expiry: it was late while spinning.
    if setting.timer_before_expiry && !setting.spins && b.flags.iter().any(|f| f == "no_timer") {
        if let Some(s) = spin::attribute(sample, setting, events) {
            return s;
        }
    }
    b
}

/// [`attribute`] that asks whether a CPU quota applies to the thread's group (`quota`, e.g.
/// [`crate::cpu_quota::applies`], which reads `/proc` and the cgroup files) only when the
/// answer can change the breakdown: when the events suggest a CFS throttle. Attributed
/// first with [`Setting::cpu_quota`] as given; if that was unknown (`None`) and a detail of
/// kind `cfs_throttled` stands in the breakdown, `quota` is called, and a quota it rules out
/// (`Some(false)`) attributes again with that answer. The result equals [`attribute`] with
/// `quota()`'s answer in [`Setting::cpu_quota`]: an unknown and a present quota are read
/// alike, and a throttle that is not ruled out is always kept in its segment's details
/// (`attribution::possible`), so where none stands the answer was never consulted.
///
/// # Panics
/// Never.
pub fn attribute_reading_quota(
    sample: &LateSample,
    setting: &Setting,
    events: &[Event],
    quota: impl FnOnce() -> Option<bool>,
) -> Breakdown {
    let b = attribute(sample, setting, events);
    let throttle = b
        .segments
        .iter()
        .flat_map(|s| &s.details)
        .any(|d| d.kind == "cfs_throttled");
    if setting.cpu_quota.is_some() || !throttle {
        return b;
    }
    match quota() {
        Some(false) => {
            let known = Setting {
                cpu_quota: Some(false),
                ..setting.clone()
            };
            attribute(sample, &known, events)
        }
        _ => b,
    }
}

/// [`attribution::label_own_threads`], naming a spinning thread's cause again as
/// the spinning thread's model does ([`spin::UNNAMED`] for what no evidence names).
pub fn label_own_threads(b: &mut Breakdown, own: impl FnMut(i32) -> bool) {
    if attribution::label_own_threads(b, own) && b.flags.iter().any(|f| f == spin::FLAG) {
        b.cause = spin::name(b.cause.clone());
    }
}
