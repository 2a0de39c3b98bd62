//! Schedulability analysis of a task set before it runs: hyperperiod, utilisation, the
//! Liu & Layland bound, response-time analysis for non-preemptive fixed priorities, and the
//! coincidence table.
//!
//! **Sources.**
//! * C. L. Liu and J. W. Layland, "Scheduling Algorithms for Multiprogramming in a
//!   Hard-Real-Time Environment", Journal of the ACM 20(1), 1973: rate-monotonic priorities
//!   and the utilisation bound `n(2^{1/n} − 1)` (a sufficient test for *preemptive*
//!   fixed priorities with deadline = period).
//! * M. Joseph and P. Pandya, "Finding Response Times in a Real-Time System", The Computer
//!   Journal 29(5), 1986, and N. Audsley, A. Burns, M. Richardson, K. Tindell and
//!   A. Wellings, "Applying new scheduling theory to static priority pre-emptive
//!   scheduling", Software Engineering Journal 8(5), 1993: exact response times by the
//!   fixed-point iteration `R = C + Σ_hp ⌈R/T_j⌉ C_j`.
//! * The executive runs every task in one thread, so a release is never preempted: once a
//!   lower-priority task has started, a higher-priority one waits for it to end. The
//!   analysis is therefore the *non-preemptive* variant of the iteration, with a blocking
//!   term — the longest budget of a lower-priority task — and a check of every release in
//!   the level-i busy period, as corrected by R. I. Davis, A. Burns, R. J. Bril and
//!   J. J. Lukkien, "Controller Area Network (CAN) schedulability analysis: Refuted,
//!   revisited and revised", Real-Time Systems 35(3), 2007 (section 3):
//!
//!   ```text
//!   B_i    = max { C_j : j of lower priority }                 (0 for the lowest)
//!   t_i    = B_i + Σ_{j ∈ hep(i)} ⌈t_i / T_j⌉ C_j               (level-i busy period)
//!   w_i(q) = B_i + q C_i + Σ_{j ∈ hp(i)} (⌊w_i(q) / T_j⌋ + 1) C_j,  q = 0 … ⌈t_i/T_i⌉ − 1
//!   R_i    = max_q ( w_i(q) + C_i − q T_i )
//!   ```
//!
//!   `w_i(q)` is when the q-th release of the busy period starts; `+1` because a
//!   higher-priority task due at the very instant a release would start runs first (the
//!   executive's tie rule). Phases are ignored: all tasks released together is the worst
//!   case. Tasks without a declared budget count as 0 ns; the executive's own overhead
//!   (a dispatch costs tens of ns, see `bench/README.md`) and the wake-up latency are not
//!   included — add them to the budgets.

use super::rate::release_offset;
use super::task::{short_duration, Task, TaskId};
use tickscope_engine::time::{Nanos, NS_PER_SEC};

/// Hyperperiods longer than this are not enumerated, ns (60 s).
pub const MAX_HYPERPERIOD_NS: Nanos = 60 * NS_PER_SEC;
/// Hyperperiods with more releases than this are not enumerated.
pub const MAX_PLAN_RELEASES: u64 = 1_000_000;
/// A busy period or response time beyond this is reported as unbounded, ns (1 hour).
const MAX_ANALYSIS_NS: Nanos = 3600 * NS_PER_SEC;

/// One task in a [`Plan`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlanTask {
    /// The task (order added).
    pub id: TaskId,
    /// Its name.
    pub name: String,
    /// Dispatch rank: 0 runs first among tasks released together.
    pub rank: usize,
    /// Period, ns.
    pub period_ns: Nanos,
    /// Relative deadline, ns.
    pub deadline_ns: Nanos,
    /// Declared budget, ns (`None`: counted as 0).
    pub budget_ns: Option<Nanos>,
    /// Blocking by a lower-priority release already running, ns: the longest lower-priority
    /// budget.
    pub blocking_ns: Nanos,
    /// Worst-case response time from the analysis, ns; `None` when the busy period does not
    /// end (utilisation ≥ 1) within an hour.
    pub response_ns: Option<Nanos>,
}

impl PlanTask {
    /// Whether the analysis bounds the response time within the deadline.
    pub fn schedulable(&self) -> bool {
        self.response_ns.is_some_and(|r| r <= self.deadline_ns)
    }
}

/// An instant of the hyperperiod at which several tasks are due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coincidence {
    /// Offset from the start of the hyperperiod (`t0`), ns.
    pub offset_ns: Nanos,
    /// The tasks due, in the order they run (by rank).
    pub tasks: Vec<TaskId>,
}

/// The analysis of a task set (see the module documentation for the formulas and sources).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The tasks in dispatch order (rank 0 first).
    pub tasks: Vec<PlanTask>,
    /// `Σ C_i / T_i` over the declared budgets.
    pub utilisation: f64,
    /// Liu & Layland's bound `n(2^{1/n} − 1)` for n tasks (1 for none).
    pub liu_layland_bound: f64,
    /// The least common multiple of the periods, ns, when at most [`MAX_HYPERPERIOD_NS`] and
    /// [`MAX_PLAN_RELEASES`] releases.
    pub hyperperiod_ns: Option<Nanos>,
    /// Why the hyperperiod was not enumerated, when it was not.
    pub hyperperiod_refused: Option<String>,
    /// The instants of the hyperperiod (phases taken modulo it) at which two or more tasks
    /// are due, in time order; empty when the hyperperiod was refused.
    pub coincidences: Vec<Coincidence>,
}

fn gcd(a: Nanos, b: Nanos) -> Nanos {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `⌈a / b⌉` for a ≥ 0, b > 0.
fn ceil_div(a: Nanos, b: Nanos) -> Nanos {
    (a + b - 1) / b
}

impl Plan {
    /// Analyses `tasks` (in the order they were added), ranked as the executive ranks them:
    /// higher [`Task::priority`] first, then shorter period, then order added.
    pub fn of(tasks: &[Task]) -> Plan {
        let mut order: Vec<usize> = (0..tasks.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(tasks[i].priority), tasks[i].period, i));
        let ranked: Vec<&Task> = order.iter().map(|&i| &tasks[i]).collect();
        let c = |t: &Task| t.budget.unwrap_or(0);
        let n = tasks.len();
        let utilisation = tasks.iter().map(|t| c(t) as f64 / t.period as f64).sum();
        let liu_layland_bound = if n == 0 {
            1.0
        } else {
            n as f64 * (2f64.powf(1.0 / n as f64) - 1.0)
        };
        let plan_tasks = ranked
            .iter()
            .enumerate()
            .map(|(rank, t)| {
                let blocking = ranked[rank + 1..].iter().map(|t| c(t)).max().unwrap_or(0);
                PlanTask {
                    id: TaskId(order[rank]),
                    name: t.display_name(),
                    rank,
                    period_ns: t.period,
                    deadline_ns: t.deadline_ns(),
                    budget_ns: t.budget,
                    blocking_ns: blocking,
                    response_ns: response_time(&ranked, rank, blocking),
                }
            })
            .collect();
        let (hyperperiod_ns, hyperperiod_refused) = match hyperperiod(tasks) {
            Ok(h) => (Some(h), None),
            Err(why) => (None, Some(why)),
        };
        let coincidences = hyperperiod_ns
            .map(|h| coincidences(tasks, &order, h))
            .unwrap_or_default();
        Plan {
            tasks: plan_tasks,
            utilisation,
            liu_layland_bound,
            hyperperiod_ns,
            hyperperiod_refused,
            coincidences,
        }
    }

    /// Whether every task is schedulable by the analysis.
    pub fn schedulable(&self) -> bool {
        self.tasks.iter().all(PlanTask::schedulable)
    }
}

/// Non-preemptive response time of `ranked[i]` (see the module documentation).
fn response_time(ranked: &[&Task], i: usize, blocking: Nanos) -> Option<Nanos> {
    let c = |t: &Task| t.budget.unwrap_or(0);
    let (ci, ti) = (c(ranked[i]), min_gap(ranked[i]));
    let hp = &ranked[..i];
    // Level-i busy period, from the budgets of i and everything above it.
    let mut t = blocking + ranked[..=i].iter().map(|t| c(t)).sum::<Nanos>();
    if t == 0 {
        return Some(0);
    }
    loop {
        let next = blocking
            + ranked[..=i]
                .iter()
                .map(|j| ceil_div(t, min_gap(j)) * c(j))
                .sum::<Nanos>();
        if next > MAX_ANALYSIS_NS {
            return None;
        }
        if next == t {
            break;
        }
        t = next;
    }
    let releases = ceil_div(t, ti).max(1);
    let mut worst = 0;
    for q in 0..releases {
        let base = blocking + q * ci;
        let mut w = base;
        loop {
            let next = base
                + hp.iter()
                    .map(|j| (w / min_gap(j) + 1) * c(j))
                    .sum::<Nanos>();
            if next > MAX_ANALYSIS_NS {
                return None;
            }
            if next == w {
                break;
            }
            w = next;
        }
        worst = worst.max(w + ci - q * ti);
    }
    Some(worst)
}

/// The shortest time between two releases of `t`, ns: its period, or for a period given as a
/// rate (a/b ns, releases rounded to the ns) ⌊a/b⌋, so the analysis stays pessimistic.
fn min_gap(t: &Task) -> Nanos {
    let (a, b) = t.exact_period_ns();
    a / b
}

/// The least common multiple of the periods, or why it is not enumerated.
fn hyperperiod(tasks: &[Task]) -> Result<Nanos, String> {
    let names = || {
        tasks
            .iter()
            .map(|t| short_duration(t.period))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A period given as a rate is the reduced fraction a/b ns; release k is at round(k·a/b),
    // so the pattern repeats after a whole number of ns that is a multiple of a/b: the least
    // common multiple of the numerators a (equal to the periods when b = 1).
    let mut h: Nanos = 1;
    for t in tasks {
        let (a, _) = t.exact_period_ns();
        let g = gcd(h, a);
        h = match (h / g).checked_mul(a) {
            Some(v) if v <= MAX_HYPERPERIOD_NS => v,
            _ => {
                return Err(format!(
                    "the hyperperiod of {} exceeds the {} bound: no coincidence table",
                    names(),
                    short_duration(MAX_HYPERPERIOD_NS)
                ))
            }
        };
    }
    let releases: u64 = tasks.iter().map(|t| releases_in(t, h)).sum();
    if releases > MAX_PLAN_RELEASES {
        return Err(format!(
            "the hyperperiod of {} ({}) holds {releases} releases, more than the \
             {MAX_PLAN_RELEASES} bound: no coincidence table",
            names(),
            short_duration(h)
        ));
    }
    Ok(h)
}

/// Releases of `t` in a hyperperiod `h` (a multiple of its exact period): `h·b/a`.
fn releases_in(t: &Task, h: Nanos) -> u64 {
    let (a, b) = t.exact_period_ns();
    (i128::from(h) * i128::from(b) / i128::from(a)) as u64
}

/// Instants of `[0, h)` with two or more tasks due; `order` lists task indices by rank.
fn coincidences(tasks: &[Task], order: &[usize], h: Nanos) -> Vec<Coincidence> {
    let mut due: Vec<(Nanos, usize)> = Vec::new();
    for (rank, &i) in order.iter().enumerate() {
        let t = &tasks[i];
        let (a, b) = t.exact_period_ns();
        for k in 0..releases_in(t, h) {
            due.push(((t.phase + release_offset(k, a.into(), b.into())) % h, rank));
        }
    }
    due.sort_unstable();
    due.chunk_by(|a, b| a.0 == b.0)
        .filter(|g| g.len() > 1)
        .map(|g| Coincidence {
            offset_ns: g[0].0,
            tasks: g.iter().map(|&(_, rank)| TaskId(order[rank])).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1_000;
    const MS: Nanos = 1_000_000;

    /// `1ms:50us, 2.5ms:200us, 10ms` (the issue's example), by hand:
    /// ranks 1ms (0), 2.5ms (1), 10ms (2); U = 50/1000 + 200/2500 + 0 = 0.13;
    /// LL(3) = 3(2^{1/3} − 1) = 0.7798; H = lcm(1, 2.5, 10) ms = 10 ms.
    /// 1ms: B = max(200, 0) = 200 us; busy t = 200 + ⌈250/1000⌉·50 = 250, one release;
    ///      w(0) = 200 → R = 200 + 50 = 250 us.
    /// 2.5ms: B = 0 (10ms has no budget); busy t = ⌈250/1000⌉·50 + ⌈250/2500⌉·200 = 250;
    ///      w(0) = (⌊0/1000⌋ + 1)·50 = 50 → R = 50 + 200 = 250 us.
    /// 10ms: B = 0, C = 0; w(0) = 50 + 200 = 250 (fixed: ⌊250/1000⌋ + 1 = 1,
    ///      ⌊250/2500⌋ + 1 = 1) → R = 250 us.
    /// Coincidences in [0, 10 ms): 0 (all three), 5 ms (1ms and 2.5ms); 2.5 and 7.5 ms
    /// release the 2.5 ms task alone.
    #[test]
    fn the_issue_example_by_hand() {
        let tasks = [
            Task::new(MS).budget(50 * US),
            Task::new(2_500 * US).budget(200 * US),
            Task::new(10 * MS),
        ];
        let p = Plan::of(&tasks);
        assert!((p.utilisation - 0.13).abs() < 1e-12);
        assert!((p.liu_layland_bound - 0.779_763).abs() < 1e-6);
        assert_eq!(p.hyperperiod_ns, Some(10 * MS));
        let r: Vec<_> = p
            .tasks
            .iter()
            .map(|t| (t.id.0, t.blocking_ns, t.response_ns))
            .collect();
        assert_eq!(
            r,
            vec![
                (0, 200 * US, Some(250 * US)),
                (1, 0, Some(250 * US)),
                (2, 0, Some(250 * US))
            ]
        );
        assert!(p.schedulable());
        assert_eq!(
            p.coincidences,
            vec![
                Coincidence {
                    offset_ns: 0,
                    tasks: vec![TaskId(0), TaskId(1), TaskId(2)]
                },
                Coincidence {
                    offset_ns: 5 * MS,
                    tasks: vec![TaskId(0), TaskId(1)]
                },
            ]
        );
    }

    /// A (T 5, C 2), B (T 7, C 3), declared B first: ranks A, B. U = 0.4 + 3/7 = 0.8286,
    /// above LL(2) = 2(√2 − 1) = 0.8284, yet schedulable:
    /// A: B_A = 3; busy t = 3 + ⌈5/5⌉·2 = 5, one release; w(0) = 3 → R = 5 ≤ 5.
    /// B: B_B = 0; busy t = ⌈5/5⌉·2 + ⌈5/7⌉·3 = 5; w(0) = (⌊2/5⌋+1)·2 = 2 → R = 5 ≤ 7.
    /// H = 35; coincidence only at 0.
    #[test]
    fn above_the_liu_layland_bound_but_schedulable() {
        let p = Plan::of(&[Task::new(7).budget(3), Task::new(5).budget(2)]);
        assert!(p.utilisation > p.liu_layland_bound);
        let r: Vec<_> = p
            .tasks
            .iter()
            .map(|t| (t.id.0, t.blocking_ns, t.response_ns))
            .collect();
        assert_eq!(r, vec![(1, 3, Some(5)), (0, 0, Some(5))]);
        assert!(p.schedulable());
        assert_eq!(p.hyperperiod_ns, Some(35));
        assert_eq!(p.coincidences.len(), 1);
    }

    /// A (T 4, C 2), B (T 6, C 3), U = 1: the busy period holds several releases.
    /// A: B_A = 3; busy t: 5 → 3 + ⌈5/4⌉·2 = 7 → 3 + ⌈7/4⌉·2 = 7: two releases;
    ///    w(0) = 3 → R = 3 + 2 = 5 > 4 (a miss: B started just before A's expiry);
    ///    w(1) = 3 + 2 = 5 → R = 5 + 2 − 4 = 3. R_A = 5.
    /// B: B_B = 0; busy t: 5 → ⌈5/4⌉·2 + ⌈5/6⌉·3 = 7 → 4 + 6 = 10 → 6 + 6 = 12 → 12:
    ///    two releases; w(0) = (⌊2/4⌋+1)·2 = 2 → R = 5;
    ///    w(1) = 3 + (⌊5/4⌋+1)·2 = 7 → 3 + (⌊7/4⌋+1)·2 = 7 → R = 7 + 3 − 6 = 4. R_B = 5.
    /// Coincidences in [0, 12): 0 and 0+... A at 0,4,8; B at 0,6 → only 0.
    #[test]
    fn several_releases_in_the_busy_period_and_a_blocking_miss() {
        let p = Plan::of(&[Task::new(4).budget(2), Task::new(6).budget(3)]);
        assert!((p.utilisation - 1.0).abs() < 1e-12);
        let r: Vec<_> = p
            .tasks
            .iter()
            .map(|t| (t.blocking_ns, t.response_ns))
            .collect();
        assert_eq!(r, vec![(3, Some(5)), (0, Some(5))]);
        assert!(!p.tasks[0].schedulable() && p.tasks[1].schedulable());
        assert_eq!(p.hyperperiod_ns, Some(12));
        assert_eq!(p.coincidences.len(), 1);
    }

    #[test]
    fn overload_has_no_response_bound_and_priorities_override_rate_monotonic() {
        let p = Plan::of(&[Task::new(4).budget(3), Task::new(6).budget(3).priority(1)]);
        assert_eq!(p.tasks[0].id, TaskId(1), "explicit priority first");
        assert!(p.tasks.iter().any(|t| t.response_ns.is_none()));
        assert!(!p.schedulable());
    }

    #[test]
    fn rates_given_in_hz_have_an_exact_hyperperiod() {
        // 30 Hz and 85 Hz: periods 10⁸/3 and 2·10⁸/17 ns; H = lcm(10⁸, 2·10⁸) = 200 ms, with
        // 6 + 17 releases; beside 1 ms, all three coincide at 0 only, and the 1 ms task with
        // 30 Hz at 100 ms (round(3·10⁸/3) = 10⁸).
        let p = Plan::of(&[Task::new(MS), Task::hz(30), Task::hz(85)]);
        assert_eq!(p.hyperperiod_ns, Some(200 * MS));
        let offsets: Vec<Nanos> = p.coincidences.iter().map(|c| c.offset_ns).collect();
        assert_eq!(offsets, vec![0, 100 * MS]);
        assert_eq!(p.coincidences[0].tasks.len(), 3);
        // The rounded 85 Hz period (11 764 706 ns) would give a hyperperiod of 5.9 ks.
        assert!(Plan::of(&[Task::new(MS), Task::new(11_764_706)])
            .hyperperiod_ns
            .is_none());
    }

    #[test]
    fn long_hyperperiods_are_refused_and_say_which() {
        let p = Plan::of(&[Task::new(MS + 1), Task::new(MS + 3), Task::new(997 * US)]);
        assert_eq!(p.hyperperiod_ns, None);
        let why = p.hyperperiod_refused.unwrap();
        assert!(why.contains("1.000001ms") || why.contains("1ms"), "{why}");
        assert!(why.contains("60s"), "{why}");
        assert!(p.coincidences.is_empty());
        // Short enough but too many releases: 1 us against 59 s.
        let p = Plan::of(&[Task::new(US), Task::new(59 * NS_PER_SEC)]);
        assert!(p.hyperperiod_refused.unwrap().contains("releases"));
    }

    #[test]
    fn phases_shift_coincidences() {
        // 2 and 3 with the 3 shifted by 1: due 0,2,4 and 1,4 in [0,6): coincide at 4.
        let p = Plan::of(&[Task::new(2), Task::new(3).phase(1)]);
        assert_eq!(
            p.coincidences,
            vec![Coincidence {
                offset_ns: 4,
                tasks: vec![TaskId(0), TaskId(1)]
            }]
        );
    }
}
