//! The outputs of `run --tasks`: the same sinks as a single-rate run (`--json`, `--csv`,
//! `--hlog`, `--histogram-file`, `--samples`), fed as if each task were a measuring thread
//! (the `recorder` module), and the result document with its `tasks` section
//! ([`tickscope_report::task_set`]).

use super::recorder::TaskRecorder;
use super::spec::TaskSpec;
use tickscope::{Strategy, TaskStats};
use tickscope_engine::record::WindowRecord;
use tickscope_engine::run::{Applied, AppliedThread, RunConfig, SecondWindows};
use tickscope_engine::setup::Policy;
use tickscope_engine::stats::{attach_buckets, totals_stats, window_stats};
use tickscope_engine::time::Nanos;
use tickscope_report::sink::{RunContext, RunSink, SinkNeeds};
use tickscope_report::task_set::{TaskEntry, TaskSet, TaskWindow};
use tickscope_report::{MethodRun, RunDocument};
use tickscope_system::system::SystemInfo;

/// Where a task-set run's results go besides the terminal table.
pub struct Outputs<'a> {
    /// The file sinks, as for a single-rate run (no terminal sink: the tasks print their
    /// own table).
    pub sinks: Vec<Box<dyn RunSink>>,
    /// The machine, for the document.
    pub system: &'a SystemInfo,
    /// The command line, for the document (`None`: not recorded).
    pub command_line: Option<Vec<std::ffi::OsString>>,
    /// Called after every window (one second) with each task's statistics for it, task `i`
    /// as thread `i`: the per-second lines.
    pub on_window: &'a mut dyn FnMut(&SecondWindows),
}

impl Outputs<'_> {
    /// What the sinks need.
    pub(crate) fn needs(&self) -> SinkNeeds {
        self.sinks
            .iter()
            .fold(SinkNeeds::default(), |n, s| n.union(s.needs()))
    }
}

/// The settings in force, in the shape of a single-rate run's, one "thread" per task.
pub(crate) struct Settings<'a> {
    pub policy: Policy,
    pub policy_note: Option<String>,
    pub mlock: (bool, Option<String>),
    pub strategy: Strategy,
    pub cfg: &'a RunConfig,
    pub tid: i32,
    pub tasks: usize,
}

/// The kernel interface each strategy waits with.
fn interface(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::Sleep => "clock_nanosleep(TIMER_ABSTIME)",
        Strategy::Busy { .. } => "clock_gettime spin",
        Strategy::Hybrid { .. } => "clock_nanosleep(TIMER_ABSTIME), then clock_gettime spin",
    }
}

/// The timer slack of the calling thread, ns (`prctl(2)` `PR_GET_TIMERSLACK`).
fn timer_slack_now() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer and only reads the calling thread's value.
    let v = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    u64::try_from(v).unwrap_or(0)
}

impl Settings<'_> {
    /// As a single-rate run's [`Applied`]: task `i` is thread `i`, all on this thread.
    pub(crate) fn applied(&self) -> Applied {
        let cpu = self.cfg.cpus.first().copied().flatten();
        Applied {
            policy: self.policy,
            policy_note: self.policy_note.clone(),
            mlock: self.mlock.0,
            mlock_note: self.mlock.1.clone(),
            pm_qos_us: self.cfg.pm_qos_us,
            pm_qos_note: None,
            timer_slack_ns: timer_slack_now(),
            timer_slack_note: None,
            method: self.cfg.method,
            interface: interface(self.strategy).to_string(),
            granularity_ns: 1,
            method_note: None,
            clock: self.cfg.clock,
            threads: (0..self.tasks)
                .map(|thread| AppliedThread {
                    thread,
                    tid: self.tid,
                    cpu,
                })
                .collect(),
            housekeeping: None,
        }
    }
}

/// The context the sinks get: one run of one method.
pub(crate) fn context<'a>(
    system: &'a SystemInfo,
    cfg: &'a RunConfig,
    methods: &'a [tickscope_engine::wait::MethodKind],
) -> RunContext<'a> {
    RunContext {
        system,
        config: cfg,
        methods,
        rounds: 1,
        index: 0,
        total: 1,
    }
}

/// Closes window `index` of every task, hands it to the sinks (as threads' windows, then
/// with what only tasks have) and `on_window`, and keeps its statistics when a sink renders
/// windows after the run.
pub(crate) fn close_window(
    recorders: &mut [TaskRecorder],
    index: u64,
    first_expiry: Nanos,
    cfg: &RunConfig,
    needs: SinkNeeds,
    outputs: &mut Outputs<'_>,
    ctx: &RunContext<'_>,
) {
    let mut merged = WindowRecord::new();
    let mut tasks = Vec::with_capacity(recorders.len());
    let threads: Vec<(usize, _)> = recorders
        .iter_mut()
        .enumerate()
        .map(|(i, r)| {
            let histograms = needs.window_histograms || needs.latency_histograms;
            let (w, task) = r.close_window(index, cfg.window_ns, histograms, &mut merged);
            if needs.windows {
                r.windows.push(w.clone());
            }
            tasks.push(TaskWindow { task: i, ..task });
            (i, w)
        })
        .collect();
    merged.begin(index);
    let mut all = window_stats(&merged, cfg.window_ns, cfg.period_ns, None);
    if needs.window_histograms || needs.latency_histograms {
        // Every task's releases merged, as a distribution: the interval log's `all` tag.
        attach_buckets(&mut all, &merged);
    }
    let second = SecondWindows {
        index,
        first_expiry,
        threads,
        merged: all,
    };
    for s in outputs.sinks.iter_mut() {
        s.window(ctx, &second);
        s.task_window(ctx, &second, &tasks);
    }
    (outputs.on_window)(&second);
}

/// What the run was, for the document.
pub(crate) struct Ran<'a> {
    pub started_at: std::time::SystemTime,
    pub ended_at: std::time::SystemTime,
    pub interrupted: bool,
    pub applied: Applied,
    pub strategy: Strategy,
    pub specs: &'a [TaskSpec],
    pub stats: &'a [TaskStats],
    /// CPU time and wall time of the thread over the run, ns.
    pub cpu_ns: Nanos,
    pub wall_ns: Nanos,
}

/// The result document: one run whose threads are the tasks, the summary all tasks merged
/// (its CPU time the thread's), and the `tasks` section.
pub(crate) fn document(
    ran: Ran<'_>,
    recorders: &mut [TaskRecorder],
    cfg: &RunConfig,
    outputs: &Outputs<'_>,
) -> RunDocument {
    let mut all = WindowRecord::new();
    let threads: Vec<_> = recorders
        .iter_mut()
        .enumerate()
        .map(|(i, r)| {
            let cpu = ran.applied.threads.get(i).and_then(|t| t.cpu);
            let tid = ran.applied.threads.get(i).map_or(0, |t| t.tid);
            let s = r.thread_stats(i, tid, cpu, ran.wall_ns);
            all.merge(r.total());
            s
        })
        .collect();
    let mut summary = totals_stats(&all, cfg.period_ns);
    summary.cpu_time_ns = ran.cpu_ns;
    summary.wall_time_ns = ran.wall_ns;
    summary.cpu_percent = if ran.wall_ns > 0 {
        ran.cpu_ns as f64 * 100.0 / ran.wall_ns as f64
    } else {
        0.0
    };
    let run = MethodRun {
        method: cfg.method.name().to_string(),
        round: 1,
        order: 0,
        started_at: tickscope_report::document::rfc3339(ran.started_at),
        ended_at: tickscope_report::document::rfc3339(ran.ended_at),
        interrupted: ran.interrupted,
        applied: ran.applied,
        threads,
        summary,
    };
    let mut doc = RunDocument::of_runs(outputs.system.clone(), cfg.clone(), vec![run], false, None);
    if let Some(args) = &outputs.command_line {
        doc.set_command_line(args.iter().cloned());
    }
    doc.tasks = Some(TaskSet {
        strategy: ran.strategy.name().to_string(),
        tasks: ran
            .specs
            .iter()
            .zip(ran.stats)
            .map(|(spec, s)| entry(spec, s))
            .collect(),
    });
    doc
}

/// One task's entry of the `tasks` section.
fn entry(spec: &TaskSpec, s: &TaskStats) -> TaskEntry {
    let t = &spec.task;
    let (num, den) = t.exact_period_ns();
    TaskEntry {
        name: s.name.clone(),
        period_ns: t.period_ns(),
        period_exact_ns: [
            u64::try_from(num).unwrap_or(0),
            u64::try_from(den).unwrap_or(1),
        ],
        phase_ns: t.phase_ns(),
        deadline_ns: t.deadline_ns(),
        budget_ns: t.budget_ns(),
        priority: t.priority_value(),
        overrun_policy: t.overrun_policy().name().to_string(),
        work_ns: spec.work_ns,
        releases: s.releases,
        overruns: s.overruns,
        deadline_misses: s.deadline_misses,
        budget_overruns: s.budget_overruns,
        woken: s.woken,
        wakeup_latency_max_ns: s.wakeup_latency_max,
        response_ns: s.response.clone(),
        execution_ns: s.execution.clone(),
    }
}
