//! `tickscope plan`: the schedulability analysis of a set of periodic tasks for one thread —
//! hyperperiod, utilisation, Liu & Layland bound, worst-case response times and the
//! coincidence table — from the library's `Plan` (`tickscope::Plan`, which cites
//! the analysis it implements).

use crate::cli::PlanArgs;
use crate::exit::Failure;
use tickscope::{Plan, Task};
use tickscope_report::executive::{plan_text, PlanRow, PlanView};
use tickscope_session::tasks::file::parse_task_file;

/// The report's view of a plan.
pub fn plan_view(tasks: &[Task], plan: &Plan) -> PlanView {
    let name = |id: tickscope::TaskId| tasks[id.0].display_name();
    PlanView {
        rows: plan
            .tasks
            .iter()
            .map(|t| PlanRow {
                name: t.name.clone(),
                period_ns: t.period_ns,
                deadline_ns: t.deadline_ns,
                budget_ns: t.budget_ns,
                blocking_ns: t.blocking_ns,
                response_ns: t.response_ns,
            })
            .collect(),
        utilisation: plan.utilisation,
        liu_layland_bound: plan.liu_layland_bound,
        hyperperiod_ns: plan.hyperperiod_ns,
        hyperperiod_refused: plan.hyperperiod_refused.clone(),
        coincidences: plan
            .coincidences
            .iter()
            .map(|c| (c.offset_ns, c.tasks.iter().map(|&id| name(id)).collect()))
            .collect(),
    }
}

/// Prints the plan of `--tasks` or `--tasks-file`.
///
/// # Errors
/// [`Failure::Usage`] for a bad `--tasks` list or task-set file.
pub fn execute(args: &PlanArgs) -> Result<(), Failure> {
    let specs = match (&args.tasks, &args.tasks_file) {
        (_, Some(path)) => {
            let (text, shown) = read_task_file(path)?;
            parse_task_file(&text, &shown).map_err(Failure::Usage)?
        }
        (Some(list), None) => list.specs.clone(),
        (None, None) => return Err(Failure::Usage("give --tasks or --tasks-file".into())),
    };
    let tasks: Vec<Task> = specs.iter().map(|s| s.planned()).collect();
    let plan = Plan::of(&tasks);
    let text = plan_text(&plan_view(&tasks, &plan));
    crate::console::line(text.trim_end_matches('\n'));
    crate::console::settle(Ok(()))
}

/// The text of a task-set file (`--tasks-file`) and its name as messages show it.
///
/// # Errors
/// [`Failure::Usage`] naming the file when it cannot be read or is not UTF-8.
pub fn read_task_file(path: &std::path::Path) -> Result<(String, String), Failure> {
    let shown = tickscope_report::quoted(path);
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("--tasks-file {shown}: {e}")))?;
    Ok((text, shown))
}
