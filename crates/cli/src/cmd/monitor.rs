//! `tickscope monitor`: the engine and settings of `run`, one method, until stopped (SIGTERM
//! from systemd or Kubernetes, or Ctrl-C; the engine's guards restore every setting), with
//! the metrics served on `--listen` and/or rewritten into `--textfile`.
//!
//! Nothing is kept per window ([`RunConfig::keep_windows`] is off), so memory does not grow
//! with uptime (bench/monitor-rss.sh). The collector (this thread, from the moment the
//! measuring threads are started), the HTTP server and the textfile writer run on the
//! housekeeping CPUs ([`crate::housekeeping`]).

use super::run::{annotated, deliver};
use super::signals::stoppable;
use super::sinks::sinks;
use crate::cli::MonitorArgs;
use crate::console;
use crate::exit::Failure;
use crate::options::{parse_duration, run_plan};
use crate::output_path::prepare_outputs;
use crate::{housekeeping, http, textfile};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tickscope_engine::run::{run, RunConfig};
use tickscope_engine::setup::format_cpu_list;
use tickscope_engine::system;
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::sink::prometheus::PrometheusSink;
use tickscope_report::sink::{RunContext, SinkNeeds};
use tickscope_report::{MethodRun, RunDocument};

/// Refuses the flags of `run` that monitor would ignore ([`crate::cli::MONITOR_REFUSES`]).
///
/// # Errors
/// [`Failure::Usage`] naming the first such flag given and why.
fn refuse_run_only_flags(args: &MonitorArgs) -> Result<(), Failure> {
    let r = &args.run;
    let given = |id: &str| match id {
        "rounds" => r.rounds.trim() != "1",
        "tasks" => r.tasks.is_some(),
        "load" => r.load.is_some(),
        "load_cpus" => r.load_cpus.is_some(),
        "csv" => {
            r.exports.csv.is_some()
                || r.exports
                    .export
                    .iter()
                    .any(|e| e.as_encoded_bytes().starts_with(b"csv="))
        }
        _ => false,
    };
    match crate::cli::MONITOR_REFUSES.iter().find(|(id, _)| given(id)) {
        Some((_, why)) => Err(Failure::Usage(format!("monitor: {why}"))),
        None => Ok(()),
    }
}

/// Runs the monitor described by `args`.
///
/// # Errors
/// [`Failure::Usage`] for bad flags (several methods, an address that is not ADDR:PORT or
/// cannot be bound, housekeeping CPUs overlapping measured ones, an output that cannot be
/// written) — all before the first wake-up; [`Failure::Runtime`] when the textfile or
/// another output cannot be written or a measuring thread fails.
pub fn execute(args: &MonitorArgs) -> Result<(), Failure> {
    refuse_run_only_flags(args)?;
    let plan = run_plan(&args.run).map_err(Failure::Usage)?;
    if plan.is_comparison() {
        return Err(Failure::Usage(
            "monitor measures one method; give one --method and no --rounds".into(),
        ));
    }
    if args.no_listen && args.textfile.is_none() {
        return Err(Failure::Usage(
            "--no-listen without --textfile leaves the metrics nowhere; give --textfile FILE"
                .into(),
        ));
    }
    let every = parse_duration(&args.textfile_interval, "--textfile-interval", NS_PER_SEC)
        .map_err(Failure::Usage)?;
    let until_stopped = args.run.duration.is_none() && args.run.loops.is_none();
    let placement =
        housekeeping::Placement::plan(args.run.housekeeping_cpus.as_deref(), &plan.config.cpus)
            .map_err(Failure::Usage)?;
    let hk = placement.cpus.clone();
    let server = match args.no_listen {
        true => None,
        false => {
            let addr: SocketAddr = args.listen.trim().parse().map_err(|_| {
                Failure::Usage(format!(
                    "--listen '{}' is not ADDR:PORT (e.g. {})",
                    args.listen,
                    http::DEFAULT_LISTEN
                ))
            })?;
            Some((addr, http::bind(addr).map_err(Failure::Usage)?))
        }
    };
    let textfile_out = match &args.textfile {
        Some(p) => prepare_outputs(&[("--textfile", p.as_path())], &[])?.pop(),
        None => None,
    };
    let stop = stoppable();
    let mut sinks = sinks(&args.run, false, &stop, false)?;
    let system = system::detect();
    let (prom, expo) = PrometheusSink::new(&system, &plan.config);
    let terminal = sinks.len() - 1;
    sinks.insert(terminal, Box::new(prom));
    let needs = sinks
        .iter()
        .fold(SinkNeeds::default(), |n, s| n.union(s.needs()));
    let cfg = RunConfig {
        stream_samples: needs.raw_samples,
        keep_windows: false,
        duration_ns: if until_stopped {
            None
        } else {
            plan.config.duration_ns
        },
        ..plan.config.clone()
    };

    let hk_cpus = match &hk {
        Ok(cpus) => {
            eprintln!(
                "tickscope: housekeeping threads on CPUs {}",
                format_cpu_list(cpus)
            );
            Some(cpus.clone())
        }
        Err(why) => {
            eprintln!("tickscope: housekeeping threads not pinned: {why}");
            None
        }
    };
    let done = Arc::new(AtomicBool::new(false));
    let mut http_thread = None;
    if let Some((addr, server)) = server {
        if !addr.ip().is_loopback() {
            eprintln!(
                "tickscope: listening on {addr}, which is not loopback: other machines can \
                 read the metrics"
            );
        }
        console::line(format!("metrics on http://{addr}/metrics"));
        http_thread = Some(
            http::serve(server, expo.clone(), Arc::clone(&done), hk_cpus.clone())
                .map_err(|e| Failure::Runtime(format!("cannot start the HTTP thread: {e}")))?,
        );
    }
    let textfile_thread = match textfile_out {
        Some(out) => Some(
            textfile::spawn(
                out,
                expo.clone(),
                Duration::from_nanos(every as u64),
                Arc::clone(&done),
                hk_cpus.clone(),
            )
            .map_err(|e| Failure::Runtime(format!("cannot start the textfile thread: {e}")))?,
        ),
        None => None,
    };

    let ctx = RunContext {
        system: &system,
        config: &cfg,
        methods: &plan.methods,
        rounds: 1,
        index: 0,
        total: 1,
    };
    let outcome = run(&cfg, &stop, &mut |event| {
        deliver(&mut sinks, &ctx, &event, Some(&placement))
    });
    done.store(true, Ordering::Relaxed);
    if let Some(h) = http_thread {
        let _ = h.join();
    }
    let textfile_result = textfile_thread.map(|h| {
        h.join()
            .unwrap_or_else(|_| Err("the textfile thread failed".into()))
    });
    let outcome = outcome?;
    let (finished, error) = MethodRun::new(1, 0, outcome);
    let doc = RunDocument::of_runs(
        system.clone(),
        cfg.clone(),
        vec![finished],
        false,
        error.clone(),
    );
    let doc = annotated(&mut sinks, doc);
    let mut failed = None;
    for s in &mut sinks {
        if let Err(e) = s.run_finished(&ctx, &doc) {
            failed.get_or_insert(Failure::Runtime(e.to_string()));
        }
    }
    let mut notes = Vec::new();
    for s in &mut sinks {
        if let Err(e) = s.finish(&doc, &mut notes) {
            also_failed(&mut failed, e.to_string());
        }
    }
    if let Some(Err(e)) = textfile_result {
        also_failed(&mut failed, e);
    }
    match (failed, error) {
        (Some(f), _) => Err(f),
        (None, Some(e)) => Err(Failure::Runtime(e)),
        (None, None) => Ok(()),
    }
}

/// Keeps the first failure as the exit's reason (said once, by the caller) and says any
/// later one at once.
fn also_failed(failed: &mut Option<Failure>, e: String) {
    match failed {
        None => *failed = Some(Failure::Runtime(e)),
        Some(_) => eprintln!("tickscope: {e}"),
    }
}
