//! The `tickscope.run/2` result document: what one `tickscope run` measured, on what, how.
//!
//! Field by field description: `docs/result-schema.md`. On disk the per-second windows are
//! one list at the end ([`crate::layout`]); in memory they stay in each thread's statistics.
//! In memory every document is a list of finished runs ([`MethodRun`]); the on-disk layout
//! of a single run (top-level fields) and of a comparison (`runs`) is serde's business here.
//! `tickscope.run/1` files (windows inside the threads) are still read. Every time value is integer ns
//! unless its name says otherwise; means and standard deviations are `f64` ns.

use serde::{Deserialize, Serialize};
use std::time::SystemTime;
use tickscope_engine::result::ThreadStats;
use tickscope_engine::run::{Applied, RunConfig, RunOutcome};
use tickscope_system::system::SystemInfo;

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

/// A complete run result, as written by `tickscope run --json`: one or several finished
/// runs ([`MethodRun`], the one shape a finished run has on its way out) and what the sinks
/// added.
///
/// On disk (`docs/result-schema.md`) a single run is described by top-level fields
/// (`started_at`, `ended_at`, `interrupted`, `applied`, `threads`, `summary`) and has no
/// `runs` key; a comparison repeats its first run at the top level and lists every run under
/// `runs`. In memory both are [`RunDocument::runs`]; serde maps between the two
/// (`RunFile` and `RunFileRef`, private to this module), so the JSON is unchanged.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "RunFile")]
pub struct RunDocument {
    /// Always [`RUN_SCHEMA`].
    pub schema: String,
    /// The program that wrote it.
    pub tool: ToolInfo,
    /// An OS error that ended a measuring thread early, if any (the first of any run).
    pub error: Option<String>,
    /// The machine.
    pub system: SystemInfo,
    /// The configuration as asked.
    pub config: RunConfig,
    /// Every run, in the order they ran; never empty. One entry for a single run.
    pub runs: Vec<MethodRun>,
    /// Whether the invocation compared several runs (several methods with `--method a,b` or
    /// `all`, or `--rounds N`), even if it was stopped after one: the JSON then lists them
    /// under `runs`, and the terminal prints the methods table.
    pub comparison: bool,
    /// The load run beside the measurement (`--load`) and the load it achieved; absent
    /// without a load.
    pub load: Option<crate::load::LoadSection>,
    /// The command line that produced the document, program name first (absent in files
    /// written before it was recorded); arguments that were not valid UTF-8 are escaped
    /// ([`crate::command_line`]) and listed in `command_line_escaped`.
    pub command_line: Vec<String>,
    /// The indices into `command_line` of the escaped arguments, ascending; empty when every
    /// argument was valid UTF-8 (then absent on disk).
    pub command_line_escaped: Vec<usize>,
    /// `--explain`: causes of late wake-ups per thread, the worst breakdowns, `--on-late`
    /// hits; absent without `--explain`.
    pub explain: Option<tickscope_explain::section::ExplainSection>,
    /// `--explain`: the `/proc` context of every window (steal, interrupts, softirqs per
    /// measured CPU; switches, migrations, CPU, policy per thread); absent without it.
    pub window_context: Option<Vec<tickscope_explain::context::WindowContext>>,
    /// `--hlog`: the interval log written beside this document (where, which tags); absent
    /// without it. `tickscope report` draws per-interval percentile bands from it.
    pub hlog: Option<crate::hlog_section::HlogSection>,
    /// The findings of `tickscope doctor` that bear on the run and are not ok, read before
    /// it started (docs/doctor-schema.md); absent in older files and mock runs.
    pub doctor: Option<Vec<tickscope_system::doctor::Finding>>,
    /// True when the machine's identity was removed for sharing ([`RunDocument::redact`]).
    pub redacted: bool,
    /// `tickscope attach`: the program measured (pid, command, threads); absent for
    /// `tickscope run`.
    pub target: Option<crate::target::Target>,
    /// `tickscope run --tasks`: the task set, task `i` being thread `i`
    /// ([`crate::task_set`]); absent for other runs.
    pub tasks: Option<crate::task_set::TaskSet>,
}

/// One finished run: one method in one round — what the engine's
/// [`RunOutcome`] becomes on its way out, and what every
/// renderer reads ([`RunDocument::each_run`]).
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
    /// The entry of one finished run, `round` from 1, `order` from 0, and the run's error
    /// (an OS error that ended a measuring thread early), which belongs to the document.
    /// Takes the outcome by value: its statistics move, nothing is copied.
    pub fn new(round: u32, order: u32, outcome: RunOutcome) -> (Self, Option<String>) {
        (
            MethodRun {
                method: outcome.applied.method.name().to_string(),
                round,
                order,
                started_at: rfc3339(outcome.started_at),
                ended_at: rfc3339(outcome.ended_at),
                interrupted: outcome.interrupted,
                applied: outcome.applied,
                threads: outcome.threads,
                summary: outcome.summary,
            },
            outcome.error,
        )
    }

    /// A short name for the run: the method, with the round when `rounds > 1`
    /// (`timerfd #2`).
    pub fn name(&self, rounds: u32) -> String {
        if rounds > 1 {
            format!("{} #{}", self.method, self.round)
        } else {
            self.method.clone()
        }
    }
}

/// RFC 3339 in UTC with nanoseconds, e.g. `2026-11-21T23:50:50.123456789Z`.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_nanos(t).to_string()
}

/// The document as it is on disk: the top level describes the (first) run, `runs` lists
/// every run of a comparison. Read into a [`RunDocument`] by `From`.
#[derive(Deserialize)]
struct RunFile {
    schema: String,
    tool: ToolInfo,
    started_at: String,
    ended_at: String,
    interrupted: bool,
    error: Option<String>,
    system: SystemInfo,
    config: RunConfig,
    applied: Applied,
    threads: Vec<ThreadStats>,
    summary: ThreadStats,
    #[serde(default)]
    runs: Vec<MethodRun>,
    #[serde(default)]
    load: Option<crate::load::LoadSection>,
    #[serde(default)]
    command_line: Vec<String>,
    #[serde(default)]
    command_line_escaped: Vec<usize>,
    #[serde(default)]
    explain: Option<tickscope_explain::section::ExplainSection>,
    #[serde(default)]
    window_context: Option<Vec<tickscope_explain::context::WindowContext>>,
    #[serde(default)]
    hlog: Option<crate::hlog_section::HlogSection>,
    #[serde(default)]
    doctor: Option<Vec<tickscope_system::doctor::Finding>>,
    #[serde(default)]
    redacted: bool,
    #[serde(default)]
    target: Option<crate::target::Target>,
    #[serde(default)]
    tasks: Option<crate::task_set::TaskSet>,
}

impl From<RunFile> for RunDocument {
    fn from(f: RunFile) -> Self {
        let comparison = !f.runs.is_empty();
        let runs = if comparison {
            f.runs
        } else {
            vec![MethodRun {
                method: f.applied.method.name().to_string(),
                round: 1,
                order: 0,
                started_at: f.started_at,
                ended_at: f.ended_at,
                interrupted: f.interrupted,
                applied: f.applied,
                threads: f.threads,
                summary: f.summary,
            }]
        };
        RunDocument {
            schema: f.schema,
            tool: f.tool,
            error: f.error,
            system: f.system,
            config: f.config,
            runs,
            comparison,
            load: f.load,
            command_line: f.command_line,
            command_line_escaped: f.command_line_escaped,
            explain: f.explain,
            window_context: f.window_context,
            hlog: f.hlog,
            doctor: f.doctor,
            redacted: f.redacted,
            target: f.target,
            tasks: f.tasks,
        }
    }
}

/// The on-disk layout written from a [`RunDocument`] without copying it: the same keys, in
/// the same order, as [`RunFile`].
#[derive(Serialize)]
struct RunFileRef<'a> {
    schema: &'a str,
    tool: &'a ToolInfo,
    started_at: &'a str,
    ended_at: &'a str,
    interrupted: bool,
    error: &'a Option<String>,
    system: &'a SystemInfo,
    config: &'a RunConfig,
    applied: &'a Applied,
    threads: &'a [ThreadStats],
    summary: &'a ThreadStats,
    #[serde(skip_serializing_if = "<[MethodRun]>::is_empty")]
    runs: &'a [MethodRun],
    #[serde(skip_serializing_if = "Option::is_none")]
    load: &'a Option<crate::load::LoadSection>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    command_line: &'a [String],
    #[serde(skip_serializing_if = "<[usize]>::is_empty")]
    command_line_escaped: &'a [usize],
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: &'a Option<tickscope_explain::section::ExplainSection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window_context: &'a Option<Vec<tickscope_explain::context::WindowContext>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hlog: &'a Option<crate::hlog_section::HlogSection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    doctor: &'a Option<Vec<tickscope_system::doctor::Finding>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    redacted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: &'a Option<crate::target::Target>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: &'a Option<crate::task_set::TaskSet>,
}

impl Serialize for RunDocument {
    /// The on-disk layout (see [`RunDocument`]): the top level is the first run, with the
    /// last run's end and whether any run was cut short; `runs` only for a comparison.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let first = self.first();
        RunFileRef {
            schema: &self.schema,
            tool: &self.tool,
            started_at: &first.started_at,
            ended_at: self.ended_at(),
            interrupted: self.interrupted(),
            error: &self.error,
            system: &self.system,
            config: &self.config,
            applied: &first.applied,
            threads: &first.threads,
            summary: &first.summary,
            runs: if self.comparison { &self.runs } else { &[] },
            load: &self.load,
            command_line: &self.command_line,
            command_line_escaped: &self.command_line_escaped,
            explain: &self.explain,
            window_context: &self.window_context,
            hlog: &self.hlog,
            doctor: &self.doctor,
            redacted: self.redacted,
            target: &self.target,
            tasks: &self.tasks,
        }
        .serialize(s)
    }
}

impl RunDocument {
    /// The document of one finished run, not a comparison.
    pub fn new(system: SystemInfo, config: RunConfig, outcome: RunOutcome) -> Self {
        let (run, error) = MethodRun::new(1, 0, outcome);
        Self::of_runs(system, config, vec![run], false, error)
    }

    /// The document of `runs` (in the order they ran); `comparison` as in
    /// [`RunDocument::comparison`]; `error` the first error of any run.
    ///
    /// # Panics
    /// If `runs` is empty.
    pub fn of_runs(
        system: SystemInfo,
        config: RunConfig,
        runs: Vec<MethodRun>,
        comparison: bool,
        error: Option<String>,
    ) -> Self {
        assert!(!runs.is_empty(), "a document needs at least one run");
        RunDocument {
            schema: RUN_SCHEMA.into(),
            tool: ToolInfo::current(),
            error,
            system,
            config,
            runs,
            comparison,
            load: None,
            command_line: Vec::new(),
            command_line_escaped: Vec::new(),
            explain: None,
            window_context: None,
            hlog: None,
            doctor: None,
            redacted: false,
            target: None,
            tasks: None,
        }
    }

    /// Records `args` (this process's: `std::env::args_os()`) as the document's
    /// `command_line`, losslessly ([`crate::command_line::record`]).
    pub fn set_command_line(&mut self, args: impl IntoIterator<Item = std::ffi::OsString>) {
        let recorded = crate::command_line::record(args);
        self.command_line = recorded.args;
        self.command_line_escaped = recorded.escaped;
    }

    /// Every run the document holds, in the order they ran (one for a single run).
    /// Renderers iterate this.
    pub fn each_run(&self) -> &[MethodRun] {
        &self.runs
    }

    /// The first run: the only one of a single run, the one a comparison's top-level fields
    /// repeat on disk.
    ///
    /// # Panics
    /// If the document has no run, which its constructors and reader never allow.
    pub fn first(&self) -> &MethodRun {
        self.runs
            .first()
            .expect("a document holds at least one run")
    }

    /// When measuring started: the first run's start (RFC 3339).
    pub fn started_at(&self) -> &str {
        &self.first().started_at
    }

    /// When measuring ended: the last run's end (RFC 3339).
    pub fn ended_at(&self) -> &str {
        self.runs.last().map_or("", |r| &r.ended_at)
    }

    /// Whether any run was cut short by Ctrl-C or SIGTERM.
    pub fn interrupted(&self) -> bool {
        self.runs.iter().any(|r| r.interrupted)
    }

    /// Removes what identifies the machine before a result is shared: the host name (set to
    /// `redacted`) and the kernel command line (which can hold UUIDs, paths and addresses).
    /// Kernel release, CPU model and settings stay: they are what the numbers mean.
    pub fn redact(&mut self) {
        self.system.hostname = "redacted".into();
        self.system.cmdline = None;
        self.redacted = true;
    }
}
