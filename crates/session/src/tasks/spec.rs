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
//! default 0, then rate-monotonic), `overrun=skip|catch-up|relative`, `name=`. Each field
//! at most once (`+PHASE` and `phase=` are one field, as are a bare duration and `budget=`);
//! a value is one duration (`1ms 2ms` is refused: tasks are separated by commas). The help of `plan` and
//! `run --tasks` is the command line's (`TASKS_HELP` in the CLI crate).

use crate::text::{parse_duration, parse_interval};
use tickscope::Task;
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::time::{Nanos, NS_PER_US};
use tickscope_report::escaped;
use tickscope_report::units::ns_i;

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

/// The longest task name (`name=`), in characters: it is a table cell.
pub const MAX_NAME_CHARS: usize = 100;

/// Parses a `--tasks` list (see the module documentation).
///
/// # Errors
/// One sentence naming the task (1-based position and text, control characters escaped),
/// what is wrong and the accepted form; also for an empty list, a field given twice, a value
/// holding two durations, a name over [`MAX_NAME_CHARS`] and values out of range (checked by
/// [`Task::validate`]).
pub fn parse_tasks(spec: &str) -> Result<Vec<TaskSpec>, String> {
    let items: Vec<&str> = spec.split(',').map(str::trim).collect();
    if items.iter().all(|s| s.is_empty()) {
        return Err("--tasks is empty; write it like '1ms:work=50us,2.5ms:work=200us,10ms'".into());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            parse_one(item).map_err(|why| {
                escaped(&format!("--tasks: task {} '{item}': {why}", i + 1)).into_owned()
            })
        })
        .collect()
}

/// A `--tasks` list as the command line reads it: the tasks, and the text they were
/// parsed from (for messages naming a task as written). The value of the `--tasks` option
/// of `plan`, `run` and `monitor`, parsed by [`TaskList::parse`] when the arguments are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskList {
    /// The list as given.
    pub text: String,
    /// The tasks, in the order given.
    pub specs: Vec<TaskSpec>,
}

impl TaskList {
    /// Parses a `--tasks` list (see the module documentation): the one value parser of the
    /// option of `plan`, `run` and `monitor` (`value_parser = TaskList::parse`).
    ///
    /// # Errors
    /// As [`parse_tasks`], without its `--tasks: ` prefix (the command line's error names
    /// the option).
    pub fn parse(text: &str) -> Result<TaskList, String> {
        let specs = parse_tasks(text)
            .map_err(|e| e.strip_prefix("--tasks: ").map(str::to_owned).unwrap_or(e))?;
        Ok(TaskList {
            text: text.to_string(),
            specs,
        })
    }

    /// The tasks to run (`run`, `monitor`): refuses a task with a budget and no `work=`,
    /// since it would run no work at all (`plan` reads a bare duration as the budget, and a
    /// list copied from it would silently measure idle tasks).
    ///
    /// # Errors
    /// One sentence naming the first task with a budget and no work, and what to write.
    pub fn to_run(&self) -> Result<Vec<TaskSpec>, String> {
        let specs = &self.specs;
        let items: Vec<&str> = self.text.split(',').map(str::trim).collect();
        if let Some(i) = budget_without_work(specs) {
            let s = &specs[i];
            if let (Some(b), None) = (s.task.budget_ns(), s.work_ns) {
                let item = items.get(i).copied().unwrap_or_default();
                let period = item.split(':').next().unwrap_or_default();
                return Err(escaped(&format!(
                    "--tasks: task {} '{item}' has a budget ({}) and no work; a task set runs \
                     only the work it is given: write {period}:work=D (D is also checked as the \
                     budget), or {period}:work=D:budget=B",
                    i + 1,
                    ns_i(b)
                ))
                .into_owned());
            }
        }
        Ok(specs.clone())
    }
}

/// Parses a `--tasks` list for `run`, which does only the work it is given
/// ([`TaskList::to_run`]).
///
/// # Errors
/// As [`parse_tasks`], and one sentence naming the first task with a budget and no work.
pub fn parse_tasks_to_run(spec: &str) -> Result<Vec<TaskSpec>, String> {
    TaskList::parse(spec)
        .map_err(|e| format!("--tasks: {e}"))?
        .to_run()
}

/// The first task with a budget and no work, which `run` refuses (it would run no work).
pub fn budget_without_work(specs: &[TaskSpec]) -> Option<usize> {
    specs
        .iter()
        .position(|s| s.task.budget_ns().is_some() && s.work_ns.is_none())
}

/// True when `value` holds two values separated by blanks (`1ms 2ms`, `1 2`), which
/// [`parse_duration`] would add up; a blank between a number and its unit (`1 ms`) is fine.
fn two_values(value: &str) -> bool {
    let mut after_blank = false;
    let mut seen = false;
    for c in value.trim().chars() {
        if c.is_whitespace() {
            after_blank = seen;
            continue;
        }
        if after_blank && (c.is_ascii_digit() || c == '.') {
            return true;
        }
        after_blank = false;
        seen = true;
    }
    false
}

/// A period written as a frequency (`85Hz`, `2.5kHz`, `0.5 Hz`), as the exact fraction
/// `(num, den)` Hz; `None` for a duration or a value too long to hold exactly.
fn exact_rate(period: &str) -> Option<(u64, u64)> {
    let lower = period.trim().to_ascii_lowercase();
    let (digits, scale) = match lower.strip_suffix("khz") {
        Some(d) => (d, 1000u64),
        None => (lower.strip_suffix("hz")?, 1),
    };
    let (int, frac) = digits.trim().split_once('.').unwrap_or((digits.trim(), ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() > 15 || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let num: u64 = format!("{int}{frac}").parse().ok()?;
    let den = 10u64.pow(frac.len() as u32);
    Some((num.checked_mul(scale)?, den))
}

fn parse_one(item: &str) -> Result<TaskSpec, String> {
    let mut fields = item.split(':').map(str::trim);
    let head = fields.next().unwrap_or_default();
    parse_one_fields(head, fields)
}

/// One task from its head (`PERIOD[+PHASE]`) and its fields (`key=value`, or a bare
/// budget), each read as in a `--tasks` item; the task-set file ([`super::file`]) hands its
/// keys over this way.
///
/// # Errors
/// What is wrong, one sentence (without the task's position).
pub(crate) fn parse_one_fields<'a>(
    head: &str,
    fields: impl Iterator<Item = &'a str>,
) -> Result<TaskSpec, String> {
    let fields = fields.map(str::trim);
    let head = head.trim();
    if head.is_empty() {
        return Err("no period; write PERIOD[+PHASE][:FIELD]…, like 2.5ms:work=200us".into());
    }
    let (period, phase) = match head.split_once('+') {
        Some((p, ph)) => (p, Some(ph)),
        None => (head, None),
    };
    let one = |s: &str, what: &str| match two_values(s) {
        true => Err(format!(
            "{what} '{}' holds two values; separate tasks with commas ('1ms,2ms') and write \
             a duration without blanks ('1m30s')",
            s.trim()
        )),
        false => Ok(()),
    };
    let dur = |s: &str, what: &str| {
        one(s, what)?;
        parse_duration(s, what, NS_PER_US)
    };
    one(period, "the period")?;
    let mut task = Task::new(parse_interval(period)?);
    if let Some((num, den)) = exact_rate(period) {
        // Kept as written: release k at round(k·10⁹/f) ns, not k × the rounded period.
        task = Task::hz_ratio(num, den);
    }
    // Each field once: a bare duration is the budget, `+PHASE` the phase.
    let mut seen: Vec<&str> = Vec::new();
    let mut once = |key: &'static str| match seen.contains(&key) {
        true => Err(format!("{key} is given twice; give each field once")),
        false => {
            seen.push(key);
            Ok(())
        }
    };
    if let Some(ph) = phase {
        once("phase")?;
        task = task.phase(dur(ph, "the phase")?);
    }
    let (mut work, mut budget) = (None, None);
    for f in fields {
        let key = match f.split_once('=') {
            None => "budget",
            Some((k, _)) => match k.trim() {
                "prio" | "priority" => "prio",
                "work" => "work",
                "budget" => "budget",
                "deadline" => "deadline",
                "phase" => "phase",
                "overrun" => "overrun",
                "name" => "name",
                _ => "",
            },
        };
        if !key.is_empty() {
            once(key)?;
        }
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
                        "relative" => OverrunPolicy::Relative,
                        _ => {
                            return Err(format!("overrun '{v}' is not skip, catch-up or relative"))
                        }
                    })
                }
                "name" if v.trim().chars().count() > MAX_NAME_CHARS => {
                    return Err(format!(
                        "the name is {} characters long; at most {MAX_NAME_CHARS} are accepted",
                        v.trim().chars().count()
                    ))
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
        let t = parse_tasks("30Hz:overrun=relative").unwrap();
        assert_eq!(t[0].task.overrun_policy(), OverrunPolicy::Relative);
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
            ("1ms:overrun=later", "skip, catch-up or relative"),
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

    #[test]
    fn two_durations_in_one_value_are_refused() {
        for (spec, needle) in [
            ("1ms 2ms", "the period '1ms 2ms' holds two values"),
            ("1 2", "holds two values"),
            ("1ms:50us 20us", "the budget '50us 20us' holds two values"),
            ("1ms:work=5us 5us", "work '5us 5us' holds two values"),
            ("1ms+1ms 1ms", "the phase"),
            ("10ms:deadline=1ms 1", "the deadline"),
        ] {
            let e = parse_tasks(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(e.contains("separate tasks with commas"), "{e}");
        }
        assert_eq!(parse_tasks("1 ms").unwrap()[0].task.period_ns(), 1_000_000);
        assert_eq!(
            parse_tasks("40 Hz").unwrap()[0].task.period_ns(),
            25_000_000
        );
        // Rates are kept exact: 85 Hz is 2·10⁸/17 ns, not 11 764 706 ns.
        let t = &parse_tasks("85Hz,30 Hz,2.5kHz,0.5Hz").unwrap();
        let exact: Vec<_> = t.iter().map(|t| t.task.exact_period_ns()).collect();
        assert_eq!(
            exact,
            vec![
                (200_000_000, 17),
                (100_000_000, 3),
                (400_000, 1),
                (2_000_000_000, 1)
            ]
        );
        assert_eq!(t[0].task.period_ns(), 11_764_706);
        assert_eq!(
            parse_tasks("1ms:work=50 us").unwrap()[0].work_ns,
            Some(50_000)
        );
        assert_eq!(
            parse_tasks("1ms:name=motor control").unwrap()[0]
                .task
                .display_name(),
            "motor control"
        );
    }

    #[test]
    fn a_field_given_twice_is_refused() {
        for (spec, field) in [
            ("1ms:work=10us:work=20us", "work"),
            ("1ms:50us:budget=60us", "budget"),
            ("1ms:50us:60us", "budget"),
            ("1ms+1ms:phase=2ms", "phase"),
            ("1ms:prio=1:priority=2", "prio"),
            ("1ms:deadline=1ms:deadline=1ms", "deadline"),
            ("1ms:overrun=skip:overrun=skip", "overrun"),
            ("1ms:name=a:name=b", "name"),
        ] {
            let e = parse_tasks(spec).unwrap_err();
            assert!(
                e.contains(&format!("{field} is given twice; give each field once")),
                "{spec}: {e}"
            );
        }
    }

    #[test]
    fn run_refuses_a_budget_without_work() {
        let e = parse_tasks_to_run("2ms:work=10us,1ms:50us").unwrap_err();
        assert!(
            e.starts_with("--tasks: task 2 '1ms:50us' has a budget (50.0 µs) and no work"),
            "{e}"
        );
        assert!(e.contains("1ms:work=D"), "{e}");
        assert!(
            parse_tasks("1ms:50us").is_ok(),
            "plan reads it as the budget"
        );
        assert_eq!(
            parse_tasks_to_run("1ms:work=50us:budget=60us,10ms")
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn names_are_bounded_and_errors_escaped() {
        let long = format!("1ms:name={}", "n".repeat(MAX_NAME_CHARS + 1));
        assert!(parse_tasks(&long)
            .unwrap_err()
            .contains("the name is 101 characters long; at most 100"));
        let ok = format!("1ms:name={}", "n".repeat(MAX_NAME_CHARS));
        assert!(parse_tasks(&ok).is_ok());
        let e = parse_tasks("1ms:\u{1b}]0;x\u{7}").unwrap_err();
        assert!(!e.chars().any(char::is_control), "{e}");
        assert!(e.contains("\\u{1b}"), "{e}");
    }
}
