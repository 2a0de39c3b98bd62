//! tickscope's own result files (`tickscope run --json`, schema `tickscope.run/2` or `/1`): one
//! measurement per run (per method and round when the file holds several), threads merged.

use super::{Importer, LatencyFigures, Measurement, Setting, SourceFormat};
use crate::document::{MethodRun, RunDocument};
use crate::units::{interval, ns_i};
use serde_json::Value;
use std::collections::BTreeMap;
use tickscope_engine::result::ThreadStats;
use tickscope_engine::setup::Policy;

/// Reads `tickscope.run/2` and `tickscope.run/1` documents.
#[derive(Debug, Clone, Copy)]
pub struct TickscopeImporter;

impl Importer for TickscopeImporter {
    fn format(&self) -> SourceFormat {
        SourceFormat::Tickscope
    }

    fn recognizes(&self, json: &Value) -> bool {
        json.get("schema").is_some()
    }

    fn import(&self, json: Value, stem: &str) -> Result<Vec<Measurement>, String> {
        let doc = RunDocument::from_json_value(json)?;
        super::validate::check(&doc)?;
        Ok(measurements(&doc, stem))
    }
}

/// The measurements of a document: one per run, all threads merged, labelled `stem` for a
/// single run and `stem: method` (`stem: method #round` with several rounds) otherwise; for
/// a task set (`run --tasks`, [`crate::task_set`]) one per task, labelled `stem: task`.
pub fn measurements(doc: &RunDocument, stem: &str) -> Vec<Measurement> {
    let runs = doc.each_run();
    let rounds = runs.iter().map(|r| r.round).max().unwrap_or(1);
    let single = runs.len() == 1;
    if let (Some(set), true) = (&doc.tasks, single) {
        // A task set: one column per task (task `i` is thread `i`), labelled `stem: task`.
        let run = &runs[0];
        return run
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let name = set.name_of(i).unwrap_or("?");
                let mut m = measurement(doc, run, t, format!("{stem}: {name}"));
                if let Some(task) = set.tasks.get(i) {
                    m.settings
                        .insert(Setting::Interval, interval(task.period_ns));
                }
                m.settings.insert(
                    Setting::Threads,
                    format!("task {} of {}", i + 1, run.threads.len()),
                );
                if t.cpu_time_ns == 0 {
                    // Written before tasks had their CPU time (the execution times added
                    // up): not measured, rather than 0 %.
                    m.cpu_percent = None;
                }
                m
            })
            .collect();
    }
    runs.iter()
        .map(|run| {
            let label = if single {
                stem.to_string()
            } else {
                format!("{stem}: {}", run.name(rounds))
            };
            measurement(doc, run, &run.summary, label)
        })
        .collect()
}

/// A policy split into the policy's name and its priority (or nice value, or reservation).
pub fn policy_and_priority(p: &Policy) -> (String, String) {
    let priority = match p {
        Policy::Other { nice } | Policy::Batch { nice } => format!("nice {nice}"),
        Policy::Fifo { priority } | Policy::Rr { priority } => priority.to_string(),
        Policy::Idle => "none".into(),
        Policy::Deadline {
            runtime_ns,
            period_ns,
            ..
        } => format!(
            "runtime {} / period {}",
            ns_i(*runtime_ns),
            ns_i(*period_ns)
        ),
    };
    (p.name().to_string(), priority)
}

fn measurement(
    doc: &RunDocument,
    run: &MethodRun,
    summary: &ThreadStats,
    label: String,
) -> Measurement {
    let applied = &run.applied;
    let mut settings = BTreeMap::new();
    settings.insert(
        Setting::Tool,
        format!("{} {}", doc.tool.name, doc.tool.version),
    );
    settings.insert(Setting::Kernel, doc.system.kernel_release.clone());
    if let Some(p) = &doc.system.preemption_model {
        settings.insert(Setting::Preemption, p.clone());
    }
    settings.insert(Setting::Method, run.method.to_string());
    let (policy, priority) = policy_and_priority(&applied.policy);
    settings.insert(Setting::Policy, policy);
    settings.insert(Setting::Priority, priority);
    settings.insert(Setting::Interval, interval(doc.config.period_ns));
    settings.insert(Setting::Threads, run.threads.len().to_string());
    settings.insert(Setting::Clock, applied.clock.name().to_string());
    settings.insert(
        Setting::PmQos,
        applied
            .pm_qos_us
            .map_or("not held".to_string(), |us| format!("{us} µs")),
    );
    settings.insert(
        Setting::TimerSlack,
        format!("{} ns", applied.timer_slack_ns),
    );
    settings.insert(
        Setting::Load,
        doc.load
            .as_ref()
            .map_or("none".to_string(), |l| l.describe()),
    );
    let mut notes = Vec::new();
    if run.interrupted {
        notes.push("interrupted: the figures cover what ran".to_string());
    }
    Measurement {
        label,
        source: String::new(),
        format: SourceFormat::Tickscope,
        settings,
        samples: summary.samples,
        latency_ns: summary.latency_ns.as_ref().map(|l| LatencyFigures {
            min: l.min,
            mean: l.mean,
            p50: Some(l.p50),
            p99: Some(l.p99),
            p99_9: Some(l.p99_9),
            max: l.max,
            lower_bounds: Vec::new(),
        }),
        resolution_ns: None,
        dt_sd_ns: summary.period_ns.as_ref().map(|p| p.stddev),
        overruns: Some(summary.overruns),
        cpu_percent: Some(summary.cpu_percent),
        notes,
        threads: Vec::new(),
    }
}
