//! When real-time throttling can interrupt a spinning method.
//!
//! The kernel lets real-time tasks (SCHED_FIFO, SCHED_RR) use at most
//! `sched_rt_runtime_us` of every `sched_rt_period_us` (950 000 of 1 000 000 µs by default;
//! `-1` turns the limit off). A thread that spins more than that share is stopped for the
//! rest of the period whenever other tasks wait for its CPU
//! (Documentation/scheduler/sched-rt-group.rst; since Linux 6.12 the fair server's
//! 50 ms per second does the same, Documentation/scheduler/sched-deadline.rst).
//!
//! The other side of the same rule: while a real-time thread spins on a CPU, every other
//! task of lower priority on that CPU — shells, sshd, kernel workers — waits, and gets only
//! what throttling gives back (5 % by default). [`starvation`] states what a run leaves
//! them; whether that needs the user's confirmation is the caller's decision.

use super::{MethodKind, MethodOptions};
use crate::setup::Policy;
use crate::time::Nanos;

/// One sentence when a run of `kind` under `policy` can be throttled, else `None`.
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
    let spin_share = spin_share(kind, options, period)?;
    if spin_share <= allowed {
        return None;
    }
    let naps = if kind == MethodKind::Busy && options.busy_sleep_every.is_some() {
        " (napping every N readings does not prevent it: the naps give no CPU time back)"
    } else {
        ""
    };
    Some(format!(
        "{} under {} spins about {:.0} % of a CPU, more than the {:.1} % real-time tasks may \
         use (sched_rt_runtime_us {runtime} per sched_rt_period_us {rt_period}): whenever \
         other tasks wait for that CPU the kernel stops this thread for the rest of each \
         throttling period, up to {} ms per second{naps}; expect gaps of that size; and the \
         other tasks on that CPU get only those {} ms and wait up to {} ms at a time",
        kind.name(),
        policy.name(),
        100.0 * spin_share,
        100.0 * allowed,
        (rt_period - runtime) / 1000,
        (rt_period - runtime) / 1000,
        runtime / 1000,
    ))
}

/// The share of each period (0 < share ≤ 1) that `kind` spins on its CPU instead of
/// sleeping: 1 for `busy` (its `--busy-sleep-every` naps give no CPU time back), margin ÷
/// period for `hybrid` with a fixed margin; `None` for methods that sleep, and for the
/// hybrid's auto margin, which never exceeds half the period (see [`super::margin`]).
pub fn spin_share(kind: MethodKind, options: &MethodOptions, period: Nanos) -> Option<f64> {
    (kind.descriptor().spin_share)(options, period)
}

/// What real-time threads that spin leave the other tasks on each CPU they hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Starvation {
    /// Share of each period the measuring thread holds the CPU (0 ..= 1): its spin share,
    /// capped by a SCHED_DEADLINE reservation's runtime ÷ period.
    pub held_share: f64,
    /// Share of the CPU left to every other task (0 ..= 1): what the spin leaves, or what RT
    /// throttling gives back, whichever is more.
    pub others_share: f64,
    /// The longest the other tasks wait at a time, ns; `None` when nothing bounds it but the
    /// end of the run (a `busy` spin with RT throttling off).
    pub longest_wait_ns: Option<Nanos>,
    /// The RT throttling in force, `(sched_rt_runtime_us, sched_rt_period_us)`, when it
    /// limits the spin (`None`: off, unreadable, or not what limits it).
    pub throttling: Option<(i64, i64)>,
}

/// What a run of `kind` under `policy` every `period` ns leaves the other tasks on each CPU
/// a measuring thread holds, or `None` when the policy is not real-time (SCHED_OTHER tasks
/// share the CPU fairly) or the method does not spin ([`spin_share`]).
///
/// A SCHED_FIFO/RR thread runs until it blocks or is throttled: RT throttling lets it use
/// `rt_runtime_us` of each `rt_period_us` (Documentation/scheduler/sched-rt-group.rst). A
/// SCHED_DEADLINE thread is stopped when its reservation's runtime is used up
/// (Documentation/scheduler/sched-deadline.rst). `rt_runtime_us` and `rt_period_us` are the
/// values of `/proc/sys/kernel/sched_rt_runtime_us` and `sched_rt_period_us` (`None` if
/// unreadable, read as throttling off).
pub fn starvation(
    kind: MethodKind,
    options: &MethodOptions,
    policy: &Policy,
    period: Nanos,
    rt_runtime_us: Option<i64>,
    rt_period_us: Option<i64>,
) -> Option<Starvation> {
    let share = spin_share(kind, options, period)?;
    let spin_ns = (share * period as f64) as Nanos;
    match *policy {
        Policy::Deadline {
            runtime_ns,
            period_ns,
            ..
        } => {
            let held = share.min(runtime_ns as f64 / period_ns.max(1) as f64);
            Some(Starvation {
                held_share: held,
                others_share: 1.0 - held,
                longest_wait_ns: Some(spin_ns.min(runtime_ns)),
                throttling: None,
            })
        }
        Policy::Fifo { .. } | Policy::Rr { .. } => {
            let limit = match (rt_runtime_us, rt_period_us) {
                (Some(r), Some(p)) if r >= 0 && p > 0 && r < p => Some((r, p)),
                _ => None,
            };
            let unbounded_spin = share >= 1.0;
            let allowed = limit.map(|(r, p)| (r, p, r as f64 / p as f64));
            Some(match allowed {
                Some((r, p, allowed)) if allowed < share => Starvation {
                    held_share: allowed,
                    others_share: 1.0 - allowed,
                    longest_wait_ns: Some(if unbounded_spin {
                        r * 1000
                    } else {
                        spin_ns.min(r * 1000)
                    }),
                    throttling: Some((r, p)),
                },
                _ => Starvation {
                    held_share: share,
                    others_share: 1.0 - share,
                    longest_wait_ns: (!unbounded_spin).then_some(spin_ns),
                    throttling: None,
                },
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Margin;
    use super::*;

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
        assert!(w.contains("other tasks on that CPU"), "{w}");
        assert!(w.contains("wait up to 950 ms"), "{w}");
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
        assert!(
            w.contains("napping every N readings does not prevent it"),
            "{w}"
        );
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

    #[test]
    fn starvation_states_what_other_tasks_get() {
        let o = MethodOptions::default();
        let s = |kind, o: &MethodOptions, p: &Policy, rt: Option<i64>| {
            starvation(kind, o, p, MS, rt, Some(1_000_000))
        };
        // busy under fifo with the default limit: others get 5 %, in waits of up to 950 ms.
        let b = s(MethodKind::Busy, &o, &FIFO, Some(950_000)).unwrap();
        assert!((b.others_share - 0.05).abs() < 1e-9, "{b:?}");
        assert_eq!(b.longest_wait_ns, Some(950 * MS));
        assert_eq!(b.throttling, Some((950_000, 1_000_000)));
        // Throttling off: nothing, until the run ends.
        let b = s(MethodKind::Busy, &o, &FIFO, Some(-1)).unwrap();
        assert_eq!((b.others_share, b.longest_wait_ns), (0.0, None));
        // A hybrid spinning 60 % leaves 40 %, in waits of 0.6 ms.
        let h = MethodOptions {
            margin: Margin::Fixed(600_000),
            ..MethodOptions::default()
        };
        let x = s(MethodKind::Hybrid, &h, &FIFO, Some(950_000)).unwrap();
        assert!((x.others_share - 0.4).abs() < 1e-9, "{x:?}");
        assert_eq!(x.longest_wait_ns, Some(600_000));
        // SCHED_DEADLINE holds the CPU at most for its runtime.
        let dl = Policy::Deadline {
            runtime_ns: MS / 10,
            deadline_ns: MS,
            period_ns: MS,
        };
        let d = s(MethodKind::Busy, &o, &dl, Some(950_000)).unwrap();
        assert!((d.held_share - 0.1).abs() < 1e-9, "{d:?}");
        assert_eq!(d.longest_wait_ns, Some(MS / 10));
        // Nothing to say for sleeping methods, the auto margin or SCHED_OTHER.
        assert_eq!(s(MethodKind::NanosleepAbs, &o, &FIFO, Some(950_000)), None);
        assert_eq!(s(MethodKind::Hybrid, &o, &FIFO, Some(950_000)), None);
        assert_eq!(
            s(
                MethodKind::Busy,
                &o,
                &Policy::Other { nice: 0 },
                Some(950_000)
            ),
            None
        );
    }
}
