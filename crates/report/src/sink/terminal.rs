//! The terminal: the header, a line per second (single run) or per finished run
//! (comparison), then the summary or the comparison table, then where the files went.
//! Warnings go to standard error; everything else through a [`Printer`], so the command
//! decides where text goes and what a closed standard output means.

use super::{RunContext, RunSink, SinkError};
use crate::document::RunDocument;
use crate::methods_table::{comparison_header, methods_table, run_line};
use crate::terminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::run::{Applied, SecondReport};
use tickscope_engine::wait::MethodKind;

/// Where the terminal sink's text goes.
pub trait Printer {
    /// Prints one piece of text and a newline.
    fn line(&mut self, text: &str);
    /// True when the reader went away (standard output closed): the stop that follows is
    /// not worth a remark.
    fn closed(&self) -> bool;
}

/// The terminal's view of a run.
pub struct TerminalSink {
    printer: Box<dyn Printer>,
    quiet: bool,
    stop: Arc<AtomicBool>,
    warned: Vec<MethodKind>,
}

impl TerminalSink {
    /// A terminal sink printing through `printer`; with `quiet`, only the summary (or the
    /// comparison table) and warnings. `stop` is the run's stop flag, to say that an
    /// interrupted run's summary covers what ran.
    pub fn new(printer: Box<dyn Printer>, quiet: bool, stop: Arc<AtomicBool>) -> Self {
        TerminalSink {
            printer,
            quiet,
            stop,
            warned: Vec::new(),
        }
    }
}

impl RunSink for TerminalSink {
    fn started(&mut self, ctx: &RunContext<'_>, applied: &Applied) {
        if let Some(note) = &applied.method_note {
            if !self.warned.contains(&applied.method) {
                self.warned.push(applied.method);
                eprintln!("tickscope: warning: {note}");
            }
        }
        if self.quiet {
            return;
        }
        if !ctx.is_comparison() {
            let text = format!(
                "{}\n{}",
                terminal::header(ctx.system, ctx.config, applied),
                terminal::second_header()
            );
            self.printer.line(&text);
        } else if ctx.index == 0 {
            let text = comparison_header(ctx.system, ctx.config, applied, ctx.methods, ctx.rounds);
            self.printer.line(&text);
        }
    }

    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondReport) {
        if !self.quiet && !ctx.is_comparison() {
            let text = terminal::second_lines(second, ctx.config.period_ns, ctx.config.cpus.len());
            self.printer.line(&text);
        }
    }

    fn run_finished(&mut self, ctx: &RunContext<'_>, doc: &RunDocument) -> Result<(), SinkError> {
        if let (false, true, Some(run)) = (self.quiet, ctx.is_comparison(), doc.runs.last()) {
            self.printer.line(&run_line(run, ctx.total));
        }
        Ok(())
    }

    fn finish(&mut self, doc: &RunDocument, notes: &mut Vec<String>) -> Result<(), SinkError> {
        let comparison = !doc.runs.is_empty();
        if self.stop.load(Ordering::Relaxed) && !self.printer.closed() {
            eprintln!(
                "tickscope: interrupted; the {} covers what ran",
                if comparison { "table" } else { "summary" }
            );
        }
        let body = if comparison {
            methods_table(&doc.runs)
        } else {
            terminal::summary(&doc.threads, &doc.summary)
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
