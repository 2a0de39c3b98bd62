//! Per-window context (`--explain`): for every window, per measured CPU the steal, IRQ and
//! softirq ticks and the interrupts and softirqs per source, and per measuring thread its
//! context switches, migrations, CPU, and policy and priority read back — all from `/proc`
//! on the collector thread (see [`tickscope_explain::context`]), never the measuring one.
//!
//! A policy that differs from the one applied (a `chrt -p` from another shell) shows in the
//! window's context (`T0 policy fifo:1`); the terminal marks the change itself with a line of
//! its own. The summary names what the worst second coincided with.

use super::{RunContext, RunSink, SinkError};
use crate::document::RunDocument;
use std::sync::Mutex;
use tickscope_engine::run::{Applied, SecondWindows};
use tickscope_explain::context::{
    cpu_deltas, policy_text, read_snapshot, read_task, task_delta, Snapshot, TaskCounters,
    WindowContext,
};

static LATEST: Mutex<Option<WindowContext>> = Mutex::new(None);

/// The newest window's context (for a capture bundle), if any.
pub fn latest() -> Option<WindowContext> {
    LATEST.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The compact context of window `index` (`steal 2 ticks · T0 policy fifo:1 · virtio1-req.0
/// 412`), for the per-second line, when the context sink read that window.
pub fn compact_of(index: u64) -> Option<String> {
    let latest = LATEST.lock().unwrap_or_else(|p| p.into_inner());
    let ctx = latest.as_ref().filter(|c| c.index == index)?;
    let expected = EXPECTED.lock().unwrap_or_else(|p| p.into_inner());
    Some(ctx.compact(expected.as_deref()))
}

/// The policy the run applied, as [`WindowContext::compact`] compares it.
static EXPECTED: Mutex<Option<String>> = Mutex::new(None);

/// Reads `/proc` at every window.
#[derive(Default)]
pub struct ContextSink {
    before: Option<Snapshot>,
    tasks: Vec<(usize, i32, Option<usize>, Option<TaskCounters>)>,
    expected: Option<String>,
    windows: Vec<WindowContext>,
    /// The first run's worst window so far: (its maximum latency, ns; its index; its
    /// second, [`crate::live::second_of`]).
    worst: Option<(tickscope_engine::time::Nanos, u64, u64)>,
}

impl ContextSink {
    /// A context sink. It prints nothing itself: the terminal marks a policy changed from
    /// outside (see [`super::terminal`]) and prints the context with each second's line.
    pub fn new() -> Self {
        ContextSink {
            before: None,
            tasks: Vec::new(),
            expected: None,
            windows: Vec::new(),
            worst: None,
        }
    }
}

/// The policy `applied` asked for, as `/proc` reads back ([`policy_text`]): `fifo:90`.
pub(crate) fn applied_policy(applied: &Applied) -> String {
    use tickscope_engine::setup::Policy;
    match applied.policy {
        Policy::Fifo { priority } => format!("fifo:{priority}"),
        Policy::Rr { priority } => format!("rr:{priority}"),
        Policy::Other { nice } => policy_text("other", 0, nice),
        Policy::Batch { nice } => policy_text("batch", 0, nice),
        Policy::Idle => "idle".into(),
        Policy::Deadline { .. } => "deadline".into(),
    }
}

impl RunSink for ContextSink {
    fn started(&mut self, _ctx: &RunContext<'_>, applied: &Applied) {
        self.before = Some(read_snapshot());
        self.tasks = applied
            .threads
            .iter()
            .map(|t| (t.thread, t.tid, t.cpu, read_task(t.tid)))
            .collect();
        self.expected = Some(applied_policy(applied));
        *EXPECTED.lock().unwrap_or_else(|p| p.into_inner()) = self.expected.clone();
    }

    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondWindows) {
        if let (0, Some(max)) = (ctx.index, second.merged.latency_max) {
            if self.worst.is_none_or(|(m, _, _)| max > m) {
                self.worst = Some((max, second.index, crate::live::second_of(&second.merged)));
            }
        }
        let Some(before) = self.before.take() else {
            return;
        };
        let after = read_snapshot();
        let mut cpus: Vec<u32> = Vec::new();
        let mut threads = Vec::new();
        for (thread, tid, pinned, last) in &mut self.tasks {
            let now = read_task(*tid);
            if let (Some(b), Some(a)) = (last.as_ref(), now.as_ref()) {
                threads.push(task_delta(*thread, *tid, b, a));
            }
            let cpu = pinned
                .map(|c| c as u32)
                .or(now.as_ref().and_then(|n| n.cpu));
            cpus.extend(cpu.filter(|c| !cpus.contains(c)));
            if now.is_some() {
                *last = now;
            }
        }
        cpus.sort_unstable();
        let ctx = WindowContext {
            index: second.index,
            cpus: cpu_deltas(&before, &after, &cpus),
            threads,
        };
        *LATEST.lock().unwrap_or_else(|p| p.into_inner()) = Some(ctx.clone());
        self.windows.push(ctx);
        self.before = Some(after);
    }

    fn annotate(&mut self, doc: &mut RunDocument) {
        doc.window_context = Some(self.windows.clone());
    }

    fn finish(&mut self, _doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        // The worst window of the (first) run and what it coincided with.
        if let Some((max, index, second)) = self.worst {
            if let Some(ctx) = self.windows.iter().find(|c| c.index == index) {
                let what = ctx.compact(self.expected.as_deref());
                notes.push(format!(
                    "worst second {second} (max {}) coincided with: {}",
                    crate::units::ns_i(max),
                    if what.is_empty() {
                        "nothing unusual in /proc".into()
                    } else {
                        what
                    }
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::synthetic;

    #[test]
    fn the_worst_window_is_named_by_the_second_the_table_prints() {
        let run = synthetic::run(1, 3, 100);
        let mut sink = ContextSink::new();
        run.feed(&mut sink);
        let mut notes = Vec::new();
        sink.finish(&run.document(), &mut notes).unwrap();
        // The first window (index 0) is the line at 1 s.
        assert_eq!(crate::live::second_of(&run.windows[0].report.merged), 1);
        let worst = run
            .windows
            .iter()
            .min_by_key(|w| std::cmp::Reverse(w.report.merged.latency_max))
            .unwrap(); // the first of equal maxima, as the sink keeps it
        let second = crate::live::second_of(&worst.report.merged);
        assert_ne!(second, worst.report.index, "numbered from 1, not from 0");
        assert!(
            notes[0].starts_with(&format!("worst second {second} (max ")),
            "{notes:?}"
        );
    }
}
