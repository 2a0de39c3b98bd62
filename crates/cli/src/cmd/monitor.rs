//! `tickscope monitor`: the engine and settings of `run`, one method, until stopped (SIGTERM
//! from systemd or Kubernetes, or Ctrl-C; the engine's guards restore every setting), with
//! the metrics served on `--listen` and/or rewritten into `--textfile`.
//!
//! Nothing is kept per window ([`RunConfig::keep_windows`] is off), so memory does not grow
//! with uptime (bench/monitor-rss.sh). The collector (this thread, from the moment the
//! measuring threads are started), the HTTP server and the textfile writer run on the
//! housekeeping CPUs ([`crate::housekeeping`]).

use super::signals::stoppable;
use super::sinks::{file_sinks, sinks};
use crate::cli::MonitorArgs;
use crate::console;
use crate::exit::Failure;
use crate::options::{parse_duration, run_plan};
use crate::output_path::prepare_outputs;
use crate::session_args::{outcome, placement, say};
use crate::{http, textfile};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tickscope_engine::setup::format_cpu_list;
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::sink::prometheus::tasks::{TaskInfo, TaskSink};
use tickscope_report::sink::prometheus::{Exposition, PrometheusSink};
use tickscope_report::Output;
use tickscope_session::tasks::spec::TaskSpec;
use tickscope_session::{Companion, Plan, Session};
use tickscope_system::system;

/// Refuses the flags of `run` that monitor would ignore ([`crate::cli::MONITOR_REFUSES`]).
///
/// # Errors
/// [`Failure::Usage`] naming the first such flag given and why.
pub(super) fn refuse_run_only_flags(args: &MonitorArgs) -> Result<(), Failure> {
    let r = &args.run;
    let given = |id: &str| match id {
        "rounds" => r.rounds.trim() != "1",
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

/// Runs the monitor described by `args`: one session ([`tickscope_session::Session::run`])
/// with the Prometheus sink before the terminal and the endpoints as its companions.
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
    let every = textfile_every(args)?;
    let until_stopped = args.run.duration.is_none() && args.run.loops.is_none();
    let placement = placement(args.run.housekeeping_cpus.as_deref(), &plan.config.cpus)
        .map_err(Failure::Usage)?;
    if args.run.tasks.is_some() || args.run.tasks_file.is_some() {
        let mut prepared = super::tasks::prepare(&args.run)?;
        if until_stopped {
            prepared.config.duration_ns = None;
        }
        let destinations = destinations(args)?;
        let stop = stoppable();
        let mut sinks = file_sinks(&args.run, false)?;
        let infos: Vec<TaskInfo> = prepared.specs.iter().map(task_info).collect();
        let (prom, expo) = TaskSink::new(&system::detect(), &prepared.config, &infos);
        sinks.push(Box::new(prom));
        let hk_cpus = housekeeping_cpus(&placement);
        let endpoints = Endpoints::start(destinations, expo, every, hk_cpus)?;
        let ran = super::tasks::run_prepared(&args.run, &prepared, sinks, &stop);
        let ended = Box::new(endpoints).end().map_err(Failure::Runtime);
        return ran.and(ended);
    }
    let destinations = destinations(args)?;
    let stop = stoppable();
    let mut sinks = sinks(&args.run, false, &stop, false)?;
    let system = system::detect();
    let (prom, expo) = PrometheusSink::new(&system, &plan.config);
    sinks.insert(sinks.len() - 1, Box::new(prom));
    let hk_cpus = housekeeping_cpus(&placement);
    let endpoints = Endpoints::start(destinations, expo, every, hk_cpus)?;
    let mut config = plan.config;
    if until_stopped {
        config.duration_ns = None;
    }
    let plan = Plan {
        config,
        methods: plan.methods,
        rounds: 1,
    };
    let mut session = Session::new(plan, system, &say);
    session.placement = Some(placement);
    session.companions = vec![Box::new(endpoints)];
    session.word_notes = crate::engine_errors::word_notes;
    outcome(session.run(sinks, &stop))
}

/// The CPUs of the HTTP and textfile threads, as said on stderr (`None`: not pinned).
fn housekeeping_cpus(placement: &tickscope_session::Placement) -> Option<Vec<usize>> {
    match &placement.cpus {
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
    }
}

/// A task as its metrics label and describe it.
fn task_info(s: &TaskSpec) -> TaskInfo {
    let t = &s.task;
    TaskInfo {
        name: t.display_name(),
        period_ns: t.period_ns(),
        deadline_ns: t.deadline_ns(),
        budget_ns: t.budget_ns(),
        work_ns: s.work_ns,
        priority: t.priority_value(),
        overrun: t.overrun_policy().name().to_string(),
    }
}

/// `--textfile-interval`, checked with `--no-listen` (which needs `--textfile`).
///
/// # Errors
/// [`Failure::Usage`] for `--no-listen` without `--textfile` or an interval that does not
/// parse.
pub(super) fn textfile_every(args: &MonitorArgs) -> Result<Duration, Failure> {
    if args.no_listen && args.textfile.is_none() {
        return Err(Failure::Usage(
            "--no-listen without --textfile leaves the metrics nowhere; give --textfile FILE"
                .into(),
        ));
    }
    let every = parse_duration(&args.textfile_interval, "--textfile-interval", NS_PER_SEC)
        .map_err(Failure::Usage)?;
    Ok(Duration::from_nanos(every as u64))
}

/// Where the metrics go, checked before anything runs.
pub(super) struct Destinations {
    /// The HTTP listener and its address (unless `--no-listen`).
    server: Option<(SocketAddr, TcpListener)>,
    /// The textfile (with `--textfile`).
    textfile: Option<Output>,
}

/// The destinations of `args`.
///
/// # Errors
/// [`Failure::Usage`] for an address that is not ADDR:PORT or cannot be bound, or a
/// textfile that cannot be written.
pub(super) fn destinations(args: &MonitorArgs) -> Result<Destinations, Failure> {
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
    Ok(Destinations {
        server,
        textfile: textfile_out,
    })
}

/// The HTTP server and the textfile writer: started on the housekeeping CPUs before the
/// run, ended with it ([`Companion`]).
pub(super) struct Endpoints {
    done: Arc<AtomicBool>,
    http: Option<http::Server>,
    textfile: Option<JoinHandle<Result<(), String>>>,
}

impl Endpoints {
    /// Starts the threads serving `expo`; says where the metrics are.
    ///
    /// # Errors
    /// [`Failure::Runtime`] when a thread cannot be started.
    pub(super) fn start(
        to: Destinations,
        expo: Exposition,
        every: Duration,
        hk_cpus: Option<Vec<usize>>,
    ) -> Result<Endpoints, Failure> {
        let done = Arc::new(AtomicBool::new(false));
        let mut http_thread = None;
        if let Some((addr, server)) = to.server {
            if !addr.ip().is_loopback() {
                eprintln!(
                    "tickscope: listening on {addr}, which is not loopback: other machines can \
                     read the metrics"
                );
            }
            console::line(format!("metrics on http://{addr}/metrics"));
            http_thread = Some(
                http::serve(server, expo.clone(), hk_cpus.clone())
                    .map_err(|e| Failure::Runtime(format!("cannot start the HTTP thread: {e}")))?,
            );
        }
        let textfile = match to.textfile {
            Some(out) => Some(
                textfile::spawn(out, expo, every, Arc::clone(&done), hk_cpus).map_err(|e| {
                    Failure::Runtime(format!("cannot start the textfile thread: {e}"))
                })?,
            ),
            None => None,
        };
        Ok(Endpoints {
            done,
            http: http_thread,
            textfile,
        })
    }
}

impl Companion for Endpoints {
    fn end(self: Box<Self>) -> Result<(), String> {
        self.done.store(true, Ordering::Relaxed);
        if let Some(server) = self.http {
            server.stop();
        }
        match self.textfile.map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err("the textfile thread failed".into()),
            None => Ok(()),
        }
    }
}
