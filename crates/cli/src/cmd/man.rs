//! `tickscope man`: the manual pages, generated from the command line's own definition
//! (`clap_mangen`): `tickscope(1)` on standard output, or one page per command written into a
//! directory (`tickscope.1`, `tickscope-run.1`, …) for `man -l` or `/usr/local/share/man/man1`.

use crate::cli::{Cli, ManArgs};
use crate::console;
use crate::exit::Failure;
use crate::output_path::{finish, prepare_outputs};
use clap::CommandFactory;
use std::path::PathBuf;

/// Renders one page.
fn page(cmd: clap::Command) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| Failure::Runtime(format!("cannot render the manual page: {e}")))?;
    Ok(out)
}

/// Prints `tickscope(1)`, or writes every page into `--dir` (created if missing).
///
/// # Errors
/// [`Failure::Usage`] when a page cannot be written there (checked before writing any).
pub fn execute(args: &ManArgs) -> Result<(), Failure> {
    let root = Cli::command();
    let Some(dir) = &args.dir else {
        console::raw(&page(root)?);
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::Usage(format!(
            "--dir: cannot create the directory {}: {e}",
            tickscope_report::quoted(dir)
        ))
    })?;
    let mut pages = vec![(PathBuf::from("tickscope.1"), root.clone())];
    for sub in root.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("tickscope-{}", sub.get_name());
        pages.push((
            PathBuf::from(format!("{name}.1")),
            sub.clone()
                .name(name)
                .bin_name(format!("tickscope {}", sub.get_name()))
                .display_name(format!("tickscope {}", sub.get_name())),
        ));
    }
    let paths: Vec<PathBuf> = pages.iter().map(|(f, _)| dir.join(f)).collect();
    let wanted: Vec<(&str, &std::path::Path)> =
        paths.iter().map(|p| ("--dir", p.as_path())).collect();
    let outputs = prepare_outputs(&wanted, &[])?;
    for ((_, cmd), out) in pages.into_iter().zip(outputs) {
        finish(out, &page(cmd)?)?;
    }
    console::line(format!(
        "{} manual pages written to {}",
        paths.len(),
        dir.display()
    ));
    Ok(())
}
