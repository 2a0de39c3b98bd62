//! The command line as typed: flags and their help. Only syntax here; meaning is resolved in
//! [`crate::options`]. Short flags follow cyclictest's where a user expects them.

use clap::{Args, Parser, Subcommand};

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
}

/// Options of `tickscope run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Period between expiries: 1ms, 250us, 10ms, 2s, or a frequency like 85Hz; a bare
    /// number is µs (as in cyclictest).
    #[arg(short = 'i', long, default_value = "1ms", value_name = "PERIOD")]
    pub interval: String,

    /// Stop after N wake-ups per thread.
    #[arg(short = 'l', long, value_name = "N")]
    pub loops: Option<String>,

    /// Stop after this long: 10s, 5m, 2h; a bare number is seconds. Default 10s unless
    /// --loops is given.
    #[arg(short = 'D', long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// How the threads wait for each expiry (the names come from the engine's registry).
    #[arg(
        long,
        help = format!("How the threads wait for each expiry: {}. Several (a,b,c) or 'all' run one after another with the same settings and print a comparison table", tickscope_engine::wait::MethodKind::names_list()),
        default_value = "nanosleep-abs",
        value_name = "METHOD[,METHOD…]|all"
    )]
    pub method: String,

    /// Repeat the whole list of methods N times, interleaved (each round starts one method
    /// further along), so that drift of a noisy machine favours no method.
    #[arg(long, default_value = "1", value_name = "N")]
    pub rounds: String,

    /// busy: nap after every N clock readings before the expiry (a clock_nanosleep to the
    /// time just read, as the Cpp-Periodic-Task seed's step_sleep). Default: never.
    #[arg(long, value_name = "N")]
    pub busy_sleep_every: Option<String>,

    /// hybrid: sleep until this long before each expiry, then spin (250us, 0.1ms), or
    /// 'auto' to learn it from the measured sleep latency during the run.
    #[arg(long, default_value = "auto", value_name = "DURATION|auto")]
    pub margin: String,

    /// Scheduling policy: auto, other, batch, idle, fifo, rr, deadline. auto is fifo at
    /// priority 90 where permitted, else other, and says which.
    #[arg(long, default_value = "auto", value_name = "POLICY")]
    pub policy: String,

    /// Real-time priority 1..99 for fifo and rr (with policy auto, -p asks for fifo).
    #[arg(short = 'p', long, value_name = "PRIO")]
    pub priority: Option<String>,

    /// Nice value -20..19 for policies other and batch.
    #[arg(long, value_name = "NICE", allow_hyphen_values = true)]
    pub nice: Option<String>,

    /// SCHED_DEADLINE runtime per period (deadline = period = interval). Default: a tenth of
    /// the interval, at least 20us.
    #[arg(long, value_name = "DURATION")]
    pub deadline_runtime: Option<String>,

    /// Number of measuring threads, or 'all' for one per CPU (thread k on the k-th CPU).
    #[arg(short = 't', long, value_name = "N|all")]
    pub threads: Option<String>,

    /// Pin the threads to these CPUs, round-robin (e.g. 0,2-3). Without -t: one thread per
    /// listed CPU.
    #[arg(short = 'a', long, value_name = "CPULIST")]
    pub affinity: Option<String>,

    /// Lock memory with mlockall (the default).
    #[arg(short = 'm', long, overrides_with = "no_mlock")]
    pub mlock: bool,

    /// Do not lock memory.
    #[arg(long)]
    pub no_mlock: bool,

    /// Timer slack of the measuring threads in ns (default 1, the finest; the kernel's
    /// default is 50000).
    #[arg(long, value_name = "NS", default_value_t = tickscope_engine::run::defaults::TIMER_SLACK_NS.to_string())]
    pub timer_slack: String,

    /// Hold this CPU wake-up latency limit (µs) on /dev/cpu_dma_latency for the run. Default:
    /// 0 where writable; given explicitly, failing to hold it is an error.
    #[arg(long, value_name = "US", conflicts_with = "no_pm_qos")]
    pub pm_qos: Option<String>,

    /// Leave /dev/cpu_dma_latency alone.
    #[arg(long)]
    pub no_pm_qos: bool,

    /// Clock to sleep on and read: monotonic, realtime, boottime, tai.
    #[arg(long, default_value = "monotonic", value_name = "CLOCK")]
    pub clock: String,

    /// After a wake-up later than the next expiry: skip to the next future expiry
    /// (cyclictest) or catch-up (wake once per missed expiry). Both count missed periods.
    #[arg(long, default_value = "skip", value_name = "skip|catch-up")]
    pub overrun: String,

    /// Write the result as JSON (schema tickscope.run/1) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,

    /// Print only the summary (no header, no per-second lines).
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Files exported from the run (histogram, CSV, raw samples).
    #[command(flatten)]
    pub exports: ExportArgs,
}

/// Export options of `tickscope run`: files written, atomically, when the run ends.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write the latency histogram in cyclictest's -h text format (1 µs buckets) to FILE.
    #[arg(long, value_name = "FILE")]
    pub histogram_file: Option<std::path::PathBuf>,

    /// Write the summary and the per-second windows as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<std::path::PathBuf>,

    /// Write every wake-up (thread, index, expiry, wake time, latency) as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub samples: Option<std::path::PathBuf>,
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
}

/// Options of `tickscope compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files: tickscope (tickscope.run/1), cyclictest --json or jitterdebugger JSON.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<std::path::PathBuf>,

    /// Name a column (once per column, in order; a file with several runs has one column
    /// per run).
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,

    /// Output format.
    #[arg(long, default_value = "table", value_parser = ["table", "markdown", "csv", "json"])]
    pub format: String,
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
