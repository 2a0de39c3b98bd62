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
use tickscope_engine::setup::{format_cpu_list, parse_cpu_list};
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::doctor::{findings_text, measure_text, summary_line, DoctorDocument};
use tickscope_report::quoted;
use tickscope_system::doctor::measure::{measure, MeasureConfig};
use tickscope_system::doctor::{by_importance, context, run_checks, Severity};
use tickscope_system::facts::{Facts, Root};
use tickscope_system::system::{self, SystemInfo};

/// Runs `tickscope doctor` and returns its exit status (see the module docs).
pub fn main(args: &DoctorArgs) -> ExitCode {
    match execute(args) {
        Ok(status) => ExitCode::from(status),
        Err(f) => exit::status(Err(f)),
    }
}

fn execute(args: &DoctorArgs) -> Result<u8, Failure> {
    let cpus = match &args.cpus {
        Some(s) => Some(parse_cpu_list(s).map_err(|e| Failure::Usage(format!("--cpus: {e}")))?),
        None => None,
    };
    let steal = if args.steal_sample.trim() == "0" {
        Duration::ZERO
    } else {
        let ns = parse_duration(&args.steal_sample, "--steal-sample", NS_PER_SEC)
            .map_err(Failure::Usage)?;
        Duration::from_nanos(ns as u64)
    };
    let duration_ns = parse_duration(&args.measure_duration, "--measure-duration", NS_PER_SEC)
        .map_err(Failure::Usage)?;
    let rounds: u32 = args
        .rounds
        .trim()
        .parse()
        .ok()
        .filter(|&r| r >= 1)
        .ok_or_else(|| {
            Failure::Usage(format!(
                "--rounds '{}' is not a whole number ≥ 1",
                args.rounds
            ))
        })?;
    let json = match &args.json {
        Some(p) => prepare_outputs(&[("--json", p)], &[])?.pop(),
        None => None,
    };
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
    let facts = Facts::gather(&root, steal);
    let ctx = context(&facts, cpus, root.is_live())
        .map_err(|e| Failure::Usage(format!("--cpus: {e}")))?;
    let system = if root.is_live() {
        system::detect()
    } else {
        SystemInfo {
            kernel_release: facts.kernel.release.value().cloned().unwrap_or_default(),
            kernel_version: facts.kernel.version.value().cloned().unwrap_or_default(),
            cpu_count: ctx.online.len(),
            ..SystemInfo::default()
        }
    };
    let fail_on = match args.fail_on.as_deref() {
        Some("info") => Some(Severity::Info),
        Some("medium") => Some(Severity::Medium),
        Some("high") => Some(Severity::High),
        Some("fatal") => Some(Severity::Fatal),
        Some(other) => {
            return Err(Failure::Usage(format!(
                "--fail-on '{other}': use info, medium, high or fatal"
            )))
        }
        None => None,
    };
    let mut findings = run_checks(&facts, &ctx);
    by_importance(&mut findings);
    console::line(format!(
        "tickscope doctor: {} {} ({}), measured CPUs {}\n",
        system.hostname,
        system.kernel_release,
        if root.is_live() {
            "this machine".to_string()
        } else {
            format!(
                "tree {}",
                quoted(args.root.as_deref().unwrap_or(std::path::Path::new("/")))
            )
        },
        format_cpu_list(&ctx.cpus)
    ));
    console::line(findings_text(&findings).trim_end());
    let table = if args.measure {
        let stop = super::signals::stoppable();
        let cfg = MeasureConfig {
            duration_ns,
            rounds,
            ..MeasureConfig::default()
        };
        eprintln!(
            "tickscope: measuring 5 knobs, {rounds} interleaved round(s) of 2 runs of {} ms \
             each (about {} s)",
            duration_ns / 1_000_000,
            (5 * 2 * i64::from(rounds) * duration_ns) / NS_PER_SEC
        );
        let rows = measure(&cfg, &facts, &ctx, &stop, &mut |line| eprintln!("  {line}"));
        Some(rows)
    } else {
        None
    };
    let doc = DoctorDocument::new(system, ctx.cpus.clone(), findings, table, fail_on);
    if let Some(rows) = &doc.measure {
        console::line("\nWhat the knobs tickscope can set are worth here (each changes one setting of an ordinary program):");
        console::line(measure_text(rows).trim_end());
    }
    console::line(format!("\n{}", summary_line(&doc)));
    if let Some(out) = json {
        let to = out.shown();
        let text = serde_json::to_vec_pretty(&doc)
            .map_err(|e| Failure::Runtime(format!("cannot encode the findings: {e}")))?;
        finish(out, &text)?;
        console::line(format!("findings written to {to}"));
    }
    console::settle(Ok(()))?;
    Ok(doc.summary.exit_status)
}
