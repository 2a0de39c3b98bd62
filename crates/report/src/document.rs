//! The `tickscope.run/2` result document: what one `tickscope run` measured, on what, how.
//!
//! Field by field description: `docs/result-schema.md`. On disk the per-second windows are
//! one list at the end ([`crate::layout`]); in memory they stay in each thread's statistics.
//! `tickscope.run/1` files (windows inside the threads) are still read. Every time value is integer ns
//! unless its name says otherwise; means and standard deviations are `f64` ns.

use serde::{Deserialize, Serialize};
use std::time::SystemTime;
use tickscope_engine::result::ThreadStats;
use tickscope_engine::run::{Applied, RunConfig, RunOutcome};
use tickscope_engine::system::SystemInfo;

/// The schema identifier written into every run document.
pub const RUN_SCHEMA: &str = "tickscope.run/2";

/// The previous schema, still read: windows inside each thread's statistics, and the
/// overruns of the CSV export and comparisons named `missed_periods`.
pub const RUN_SCHEMA_V1: &str = "tickscope.run/1";

/// Which program wrote a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Always `tickscope`.
    pub name: String,
    /// The program's version (semver).
    pub version: String,
}

impl ToolInfo {
    /// This build of tickscope.
    pub fn current() -> Self {
        ToolInfo {
            name: "tickscope".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// A complete run result, as written by `tickscope run --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    /// Always [`RUN_SCHEMA`].
    pub schema: String,
    /// The program that wrote it.
    pub tool: ToolInfo,
    /// When measuring started (RFC 3339, UTC, ns precision).
    pub started_at: String,
    /// When measuring ended (RFC 3339, UTC, ns precision).
    pub ended_at: String,
    /// Whether the run was cut short by Ctrl-C or SIGTERM (the statistics cover what ran).
    pub interrupted: bool,
    /// An OS error that ended a measuring thread early, if any.
    pub error: Option<String>,
    /// The machine.
    pub system: SystemInfo,
    /// The configuration as asked.
    pub config: RunConfig,
    /// The settings as applied.
    pub applied: Applied,
    /// One entry per measuring thread (of the first run, when `runs` holds several).
    pub threads: Vec<ThreadStats>,
    /// All threads merged (of the first run, when `runs` holds several).
    pub summary: ThreadStats,
    /// Every run, in the order they ran, when one invocation ran several (several methods
    /// with `--method a,b` or `all`, or `--rounds N`); empty (and absent from the JSON) for a
    /// single run, which the top-level `applied`, `threads` and `summary` describe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<MethodRun>,
    /// The load run beside the measurement (`--load`) and the load it achieved; absent
    /// without a load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<crate::load::LoadSection>,
    /// The command line that produced the document, program name first (absent in files
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_line: Vec<String>,
    /// `--explain`: causes of late wake-ups per thread, the worst breakdowns, `--on-late`
    /// hits; absent without `--explain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::sink::explain::ExplainSection>,
    /// `--explain`: the `/proc` context of every window (steal, interrupts, softirqs per
    /// measured CPU; switches, migrations, CPU, policy per thread); absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_context: Option<Vec<tickscope_explain::context::WindowContext>>,
    /// `--hlog`: the interval log written beside this document (where, which tags); absent
    /// without it. `tickscope report` draws per-interval percentile bands from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hlog: Option<crate::sink::hlog::HlogSection>,
    /// The findings of `tickscope doctor` that bear on the run and are not ok, read before
    /// it started (docs/doctor-schema.md); absent in older files and mock runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doctor: Option<Vec<tickscope_engine::doctor::Finding>>,
    /// True when the machine's identity was removed for sharing ([`RunDocument::redact`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// One run of several in a document: one method in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodRun {
    /// The method's name (`nanosleep-abs`, `timerfd`, …).
    pub method: String,
    /// Round number, from 1 (`--rounds`).
    pub round: u32,
    /// Position in the overall order of runs, from 0.
    pub order: u32,
    /// When this run started (RFC 3339).
    pub started_at: String,
    /// When this run ended (RFC 3339).
    pub ended_at: String,
    /// Whether this run was cut short.
    pub interrupted: bool,
    /// The settings as applied for this run.
    pub applied: Applied,
    /// One entry per measuring thread.
    pub threads: Vec<ThreadStats>,
    /// All threads merged.
    pub summary: ThreadStats,
}

impl MethodRun {
    /// The entry of one finished run: `round` from 1, `order` from 0.
    pub fn new(round: u32, order: u32, outcome: &RunOutcome) -> Self {
        MethodRun {
            method: outcome.applied.method.name().to_string(),
            round,
            order,
            started_at: rfc3339(outcome.started_at),
            ended_at: rfc3339(outcome.ended_at),
            interrupted: outcome.interrupted,
            applied: outcome.applied.clone(),
            threads: outcome.threads.clone(),
            summary: outcome.summary.clone(),
        }
    }
}

/// One run of a document, whichever shape the document has (see [`RunDocument::each_run`]).
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// The method's name (`nanosleep-abs`, …).
    pub method: &'a str,
    /// Round number, from 1.
    pub round: u32,
    /// When this run started (RFC 3339).
    pub started_at: &'a str,
    /// When this run ended (RFC 3339).
    pub ended_at: &'a str,
    /// Whether this run was cut short.
    pub interrupted: bool,
    /// The settings as applied.
    pub applied: &'a Applied,
    /// One entry per measuring thread.
    pub threads: &'a [ThreadStats],
    /// All threads merged.
    pub summary: &'a ThreadStats,
}

impl RunView<'_> {
    /// A short name for the run: the method, with the round when `rounds > 1`
    /// (`timerfd #2`).
    pub fn name(&self, rounds: u32) -> String {
        if rounds > 1 {
            format!("{} #{}", self.method, self.round)
        } else {
            self.method.to_string()
        }
    }
}

/// RFC 3339 in UTC with nanoseconds, e.g. `2026-11-21T23:50:50.123456789Z`.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_nanos(t).to_string()
}

impl RunDocument {
    /// Assembles the document of a finished run.
    pub fn new(system: SystemInfo, config: RunConfig, outcome: RunOutcome) -> Self {
        RunDocument {
            schema: RUN_SCHEMA.into(),
            tool: ToolInfo::current(),
            started_at: rfc3339(outcome.started_at),
            ended_at: rfc3339(outcome.ended_at),
            interrupted: outcome.interrupted,
            error: outcome.error,
            system,
            config,
            applied: outcome.applied,
            threads: outcome.threads,
            summary: outcome.summary,
            runs: Vec::new(),
            load: None,
            command_line: Vec::new(),
            explain: None,
            window_context: None,
            hlog: None,
            doctor: None,
            redacted: false,
        }
    }

    /// Every run the document holds, in the order they ran: the entries of `runs` when it is
    /// non-empty, else the single run the top-level fields describe (method from the
    /// configuration, round 1). Renderers iterate this instead of looking at both shapes.
    pub fn each_run(&self) -> Vec<RunView<'_>> {
        if self.runs.is_empty() {
            return vec![RunView {
                method: self.applied.method.name(),
                round: 1,
                started_at: &self.started_at,
                ended_at: &self.ended_at,
                interrupted: self.interrupted,
                applied: &self.applied,
                threads: &self.threads,
                summary: &self.summary,
            }];
        }
        self.runs
            .iter()
            .map(|r| RunView {
                method: &r.method,
                round: r.round,
                started_at: &r.started_at,
                ended_at: &r.ended_at,
                interrupted: r.interrupted,
                applied: &r.applied,
                threads: &r.threads,
                summary: &r.summary,
            })
            .collect()
    }

    /// The document of several runs (a comparison of methods, or rounds): the top-level
    /// `applied`, `threads` and `summary` are the first run's, `started_at` is its start,
    /// `ended_at` the last run's end, `interrupted` whether any run was cut short, `error`
    /// the first error of any run.
    ///
    /// # Panics
    /// If `runs` is empty.
    pub fn from_runs(
        system: SystemInfo,
        config: RunConfig,
        runs: Vec<MethodRun>,
        error: Option<String>,
    ) -> Self {
        let first = runs
            .first()
            .expect("a document needs at least one run")
            .clone();
        let last_end = runs
            .last()
            .map_or(first.ended_at.clone(), |r| r.ended_at.clone());
        RunDocument {
            schema: RUN_SCHEMA.into(),
            tool: ToolInfo::current(),
            started_at: first.started_at,
            ended_at: last_end,
            interrupted: runs.iter().any(|r| r.interrupted),
            error,
            system,
            config,
            applied: first.applied,
            threads: first.threads,
            summary: first.summary,
            runs,
            load: None,
            command_line: Vec::new(),
            explain: None,
            window_context: None,
            hlog: None,
            doctor: None,
            redacted: false,
        }
    }

    /// Removes what identifies the machine before a result is shared: the host name (set to
    /// `redacted`) and the kernel command line (which can hold UUIDs, paths and addresses).
    /// Kernel release, CPU model and settings stay: they are what the numbers mean.
    pub fn redact(&mut self) {
        self.system.hostname = "redacted".into();
        self.system.cmdline = None;
        self.redacted = true;
    }

    /// The document as pretty-printed JSON, in the `tickscope.run/2` layout (the windows
    /// as one list at the end, [`crate::layout`]).
    ///
    /// # Panics
    /// Never in practice: every field serializes (no maps with non-string keys).
    pub fn to_json(&self) -> String {
        let mut doc = self.clone();
        let entries = crate::layout::hoist(&mut doc);
        let mut out = Vec::new();
        let mut writer = crate::layout::EntryWriter::default();
        crate::layout::write_document(&mut out, &doc, &mut |w| {
            entries.iter().try_for_each(|e| writer.write(w, e))
        })
        .expect("run documents always serialize");
        String::from_utf8(out).expect("JSON is UTF-8")
    }

    /// Reads a document of either schema (`tickscope.run/2`, or `/1` with the windows
    /// inside the threads) from parsed JSON, with its windows back in its threads.
    ///
    /// # Errors
    /// One sentence when the schema is neither, a field is missing or of the wrong type, or
    /// a window names a run or thread the document does not have.
    pub fn from_json_value(mut json: serde_json::Value) -> Result<Self, String> {
        match json.get("schema").and_then(serde_json::Value::as_str) {
            Some(RUN_SCHEMA | RUN_SCHEMA_V1) => {}
            Some(other) => {
                return Err(format!(
                    "schema '{other}' is not one this tickscope reads ({RUN_SCHEMA}, \
                     {RUN_SCHEMA_V1})"
                ))
            }
            None => return Err("'schema' is missing or not a string".into()),
        }
        let windows = match json.as_object_mut().and_then(|o| o.remove("windows")) {
            Some(w) => serde_json::from_value::<Vec<crate::layout::WindowEntry>>(w)
                .map_err(|e| format!("windows: {e}"))?,
            None => Vec::new(),
        };
        let mut doc: RunDocument = serde_json::from_value(json).map_err(|e| e.to_string())?;
        crate::layout::distribute(&mut doc, windows)?;
        doc.schema = RUN_SCHEMA.into();
        Ok(doc)
    }

    /// [`RunDocument::from_json_value`] of a text.
    ///
    /// # Errors
    /// As [`RunDocument::from_json_value`], and for text that is not JSON.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        Self::from_json_value(json)
    }
}
