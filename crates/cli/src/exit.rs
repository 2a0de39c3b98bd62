//! Exit statuses and the one-line error messages behind them.

use std::process::ExitCode;

/// A failure, classified by whose it is.
#[derive(Debug)]
pub enum Failure {
    /// Bad input or a requested setting that cannot be applied: exit status 2.
    Usage(String),
    /// Something failed while running: exit status 1.
    Runtime(String),
    /// Stopped by a signal before anything complete could be shown: exit status 128 + the
    /// signal's number ([`crate::cmd::signals::stop_signal`]; 130, SIGINT's, when the stop
    /// was not a signal).
    Interrupted(String),
    /// A `--on-late …:stop` (or `--break`) rule ended the run: exit status 3, as
    /// cyclictest's `-b` is told apart from a normal end.
    ThresholdHit(String),
}

impl From<tickscope_engine::Error> for Failure {
    /// Bad settings and settings that cannot be applied are the user's to change (exit 2);
    /// an OS failure is not (exit 1). The sentence gets the CLI's flags
    /// ([`crate::engine_errors`]).
    fn from(e: tickscope_engine::Error) -> Self {
        let text = crate::engine_errors::sentence(&e);
        match e.kind() {
            tickscope_engine::ErrorKind::Os => Failure::Runtime(text),
            _ => Failure::Usage(text),
        }
    }
}

/// Prints the failure, if any, as one line on stderr and returns the exit status.
pub fn status(result: Result<(), Failure>) -> ExitCode {
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
        Err(Failure::ThresholdHit(m)) => {
            eprintln!("tickscope: {m}");
            ExitCode::from(3)
        }
        Err(Failure::Interrupted(m)) => {
            eprintln!("tickscope: {m}");
            let code = crate::cmd::signals::exit_status(crate::cmd::signals::stop_signal());
            ExitCode::from(u8::try_from(code).unwrap_or(130))
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
            eprintln!("tickscope: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// The command an error is about, from clap's usage line (`Usage: tickscope scenario run
/// [OPTIONS] <NAME|FILE>` → `tickscope scenario run`); without one (a value parser's error),
/// the subcommands named on the command line ([`subcommands_given`]).
fn command_path(rendered: &str) -> String {
    let Some(usage) = rendered
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Usage: "))
    else {
        return subcommands_given(std::env::args_os().skip(1));
    };
    let words: Vec<&str> = usage
        .split_whitespace()
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect();
    match words.first() {
        Some(&"tickscope") => words.join(" "),
        _ => "tickscope".to_string(),
    }
}

/// `tickscope` and the subcommands at the start of `args` (the arguments after the program's
/// name), flags skipped: `plan --tasks x` → `tickscope plan`.
fn subcommands_given(args: impl Iterator<Item = std::ffi::OsString>) -> String {
    use clap::CommandFactory;
    let mut cmd = crate::cli::Cli::command();
    let mut path = String::from("tickscope");
    for arg in args {
        let Some(arg) = arg.to_str() else { break };
        if arg.starts_with('-') {
            continue;
        }
        let Some(sub) = cmd.find_subcommand(arg).cloned() else {
            break;
        };
        path = format!("{path} {}", sub.get_name());
        cmd = sub;
    }
    path
}

/// A subcommand of the command at `path` named like the unknown flag `arg` (`scenario
/// --list` → `list`), if any: the user meant the subcommand.
fn subcommand_for_flag(path: &str, arg: &str) -> Option<String> {
    use clap::CommandFactory;
    let name = arg.trim_start_matches('-');
    let mut cmd = crate::cli::Cli::command();
    for word in path.split_whitespace().skip(1) {
        cmd = cmd.find_subcommand(word)?.clone();
    }
    cmd.find_subcommand(name).map(|_| format!("{path} {name}"))
}

/// A clap error as one line that keeps everything clap would say over several: the error,
/// the arguments it names, the valid values, "did you mean", a cyclictest flag's tickscope
/// equivalent, and where to read more: the help of the command the error is about.
pub fn one_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let rendered = e.render().to_string();
    let path = command_path(&rendered);
    let mut lines = rendered.lines().filter(|l| !l.trim().is_empty());
    let mut text = lines
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    if text.ends_with(':') {
        // "required arguments were not provided:" lists them on the lines below.
        let listed: Vec<&str> = lines
            .take_while(|l| l.starts_with("  "))
            .map(str::trim)
            .collect();
        text = format!("{text} {}", listed.join(", "));
    }
    let strings = |kind: ContextKind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let valid = strings(ContextKind::ValidValue);
    if !valid.is_empty() {
        text += &format!("; possible values: {}", valid.join(", "));
    }
    let suggested: Vec<String> = [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedValue,
        ContextKind::SuggestedSubcommand,
    ]
    .into_iter()
    .flat_map(strings)
    .collect();
    let invalid = strings(ContextKind::InvalidArg);
    let unknown = match e.kind() {
        ErrorKind::UnknownArgument => invalid.first(),
        _ => None,
    };
    let cyclictest = unknown.and_then(|a| crate::cyclictest_flags::hint(a));
    let subcommand = unknown.and_then(|a| subcommand_for_flag(&path, a));
    match (cyclictest, subcommand, suggested.is_empty()) {
        (Some(hint), _, _) => text += &format!("; that is cyclictest's flag: {hint}"),
        (None, Some(sub), _) => text += &format!("; did you mean '{sub}'?"),
        (None, None, false) => text += &format!("; did you mean '{}'?", suggested.join("' or '")),
        (None, None, true) => {}
    }
    format!("{text} (see '{path} --help')")
}
