//! The `tickscope.scenario/1` document: one scenario run, every step's result and the table
//! printed. Field by field: `docs/scenarios.md`.

use super::actions::Outcome;
use super::format::{Scenario, StepKind};
use super::table::Rendered;
use serde::Serialize;
use tickscope_report::load::LoadProcess;
use tickscope_report::{RunDocument, ToolInfo};
use tickscope_system::clocks::ClocksResult;
use tickscope_system::system::SystemInfo;

/// The schema identifier of a scenario document.
pub const SCENARIO_SCHEMA: &str = "tickscope.scenario/1";

/// One step as it ran.
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    /// The step's name.
    pub name: String,
    /// `run` or `clocks`.
    pub kind: StepKind,
    /// The options used (the quick ones with `--quick`), the load included.
    pub args: Vec<String>,
    /// Why the step did not run (a setting this process may not apply, e.g. SCHED_FIFO
    /// without root), if it did not.
    pub skipped: Option<String>,
    /// An error that ended the step early, if any.
    pub error: Option<String>,
    /// The timed actions and what they did.
    pub actions: Vec<Outcome>,
    /// A run step's result document (its `load` section included).
    pub run: Option<Box<RunDocument>>,
    /// A clocks step's result.
    pub clocks: Option<Box<ClocksResult>>,
    /// A clocks step's load process (run steps record it in `run.load`).
    pub load: Option<LoadProcess>,
}

impl StepRecord {
    /// A step about to run with `args` (its options as used, the load included): nothing
    /// recorded yet.
    pub fn new(name: &str, kind: StepKind, args: Vec<String>) -> StepRecord {
        StepRecord {
            name: name.to_string(),
            kind,
            args,
            skipped: None,
            error: None,
            actions: Vec::new(),
            run: None,
            clocks: None,
            load: None,
        }
    }
}

/// A scenario run.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioDocument {
    /// Always [`SCENARIO_SCHEMA`].
    pub schema: &'static str,
    /// The program that wrote it.
    pub tool: ToolInfo,
    /// The scenario as read (source, steps, published numbers, table layout).
    pub scenario: Scenario,
    /// `builtin` or the file it was read from.
    pub from: String,
    /// True with `--quick`: every step shortened; not comparable with the published numbers.
    pub quick: bool,
    /// When the first step started (RFC 3339).
    pub started_at: String,
    /// When the last step ended (RFC 3339).
    pub ended_at: String,
    /// True when Ctrl-C or SIGTERM cut it short.
    pub interrupted: bool,
    /// The machine.
    pub system: SystemInfo,
    /// Every step, in order.
    pub steps: Vec<StepRecord>,
    /// The table as printed.
    pub table: Rendered,
}
