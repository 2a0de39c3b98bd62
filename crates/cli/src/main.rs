//! `tickscope`: measure how precisely Linux wakes a periodic task.
//!
//! Thin on purpose: parse the command line, run one subcommand, map its outcome to an exit
//! status (0 success, 1 a failure while running, 2 bad input or a setting that cannot be
//! applied — always with one line on stderr).

#![deny(missing_docs)]

mod cli;
mod cmd;
mod console;
mod cyclictest_flags;
#[cfg(test)]
mod doc_tables;
mod engine_errors;
mod exit;
mod http;
mod options;
mod output_path;
mod session_args;
mod step_options;
mod textfile;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Started by --explain to load the BPF programs: load, hand over the descriptors, exit.
    if let Some(status) = tickscope_explain::bpf_loader::serve_if_asked() {
        return ExitCode::from(status as u8);
    }
    // Before any thread exists, so that every thread inherits the block and itimer's
    // process-directed SIGALRM reaches its measuring thread directly, with no hop.
    if let Err(e) = tickscope_engine::wait::reserve_alarm() {
        eprintln!("tickscope: cannot block SIGALRM: {e}");
        return ExitCode::from(1);
    }
    // First of all, so that a signal in the first milliseconds is handled like any other.
    if let Err(e) = cmd::signals::install() {
        eprintln!("tickscope: cannot handle signals: {e}");
        return ExitCode::from(1);
    }
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return exit::clap_error(e),
    };
    let measures = cli.command.measures();
    if !measures {
        cmd::signals::measures_nothing();
    }
    console::fit_to_width();
    // A run killed by SIGKILL leaves its trace instance tracing: whatever measures (and the
    // doctor, which judges the machine) removes it.
    if measures || matches!(cli.command, cli::Command::Doctor(_)) {
        let removed = tickscope_explain::tracefs::sweep_stale();
        if !removed.is_empty() {
            eprintln!(
                "tickscope: removed trace instances left by killed runs (they were still \
                 tracing): {}",
                removed.join(", ")
            );
        }
    }
    let result = match cli.command {
        cli::Command::Run(args) => cmd::run::execute(&args),
        cli::Command::Clocks(args) => cmd::clocks::execute(&args),
        cli::Command::Report(args) => cmd::report::execute(&args),
        cli::Command::Compare(args) => cmd::compare::execute(&args),
        cli::Command::Scenario(c) => cmd::scenario::execute(c),
        cli::Command::Completions(args) => cmd::completions::execute(&args),
        cli::Command::Man(args) => cmd::man::execute(&args),
        cli::Command::Plan(args) => cmd::plan::execute(&args),
        cli::Command::Monitor(args) => match args.attach {
            Some(pid) => cmd::monitor_attach::execute(&args, pid),
            None => cmd::monitor::execute(&args),
        },
        cli::Command::Hlog(c) => cmd::hlog::execute(&c),
        cli::Command::Doctor(args) => return cmd::doctor::main(&args),
        cli::Command::Gate(args) => return cmd::gate::main(&args),
        cli::Command::Attach(args) => cmd::attach::execute(args),
    };
    exit::status(console::settle(result))
}
