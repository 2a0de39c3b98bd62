//! `tickscope clocks`: measure what reading every clock costs, print the tables, write the
//! result file.

use crate::cli::ClocksArgs;
use crate::console;
use crate::exit::Failure;
use crate::options::parse_duration;
use crate::output_path::{finish, prepare_outputs};
use std::sync::atomic::Ordering;
use std::time::SystemTime;
use tickscope_engine::setup::{allowed_cpus, format_cpu_list};
use tickscope_engine::time::{Nanos, NS_PER_MS, NS_PER_SEC};
use tickscope_report::clocks::{self as render, ClocksDocument};
use tickscope_system::clocks::{measure_until, ClocksConfig};
use tickscope_system::system;

/// The budget without `--duration`, ns: 3 s, doubled with `--idle-compare` (three passes).
pub const DEFAULT_BUDGET_NS: Nanos = 3 * NS_PER_SEC;
/// The smallest `--duration` accepted, ns (100 ms).
pub const MIN_BUDGET_NS: Nanos = 100 * NS_PER_MS;
/// The largest `--duration` accepted, ns (1 h).
pub const MAX_BUDGET_NS: Nanos = 3600 * NS_PER_SEC;

/// Turns `tickscope clocks` flags into a configuration.
///
/// # Errors
/// One sentence naming the flag, what was wrong and the accepted form.
pub fn clocks_config(a: &ClocksArgs) -> Result<ClocksConfig, String> {
    let cpu = match a.cpu.as_deref() {
        None => None,
        Some(s) => {
            let cpu: usize = s
                .trim()
                .parse()
                .map_err(|_| format!("--cpu '{s}' is not a CPU number like 0 or 3"))?;
            let allowed = allowed_cpus()
                .map_err(|e| format!("cannot read the CPUs this process may use: {e}"))?;
            if !allowed.contains(&cpu) {
                return Err(format!(
                    "--cpu: CPU {cpu} is not present or not available to this process \
                     (available: {})",
                    format_cpu_list(&allowed)
                ));
            }
            Some(cpu)
        }
    };
    let budget_ns = match a.duration.as_deref() {
        Some(d) => parse_duration(d, "--duration", NS_PER_SEC)?,
        None if a.idle_compare => 2 * DEFAULT_BUDGET_NS,
        None => DEFAULT_BUDGET_NS,
    };
    if !(MIN_BUDGET_NS..=MAX_BUDGET_NS).contains(&budget_ns) {
        return Err(format!(
            "--duration must be between 100ms and 1h (got '{}')",
            a.duration.as_deref().unwrap_or_default()
        ));
    }
    Ok(ClocksConfig {
        cpu,
        budget_ns,
        idle_compare: a.idle_compare,
    })
}

/// Runs the measurement described by `args`, writes the result file, then prints it.
///
/// Ctrl-C (or SIGTERM, SIGHUP) ends the measurement within a few milliseconds per clock;
/// a shortened measurement is neither printed nor written, and says so in one line.
///
/// # Errors
/// [`Failure::Usage`] for bad flags, an output that cannot be written (checked before
/// measuring) or a CPU that cannot be pinned; [`Failure::Interrupted`] after a stop;
/// [`Failure::Runtime`] when the result file cannot be written.
pub fn execute(args: &ClocksArgs) -> Result<(), Failure> {
    let cfg = clocks_config(args).map_err(Failure::Usage)?;
    let json = match &args.json {
        Some(p) => prepare_outputs(&[("--json", p)], &[])?.pop(),
        None => None,
    };
    let stop = super::signals::stoppable();
    let system = system::detect();
    let started = SystemTime::now();
    let result = measure_until(&cfg, &stop)?;
    let ended = SystemTime::now();
    if stop.load(Ordering::Relaxed) {
        return Err(Failure::Interrupted(
            "interrupted; clocks measures every clock in turn, so a shortened measurement is \
             neither printed nor written"
                .into(),
        ));
    }
    let mut written = None;
    let text = [
        render::header(&system, &cfg, &result),
        format!("{}\n", render::cost_table(&result.clocks)),
        format!("{}\n", render::delta_table(&result.clocks)),
        match render::idle_compare_table(&result) {
            t if t.is_empty() => t,
            t => format!("{t}\n"),
        },
        render::notes(&result.clocks),
    ];
    if let Some(out) = json {
        let to = out.shown();
        let doc = ClocksDocument::new(system, cfg, result, started, ended);
        finish(out, doc.to_json().as_bytes())?;
        written = Some(format!("result written to {to}"));
    }
    for t in text.iter().filter(|t| !t.is_empty()) {
        console::line(t);
    }
    if let Some(w) = written {
        console::line(w);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cpu: Option<&str>, duration: Option<&str>, idle_compare: bool) -> ClocksArgs {
        ClocksArgs {
            cpu: cpu.map(str::to_string),
            duration: duration.map(str::to_string),
            json: None,
            idle_compare,
        }
    }

    #[test]
    fn defaults_and_limits() {
        let c = clocks_config(&args(None, None, false)).unwrap();
        assert_eq!((c.cpu, c.budget_ns), (None, DEFAULT_BUDGET_NS));
        let c = clocks_config(&args(None, None, true)).unwrap();
        assert_eq!(c.budget_ns, 2 * DEFAULT_BUDGET_NS);
        let c = clocks_config(&args(None, Some("300ms"), false)).unwrap();
        assert_eq!(c.budget_ns, 300 * NS_PER_MS);
        let first = allowed_cpus().unwrap()[0].to_string();
        assert!(clocks_config(&args(Some(&first), None, false)).is_ok());
        for (cpu, d) in [
            (Some("x"), None),
            (Some("9999"), None),
            (None, Some("10ms")),
            (None, Some("2h")),
            (None, Some("soon")),
        ] {
            assert!(
                clocks_config(&args(cpu, d, false)).is_err(),
                "{cpu:?} {d:?}"
            );
        }
    }
}
