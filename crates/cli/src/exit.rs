//! Exit statuses and the one-line error messages behind them.

use std::process::ExitCode;

/// A failure, classified by whose it is.
#[derive(Debug)]
pub enum Failure {
    /// Bad input or a requested setting that cannot be applied: exit status 2.
    Usage(String),
    /// Something failed while running: exit status 1.
    Runtime(String),
    /// Stopped by a signal before anything complete could be shown: exit status 130.
    Interrupted(String),
}

impl From<tickscope_engine::Error> for Failure {
    /// A setting the user can change (invalid, unsupported, refused, not permitted) is a
    /// usage failure; an OS failure is a runtime one. Worded with the flags
    /// ([`crate::engine_errors`]).
    fn from(e: tickscope_engine::Error) -> Self {
        let m = crate::engine_errors::sentence(&e);
        if e.is_setting() {
            Failure::Usage(m)
        } else {
            Failure::Runtime(m)
        }
    }
}

/// Prints the failure, if any, as one line on stderr and returns the exit status.
pub fn report(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("tickscope: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(m)) => {
            eprintln!("tickscope: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted(m)) => {
            eprintln!("tickscope: {m}");
            ExitCode::from(130)
        }
    }
}

/// Help and version go to stdout with status 0; a parse error becomes one line and status 2.
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            eprintln!("tickscope: {first} (see 'tickscope --help')");
            ExitCode::from(2)
        }
    }
}
