//! `tickscope doctor`: the findings about this machine, the fixes, and with `--measure` what
//! the knobs tickscope can set are worth here.
//!
//! Exit status ([`tickscope_report::doctor::exit_status`]): 0 when the machine can be
//! measured (every finding is advice); 3 when a finding makes measurements invalid; 1 when
//! `--fail-on SEVERITY` is given and a finding is that severe; 2 for bad input (one line on
//! stderr), as for every command.

use crate::cli::DoctorArgs;
use crate::console;
use crate::exit::{self, Failure};
use crate::options::parse_duration;
use crate::output_path::{finish, prepare_outputs};
use std::process::ExitCode;
use std::time::Duration;
use tickscope_engine::setup::parse_cpu_list;
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::doctor::{
    findings_text, header_line, measure_plan_line, measure_section, summary_line, DoctorDocument,
};
use tickscope_report::quoted;
use tickscope_system::doctor::inspection::inspect;
use tickscope_system::doctor::measure::{measure, MeasureConfig};
use tickscope_system::doctor::Severity;
use tickscope_system::facts::Root;

/// Runs `tickscope doctor` and returns its exit status (see the module docs).
pub fn main(args: &DoctorArgs) -> ExitCode {
    match execute(args) {
        Ok(status) => ExitCode::from(status),
        Err(f) => exit::status(Err(f)),
    }
}

/// The flags of `tickscope doctor`, read.
struct Options {
    cpus: Option<Vec<usize>>,
    steal: Duration,
    duration_ns: i64,
    rounds: u32,
    fail_on: Option<Severity>,
    root: Root,
    json: Option<tickscope_report::Output>,
}

/// Reads the flags; every error is one line naming the flag.
fn options(args: &DoctorArgs) -> Result<Options, Failure> {
    let cpus = args.cpus.as_deref().map(parse_cpu_list).transpose();
    let steal = match args.steal_sample.trim() {
        "0" => 0,
        s => parse_duration(s, "--steal-sample", NS_PER_SEC).map_err(Failure::Usage)?,
    };
    let rounds = args.rounds.trim().parse().ok().filter(|&r: &u32| r >= 1);
    let root = match &args.root {
        Some(dir) if args.measure => {
            return Err(Failure::Usage(format!(
                "--measure measures this machine; it cannot read a tree like {}",
                quoted(dir)
            )))
        }
        Some(dir) if !dir.is_dir() => {
            return Err(Failure::Usage(format!(
                "--root {} is not a directory",
                quoted(dir)
            )))
        }
        Some(dir) => Root::at(dir),
        None => Root::live(),
    };
    Ok(Options {
        cpus: cpus.map_err(|e| Failure::Usage(format!("--cpus: {e}")))?,
        steal: Duration::from_nanos(steal as u64),
        duration_ns: parse_duration(&args.measure_duration, "--measure-duration", NS_PER_SEC)
            .map_err(Failure::Usage)?,
        rounds: rounds.ok_or_else(|| {
            Failure::Usage(format!(
                "--rounds '{}' is not a whole number ≥ 1",
                args.rounds
            ))
        })?,
        fail_on: (args.fail_on.as_deref().map(Severity::threshold).transpose())
            .map_err(|e| Failure::Usage(format!("--fail-on {e}")))?,
        root,
        json: match &args.json {
            Some(p) => prepare_outputs(&[("--json", p)], &[])?.pop(),
            None => None,
        },
    })
}

fn execute(args: &DoctorArgs) -> Result<u8, Failure> {
    let o = options(args)?;
    let seen =
        inspect(&o.root, o.steal, o.cpus).map_err(|e| Failure::Usage(format!("--cpus: {e}")))?;
    let place = match &args.root {
        Some(dir) if !o.root.is_live() => format!("tree {}", quoted(dir)),
        _ => "this machine".to_string(),
    };
    console::line(header_line(&seen.system, &place, &seen.ctx.cpus));
    console::line(findings_text(&seen.findings).trim_end());
    let table = args.measure.then(|| {
        let stop = super::signals::stoppable();
        let cfg = MeasureConfig {
            duration_ns: o.duration_ns,
            rounds: o.rounds,
            ..MeasureConfig::default()
        };
        eprintln!("{}", measure_plan_line(o.rounds, o.duration_ns));
        measure(&cfg, &seen.facts, &seen.ctx, &stop, &mut |line| {
            eprintln!("  {line}")
        })
    });
    let doc = DoctorDocument::new(seen.system, seen.ctx.cpus, seen.findings, table, o.fail_on);
    if let Some(rows) = &doc.measure {
        console::line(measure_section(rows));
    }
    console::line(format!("\n{}", summary_line(&doc)));
    if let Some(out) = o.json {
        let to = out.shown();
        let text = serde_json::to_vec_pretty(&doc)
            .map_err(|e| Failure::Runtime(format!("cannot encode the findings: {e}")))?;
        finish(out, &text)?;
        console::line(format!("findings written to {to}"));
    }
    console::settle(Ok(()))?;
    Ok(doc.summary.exit_status)
}
