//! Prometheus metrics of a task set (`tickscope monitor --tasks`): per task, labelled
//! `task`, its release latency, response time and execution time as classic histograms
//! (fed once per window from the window histograms the recorder keeps, as the single-rate
//! metrics are, [`super::window_buckets`]), its releases, overruns, deadline misses, budget
//! overruns and CPU time as counters, and its declaration as `tickscope_task_info`.
//!
//! Names follow Prometheus's naming practice ("Metric and label naming",
//! <https://prometheus.io/docs/practices/naming/>): prefix `tickscope_task_`, base unit
//! seconds, `_total` for counters, `_info` for metadata. The latency is named *release*
//! latency, not wake-up latency: a task due with others waits behind their work too.
//! Exposition and encoders are the single-rate ones ([`super::Exposition`]).

use super::window_buckets::{Values, WindowBuckets};
use super::{must, seconds, Base, Exposition};
use crate::sink::{RunContext, RunSink, SinkNeeds};
use crate::task_set::TaskWindow;
use prometheus::{CounterVec, Gauge, GaugeVec, IntCounterVec, Opts};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tickscope_engine::run::{Applied, RunConfig, SecondWindows};
use tickscope_engine::time::Nanos;
use tickscope_system::system::SystemInfo;

/// The labels of every per-task metric, in order.
pub const TASK_LABELS: [&str; 4] = ["task", "cpu", "method", "policy"];

/// One task as declared, for its `task` label and `tickscope_task_info`. Times in ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInfo {
    /// The task's name (`name=`, else its period as written).
    pub name: String,
    /// The period, ns (rounded to the ns for a rate such as 85 Hz).
    pub period_ns: Nanos,
    /// The relative deadline, ns.
    pub deadline_ns: Nanos,
    /// The declared budget, ns, if any.
    pub budget_ns: Option<Nanos>,
    /// The synthetic work per release, ns, if any.
    pub work_ns: Option<Nanos>,
    /// The explicit priority among tasks due together (0 unless given).
    pub priority: i32,
    /// The overrun policy (`skip`, `catch-up`, `relative`).
    pub overrun: String,
}

/// The metric objects.
struct Metrics {
    latency: WindowBuckets,
    response: WindowBuckets,
    execution: WindowBuckets,
    releases: IntCounterVec,
    overruns: IntCounterVec,
    deadline_misses: IntCounterVec,
    budget_overruns: IntCounterVec,
    cpu_seconds: CounterVec,
    window_latency_max: GaugeVec,
    latency_max: GaugeVec,
    window_response_max: GaugeVec,
    last_window: Gauge,
}

/// Updates the per-task metrics from a task-set run's windows (see the module docs).
pub struct TaskSink {
    metrics: Metrics,
    /// The `task` label of each task (names made unique).
    names: Vec<String>,
    /// Each task's label values ([`TASK_LABELS`]), once started.
    labels: Vec<Vec<String>>,
    /// Each task's largest release latency so far, ns.
    max_ns: Vec<Option<Nanos>>,
}

/// The `task` label values: the names, with `#i` (the task's index) added to a name that
/// several tasks share, so that no two tasks share a series.
fn unique_names(tasks: &[TaskInfo]) -> Vec<String> {
    tasks
        .iter()
        .enumerate()
        .map(
            |(i, t)| match tasks.iter().filter(|o| o.name == t.name).count() {
                1 => t.name.clone(),
                _ => format!("{}#{i}", t.name),
            },
        )
        .collect()
}

impl TaskSink {
    /// The sink and its exposition for the task set `tasks`, run with `config` on
    /// `system`: the metrics every exposition has (build, config, output errors, last
    /// window), `tickscope_task_info` per task at once, and the per-task families, each
    /// series created at 0 when the run starts.
    pub fn new(
        system: &SystemInfo,
        config: &RunConfig,
        tasks: &[TaskInfo],
    ) -> (TaskSink, Exposition) {
        let Base {
            registry,
            output_errors,
            last_window,
        } = Base::new(system, config);
        let histogram = |name: &str, help: &str| {
            let h = must(WindowBuckets::new(name, help, Values::Signed, &TASK_LABELS));
            must(registry.register(Box::new(h.clone())));
            h
        };
        let counter = |name: &str, help: &str| {
            let c = must(IntCounterVec::new(Opts::new(name, help), &TASK_LABELS));
            must(registry.register(Box::new(c.clone())));
            c
        };
        let gauge = |name: &str, help: &str| {
            let g = must(GaugeVec::new(Opts::new(name, help), &TASK_LABELS));
            must(registry.register(Box::new(g.clone())));
            g
        };
        let cpu_seconds = must(CounterVec::new(
            Opts::new(
                "tickscope_task_cpu_seconds_total",
                "CPU time of the task's releases (thread CPU clock around each), seconds.",
            ),
            &TASK_LABELS,
        ));
        must(registry.register(Box::new(cpu_seconds.clone())));
        let names = unique_names(tasks);
        let info = must(GaugeVec::new(
            Opts::new(
                "tickscope_task_info",
                "A task as declared: period, deadline, budget and synthetic work in seconds \
                 (empty: none), priority among tasks due together, overrun policy; always 1.",
            ),
            &[
                "task",
                "period_seconds",
                "deadline_seconds",
                "budget_seconds",
                "work_seconds",
                "priority",
                "overrun",
            ],
        ));
        let opt = |v: Option<Nanos>| v.map_or_else(String::new, |ns| seconds(ns).to_string());
        for (t, name) in tasks.iter().zip(&names) {
            let values = [
                name.clone(),
                seconds(t.period_ns).to_string(),
                seconds(t.deadline_ns).to_string(),
                opt(t.budget_ns),
                opt(t.work_ns),
                t.priority.to_string(),
                t.overrun.clone(),
            ];
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            info.with_label_values(&values).set(1.0);
        }
        must(registry.register(Box::new(info)));
        let metrics = Metrics {
            latency: histogram(
                "tickscope_task_release_latency_seconds",
                "Release latency (start - expiry: wake-up latency plus waiting behind tasks \
                 due at the same instant), seconds.",
            ),
            response: histogram(
                "tickscope_task_response_seconds",
                "Response time (end - expiry), seconds.",
            ),
            execution: histogram(
                "tickscope_task_execution_seconds",
                "Execution time of a release on the thread CPU clock, seconds.",
            ),
            releases: counter("tickscope_task_releases_total", "Releases run."),
            overruns: counter(
                "tickscope_task_overruns_total",
                "Overruns: expiries that had passed before a release of the task started.",
            ),
            deadline_misses: counter(
                "tickscope_task_deadline_misses_total",
                "Releases that ended after expiry + deadline.",
            ),
            budget_overruns: counter(
                "tickscope_task_budget_overruns_total",
                "Releases that ran longer than the task's budget.",
            ),
            cpu_seconds,
            window_latency_max: gauge(
                "tickscope_task_window_latency_max_seconds",
                "Largest release latency of the last finished window, seconds.",
            ),
            latency_max: gauge(
                "tickscope_task_latency_max_seconds",
                "Largest release latency since the start, seconds.",
            ),
            window_response_max: gauge(
                "tickscope_task_window_response_max_seconds",
                "Largest response time of the last finished window, seconds.",
            ),
            last_window,
        };
        let sink = TaskSink {
            metrics,
            max_ns: vec![None; names.len()],
            names,
            labels: Vec::new(),
        };
        (
            sink,
            Exposition {
                registry: Arc::new(registry),
                output_errors,
            },
        )
    }
}

impl RunSink for TaskSink {
    fn needs(&self) -> SinkNeeds {
        SinkNeeds {
            window_histograms: true,
            ..SinkNeeds::default()
        }
    }

    fn started(&mut self, _ctx: &RunContext<'_>, applied: &Applied) {
        let cpu = applied
            .threads
            .first()
            .and_then(|t| t.cpu)
            .map_or_else(|| "unpinned".to_string(), |c| c.to_string());
        self.labels = self
            .names
            .iter()
            .map(|n| {
                vec![
                    n.clone(),
                    cpu.clone(),
                    applied.method.name().to_string(),
                    applied.policy.name().to_string(),
                ]
            })
            .collect();
        let m = &self.metrics;
        for l in &self.labels {
            let l = [&*l[0], &*l[1], &*l[2], &*l[3]];
            // Every series exists from the start, at 0, so that rate() sees the first
            // increase.
            for c in [
                &m.releases,
                &m.overruns,
                &m.deadline_misses,
                &m.budget_overruns,
            ] {
                c.with_label_values(&l);
            }
            m.cpu_seconds.with_label_values(&l);
        }
        for h in [&m.latency, &m.response, &m.execution] {
            h.threads(&self.labels);
        }
    }

    fn task_window(&mut self, _ctx: &RunContext<'_>, second: &SecondWindows, tasks: &[TaskWindow]) {
        let m = &self.metrics;
        for t in tasks {
            let Some(l) = self.labels.get(t.task) else {
                continue;
            };
            let l = [&*l[0], &*l[1], &*l[2], &*l[3]];
            m.releases.with_label_values(&l).inc_by(t.releases);
            m.deadline_misses
                .with_label_values(&l)
                .inc_by(t.deadline_misses);
            m.budget_overruns
                .with_label_values(&l)
                .inc_by(t.budget_overruns);
            m.cpu_seconds
                .with_label_values(&l)
                .inc_by(t.execution_sum_ns.max(0) as f64 / 1e9);
            if let Some(b) = &t.response {
                m.response.add(t.task, b, Some(t.response_sum_ns as f64));
            }
            if let Some(b) = &t.execution {
                m.execution.add(t.task, b, Some(t.execution_sum_ns as f64));
            }
            if let Some(max) = t.response_max_ns {
                m.window_response_max
                    .with_label_values(&l)
                    .set(seconds(max));
            }
            let Some((_, w)) = second.threads.iter().find(|(i, _)| *i == t.task) else {
                continue;
            };
            m.overruns.with_label_values(&l).inc_by(w.overruns);
            if let Some(b) = &w.latency_buckets {
                let exact_sum = w.latency_mean.map(|mean| mean * w.samples as f64);
                m.latency.add_counts(t.task, b, exact_sum);
            }
            if let Some(max) = w.latency_max {
                m.window_latency_max.with_label_values(&l).set(seconds(max));
                let all = self.max_ns[t.task].map_or(max, |a| a.max(max));
                self.max_ns[t.task] = Some(all);
                m.latency_max.with_label_values(&l).set(seconds(all));
            }
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        m.last_window.set(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickscope_engine::histogram::HistogramBuckets;

    fn info(name: &str, period_ns: Nanos) -> TaskInfo {
        TaskInfo {
            name: name.into(),
            period_ns,
            deadline_ns: period_ns,
            budget_ns: Some(50_000),
            work_ns: None,
            priority: 0,
            overrun: "skip".into(),
        }
    }

    fn buckets(values: &[(Nanos, u64)]) -> HistogramBuckets {
        HistogramBuckets {
            significant_figures: 2,
            buckets: values.to_vec(),
        }
    }

    #[test]
    fn duplicate_names_get_their_index() {
        let names = unique_names(&[info("1ms", 1), info("2ms", 2), info("1ms", 1)]);
        assert_eq!(names, ["1ms#0", "2ms", "1ms#2"]);
    }

    #[test]
    fn a_window_lands_in_each_tasks_series() {
        // Two threads pinned to CPUs 0 and 1, other policy; window 1 has one overrun each.
        let run = crate::sink::synthetic::run(2, 2, 3);
        let tasks = [info("1ms", 1_000_000), info("log", 10_000_000)];
        let (mut sink, expo) = TaskSink::new(&run.system, &run.config, &tasks);
        let ctx = run.ctx();
        sink.started(&ctx, &run.applied);
        let second = &run.windows[1].report;
        let w = &second.threads[0].1;
        let latency_sum = w.latency_mean.unwrap() * 3.0 / 1e9;
        let windows = [TaskWindow {
            task: 0,
            releases: 3,
            deadline_misses: 1,
            budget_overruns: 0,
            response: Some(buckets(&[(30_000, 2), (1_200_000, 1)])),
            response_sum_ns: 1_260_000,
            response_max_ns: Some(1_200_000),
            execution: Some(buckets(&[(25_000, 3)])),
            execution_sum_ns: 75_000,
        }];
        sink.task_window(&ctx, second, &windows);
        let text = String::from_utf8(expo.encode()).unwrap();
        let has = |line: &str| assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        let l = r#"cpu="0",method="nanosleep-abs",policy="other",task="1ms""#;
        has(&format!("tickscope_task_releases_total{{{l}}} 3"));
        has(&format!("tickscope_task_overruns_total{{{l}}} 1"));
        has(&format!("tickscope_task_deadline_misses_total{{{l}}} 1"));
        has(&format!("tickscope_task_cpu_seconds_total{{{l}}} 0.000075"));
        has(&format!("tickscope_task_response_seconds_count{{{l}}} 3"));
        has(&format!(
            "tickscope_task_response_seconds_sum{{{l}}} 0.00126"
        ));
        has(&format!(
            r#"tickscope_task_response_seconds_bucket{{{l},le="0.00005"}} 2"#
        ));
        has(&format!(
            "tickscope_task_release_latency_seconds_count{{{l}}} 3"
        ));
        has(&format!(
            "tickscope_task_release_latency_seconds_sum{{{l}}} {latency_sum}"
        ));
        has(&format!("tickscope_task_execution_seconds_count{{{l}}} 3"));
        has(&format!(
            "tickscope_task_latency_max_seconds{{{l}}} {}",
            w.latency_max.unwrap() as f64 / 1e9
        ));
        // The other task exists at 0 from the start.
        let log = r#"cpu="0",method="nanosleep-abs",policy="other",task="log""#;
        has(&format!("tickscope_task_releases_total{{{log}}} 0"));
        has(&format!("tickscope_task_response_seconds_count{{{log}}} 0"));
        assert!(text.contains(r#"tickscope_task_info{budget_seconds="0.00005",deadline_seconds="0.001",overrun="skip",period_seconds="0.001",priority="0",task="1ms",work_seconds=""} 1"#), "{text}");
        // OpenMetrics from the same registry.
        assert!(expo.encode_openmetrics().ends_with("# EOF\n"));
    }
}
