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
    fn from(e: tickscope_engine::Error) -> Self {
        match e {
            tickscope_engine::Error::Config(m) | tickscope_engine::Error::Setup(m) => {
                Failure::Usage(m)
            }
            other => Failure::Runtime(other.to_string()),
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

/// Help and version asked for go to stdout with status 0; a parse error — a missing
/// subcommand included — becomes one line on stderr and status 2.
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            use clap::CommandFactory;
            let names: Vec<String> = crate::cli::Cli::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            eprintln!(
                "tickscope: a subcommand is needed: {} (see 'tickscope --help')",
                names.join(", ")
            );
            ExitCode::from(2)
        }
        _ => {
            let rendered = e.render().to_string();
            let mut lines = rendered.lines().filter(|l| !l.trim().is_empty());
            let first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            // "required arguments were not provided:" lists them on the lines below.
            let listed: Vec<&str> = if first.ends_with(':') {
                lines
                    .take_while(|l| l.starts_with("  "))
                    .map(str::trim)
                    .collect()
            } else {
                Vec::new()
            };
            let first = match listed.is_empty() {
                true => first.to_string(),
                false => format!("{first} {}", listed.join(", ")),
            };
            eprintln!("tickscope: {first} (see 'tickscope --help')");
            ExitCode::from(2)
        }
    }
}
