//! The terminal: the header, a line per second (single run) or per finished run
//! (comparison), then the summary or the comparison table, the settings in one line, a
//! warning when the machine did not keep up, then where the files went. Warnings and the
//! progress bar go to standard error; everything else through a [`Printer`], so the command
//! decides where text goes and what a closed standard output means.
//!
//! With `-q` (only the summary) or a comparison (no per-second lines), a progress bar on
//! standard error shows elapsed and total time and the worst latency so far; it is drawn
//! only when standard error is a terminal, and only once per window.

use super::{RunContext, RunSink, SinkError};
use crate::document::RunDocument;
use crate::live::{self, Layout, RunningMax};
use crate::methods_table::{comparison_header, methods_table, run_line};
use crate::terminal;
use crate::units::ns_i;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::run::{Applied, RunConfig, SecondWindows};
use tickscope_engine::wait::MethodKind;

/// Where the terminal sink's text goes.
pub trait Printer {
    /// Prints one piece of text and a newline.
    fn line(&mut self, text: &str);
    /// True when the reader went away (standard output closed): the stop that follows is
    /// not worth a remark.
    fn closed(&self) -> bool;
    /// The terminal's width in columns, `None` when the text does not go to a terminal.
    fn width(&self) -> Option<usize>;
}

/// The terminal's view of a run.
pub struct TerminalSink {
    printer: Box<dyn Printer>,
    quiet: bool,
    stop: Arc<AtomicBool>,
    warned: Vec<MethodKind>,
    worst: RunningMax,
    progress: Option<ProgressBar>,
    policies: PolicyWatch,
}

/// Each measuring thread's policy as read back with every window (the windows carry it,
/// [`tickscope_engine::result::WindowStats::policy`]): a change made from outside (`chrt
/// -p`) is marked in the live view, and the closing advice goes by the policy the thread
/// ended under.
#[derive(Debug, Default)]
struct PolicyWatch {
    /// This run's threads' policy as last read (`fifo:90`), by thread index.
    last: std::collections::BTreeMap<usize, String>,
    /// Per run index, the policy a thread ended under when it differs from the one
    /// applied.
    changed: std::collections::BTreeMap<usize, String>,
    /// The policy this run applied, as read back.
    expected: String,
}

impl PolicyWatch {
    fn started(&mut self, applied: &Applied) {
        self.expected = super::context::applied_policy(applied);
        self.last = applied
            .threads
            .iter()
            .map(|t| (t.thread, self.expected.clone()))
            .collect();
    }

    /// The changes since the last window as `(thread, was, now)`.
    fn window(&mut self, second: &SecondWindows) -> Vec<(usize, String, String)> {
        let mut changes = Vec::new();
        for (t, w) in &second.threads {
            let Some(now) = &w.policy else { continue };
            let last = self.last.entry(*t).or_insert_with(|| self.expected.clone());
            if now != last {
                changes.push((*t, last.clone(), now.clone()));
                *last = now.clone();
            }
        }
        changes
    }

    /// Notes, for run `run`, a thread that ends under another policy than the one applied.
    fn run_finished(&mut self, run: usize) {
        if let Some(p) = self.last.values().find(|p| **p != self.expected) {
            self.changed.insert(run, p.clone());
        }
    }
}

impl TerminalSink {
    /// A terminal sink printing through `printer`; with `quiet`, only a settings line, the
    /// summary (or the comparison table) and warnings. `stop` is the run's stop flag, to say
    /// that an interrupted run's summary covers what ran.
    pub fn new(printer: Box<dyn Printer>, quiet: bool, stop: Arc<AtomicBool>) -> Self {
        TerminalSink {
            printer,
            quiet,
            stop,
            warned: Vec::new(),
            worst: RunningMax::default(),
            progress: None,
            policies: PolicyWatch::default(),
        }
    }

    fn layout(&self) -> Layout {
        Layout::for_width(self.printer.width())
    }

    /// A bar over the whole plan (all runs), or a spinner when a run has no end — only when
    /// standard error is a terminal, and redrawn only when a window arrives (no ticker
    /// thread waking up while the measurement runs).
    fn start_progress(&mut self, ctx: &RunContext<'_>) {
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() {
            return;
        }
        let bar = match expected_ns(ctx.config) {
            Some(ns) => {
                let total_ms = (ns / 1_000_000).max(1) as u64 * ctx.total as u64;
                let bar = ProgressBar::new(total_ms);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} of {duration_precise} [{wide_bar}] {msg}",
                    )
                    .expect("a valid template"),
                );
                bar
            }
            None => ProgressBar::new_spinner(),
        };
        self.progress = Some(bar);
    }
}

/// How long one run is planned to take, ns, when it has an end.
fn expected_ns(cfg: &RunConfig) -> Option<i64> {
    let by_loops = cfg.loops.map(|l| (l as i64).saturating_mul(cfg.period_ns));
    match (by_loops, cfg.duration_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl RunSink for TerminalSink {
    fn started(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        self.policies.started(applied);
        if let Some(note) = &applied.method_note {
            if !self.warned.contains(&applied.method) {
                self.warned.push(applied.method);
                crate::fit::warn(&format!("warning: {note}"));
            }
        }
        let first = ctx.index == 0;
        if first && (self.quiet || ctx.is_comparison()) {
            self.start_progress(ctx);
        }
        if self.quiet {
            // One settings line still comes, under the summary.
        } else if !ctx.is_comparison() {
            let text = format!(
                "{}\n{}",
                terminal::header(ctx.system, ctx.config, applied),
                live::header(self.layout())
            );
            self.printer.line(&text);
        } else if first {
            let text = comparison_header(ctx.system, ctx.config, applied, ctx.methods, ctx.rounds);
            self.printer.line(&text);
        }
    }

    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondWindows) {
        self.worst.update(second);
        if let Some(bar) = &self.progress {
            let per_run = expected_ns(ctx.config).unwrap_or(0) / 1_000_000;
            let done = per_run as u64 * ctx.index as u64
                + ((second.index + second.merged.span) * (ctx.config.window_ns as u64)) / 1_000_000;
            bar.set_position(done);
            if let Some(max) = self.worst.merged() {
                bar.set_message(format!("worst {}", ns_i(max)));
            }
        }
        let changes = self.policies.window(second);
        if !self.quiet {
            for (thread, was, now) in changes {
                self.printer.line(&format!(
                    "  second {}: T{thread} now runs {now}, was {was} — changed from outside \
                     (chrt?)",
                    live::second_of(&second.merged)
                ));
            }
        }
        if !self.quiet && !ctx.is_comparison() {
            let mut text = live::lines(
                second,
                ctx.config.period_ns,
                ctx.config.cpus.len(),
                &self.worst,
                self.layout(),
            );
            // With --explain, what /proc says about the same second (steal, preemptions,
            // migrations, a changed policy, the busiest interrupt and softirq).
            if let Some(c) = super::context::compact_of(second.index).filter(|c| !c.is_empty()) {
                text = live::with_context(text, &c, self.layout());
            }
            self.printer.line(&text);
        }
    }

    fn run_finished(&mut self, ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        self.policies.run_finished(ctx.index);
        if let (false, true, Some(run)) = (self.quiet, ctx.is_comparison(), doc.runs.last()) {
            let line = run_line(run, ctx.total);
            match &self.progress {
                Some(bar) => bar.suspend(|| self.printer.line(&line)),
                None => self.printer.line(&line),
            }
        }
        Ok(())
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        if let Some(bar) = self.progress.take() {
            bar.finish_and_clear();
        }
        let comparison = doc.comparison;
        if self.stop.load(Ordering::Relaxed) && !self.printer.closed() {
            eprintln!(
                "tickscope: interrupted; the {} covers what ran",
                if comparison { "table" } else { "summary" }
            );
        }
        let body = if comparison {
            methods_table(&doc.runs)
        } else {
            let run = doc.first();
            let ended = self.policies.changed.get(&0).map(String::as_str);
            let warning =
                terminal::keep_up_warning(&run.summary, doc.config.period_ns, &run.applied, ended);
            if let Some(w) = warning {
                crate::fit::warn(&w);
            }
            format!(
                "{}\n{}",
                terminal::summary(&run.threads, &run.summary),
                terminal::settings_line(&run.applied)
            )
        };
        self.printer.line(&format!("\n{body}"));
        if !self.quiet {
            for n in notes.iter() {
                self.printer.line(n);
            }
        }
        Ok(())
    }
}
