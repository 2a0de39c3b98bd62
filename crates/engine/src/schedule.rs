//! Comparing wake-up methods: the order in which a comparison runs them.
//!
//! `tickscope run --method a,b,c --rounds N` measures each method in turn with every other
//! setting unchanged, and repeats the whole round N times, interleaved, so that a machine
//! whose noise drifts over minutes does not favour the methods that happened to run in its
//! quiet stretch. Each round starts one method further along the list (round 1: a b c,
//! round 2: b c a, round 3: c a b), so that no method always runs first, or always right
//! after the same neighbour (a busy-wait warms the CPU for whoever follows it). Every run
//! starts the same way — fresh threads, the same setup, the first expiry the same distance
//! ahead — and no sample is discarded.

use crate::run::RunConfig;
use crate::wait::{self, MethodKind};

/// One run of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRun {
    /// The method measured.
    pub method: MethodKind,
    /// The round, from 1.
    pub round: u32,
    /// Position in the overall order, from 0.
    pub order: u32,
}

impl PlannedRun {
    /// This run's configuration: `base` with this run's method — the one place a run's
    /// method is set.
    pub fn config(&self, base: &RunConfig) -> RunConfig {
        RunConfig {
            method: self.method,
            ..base.clone()
        }
    }
}

/// Which of `methods` can run with `base`'s clock, threads and period: those that can, in
/// order, and the others, each with the engine's reason ([`wait::check`], the same check
/// every run makes before it starts). A comparison of every method (`--method all`) runs
/// the first list and reports the second.
pub fn runnable(
    base: &RunConfig,
    methods: &[MethodKind],
) -> (Vec<MethodKind>, Vec<(MethodKind, String)>) {
    let mut can = Vec::new();
    let mut cannot = Vec::new();
    for &m in methods {
        match wait::check(m, base.clock, base.cpus.len(), base.period_ns) {
            Ok(()) => can.push(m),
            Err(why) => cannot.push((m, why)),
        }
    }
    (can, cannot)
}

/// The runs of `rounds` rounds over `methods`, in the order they run (see the module docs).
/// Empty when either is empty or zero.
pub fn schedule(methods: &[MethodKind], rounds: u32) -> Vec<PlannedRun> {
    let n = methods.len();
    let mut out = Vec::with_capacity(n * rounds as usize);
    for round in 1..=rounds {
        let start = (round as usize - 1) % n.max(1);
        for k in 0..n {
            out.push(PlannedRun {
                method: methods[(start + k) % n],
                round,
                order: out.len() as u32,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use MethodKind::{Busy, Hybrid, NanosleepAbs};

    #[test]
    fn every_method_is_checked_and_a_run_gets_its_own() {
        let mut base = RunConfig::new(1_000_000);
        base.cpus = vec![None, None]; // itimer measures one thread only
        let (can, cannot) = runnable(&base, MethodKind::ALL);
        assert_eq!(can.len() + cannot.len(), MethodKind::ALL.len());
        assert!(can.contains(&NanosleepAbs));
        assert_eq!(
            cannot.iter().map(|c| c.0).collect::<Vec<_>>(),
            [MethodKind::Itimer]
        );
        for planned in schedule(&can, 2) {
            assert_eq!(planned.config(&base).method, planned.method);
        }
    }

    #[test]
    fn rounds_rotate_and_orders_count_up() {
        let runs = schedule(&[NanosleepAbs, Busy, Hybrid], 3);
        let methods: Vec<MethodKind> = runs.iter().map(|r| r.method).collect();
        assert_eq!(
            methods,
            vec![
                NanosleepAbs,
                Busy,
                Hybrid,
                Busy,
                Hybrid,
                NanosleepAbs,
                Hybrid,
                NanosleepAbs,
                Busy
            ]
        );
        assert!(runs.iter().enumerate().all(|(k, r)| r.order == k as u32));
        assert_eq!(runs[3].round, 2);
    }

    #[test]
    fn every_method_runs_once_per_round() {
        let runs = schedule(MethodKind::ALL, 4);
        for round in 1..=4 {
            let mut in_round: Vec<&str> = runs
                .iter()
                .filter(|r| r.round == round)
                .map(|r| r.method.name())
                .collect();
            in_round.sort_unstable();
            let mut all: Vec<&str> = MethodKind::ALL.iter().map(|m| m.name()).collect();
            all.sort_unstable();
            assert_eq!(in_round, all);
        }
        assert!(schedule(&[], 3).is_empty());
        assert!(schedule(&[Busy], 0).is_empty());
    }
}
