//! `tickscope man`: the manual pages, generated from the command line's own definition
//! (`clap_mangen`): `tickscope(1)` on standard output, or one page per command — nested ones
//! included (`tickscope-hlog-stat.1`, `tickscope-scenario-run.1`) — written into a directory
//! for `man -l` or `/usr/local/share/man/man1`.
//!
//! Every page has an EXIT STATUS section ([`exit_status`]); a command's examples (its
//! `after_help`) go under EXAMPLES unfilled, line for line as `--help` prints them, instead of
//! clap_mangen's re-flowed EXTRA section.

use crate::cli::{Cli, ManArgs};
use crate::console;
use crate::exit::Failure;
use crate::output_path::{finish, prepare_outputs};
use clap::CommandFactory;
use roff::{roman, Roff};
use std::path::PathBuf;

/// The EXIT STATUS lines of the command `path` (its names after `tickscope`, e.g.
/// `["hlog", "stat"]`), as (status, meaning); from [`crate::exit`] and the commands' own
/// rules.
pub fn exit_status(path: &[&str]) -> Vec<(&'static str, &'static str)> {
    const OK: (&str, &str) = ("0", "success");
    const RUNTIME: (&str, &str) = (
        "1",
        "a failure while running: an output that cannot be written, a measuring thread that \
         failed",
    );
    const USAGE: (&str, &str) = (
        "2",
        "bad input, or a setting that cannot be applied (one line on standard error)",
    );
    const SIGNAL: (&str, &str) = (
        "128 + N",
        "stopped by signal N before anything complete could be shown (130 for Ctrl-C, 143 \
         for SIGTERM)",
    );
    match path {
        ["doctor"] => vec![
            ("0", "this machine can be measured: every finding is advice"),
            (
                "1",
                "--fail-on SEVERITY was given and a finding is that severe or worse",
            ),
            USAGE,
            (
                "3",
                "a finding makes measurements on this machine invalid (no high-resolution \
                 timers, or the jiffies clocksource)",
            ),
        ],
        ["run"] | ["attach"] => vec![
            OK,
            RUNTIME,
            USAGE,
            ("3", "a --on-late …:stop or --break (-b) rule ended the run"),
            SIGNAL,
        ],
        ["monitor"] | ["scenario", "run"] | ["clocks"] | [] => {
            vec![OK, RUNTIME, USAGE, SIGNAL]
        }
        _ => vec![OK, RUNTIME, USAGE],
    }
}

/// Renders one page: clap_mangen's sections, then EXAMPLES (unfilled) and EXIT STATUS.
fn page(cmd: clap::Command, path: &[&str]) -> Result<Vec<u8>, Failure> {
    let err = |e: std::io::Error| Failure::Runtime(format!("cannot render the manual page: {e}"));
    let after = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(|h| h.to_string());
    let man = clap_mangen::Man::new(cmd.clone().after_help("").after_long_help(""));
    let mut out = Vec::new();
    man.render_title(&mut out).map_err(err)?;
    man.render_name_section(&mut out).map_err(err)?;
    man.render_synopsis_section(&mut out).map_err(err)?;
    man.render_description_section(&mut out).map_err(err)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out).map_err(err)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out).map_err(err)?;
    }
    let mut roff = Roff::new();
    if let Some(text) = after.filter(|t| !t.trim().is_empty()) {
        // The text under "Examples:" (or all of it) as printed by --help, unfilled; an
        // "Exit status:" part is left to EXIT STATUS below.
        let examples = match text.find("Examples:") {
            Some(at) => &text[at + "Examples:".len()..],
            None if text.starts_with("Exit status:") => "",
            None => text.as_str(),
        };
        if !examples.trim().is_empty() {
            roff.control("SH", ["EXAMPLES"]);
            roff.control("nf", []);
            for line in examples.trim_matches('\n').lines() {
                roff.text([roman(line)]);
            }
            roff.control("fi", []);
        }
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (status, meaning) in exit_status(path) {
        roff.control("TP", []);
        roff.text([roman(status)]);
        roff.text([roman(meaning)]);
    }
    roff.to_writer(&mut out).map_err(err)?;
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out).map_err(err)?;
    }
    Ok(out)
}

/// Every page: (file name, command, path of names after `tickscope`), the top page first,
/// then each command and each nested command.
fn pages(root: &clap::Command) -> Vec<(PathBuf, clap::Command, Vec<String>)> {
    fn walk(
        cmd: &clap::Command,
        path: Vec<String>,
        out: &mut Vec<(PathBuf, clap::Command, Vec<String>)>,
    ) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            let joined = p.join(" ");
            let name = format!("tickscope-{}", p.join("-"));
            out.push((
                PathBuf::from(format!("{name}.1")),
                sub.clone()
                    .name(name)
                    .bin_name(format!("tickscope {joined}"))
                    .display_name(format!("tickscope {joined}")),
                p.clone(),
            ));
            walk(sub, p, out);
        }
    }
    let mut out = vec![(PathBuf::from("tickscope.1"), root.clone(), Vec::new())];
    walk(root, Vec::new(), &mut out);
    out
}

/// Prints `tickscope(1)`, or writes every page into `--dir` (created if missing).
///
/// # Errors
/// [`Failure::Usage`] when a page cannot be written there (checked before writing any).
pub fn execute(args: &ManArgs) -> Result<(), Failure> {
    let mut root = Cli::command();
    root.build();
    let Some(dir) = &args.dir else {
        console::raw(&page(root, &[])?);
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::Usage(format!(
            "--dir: cannot create the directory {}: {e}",
            tickscope_report::quoted(dir)
        ))
    })?;
    let pages = pages(&root);
    let paths: Vec<PathBuf> = pages.iter().map(|(f, _, _)| dir.join(f)).collect();
    let wanted: Vec<(&str, &std::path::Path)> =
        paths.iter().map(|p| ("--dir", p.as_path())).collect();
    let outputs = prepare_outputs(&wanted, &[])?;
    for ((_, cmd, path), out) in pages.into_iter().zip(outputs) {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        finish(out, &page(cmd, &path)?)?;
    }
    console::line(format!(
        "{} manual pages written to {}",
        paths.len(),
        dir.display()
    ));
    Ok(())
}
