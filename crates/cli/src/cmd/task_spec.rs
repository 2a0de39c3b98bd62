//! The `--tasks` list of `tickscope plan` and `tickscope run`: periodic tasks for the
//! executive, written `PERIOD[+PHASE][:FIELD]…` and separated by commas.
//!
//! ```text
//! 1ms:50us,2.5ms:200us,10ms              periods with budgets (plan)
//! 1ms:work=50us,2.5ms:work=200us,10ms    periods with synthetic work (run)
//! 40Hz+2ms:budget=1ms:deadline=5ms:prio=1:overrun=catch-up:name=planner
//! ```
//!
//! PERIOD is a duration or a frequency as for `--interval` (a bare number is µs); `+PHASE`
//! delays the task's first expiry. Fields: a bare duration is the budget; `work=` is the
//! synthetic busy work `run --tasks` does per release (and the budget the plan assumes when
//! none is given);
//! `budget=`, `deadline=`, `phase=`, `prio=` (higher runs first among tasks due together;
//! default 0, then rate-monotonic), `overrun=skip|catch-up`, `name=`.

use crate::options::{parse_duration, parse_interval};
use tickscope::Task;
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::time::{Nanos, NS_PER_US};

/// One task of a `--tasks` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSpec {
    /// The timing declaration as given (a budget only if one was written).
    pub task: Task,
    /// Synthetic work per release, ns (`work=`).
    pub work_ns: Option<Nanos>,
}

impl TaskSpec {
    /// The task to analyse: with the work as its budget when no budget was written. (Not
    /// the one to run: the work spins `work` ns from the release's start, so its execution
    /// time always exceeds such a budget by the cost of a clock read.)
    pub fn planned(&self) -> Task {
        match (self.task.budget_ns(), self.work_ns) {
            (None, Some(w)) => self.task.clone().budget(w),
            _ => self.task.clone(),
        }
    }
}

/// Parses a `--tasks` list (see the module documentation).
///
/// # Errors
/// One sentence naming the task (1-based position and text), what is wrong and the accepted
/// form; also for an empty list and for values out of range (checked by [`Task::validate`]).
pub fn parse_tasks(spec: &str) -> Result<Vec<TaskSpec>, String> {
    let items: Vec<&str> = spec.split(',').map(str::trim).collect();
    if items.iter().all(|s| s.is_empty()) {
        return Err("--tasks is empty; write it like '1ms:50us,2.5ms:200us,10ms'".into());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            parse_one(item).map_err(|why| format!("--tasks: task {} '{item}': {why}", i + 1))
        })
        .collect()
}

fn parse_one(item: &str) -> Result<TaskSpec, String> {
    let mut fields = item.split(':').map(str::trim);
    let head = fields.next().unwrap_or_default();
    if head.is_empty() {
        return Err("no period; write PERIOD[+PHASE][:FIELD]…, like 2.5ms:work=200us".into());
    }
    let (period, phase) = match head.split_once('+') {
        Some((p, ph)) => (p, Some(ph)),
        None => (head, None),
    };
    let dur = |s: &str, what: &str| parse_duration(s, what, NS_PER_US);
    let mut task = Task::new(parse_interval(period)?);
    if let Some(ph) = phase {
        task = task.phase(dur(ph, "the phase")?);
    }
    let (mut work, mut budget) = (None, None);
    for f in fields {
        match f.split_once('=') {
            None => budget = Some(dur(f, "the budget")?),
            Some((k, v)) => match k.trim() {
                "work" => work = Some(dur(v, "work")?),
                "budget" => budget = Some(dur(v, "the budget")?),
                "deadline" => task = task.deadline(dur(v, "the deadline")?),
                "phase" => task = task.phase(dur(v, "the phase")?),
                "prio" | "priority" => {
                    let p: i32 = v
                        .trim()
                        .parse()
                        .map_err(|_| format!("prio '{v}' is not a whole number like 1 or -2"))?;
                    task = task.priority(p);
                }
                "overrun" => {
                    task = task.overrun(match v.trim() {
                        "skip" => OverrunPolicy::Skip,
                        "catch-up" => OverrunPolicy::CatchUp,
                        _ => return Err(format!("overrun '{v}' is not skip or catch-up")),
                    })
                }
                "name" if !v.trim().is_empty() => task = task.name(v.trim()),
                other => {
                    return Err(format!(
                        "unknown field '{other}'; use work=, budget=, deadline=, phase=, \
                         prio=, overrun= or name=VALUE"
                    ))
                }
            },
        }
    }
    if let Some(b) = budget {
        task = task.budget(b);
    }
    task.validate().map_err(|e| e.to_string())?;
    if let Some(w) = work {
        if w <= 0 || w > task.period_ns() * 1000 {
            return Err(format!(
                "work must be above 0 and at most 1000 periods, not {w} ns"
            ));
        }
    }
    Ok(TaskSpec {
        task,
        work_ns: work,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_forms_parse() {
        let t = parse_tasks("1ms:50us,2.5ms:200us,10ms").unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].task, Task::new(1_000_000).budget(50_000));
        assert_eq!(t[1].task, Task::new(2_500_000).budget(200_000));
        assert_eq!(
            t[2],
            TaskSpec {
                task: Task::new(10_000_000),
                work_ns: None
            }
        );
        let t = parse_tasks(" 1ms:work=50us , 2.5ms:work=200us:budget=300us ").unwrap();
        assert_eq!(t[0].work_ns, Some(50_000));
        assert_eq!(t[0].task.budget_ns(), None);
        assert_eq!(
            t[0].planned().budget_ns(),
            Some(50_000),
            "work is the plan's budget"
        );
        assert_eq!(t[1].task.budget_ns(), Some(300_000));
        let t = parse_tasks("40Hz+2ms:deadline=5ms:prio=1:overrun=catch-up:name=planner").unwrap();
        let p = &t[0].task;
        assert_eq!(
            (p.period_ns(), p.phase_ns(), p.deadline_ns()),
            (25_000_000, 2_000_000, 5_000_000)
        );
        assert_eq!(
            (p.priority_value(), p.overrun_policy()),
            (1, OverrunPolicy::CatchUp)
        );
        assert_eq!(p.display_name(), "planner");
        assert_eq!(
            parse_tasks("250").unwrap()[0].task.period_ns(),
            250_000,
            "bare µs"
        );
    }

    #[test]
    fn errors_name_the_task_and_fit_on_one_line() {
        for (spec, needle) in [
            ("", "empty"),
            ("1ms,,2ms", "task 2 '': no period"),
            ("1ms,xyz", "task 2 'xyz'"),
            ("1ms:work=abc", "work 'abc'"),
            ("1ms:color=red", "unknown field 'color'"),
            ("1ms:overrun=later", "skip or catch-up"),
            ("1ms:prio=high", "prio 'high'"),
            ("0ns", "greater than zero"),
            ("1ms:work=0us", "work must be"),
            ("2h", "longer than 1h"),
        ] {
            let e = parse_tasks(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
