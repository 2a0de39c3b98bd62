//! A task set in a TOML file (`--tasks-file FILE`), for sets too large for one command-line
//! value: one `[[task]]` table per task, with the fields of the `--tasks` list
//! ([`super::spec`]) as keys and the same text values (see `examples/tasks.toml`).
//!
//! ```toml
//! [[task]]
//! name = "control"
//! period = "1ms"
//! work = "50us"
//! overrun = "relative"
//!
//! [[task]]
//! period = "85Hz"
//! deadline = "5ms"
//! priority = 1
//! ```
//!
//! Each task is read exactly as the list item `PERIOD:key=value:…` would be (same units,
//! same checks, same messages), so the file and the list cannot drift apart; unknown keys
//! are refused.

use super::spec::{parse_one_fields, TaskSpec};
use serde::Deserialize;

/// The file: its tasks, in order.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    #[serde(default)]
    task: Vec<TaskTable>,
}

/// One `[[task]]` table. Durations and rates are text as in the list (`"2.5ms"`, `"85Hz"`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskTable {
    period: String,
    phase: Option<String>,
    work: Option<String>,
    budget: Option<String>,
    deadline: Option<String>,
    priority: Option<i32>,
    overrun: Option<String>,
    name: Option<String>,
}

impl TaskTable {
    /// The fields as the list writes them (`key=value`).
    fn fields(&self) -> Vec<String> {
        let mut f = Vec::new();
        let mut text = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                f.push(format!("{k}={v}"));
            }
        };
        text("phase", &self.phase);
        text("work", &self.work);
        text("budget", &self.budget);
        text("deadline", &self.deadline);
        text("overrun", &self.overrun);
        text("name", &self.name);
        if let Some(p) = self.priority {
            f.push(format!("prio={p}"));
        }
        f
    }
}

/// Reads a task-set file's text for `run`, which refuses a budget without work as for the
/// list ([`super::spec::parse_tasks_to_run`]).
///
/// # Errors
/// As [`parse_task_file`], and one line naming the first task with a budget and no work.
pub fn parse_task_file_to_run(text: &str, shown: &str) -> Result<Vec<TaskSpec>, String> {
    let specs = parse_task_file(text, shown)?;
    match super::spec::budget_without_work(&specs) {
        Some(i) => Err(format!(
            "{shown}: task {} has a budget and no work; a task set runs only the work it \
             is given: add work = \"D\" (D is also checked as the budget)",
            i + 1
        )),
        None => Ok(specs),
    }
}

/// Reads a task-set file's text; `shown` names the file in messages.
///
/// # Errors
/// One line naming the file: TOML that does not parse (with its line), an unknown key, no
/// task, or a task the `--tasks` list would refuse (named by its position).
pub fn parse_task_file(text: &str, shown: &str) -> Result<Vec<TaskSpec>, String> {
    let file: TaskFile = toml::from_str(text).map_err(|e| {
        let why = e.message().trim().to_string();
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        match line {
            Some(l) => format!("{shown}, line {l}: {why}"),
            None => format!("{shown}: {why}"),
        }
    })?;
    if file.task.is_empty() {
        return Err(format!(
            "{shown} holds no task; write one [[task]] table per task with at least \
             period = \"1ms\" (see examples/tasks.toml)"
        ));
    }
    file.task
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let fields = t.fields();
            parse_one_fields(&t.period, fields.iter().map(String::as_str))
                .map_err(|why| format!("{shown}: task {} (period {}): {why}", i + 1, t.period))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope::{OverrunPolicy, Task};

    #[test]
    fn the_example_file_reads_like_the_list() {
        let text = include_str!("../../../../examples/tasks.toml");
        let from_file = parse_task_file(text, "tasks.toml").unwrap();
        assert!(from_file.len() >= 3);
        assert_eq!(from_file[0].task.display_name(), "control");
        assert_eq!(from_file[0].work_ns, Some(50_000));
        let list = super::super::spec::parse_tasks(
            "1ms:work=50us:name=control:overrun=relative,2.5ms:work=200us:name=imu,\
             85Hz:deadline=5ms:prio=1:name=camera,10ms:name=logger",
        )
        .unwrap();
        assert_eq!(from_file, list);
        assert_eq!(from_file[0].task.overrun_policy(), OverrunPolicy::Relative);
        assert_eq!(
            from_file[2].task.exact_period_ns(),
            Task::hz(85).exact_period_ns()
        );
    }

    #[test]
    fn bad_files_are_one_line_naming_the_file() {
        for (text, want) in [
            ("[[task]]\nperiod = \"1ms\"\ncolour = 3\n", "unknown field"),
            ("[[task]]\nwork = \"1ms\"\n", "period"),
            ("", "holds no task"),
            (
                "[[task]]\nperiod = \"1ms\"\noverrun = \"later\"\n",
                "task 1",
            ),
            ("[[task]\n", "line 1"),
        ] {
            let e = parse_task_file(text, "t.toml").unwrap_err();
            assert!(e.starts_with("t.toml"), "{e}");
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = parse_task_file_to_run("[[task]]\nperiod = \"1ms\"\nbudget = \"50us\"\n", "t.toml")
            .unwrap_err();
        assert!(e.contains("task 1 has a budget and no work"), "{e}");
    }
}
