//! The task-set section of the HTML report, for a result of `tickscope run --tasks`: every
//! statistic of every task (a column per task: its declaration, releases, overruns, deadline
//! misses, budget overruns, release latency, response and execution times, CPU time), then
//! the response and execution times of the tasks by percentile (one curve per task). This
//! module builds the table and the plots; [`super::html`] renders them.
//!
//! Task `i` is thread `i` of the document ([`crate::task_set`]): its release latency, start
//! jitter and CPU time come from `threads[i]`, what only a task has from `tasks[i]`.

use crate::document::RunDocument;
use crate::plot::percentiles::{Distribution, PercentileChart};
use crate::plot::{NamedPlot, Plot};
use crate::task_set::{TaskEntry, TaskSet};
use crate::units::{interval, ns, ns_i};
use tickscope_engine::result::{LatencyStats, ThreadStats};

/// The label of task `i` in plots and tables: its name, control characters escaped.
pub fn label(set: &TaskSet, i: usize) -> Option<String> {
    set.name_of(i).map(|n| crate::escaped(n).into_owned())
}

/// One row of the table: the statistic's name and how to read it from a task.
type Row = (&'static str, fn(&TaskEntry, Option<&ThreadStats>) -> String);

fn stat(s: Option<&LatencyStats>, f: fn(&LatencyStats) -> i64) -> String {
    s.map_or("-".into(), |s| ns_i(f(s)))
}

fn latency(t: Option<&ThreadStats>) -> Option<&LatencyStats> {
    t.and_then(|t| t.latency_ns.as_ref())
}

const ROWS: [Row; 24] = [
    ("period", |e, _| interval(e.period_ns)),
    ("deadline", |e, _| ns_i(e.deadline_ns)),
    ("budget", |e, _| e.budget_ns.map_or("-".into(), ns_i)),
    ("priority", |e, _| e.priority.to_string()),
    ("overrun policy", |e, _| e.overrun_policy.clone()),
    ("work", |e, _| e.work_ns.map_or("-".into(), ns_i)),
    ("releases", |e, _| e.releases.to_string()),
    ("overruns", |e, _| e.overruns.to_string()),
    ("deadline misses", |e, _| e.deadline_misses.to_string()),
    ("budget overruns", |e, _| e.budget_overruns.to_string()),
    ("latency p50", |_, t| stat(latency(t), |s| s.p50)),
    ("latency p99", |_, t| stat(latency(t), |s| s.p99)),
    ("latency p99.9", |_, t| stat(latency(t), |s| s.p99_9)),
    ("latency max", |_, t| stat(latency(t), |s| s.max)),
    ("wake-up latency max", |e, _| {
        e.wakeup_latency_max_ns.map_or("-".into(), ns_i)
    }),
    ("start jitter SD", |_, t| {
        t.and_then(|t| t.period_ns.as_ref())
            .map_or("-".into(), |p| ns(p.stddev))
    }),
    ("response p50", |e, _| {
        stat(e.response_ns.as_ref(), |s| s.p50)
    }),
    ("response p99", |e, _| {
        stat(e.response_ns.as_ref(), |s| s.p99)
    }),
    ("response p99.9", |e, _| {
        stat(e.response_ns.as_ref(), |s| s.p99_9)
    }),
    ("response max", |e, _| {
        stat(e.response_ns.as_ref(), |s| s.max)
    }),
    ("execution p50", |e, _| {
        stat(e.execution_ns.as_ref(), |s| s.p50)
    }),
    ("execution p99", |e, _| {
        stat(e.execution_ns.as_ref(), |s| s.p99)
    }),
    ("execution max", |e, _| {
        stat(e.execution_ns.as_ref(), |s| s.max)
    }),
    ("CPU (% of one core)", |_, t| {
        t.map_or("-".into(), |t| format!("{:.2} %", t.cpu_percent))
    }),
];

/// The percentile chart of one time of every task that has it (`response_ns`,
/// `execution_ns`).
fn chart(
    doc: &RunDocument,
    set: &TaskSet,
    stem: &str,
    what: &str,
    of: fn(&TaskEntry) -> Option<&LatencyStats>,
) -> Option<NamedPlot> {
    let series: Vec<Distribution<'_>> = set
        .tasks
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((label(set, i)?, of(e)?, e.releases)))
        .collect();
    let mut title = what.to_string();
    if let Some(first) = title.get(..1) {
        title = first.to_uppercase() + &title[1..];
    }
    let c = PercentileChart::of(
        format!("{title} by percentile — tasks"),
        &series,
        what,
        "releases",
    )?;
    Some(NamedPlot {
        stem: stem.into(),
        caption: c.caption(),
        plot: Plot::Percentiles(c),
        stamp: crate::plot::stamp(doc),
    })
}

/// The plots only a task set has: its tasks' response times and, when measured, execution
/// times by percentile.
pub fn plots(doc: &RunDocument, set: &TaskSet) -> Vec<NamedPlot> {
    let response = chart(doc, set, "tasks-response", "response time", |e| {
        e.response_ns.as_ref()
    });
    let execution = chart(doc, set, "tasks-execution", "execution time", |e| {
        e.execution_ns.as_ref()
    });
    response.into_iter().chain(execution).collect()
}

/// The task section's text and table, for the page to render ([`super::html`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskTable {
    /// One paragraph: how many tasks, the strategy, what each figure is (plain text).
    pub note: String,
    /// The column heads: the tasks' names.
    pub head: Vec<String>,
    /// One row per statistic: its name, then its value for each task.
    pub rows: Vec<Vec<String>>,
}

impl TaskTable {
    /// The table of `set`, a task set of `doc`.
    pub fn of(doc: &RunDocument, set: &TaskSet) -> TaskTable {
        let threads = &doc.first().threads;
        let note = format!(
            "{} tasks in one thread ({} strategy). Release latency = start − expiry (wake-up \
             latency, plus queueing behind tasks due at the same instant); wake-up latency \
             max = the largest latency of releases that started straight from the wait; \
             response = end − expiry; execution = the release's time on the thread's CPU \
             clock; a deadline miss = a release that ended after expiry + deadline.",
            set.tasks.len(),
            set.strategy
        );
        let head: Vec<String> = (0..set.tasks.len())
            .map(|i| label(set, i).unwrap_or_default())
            .collect();
        let rows: Vec<Vec<String>> = ROWS
            .iter()
            .map(|(name, f)| {
                std::iter::once(name.to_string())
                    .chain(
                        set.tasks
                            .iter()
                            .enumerate()
                            .map(|(i, e)| f(e, threads.get(i))),
                    )
                    .collect()
            })
            .collect();
        TaskTable { note, head, rows }
    }
}
