//! When real-time throttling can interrupt a spinning method.
//!
//! The kernel lets real-time tasks (SCHED_FIFO, SCHED_RR) use at most
//! `sched_rt_runtime_us` of every `sched_rt_period_us` (950 000 of 1 000 000 µs by default;
//! `-1` turns the limit off). A thread that spins more than that share is stopped for the
//! rest of the period whenever other tasks wait for its CPU
//! (Documentation/scheduler/sched-rt-group.rst; since Linux 6.12 the fair server's
//! 50 ms per second does the same, Documentation/scheduler/sched-deadline.rst).

use super::{MethodKind, MethodOptions};
use crate::setup::Policy;
use crate::time::Nanos;

/// One sentence when a run of `kind` under `policy` can be throttled, else `None`, in the
/// installed words ([`crate::error::set_words`]).
/// `period` is the run's period (ns); `rt_runtime_us` and `rt_period_us` are the values of
/// `/proc/sys/kernel/sched_rt_runtime_us` and `sched_rt_period_us` (`None` if unreadable).
pub fn throttle_warning(
    kind: MethodKind,
    options: &MethodOptions,
    policy: &Policy,
    period: Nanos,
    rt_runtime_us: Option<i64>,
    rt_period_us: Option<i64>,
) -> Option<String> {
    if !matches!(policy, Policy::Fifo { .. } | Policy::Rr { .. }) {
        return None;
    }
    let (runtime, rt_period) = (rt_runtime_us?, rt_period_us?);
    if runtime < 0 || rt_period <= 0 || runtime >= rt_period || period <= 0 {
        return None;
    }
    let allowed = runtime as f64 / rt_period as f64;
    let spin = (kind.descriptor().spin?)(options, period)?;
    let spin_share = spin.share;
    let naps = spin.note.map(|m| m.to_string()).unwrap_or_default();
    if spin_share <= allowed {
        return None;
    }
    Some(format!(
        "{} under {} spins about {:.0} % of a CPU, more than the {:.1} % real-time tasks may \
         use (sched_rt_runtime_us {runtime} per sched_rt_period_us {rt_period}): whenever \
         other tasks wait for that CPU the kernel stops this thread for the rest of each \
         throttling period, up to {} ms per second{naps}; expect gaps of that size",
        kind.name(),
        policy.name(),
        100.0 * spin_share,
        100.0 * allowed,
        (rt_period - runtime) / 1000,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wait::Margin;

    const FIFO: Policy = Policy::Fifo { priority: 90 };
    const MS: Nanos = 1_000_000;

    fn warn(kind: MethodKind, o: &MethodOptions, p: &Policy, rt: Option<i64>) -> Option<String> {
        throttle_warning(kind, o, p, MS, rt, Some(1_000_000))
    }

    #[test]
    fn busy_at_fifo_with_the_default_limit_is_warned_about() {
        let o = MethodOptions::default();
        let w = warn(MethodKind::Busy, &o, &FIFO, Some(950_000)).unwrap();
        assert!(w.contains("95.0 %") && w.contains("50 ms"), "{w}");
        let o = MethodOptions {
            busy_sleep_every: Some(1000),
            ..o
        };
        let w = warn(
            MethodKind::Busy,
            &o,
            &Policy::Rr { priority: 1 },
            Some(950_000),
        )
        .unwrap();
        assert!(w.contains("busy sleep every does not prevent it"), "{w}");
    }

    #[test]
    fn no_warning_without_throttling_or_without_an_rt_policy() {
        let o = MethodOptions::default();
        assert_eq!(warn(MethodKind::Busy, &o, &FIFO, Some(-1)), None);
        assert_eq!(warn(MethodKind::Busy, &o, &FIFO, None), None);
        assert_eq!(warn(MethodKind::Busy, &o, &FIFO, Some(1_000_000)), None);
        assert_eq!(
            warn(
                MethodKind::Busy,
                &o,
                &Policy::Other { nice: 0 },
                Some(950_000)
            ),
            None
        );
        assert_eq!(
            warn(MethodKind::NanosleepAbs, &o, &FIFO, Some(950_000)),
            None
        );
    }

    #[test]
    fn hybrid_is_warned_about_only_with_a_fixed_margin_above_the_allowed_share() {
        let with = |m| MethodOptions {
            margin: m,
            ..MethodOptions::default()
        };
        let h = MethodKind::Hybrid;
        assert_eq!(warn(h, &with(Margin::Auto), &FIFO, Some(950_000)), None);
        assert_eq!(
            warn(h, &with(Margin::Fixed(MS / 2)), &FIFO, Some(950_000)),
            None
        );
        assert!(warn(h, &with(Margin::Fixed(MS)), &FIFO, Some(950_000)).is_some());
    }
}
