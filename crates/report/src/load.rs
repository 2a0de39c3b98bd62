//! The `load` section of a result document: the load that ran beside the measurement (its
//! command line, process and exit) and the load it achieved, window by window.
//!
//! OSADL, rteval and Linaro run cyclictest under loads they describe in prose or scripts;
//! none records what the load achieved. This section does: the busy share of the load's
//! CPUs, context switches and interrupts per second, read from `/proc/stat` (see
//! [`tickscope_system::procstat`]). Field by field: `docs/result-schema.md`.

use serde::{Deserialize, Serialize};

/// The load process: what was started and how it ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LoadProcess {
    /// The `--load` spec as given (`cpu:2`, `stress-ng:"--vm 1"`, `exec:"make -j4"`).
    pub spec: String,
    /// The command line started (argv).
    pub command: Vec<String>,
    /// The process id of the load's leader (also its process group id).
    pub pid: i32,
    /// `stress-ng --version`, when the load is stress-ng.
    pub version: Option<String>,
    /// The CPUs the load was placed on (`--load-cpus`); empty: wherever the scheduler puts it.
    pub cpus: Vec<usize>,
    /// Time the load ran before the first wake-up, ns.
    pub settle_ns: i64,
    /// How it ended: `exited with status N` or `killed by signal N (SIGTERM …)`; `None`
    /// while it runs.
    pub exit: Option<String>,
    /// True when tickscope stopped it (the normal end); false when it ended on its own.
    pub stopped_by_tickscope: bool,
}

/// The load achieved in one window of the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadWindow {
    /// Which run of the invocation (from 0; several with `--method a,b` or `--rounds`).
    pub run: usize,
    /// The measurement's window index.
    pub index: u64,
    /// Mean busy share of the load's CPUs (all CPUs without `--load-cpus`), %.
    pub cpu_busy_percent: f64,
    /// Busy share per CPU, %, in the order of [`LoadSection::measured_cpus`].
    pub per_cpu_busy_percent: Vec<f64>,
    /// Context switches per second, whole machine.
    pub context_switches_per_s: f64,
    /// Interrupts per second, whole machine.
    pub interrupts_per_s: f64,
}

/// The load over the whole measurement (first `started` to the last window).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadTotal {
    /// Mean busy share of the load's CPUs, %.
    pub cpu_busy_percent: f64,
    /// Context switches per second.
    pub context_switches_per_s: f64,
    /// Interrupts per second.
    pub interrupts_per_s: f64,
    /// Seconds covered.
    pub seconds: f64,
}

/// The `load` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSection {
    /// The load process.
    pub process: LoadProcess,
    /// The CPUs whose busy share is recorded (the load's, or every CPU).
    pub measured_cpus: Vec<usize>,
    /// One entry per measurement window.
    pub windows: Vec<LoadWindow>,
    /// Over the whole measurement; `None` before the first window.
    pub total: Option<LoadTotal>,
}

impl LoadSection {
    /// One line for people: `stress-ng --cpu 1 …: CPU 99.8 % busy, 1234 ctxt/s, 567 intr/s`.
    pub fn describe(&self) -> String {
        let cmd = self.process.command.join(" ");
        match &self.total {
            Some(t) => format!(
                "{cmd} (achieved: CPU {:.1} % busy, {:.0} context switches/s, {:.0} interrupts/s)",
                t.cpu_busy_percent, t.context_switches_per_s, t.interrupts_per_s
            ),
            None => cmd,
        }
    }
}
