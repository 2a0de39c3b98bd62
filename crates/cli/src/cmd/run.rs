//! `tickscope run`: measure, show each second, summarise, write the result file.

use super::signals::stop_flag;
use crate::cli::RunArgs;
use crate::exit::Failure;
use crate::options::run_config;
use std::io::Write;
use tickscope_engine::run::{run, RunEvent};
use tickscope_engine::system;
use tickscope_report::{terminal, write_atomic, RunDocument};

/// Runs the measurement described by `args`.
///
/// # Errors
/// [`Failure::Usage`] for bad flags or a requested setting that cannot be applied;
/// [`Failure::Runtime`] when the result file cannot be written or a thread fails.
pub fn execute(args: &RunArgs) -> Result<(), Failure> {
    let cfg = run_config(args).map_err(Failure::Usage)?;
    if let Some(path) = &args.json {
        check_writable(path)?;
    }
    let system = system::detect();
    let stop = stop_flag().map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    let threads = cfg.cpus.len();
    let quiet = args.quiet;
    let mut stdout = std::io::stdout();
    let mut observer = |event: RunEvent<'_>| {
        if let RunEvent::Started(applied) = &event {
            if let Some(note) = &applied.method_note {
                eprintln!("tickscope: warning: {note}");
            }
        }
        if quiet {
            return;
        }
        let text = match event {
            RunEvent::Started(applied) => format!(
                "{}\n{}",
                terminal::header(&system, &cfg, applied),
                terminal::second_header()
            ),
            RunEvent::Second(report) => terminal::second_lines(report, cfg.period_ns, threads),
            RunEvent::Samples { .. } => return,
        };
        let _ = writeln!(stdout, "{text}");
        let _ = stdout.flush();
    };
    let outcome = run(&cfg, &stop, &mut observer)?;
    if outcome.interrupted {
        eprintln!("tickscope: interrupted; the summary covers what ran");
    }
    println!(
        "\n{}",
        terminal::summary(&outcome.threads, &outcome.summary)
    );
    let error = outcome.error.clone();
    if let Some(path) = &args.json {
        let doc = RunDocument::new(system.clone(), cfg.clone(), outcome);
        write_atomic(path, doc.to_json().as_bytes())
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
        if !quiet {
            println!("result written to {}", path.display());
        }
    }
    match error {
        Some(e) => Err(Failure::Runtime(e)),
        None => Ok(()),
    }
}

/// Fails early, before measuring, if the result file's directory does not exist.
fn check_writable(path: &std::path::Path) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Failure::Usage(format!(
            "--json: directory '{}' does not exist; create it or choose another path",
            dir.display()
        )));
    }
    Ok(())
}
