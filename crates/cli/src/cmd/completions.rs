//! `tickscope completions SHELL`: shell completions generated from the command line's own
//! definition (`clap_complete`), so they never fall behind a flag.

use crate::cli::{Cli, CompletionsArgs};
use crate::console;
use crate::exit::Failure;
use clap::CommandFactory;

/// Prints the completion script for the shell on standard output.
///
/// # Errors
/// Never: an unknown shell is refused by the parser.
pub fn execute(args: &CompletionsArgs) -> Result<(), Failure> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "tickscope", &mut out);
    console::raw(&out);
    Ok(())
}
