//! `tickscope gate BASELINE CANDIDATE…`: judge candidates against a baseline on whole
//! distributions ([`tickscope_gate`]); the table (or `--json`) on stdout, `--junit FILE`
//! for CI, and the outcome as the exit status (0 pass, 1 regression, 2 usage, 3
//! inconclusive; `docs/gate.md`). Two task-set results are judged task by task
//! ([`tickscope_gate::tasks`]).

use crate::cli::GateArgs;
use crate::console;
use crate::exit::{self, Failure};
use crate::output_path::prepare_outputs;
use std::process::ExitCode;
use tickscope_gate::tasks::judge_tasks;
use tickscope_gate::{input, judge, Report, Rules};
use tickscope_report::import::read_input;

/// Runs the gate and returns its exit status: the outcome's, unless the input was bad
/// (2) or standard output failed (1).
pub fn main(args: &GateArgs) -> ExitCode {
    let mut code = 0;
    match console::settle(execute(args).map(|c| code = c)) {
        Ok(()) => ExitCode::from(code),
        Err(f) => exit::status(Err(f)),
    }
}

fn execute(args: &GateArgs) -> Result<u8, Failure> {
    let usage = Failure::Usage;
    let rules = match &args.rules {
        Some(path) => {
            let text = read_input(path).map_err(|e| usage(e.to_string()))?;
            Rules::from_toml(&text)
                .map_err(|e| usage(format!("{}: {e}", tickscope_report::quoted(path))))?
        }
        None => Rules::default(),
    };
    let mut inputs: Vec<&std::path::Path> = vec![args.baseline.as_path()];
    inputs.extend(args.candidates.iter().map(|p| p.as_path()));
    if let Some(r) = &args.rules {
        inputs.push(r.as_path());
    }
    let junit = match &args.junit {
        Some(path) => prepare_outputs(&[("--junit", path.as_path())], &inputs)?.pop(),
        None => None,
    };
    let base = input::read(&args.baseline).map_err(usage)?;
    let mut verdicts = Vec::with_capacity(args.candidates.len());
    for path in &args.candidates {
        let cand = input::read(path).map_err(usage)?;
        match (&base.tasks, &cand.tasks) {
            (Some(b), Some(c)) => verdicts.extend(judge_tasks(b, c, &cand.whole.source, &rules)),
            (None, None) => verdicts.push(judge(&base.whole, &cand.whole, &rules)),
            (b, _) => {
                let (set, other) = if b.is_some() {
                    (&args.baseline, path)
                } else {
                    (path, &args.baseline)
                };
                return Err(usage(format!(
                    "{} is a task set (run --tasks) and {} is not: the gate compares task \
                     sets task by task, so give two task-set results (--json)",
                    tickscope_report::quoted(set),
                    tickscope_report::quoted(other)
                )));
            }
        }
    }
    let mut report = Report::new(&base.whole, &rules, verdicts);
    report.baseline_tasks = base
        .tasks
        .map(|tasks| tasks.into_iter().map(|(name, _)| name).collect());
    if let Some(out) = junit {
        out.finish(report.to_junit().as_bytes())
            .map_err(|e| Failure::Runtime(format!("--junit: cannot write: {e}")))?;
    }
    if args.json {
        console::raw(report.to_json().as_bytes());
    } else {
        console::raw(report.to_text().as_bytes());
    }
    Ok(report.outcome.exit_code())
}
