//! The load achieved, window by window: reads `/proc/stat` when a run starts and after each
//! window (on the collector thread, never the measuring one) and adds the `load` section
//! to the document (see [`crate::load`]).

use super::{RunContext, RunSink};
use crate::document::RunDocument;
use crate::load::{LoadProcess, LoadSection, LoadTotal, LoadWindow};
use std::sync::{Arc, Mutex};
use tickscope_engine::run::{Applied, SecondWindows};
use tickscope_system::procstat::ProcStat;

/// Records the load achieved beside a measurement.
pub struct LoadSink {
    process: Arc<Mutex<LoadProcess>>,
    cpus: Vec<usize>,
    first: Option<ProcStat>,
    last: Option<ProcStat>,
    windows: Vec<LoadWindow>,
}

impl LoadSink {
    /// A sink for the load described by `process` (shared with whoever stops the load, who
    /// fills in its exit), measuring the busy share of `cpus` (every CPU when empty).
    pub fn new(process: Arc<Mutex<LoadProcess>>, cpus: Vec<usize>) -> Self {
        LoadSink {
            process,
            cpus,
            first: None,
            last: None,
            windows: Vec::new(),
        }
    }

    fn measured_cpus(&self) -> Vec<usize> {
        match (&self.cpus.is_empty(), &self.last) {
            (false, _) => self.cpus.clone(),
            (true, Some(s)) => s.cpus.iter().map(|(c, _)| *c).collect(),
            (true, None) => Vec::new(),
        }
    }
}

fn mean(v: &[f64]) -> f64 {
    match v.len() {
        0 => 0.0,
        n => v.iter().sum::<f64>() / n as f64,
    }
}

impl RunSink for LoadSink {
    fn started(&mut self, _ctx: &RunContext<'_>, _applied: &Applied) {
        if let Ok(s) = ProcStat::read() {
            self.first.get_or_insert_with(|| s.clone());
            self.last = Some(s);
        }
    }

    fn window(&mut self, ctx: &RunContext<'_>, second: &SecondWindows) {
        let (Ok(now), Some(last)) = (ProcStat::read(), &self.last) else {
            return;
        };
        let a = now.since(last, &self.cpus);
        self.windows.push(LoadWindow {
            run: ctx.index,
            index: second.index,
            cpu_busy_percent: mean(&a.cpu_busy_percent),
            per_cpu_busy_percent: a.cpu_busy_percent,
            context_switches_per_s: a.context_switches_per_s,
            interrupts_per_s: a.interrupts_per_s,
        });
        self.last = Some(now);
    }

    fn annotate(&mut self, doc: &mut RunDocument) {
        let total = match (&self.first, &self.last) {
            (Some(f), Some(l)) if l.at > f.at => {
                let a = l.since(f, &self.cpus);
                Some(LoadTotal {
                    cpu_busy_percent: mean(&a.cpu_busy_percent),
                    context_switches_per_s: a.context_switches_per_s,
                    interrupts_per_s: a.interrupts_per_s,
                    seconds: a.seconds,
                })
            }
            _ => None,
        };
        let process = self.process.lock().map(|p| p.clone()).unwrap_or_default();
        doc.load = Some(LoadSection {
            process,
            measured_cpus: self.measured_cpus(),
            windows: self.windows.clone(),
            total,
        });
    }
}
