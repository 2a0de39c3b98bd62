//! The command line as typed: flags and their help. Only syntax here; meaning is resolved in
//! [`crate::options`]. Short flags follow cyclictest's where a user expects them.

use clap::{Args, Parser, Subcommand};
use tickscope_session::tasks::spec::TaskList;

/// Measure how precisely this machine wakes a periodic task, and why it is late.
#[derive(Debug, Parser)]
#[command(name = "tickscope", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process; its size does not matter
pub enum Command {
    /// Measure timer wake-up latency and period jitter of periodic threads.
    Run(RunArgs),
    /// Resolution and cost of reading every clock (the floor under every latency measured).
    Clocks(ClocksArgs),
    /// Write a self-contained HTML report (and PNG/SVG plots) of a result file.
    Report(ReportArgs),
    /// Put results side by side: tickscope, cyclictest --json and jitterdebugger files.
    Compare(CompareArgs),
    /// The classic experiments (and your own) as one command each: list, show, run.
    #[command(subcommand)]
    Scenario(ScenarioCommand),
    /// Print shell completions (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the manual page, or write every page into a directory.
    Man(ManArgs),
    /// Schedulability of several periodic tasks in one thread: hyperperiod, utilisation,
    /// worst-case response times, coincidences.
    Plan(PlanArgs),
    /// Measure until stopped and serve Prometheus metrics (and/or a node_exporter textfile).
    Monitor(MonitorArgs),
    /// Interval histogram logs (.hlog): merge them, or percentiles over a time range (at
    /// HdrHistogram's bucket tops).
    #[command(subcommand)]
    Hlog(HlogCommand),
    /// What on this machine limits wake-up latency, with the fix; --measure tries the knobs
    /// tickscope can set itself. Exit status 0 when the machine can be measured.
    #[command(after_help = DOCTOR_EXIT)]
    Doctor(DoctorArgs),
    /// Regression gate: judge candidate runs against a baseline on whole distributions
    /// (tail quantiles with intervals, shape, overruns), one-second windows as the unit.
    #[command(after_help = GATE_EXIT)]
    Gate(GateArgs),
    /// Measure (and explain) the wake-ups of a program that is already running, from kernel
    /// trace events, without touching it (root).
    Attach(AttachArgs),
}

impl Command {
    /// Whether the command measures this machine (starts measuring threads or the doctor's
    /// `--measure` runs): only then do signals stop a measurement, and stale trace
    /// instances of killed runs get removed first.
    pub fn measures(&self) -> bool {
        match self {
            Command::Run(_) | Command::Clocks(_) | Command::Monitor(_) | Command::Attach(_) => true,
            Command::Scenario(c) => matches!(c, ScenarioCommand::Run(_)),
            Command::Doctor(a) => a.measure,
            _ => false,
        }
    }
}

/// The EXIT STATUS section of `tickscope gate --help` (and its manual page).
pub const GATE_EXIT: &str = "Exit status (the worst of all candidates):
  0  pass (or improvement): no test showed a change beyond the allowed one
  1  regression: a test showed a candidate worse by more than allowed
  2  bad input (one line on standard error)
  3  inconclusive: not enough data to judge a test (too few windows or wake-ups)

Statistics, rules and the default run length: docs/gate.md.
Examples:
  tickscope gate base.hlog cand.hlog                    judge one candidate
  tickscope gate --rules gate.toml --junit gate.xml fleet.hlog host1.hlog host2.hlog
  tickscope gate t1.hlog t2.hlog                        two task sets (run --tasks), task by task";

/// Options of `tickscope gate`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// The baseline: a tickscope result, an interval log (a `tickscope hlog merge` of a
    /// fleet too), a cyclictest --json or a jitterdebugger file. Two task sets (`run
    /// --tasks`, result or log) are judged task by task, tasks matched by name.
    #[arg(value_name = "BASELINE")]
    pub baseline: std::path::PathBuf,

    /// Candidates, each judged against the baseline (same formats).
    #[arg(value_name = "CANDIDATE", required = true)]
    pub candidates: Vec<std::path::PathBuf>,

    /// Rules as TOML (quantiles, allowed change, confidence; docs/gate.md). Default: the
    /// built-in rules.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<std::path::PathBuf>,

    /// Print the report as JSON (schema tickscope.gate/1) instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Also write the verdicts as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<std::path::PathBuf>,
}

/// The EXIT STATUS section of `tickscope doctor --help` (and its manual page).
pub const DOCTOR_EXIT: &str = "Exit status:
  0  this machine can be measured: every finding is advice (findings come most important
     first; \"Fix these first\" lists those worth fixing before you trust a number)
  1  --fail-on SEVERITY was given and a finding is that severe or worse
  2  bad input (one line on standard error)
  3  a finding makes measurements on this machine invalid (no high-resolution timers, or
     the jiffies clocksource): fix it first

Examples:
  tickscope doctor && tickscope run -D 1m       measure only where measuring makes sense
  tickscope doctor --fail-on high               fail a CI job on any high or fatal finding
  tickscope doctor --measure --rounds 7         what each knob is worth here, tested";

/// Examples after `tickscope attach --help`.
pub const ATTACH_EXAMPLES: &str = "Examples:
  tickscope attach --pid $(pidof cyclictest) -D 10s             its periodic threads, measured
  tickscope attach --pid 4242 --list                            which threads are periodic
  tickscope attach --pid 4242 --tid 4250 --explain --json a.json   why one thread is late
  tickscope attach --pid 4242 -q -h 400                         cyclictest's histogram of it

\"Woke\" is the wait's return to user space (its sys_exit), µs resolution: docs/attach.md.";

/// Options of `tickscope attach`. `-h` is cyclictest's histogram here, so help is `--help`.
#[derive(Debug, Args)]
#[command(disable_help_flag = true, after_help = ATTACH_EXAMPLES)]
pub struct AttachArgs {
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,

    /// The process to attach to.
    #[arg(long, value_name = "PID")]
    pub pid: i32,

    /// Measure this thread of PID (repeatable). Default: every thread found periodic, and
    /// every one found periodic later.
    #[arg(long, value_name = "TID")]
    pub tid: Vec<i32>,

    /// Measure this long (10s, 5m), then detach. Default: until Ctrl-C or the target exits.
    #[arg(short = 'D', long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// How long to watch the threads before choosing: the periodic ones need at least five
    /// wake-ups in it.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub discover: String,

    /// List the threads with their period, wait and clock, then detach.
    #[arg(long)]
    pub list: bool,

    /// Write the result as JSON (schema tickscope.run/2, with a `target` section) to FILE.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<std::path::PathBuf>,

    /// Print only the summary, then cyclictest's line per thread.
    #[arg(short = 'q', long, help_heading = "Output")]
    pub quiet: bool,

    /// Leave the host name and the kernel command line out of the result files.
    #[arg(long, help_heading = "Output")]
    pub redact: bool,

    /// Files exported (histogram, CSV, raw samples, hlog), as for `tickscope run`.
    #[command(flatten)]
    pub exports: ExportArgs,

    /// Why wake-ups were late: `--explain` options, as for `tickscope run`.
    #[command(flatten)]
    pub explain: ExplainArgs,
}

/// Options of `tickscope doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The CPUs to be measured (e.g. 1,3-4). Default: every CPU this process may run on.
    #[arg(long, value_name = "CPULIST")]
    pub cpus: Option<String>,

    /// Write the findings as JSON (schema tickscope.doctor/1) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,

    /// Also measure each knob tickscope can set (policy, PM QoS, timer slack, placement,
    /// method) with short interleaved A/B runs.
    #[arg(long)]
    pub measure: bool,

    /// Length of each --measure run: 1s, 500ms; a bare number is seconds.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub measure_duration: String,

    /// Rounds of (without, with) per knob for --measure, interleaved. A knob is said to
    /// change p99 only when a Mann–Whitney test of the rounds' p99s finds it (p < 0.05),
    /// which needs at least 4 rounds.
    #[arg(long, default_value = "5", value_name = "N")]
    pub rounds: String,

    /// Exit with status 1 when a finding is this severe or worse: info, medium, high or
    /// fatal. Without it, findings are advice and only a finding that makes measurements
    /// invalid changes the exit status (3).
    #[arg(long, value_name = "SEVERITY", value_parser = ["info", "medium", "high", "fatal"])]
    pub fail_on: Option<String>,

    /// How long to sample steal time: 2s, 500ms; 0 skips it and the clock-read measurement (50 ms).
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    pub steal_sample: String,

    /// Read /proc, /sys and /dev under DIR instead of / (fixture trees in tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<std::path::PathBuf>,
}

/// The help of every `--tasks` option (`plan`, `run`, `monitor`): one syntax, one parser
/// ([`TaskList::parse`], the option's value parser).
pub const TASKS_HELP: &str = "Periodic tasks in one thread (the library's executive): plan \
     analyses them, run and monitor run them with synthetic work. Separated by commas: \
     PERIOD[+PHASE][:FIELD]…, for example '1ms:work=50us,2.5ms:work=200us,10ms'. PERIOD is a \
     duration or a frequency as for --interval (a bare number is µs; 85Hz is kept exact); \
     +PHASE delays the first expiry. FIELDs, each at most once: work=D (synthetic busy work \
     per release in run and monitor; the plan's budget when no budget is given), budget=D (or \
     a bare D), deadline=D, phase=D, prio=N (higher first among tasks due together), \
     overrun=skip|catch-up|relative, name=S. run and monitor refuse a budget without work.";

/// The help of every `--tasks-file` option (`plan`, `run`).
pub const TASKS_FILE_HELP: &str = "The tasks from a TOML file: one [[task]] table per task, \
     with the --tasks fields as keys (period, phase, work, budget, deadline, priority, \
     overrun, name), values as text (\"2.5ms\", \"85Hz\"); see examples/tasks.toml";

/// Options of `tickscope plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The tasks (help: [`TASKS_HELP`]).
    #[arg(
        long,
        value_name = "TASKS",
        help = TASKS_HELP,
        value_parser = TaskList::parse,
        required_unless_present = "tasks_file"
    )]
    pub tasks: Option<TaskList>,

    /// The tasks from a TOML file instead (help: [`TASKS_FILE_HELP`]).
    #[arg(long, value_name = "FILE", help = TASKS_FILE_HELP, conflicts_with = "tasks")]
    pub tasks_file: Option<std::path::PathBuf>,
}

/// `tickscope scenario` subcommands.
#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// List the built-in scenarios.
    List,
    /// Print a scenario's file (built-in name or path), after the commands it would run and
    /// the files it would write outside the working directory, if any.
    Show {
        /// A built-in name or a scenario file.
        #[arg(value_name = "NAME|FILE", value_parser = OsCandidates(scenario_names), hide_possible_values = true)]
        scenario: std::ffi::OsString,
    },
    /// Run a scenario and print the source's table beside this machine's numbers.
    Run(ScenarioRunArgs),
}

/// Options of `tickscope scenario run`.
#[derive(Debug, Args)]
pub struct ScenarioRunArgs {
    /// A built-in name (see 'tickscope scenario list') or a scenario file.
    #[arg(value_name = "NAME|FILE", value_parser = OsCandidates(scenario_names), hide_possible_values = true)]
    pub scenario: std::ffi::OsString,

    /// Write every step's result as one document (schema tickscope.scenario/1) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,

    /// Shorten every step (for tests and the impatient); said on screen and in the file.
    #[arg(long)]
    pub quick: bool,

    /// Let the scenario run the commands it names (a load exec:"CMD" or stress-ng:"ARGS",
    /// an --on-late exec=CMD), as you; without it such a scenario is refused before
    /// anything runs. 'tickscope scenario show' lists them.
    #[arg(long)]
    pub allow_exec: bool,

    /// Let the scenario write files by absolute paths or outside the working directory
    /// (--hlog /var/…, --csv ../x); without it such a scenario is refused before anything
    /// runs. 'tickscope scenario show' lists them.
    #[arg(long)]
    pub allow_paths: bool,
}

/// A step's `run` options, parsed exactly as `tickscope run` parses them.
#[derive(Debug, Parser)]
#[command(name = "run")]
pub struct StepRun {
    /// The options.
    #[command(flatten)]
    pub args: RunArgs,
}

/// A step's `clocks` options, parsed exactly as `tickscope clocks` parses them.
#[derive(Debug, Parser)]
#[command(name = "clocks")]
pub struct StepClocks {
    /// The options.
    #[command(flatten)]
    pub args: ClocksArgs,
}

/// Options of `tickscope completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell, e.g. `tickscope completions bash > /etc/bash_completion.d/tickscope`.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Options of `tickscope man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write tickscope.1 and one page per command (tickscope-run.1, …) into DIR.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

/// A value parser that takes any text (checked later, in [`crate::options`], where lists
/// like `a,b` and the messages live) but offers the registry's names to shell completions
/// and manual pages, so that they never fall behind the registry.
#[derive(Clone)]
pub struct Candidates(pub fn() -> Vec<&'static str>);

impl clap::builder::TypedValueParser for Candidates {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        value
            .to_str()
            .map(str::to_owned)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8).with_cmd(cmd))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.0)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// [`Candidates`] for an argument that is a name or a path: the value is kept as the
/// operating system gave it (a path need not be UTF-8).
#[derive(Clone)]
pub struct OsCandidates(pub fn() -> Vec<&'static str>);

impl clap::builder::TypedValueParser for OsCandidates {
    type Value = std::ffi::OsString;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<std::ffi::OsString, clap::Error> {
        Ok(value.to_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.0)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// `--method`'s values: every method of the engine's registry, and `all`.
fn method_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = tickscope_engine::wait::MethodKind::ALL
        .iter()
        .map(|m| m.name())
        .collect();
    v.push("all");
    v
}

/// `--clock`'s values: the engine's clocks.
fn clock_names() -> Vec<&'static str> {
    tickscope_engine::time::ClockId::ALL
        .iter()
        .map(|c| c.name())
        .collect()
}

/// `--overrun`'s values: the engine's overrun policies.
fn overrun_names() -> Vec<&'static str> {
    use tickscope_engine::grid::OverrunPolicy;
    [OverrunPolicy::Skip, OverrunPolicy::CatchUp]
        .iter()
        .map(|o| o.name())
        .collect()
}

/// The value clap gives a bare `-a` (cyclictest's "run thread #N on processor #N"): pin
/// thread k to the k-th CPU this process may use. Empty, so that no CPU list can mean it.
pub const PIN_EACH: &str = "";

/// Every `--policy` name: auto, then the policies of sched(7) (`normal` is cyclictest's name
/// for other).
pub const POLICIES: &[&str] = &[
    "auto", "other", "normal", "batch", "idle", "fifo", "rr", "deadline",
];

/// `--policy`'s values ([`POLICIES`]).
fn policy_names() -> Vec<&'static str> {
    POLICIES.to_vec()
}

/// The built-in scenarios' names.
fn scenario_names() -> Vec<&'static str> {
    tickscope_session::scenario::builtin::BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect()
}

/// `--export`'s help, naming every format of the report crate's registry and its flag.
fn export_help() -> String {
    let formats = tickscope_report::sink::registry::FORMATS;
    let names: Vec<&str> = formats.iter().map(|f| f.name).collect();
    let flags: Vec<&str> = formats.iter().map(|f| f.flag).collect();
    format!(
        "Write FORMAT to PATH; repeatable. Formats: {} (the same as {}). PATH '-' is \
         standard output",
        names.join(", "),
        flags.join(", ")
    )
}

/// `--load`'s help, naming every source of the session crate's registry.
fn load_help() -> String {
    let named: Vec<String> = tickscope_session::load::sources::SOURCES
        .iter()
        .map(|s| s.form())
        .collect();
    format!(
        "Run a load for exactly the length of the measurement: {}, stress-ng:\"ARGS\" \
         (verbatim) or exec:\"CMD\" (docs/run.md lists what each loads). Needs stress-ng \
         except for exec. The load achieved is recorded per window. Its process group is \
         stopped at the end and killed if tickscope is killed; a process that calls setsid \
         escapes (docs/child-processes.md)",
        named.join(", ")
    )
}

/// `--method`'s help, naming every method of the engine's registry.
fn method_help() -> String {
    format!(
        "How the threads wait for each expiry: {}. Several (a,b,c) or 'all' run one after \
         another with the same settings and print a comparison table",
        tickscope_engine::wait::MethodKind::names()
    )
}

/// The EXAMPLES section of `tickscope run --help`.
const RUN_EXAMPLES: &str = "Examples:
  tickscope run                                  1 ms for 10 s, fifo 90 where permitted
  tickscope run -p 90 -i 250us -t all -D 1h --json r.json
                                                 every CPU, 250 µs, one hour, result file
  tickscope run -l100000000 -m -Sp90 -i200 -h400 -q > hist.txt
                                                 OSADL's cyclictest recipe, unchanged
  tickscope run --method all --rounds 3          which way of waiting is best here
  tickscope run --load cpu --load-cpus 1 -a 0    measure CPU 0 while CPU 1 is loaded
  tickscope run --json - | jq .summary           the result on standard output

Defaults shown as [default: …] are fixed; \"Default:\" sentences are computed.";

/// Options of `tickscope run`. `-h` is cyclictest's histogram here, so help is `--help`.
#[derive(Debug, Args)]
#[command(disable_help_flag = true, after_help = RUN_EXAMPLES)]
pub struct RunArgs {
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,

    /// Period between expiries: 1ms, 250us, 10ms, 2s, or a frequency like 85Hz; a bare
    /// number is µs (as in cyclictest).
    #[arg(
        short = 'i',
        long,
        default_value = "1ms",
        value_name = "PERIOD",
        help_heading = "Timing"
    )]
    pub interval: String,

    /// Stop after N wake-ups per thread.
    #[arg(short = 'l', long, value_name = "N", help_heading = "Timing")]
    pub loops: Option<String>,

    /// Stop after this long: 10s, 5m, 2h; a bare number is seconds. Default 10s unless
    /// --loops is given.
    #[arg(short = 'D', long, value_name = "DURATION", help_heading = "Timing")]
    pub duration: Option<String>,

    /// How the threads wait for each expiry (the methods are listed from the engine's
    /// registry). Several (a,b,c) or 'all' run one after another with the same settings and
    /// print a comparison table.
    #[arg(
        long,
        default_value = "nanosleep-abs",
        value_name = "METHOD[,METHOD…]|all",
        help_heading = "Timing",
        help = method_help(),
        value_parser = Candidates(method_names),
        hide_possible_values = true
    )]
    pub method: String,

    /// Repeat the whole list of methods N times, interleaved (each round starts one method
    /// further along), so that drift of a noisy machine favours no method.
    #[arg(long, default_value = "1", value_name = "N", help_heading = "Timing")]
    pub rounds: String,

    /// busy: nap after every N clock readings before the expiry (a clock_nanosleep to the
    /// time just read, as the Cpp-Periodic-Task README's step_sleep). Default: never.
    #[arg(long, value_name = "N", help_heading = "Timing")]
    pub busy_sleep_every: Option<String>,

    /// hybrid: sleep until this long before each expiry, then spin (250us, 0.1ms), or
    /// 'auto' to learn it from the measured sleep latency during the run.
    #[arg(
        long,
        default_value = "auto",
        value_name = "DURATION|auto",
        help_heading = "Timing"
    )]
    pub margin: String,

    /// Scheduling policy: auto, other, batch, idle, fifo, rr, deadline. auto is fifo at
    /// priority 90 where permitted, else other, and says which. -y is cyclictest's short
    /// form.
    #[arg(
        short = 'y',
        long,
        default_value = "auto",
        value_name = "POLICY",
        help_heading = "Scheduling",
        value_parser = Candidates(policy_names),
        hide_possible_values = true
    )]
    pub policy: String,

    /// Real-time priority 1..99 for fifo and rr (with policy auto, -p asks for fifo).
    #[arg(short = 'p', long, value_name = "PRIO", help_heading = "Scheduling")]
    pub priority: Option<String>,

    /// Nice value -20..19 for policies other and batch.
    #[arg(
        long,
        value_name = "NICE",
        allow_hyphen_values = true,
        help_heading = "Scheduling"
    )]
    pub nice: Option<String>,

    /// SCHED_DEADLINE runtime per period (deadline = period = interval). Default: a tenth of
    /// the interval, at least 20us.
    #[arg(long, value_name = "DURATION", help_heading = "Scheduling")]
    pub deadline_runtime: Option<String>,

    /// Number of measuring threads, or 'all' for one per CPU (thread k on the k-th CPU);
    /// a bare -t is 'all', as in cyclictest.
    #[arg(
        short = 't',
        long,
        value_name = "N|all",
        num_args = 0..=1,
        default_missing_value = "all",
        help_heading = "Scheduling"
    )]
    pub threads: Option<String>,

    /// Pin the threads to these CPUs, round-robin (e.g. 0,2-3). Without -t: one thread per
    /// listed CPU. A bare -a (cyclictest's) pins thread k to the k-th CPU this process may
    /// use.
    #[arg(
        short = 'a',
        long,
        value_name = "CPULIST",
        num_args = 0..=1,
        default_missing_value = PIN_EACH,
        help_heading = "Scheduling"
    )]
    pub affinity: Option<String>,

    /// cyclictest's -S (--smp): one thread per CPU, each pinned — the same as -t -a (add
    /// -a CPULIST to choose the CPUs).
    #[arg(
        short = 'S',
        long,
        conflicts_with = "threads",
        help_heading = "Scheduling"
    )]
    pub smp: bool,

    /// cyclictest's -d (--distance) between the threads' intervals: only 0 is accepted,
    /// since every tickscope thread uses the same interval.
    #[arg(short = 'd', long, value_name = "US", help_heading = "Scheduling")]
    pub distance: Option<String>,

    /// cyclictest's -n (--nanosleep): clock_nanosleep, which is already the default
    /// (--method nanosleep-abs); accepted and changes nothing.
    #[arg(short = 'n', long, help_heading = "Timing")]
    pub nanosleep: bool,

    /// Lock memory with mlockall (the default); --mlockall is cyclictest's name.
    #[arg(
        short = 'm',
        long,
        visible_alias = "mlockall",
        overrides_with = "no_mlock",
        help_heading = "System settings"
    )]
    pub mlock: bool,

    /// Do not lock memory.
    #[arg(long, help_heading = "System settings")]
    pub no_mlock: bool,

    /// Timer slack of the measuring threads in ns: 1 is the finest, the kernel's own default
    /// is 50000; at most the interval.
    #[arg(
        long,
        value_name = "NS",
        default_value_t = tickscope_engine::run::defaults::TIMER_SLACK_NS.to_string(),
        help_heading = "System settings"
    )]
    pub timer_slack: String,

    /// Confirm a run that spins on every CPU this process may use at a real-time policy
    /// (busy, or hybrid with --margin above half the interval, under fifo, rr, deadline or
    /// auto): every other task then gets only what RT throttling leaves (5 % by default)
    /// and waits up to ~1 s at a time. Refused without this flag.
    #[arg(long, help_heading = "Scheduling")]
    pub allow_rt_spin_all_cpus: bool,

    /// Hold this CPU wake-up latency limit (µs) on /dev/cpu_dma_latency for the run. Default:
    /// 0 where writable; given explicitly, failing to hold it is an error.
    #[arg(
        long,
        value_name = "US",
        conflicts_with = "no_pm_qos",
        help_heading = "System settings"
    )]
    pub pm_qos: Option<String>,

    /// Leave /dev/cpu_dma_latency alone.
    #[arg(long, help_heading = "System settings")]
    pub no_pm_qos: bool,

    /// Clock to sleep on and read: monotonic, realtime, boottime, tai.
    #[arg(
        long,
        default_value = "monotonic",
        value_name = "CLOCK",
        help_heading = "Timing",
        value_parser = Candidates(clock_names),
        hide_possible_values = true
    )]
    pub clock: String,

    /// After a wake-up later than the next expiry: skip to the next future expiry
    /// (cyclictest) or catch-up (wake once per missed expiry). Both count overruns.
    #[arg(
        long,
        default_value = "skip",
        value_name = "skip|catch-up",
        help_heading = "Timing",
        value_parser = Candidates(overrun_names),
        hide_possible_values = true
    )]
    pub overrun: String,

    /// Run a load for exactly the length of the measurement (the named sources are listed
    /// from the session crate's registry, `tickscope_session::load::sources::SOURCES`).
    #[arg(long, value_name = "SPEC", help_heading = "Load", help = load_help())]
    pub load: Option<String>,

    /// Place the load on these CPUs (e.g. 1 or 0,2-3). Default: anywhere.
    #[arg(long, value_name = "CPULIST", help_heading = "Load")]
    pub load_cpus: Option<String>,

    /// CPUs for tickscope's own threads (collector and trace reader, signal handling,
    /// waiters; monitor's HTTP and textfile threads). Default: the CPUs not measured.
    /// Overlapping a measured CPU is refused.
    #[arg(long, value_name = "CPULIST")]
    pub housekeeping_cpus: Option<String>,

    /// Write the result as JSON (schema tickscope.run/2) to FILE.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<std::path::PathBuf>,

    /// Print only the summary (no header, no per-second lines), then cyclictest's
    /// `T: 0 (tid) P:90 I:1000 C: … Min: … Act: … Avg: … Max: …` line per thread (in µs) —
    /// unless -h or -H asked for a histogram, as cyclictest does.
    #[arg(short = 'q', long, help_heading = "Output")]
    pub quiet: bool,

    /// Leave the host name and the kernel command line out of the result files, for
    /// sharing them.
    #[arg(long, help_heading = "Output")]
    pub redact: bool,

    /// For tests: run on virtual time with this latency script (20us,30us,2.5ms; bare
    /// numbers are µs), changing nothing on the system, on a made-up machine — so the whole
    /// output is deterministic.
    #[arg(long, hide = true, value_name = "LATENCIES")]
    pub debug_mock: Option<String>,

    /// Files exported from the run (histogram, CSV, raw samples).
    #[command(flatten)]
    pub exports: ExportArgs,

    /// Run several periodic tasks in one thread with the library's executive and synthetic
    /// work instead of one rate (help: [`TASKS_HELP`]).
    #[arg(long, value_name = "TASKS", help = TASKS_HELP, value_parser = TaskList::parse)]
    pub tasks: Option<TaskList>,

    /// Run the tasks of a TOML file instead (help: [`TASKS_FILE_HELP`]).
    #[arg(long, value_name = "FILE", help = TASKS_FILE_HELP, conflicts_with = "tasks")]
    pub tasks_file: Option<std::path::PathBuf>,

    /// Why wake-ups were late: `--explain` options.
    #[command(flatten)]
    pub explain: ExplainArgs,
}

/// `--explain` and `--on-late` options of `tickscope run`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Why was it late?")]
pub struct ExplainArgs {
    /// Break every late wake-up into its causes: trace (BPF programs, else a private tracefs
    /// instance; root or CAP_BPF+CAP_PERFMON), bpf or tracefs (that backend or refuse),
    /// context (/proc counters per window only) or auto (trace when permitted).
    #[arg(
        long,
        value_name = "MODE",
        num_args = 0..=1,
        default_missing_value = "auto",
        value_parser = ["auto", "trace", "bpf", "tracefs", "context"]
    )]
    pub explain: Option<String>,

    /// Which wake-ups get a breakdown: later than a latency (100us, 1ms) or than the
    /// previous window's p99 (p99). Default 100us.
    #[arg(long, value_name = "LATENCY|p99")]
    pub explain_threshold: Option<String>,

    /// When a wake-up is later than THRESHOLD, act: mark (trace_marker line), capture (a
    /// bundle directory), stop (end the run, exit status 3), exec=CMD (a shell command
    /// with TICKSCOPE_LATENCY_NS, _TID, _CPU, _EXPIRY_NS, _BUNDLE; one at a time per
    /// action, at most 4 at once, its process group killed after 10 s and when the run
    /// ends; docs/child-processes.md). Repeatable; implies --explain.
    #[arg(long, value_name = "THRESHOLD:ACTION[,ACTION…]")]
    pub on_late: Vec<String>,

    /// cyclictest's -b (--breaktrace): on the first wake-up later than US µs, mark,
    /// capture and stop.
    #[arg(
        short = 'b',
        long = "break",
        visible_alias = "breaktrace",
        value_name = "US"
    )]
    pub break_us: Option<String>,

    /// Write every late wake-up's breakdown (not only the worst kept in --json) to FILE, one
    /// JSON object per line, as they are explained.
    #[arg(long, value_name = "FILE")]
    pub explain_log: Option<std::path::PathBuf>,

    /// For the oracle's fixtures: each --explain-log line also carries the trace events it
    /// was attributed from.
    #[arg(long, hide = true, requires = "explain_log")]
    pub explain_log_events: bool,

    /// At most N capture bundles.
    #[arg(long, value_name = "N", default_value = "10")]
    pub capture_limit: u32,

    /// Where capture bundles go. Default: FILE.captures beside --json FILE, else
    /// ./tickscope-captures.
    #[arg(long, value_name = "DIR")]
    pub capture_dir: Option<std::path::PathBuf>,
}

/// Export options of `tickscope run`: files written, atomically, when the run ends.
#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
pub struct ExportArgs {
    /// Write the latency histogram in cyclictest's -h text format (1 µs buckets) to FILE;
    /// --histfile is cyclictest's name for it.
    #[arg(long, visible_alias = "histfile", value_name = "FILE")]
    pub histogram_file: Option<std::path::PathBuf>,

    /// cyclictest's -h: after the run, the histogram with 1 µs buckets up to US µs on
    /// standard output (or --histfile), with real overflow counts and the overflows' cycle
    /// numbers; the text for a person moves to standard error.
    #[arg(short = 'h', long, value_name = "US", conflicts_with = "histofall")]
    pub histogram: Option<String>,

    /// cyclictest's -H: as -h, with a last column summing every thread.
    #[arg(short = 'H', long, value_name = "US")]
    pub histofall: Option<String>,

    /// Write the summary and the per-second windows as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<std::path::PathBuf>,

    /// Write every wake-up (thread, index, expiry, wake time, latency) as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub samples: Option<std::path::PathBuf>,

    /// Write one HdrHistogram per window per thread (tags T<k>, all, T<k>.early) as an
    /// HdrHistogram interval log to FILE, streamed as the windows finish.
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<std::path::PathBuf>,

    /// Write FORMAT to PATH; repeatable (the formats are listed from the report crate's
    /// registry, `tickscope_report::sink::registry::FORMATS`).
    #[arg(long, value_name = "FORMAT=PATH", help = export_help())]
    pub export: Vec<std::ffi::OsString>,
}

/// Options of `tickscope report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result file written by `tickscope run --json`.
    #[arg(value_name = "RESULT.json")]
    pub result: std::path::PathBuf,

    /// Where to write the HTML report (default: the result's name with .html).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,

    /// Also write every plot as a PNG file into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub png: Option<std::path::PathBuf>,

    /// Also write every plot as an SVG file into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub svg: Option<std::path::PathBuf>,

    /// End of the latency histogram's 1 µs bins (1ms, 400us, 5ms; a bare number is µs):
    /// fixed, so that plots compare bin for bin; later wake-ups go to a logarithmic tail.
    #[arg(long, value_name = "DURATION", default_value = "1ms")]
    pub range: String,

    /// Leave the host name and the kernel command line out of the report, for sharing it.
    #[arg(long)]
    pub redact: bool,

    /// Draw per-interval p50/p99/p99.9/max bands from this interval log (`run --hlog`);
    /// by default from the log the result names, when it can be read (an interval log given
    /// as the input gets its own bands).
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<std::path::PathBuf>,
}

/// Options of `tickscope compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files: tickscope (tickscope.run/2 or /1), cyclictest --json or jitterdebugger JSON.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<std::path::PathBuf>,

    /// Name a column (once per column, in order; a file with several runs has one column
    /// per run).
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,

    /// Output format.
    #[arg(long, default_value = "table", value_parser = ["table", "markdown", "csv", "json"])]
    pub format: String,

    /// The unit of the values in another tool's interval logs (.hlog): ns, us or ms
    /// (jHiccup and most HdrHistogram users record ns; tickscope's own logs are always ns).
    #[arg(long, value_name = "UNIT", default_value = "ns")]
    pub hlog_unit: String,
}

/// Options of `tickscope clocks`.
#[derive(Debug, Args)]
pub struct ClocksArgs {
    /// Pin the measurement to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<String>,

    /// Total time to spend: 300ms, 3s, 1m; a bare number is seconds. Default 3s (6s with
    /// --idle-compare).
    #[arg(short = 'D', long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// Write the result as JSON (schema tickscope.clocks/1) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,

    /// Repeat the measurement with /dev/cpu_dma_latency held at 0 and with a thread spinning
    /// on a sibling CPU, to show what idle states cost.
    #[arg(long)]
    pub idle_compare: bool,
}

/// The EXAMPLES section of `tickscope monitor --help`.
const MONITOR_EXAMPLES: &str = "Examples:
  tickscope monitor                              1 ms, metrics on http://127.0.0.1:9802/metrics
  tickscope monitor -p 90 -a 1 --housekeeping-cpus 0
                                                 measure CPU 1 at fifo 90, serve from CPU 0
  tickscope monitor --no-listen --textfile /var/lib/node_exporter/tickscope.prom
                                                 node_exporter's textfile collector
  tickscope monitor -D 1h --hlog day.hlog        one hour, with an interval log
  tickscope monitor --attach $(pidof loop) --explain
                                                 a running program's periodic threads

Runs until SIGTERM or Ctrl-C (or -D, -l); every setting is restored on the way out.";

/// The flags of `tickscope run` that `monitor` does not take: hidden from its help and
/// completions, and refused ([`crate::cmd::monitor`]) with the reason.
pub const MONITOR_REFUSES: &[(&str, &str)] = &[
    (
        "rounds",
        "--rounds compares methods; monitor measures one method",
    ),
    (
        "load",
        "--load runs beside a bounded measurement; use 'tickscope run --load'",
    ),
    (
        "load_cpus",
        "--load-cpus goes with --load; use 'tickscope run --load … --load-cpus'",
    ),
    (
        "csv",
        "--csv writes per-second windows, which monitor does not keep; use --hlog",
    ),
];

/// `--method`'s help for `monitor`: one method.
fn monitor_method_help() -> String {
    format!(
        "How the threads wait for each expiry: {} (one)",
        tickscope_engine::wait::MethodKind::names()
    )
}

/// Options of `tickscope monitor`: the measurement options of `run` (one method; -D bounds
/// the run, which otherwise goes on until SIGTERM or Ctrl-C) plus where the metrics go.
/// Run's flags that monitor does not take ([`MONITOR_REFUSES`]) and cyclictest's aliases are
/// hidden from its help, and its own examples replace run's.
#[derive(Debug, Args)]
#[command(
    after_help = MONITOR_EXAMPLES,
    mut_arg("rounds", |a| a.hide(true)),
    mut_arg("load", |a| a.hide(true)),
    mut_arg("load_cpus", |a| a.hide(true)),
    mut_arg("csv", |a| a.hide(true)),
    mut_arg("smp", |a| a.hide(true)),
    mut_arg("nanosleep", |a| a.hide(true)),
    mut_arg("distance", |a| a.hide(true)),
    mut_arg("duration", |a| a.help("Stop after this long: 10s, 5m, 2h; a bare number is \
        seconds. Default: run until SIGTERM or Ctrl-C")),
    mut_arg("loops", |a| a.help("Stop after N wake-ups per thread. Default: run until \
        SIGTERM or Ctrl-C")),
    mut_arg("method", |a| a.help(monitor_method_help()).value_name("METHOD")),
    mut_arg("quiet", |a| a.help("Print only the summary at the end (no header, no \
        per-second lines)")),
)]
pub struct MonitorArgs {
    /// The measurement, as for `tickscope run`.
    #[command(flatten)]
    pub run: RunArgs,

    /// Serve /metrics and /healthz on ADDR:PORT. Loopback by default; any other address is
    /// reachable from other machines and is said so at start.
    #[arg(long, default_value = crate::http::DEFAULT_LISTEN, value_name = "ADDR:PORT")]
    pub listen: String,

    /// Do not serve HTTP (use with --textfile).
    #[arg(long)]
    pub no_listen: bool,

    /// Rewrite a node_exporter textfile (e.g. /var/lib/node_exporter/tickscope.prom)
    /// atomically every --textfile-interval.
    #[arg(long, value_name = "FILE")]
    pub textfile: Option<std::path::PathBuf>,

    /// How often the textfile is rewritten: 15s, 1m.
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub textfile_interval: String,

    /// Export the wake-ups of this running program's periodic threads instead of
    /// tickscope's own (as `tickscope attach` measures them; needs root). Ends when it exits.
    #[arg(
        long,
        value_name = "PID",
        help_heading = "Attach to a running program",
        conflicts_with_all = ["tasks", "tasks_file"]
    )]
    pub attach: Option<i32>,

    /// With --attach: export this thread only (repeatable). Default: every periodic thread,
    /// and every one found periodic later.
    #[arg(
        long,
        value_name = "TID",
        requires = "attach",
        help_heading = "Attach to a running program"
    )]
    pub tid: Vec<i32>,

    /// With --attach: how long to watch the threads before choosing.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1s",
        help_heading = "Attach to a running program"
    )]
    pub discover: String,
}

/// `tickscope hlog …`.
#[derive(Debug, Subcommand)]
pub enum HlogCommand {
    /// Merge interval logs (several machines, or several runs) into one, interval by interval.
    Merge(HlogMergeArgs),
    /// Percentiles of the intervals in a time range, per tag, from one or more logs: their
    /// histograms added (nothing averaged), each percentile the top of its HdrHistogram
    /// bucket (2 significant digits: within 1 % of the value).
    Stat(HlogStatArgs),
}

/// Options of `tickscope hlog merge`.
#[derive(Debug, Args)]
pub struct HlogMergeArgs {
    /// Interval logs (HdrHistogram log format).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<std::path::PathBuf>,

    /// Where to write the merged log.
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: std::path::PathBuf,
}

/// Options of `tickscope hlog stat`.
#[derive(Debug, Args)]
pub struct HlogStatArgs {
    /// Interval logs (HdrHistogram log format).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<std::path::PathBuf>,

    /// Start of the range, from the log's start: 90s, 12m (default: the beginning).
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,

    /// End of the range, from the log's start (default: the end).
    #[arg(long, value_name = "TIME")]
    pub to: Option<String>,

    /// Only this tag (e.g. all, T0, T0.early); default: every tag.
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
}
