//! `tickscope scenario list|show|run`: the classic experiments as one command each (see
//! [`crate::scenario`]).

use super::run::prepare;
use super::signals::stoppable;
use crate::cli::{ScenarioCommand, ScenarioRunArgs, StepClocks, StepRun};
use crate::console;
use crate::exit::Failure;
use crate::output_path::{finish, prepare_outputs};
use clap::Parser;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tickscope_engine::time::NS_PER_SEC;
use tickscope_report::document::rfc3339;
use tickscope_report::sink::RunSink;
use tickscope_report::{escaped, quoted, ToolInfo};
use tickscope_session::scenario::actions::{ActionSink, Planned};
use tickscope_session::scenario::builtin::{self, BUILTIN};
use tickscope_session::scenario::document::{ScenarioDocument, StepRecord, SCENARIO_SCHEMA};
use tickscope_session::scenario::format::{Scenario, Step, StepKind};
use tickscope_session::scenario::metrics::StepData;
use tickscope_session::scenario::review::{review, Review};
use tickscope_session::scenario::table::{render, this_machine};
use tickscope_system::clocks::measure_until;
use tickscope_system::system::{self, SystemInfo};

/// Runs a `scenario` subcommand.
///
/// # Errors
/// [`Failure::Usage`] for an unknown name, a file that cannot be read or is not a valid
/// scenario (one line: file, line, problem); [`Failure::Runtime`] when the result file
/// cannot be written.
pub fn execute(c: ScenarioCommand) -> Result<(), Failure> {
    match c {
        ScenarioCommand::List => {
            for (name, text) in BUILTIN {
                let s = Scenario::parse(text, name).map_err(Failure::Runtime)?;
                console::line(format!(
                    "{name:<20} {}, --quick {} — {} — {}, {} ({})",
                    length_text(scenario_length_ns(&s, false)),
                    length_text(scenario_length_ns(&s, true)),
                    escaped(&s.about),
                    escaped(&s.source.title),
                    escaped(&s.source.author),
                    s.source.year
                ));
            }
            Ok(())
        }
        ScenarioCommand::Show { scenario } => {
            let (s, text, _) = read(&scenario)?;
            let warnings = review(&s, &crate::step_options::CommandLine).show_lines();
            for w in &warnings {
                console::line(w);
            }
            if !warnings.is_empty() {
                console::line("");
            }
            // A valid TOML file holds no control character but tab (TOML v1.0.0), yet C1
            // ones may hide in strings: each line escaped, tabs kept.
            for l in text.trim_end().lines() {
                let parts: Vec<_> = l.split('\t').map(escaped).collect();
                console::line(parts.join("\t"));
            }
            Ok(())
        }
        ScenarioCommand::Run(a) => run(&a),
    }
}

/// The largest scenario file read, bytes (a file of 50 000 steps is about 4 MB).
const MAX_FILE_BYTES: u64 = 64 << 20;

/// The scenario called `name` (built-in) or in the file `name`: (scenario, text, origin).
/// A file's origin is its path as typed, [`tickscope_report::command_line::escape`]d (the
/// same text unless it holds a backslash or bytes that are not UTF-8), so that any path is
/// recorded unambiguously.
fn read(name: &std::ffi::OsStr) -> Result<(Scenario, String, String), Failure> {
    if let Some((name, text)) = name.to_str().and_then(|n| Some((n, builtin::find(n)?))) {
        let s = Scenario::parse(text, name).map_err(Failure::Runtime)?;
        return Ok((s, text.to_string(), "builtin".into()));
    }
    let path = Path::new(name);
    if !path.exists() {
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        return Err(Failure::Usage(format!(
            "no built-in scenario or file called {} (built-ins: {})",
            quoted(path),
            names.join(", ")
        )));
    }
    let text = read_regular(path)?;
    let s = Scenario::parse(&text, &quoted(path)).map_err(Failure::Usage)?;
    let from = tickscope_report::command_line::escape(path.as_os_str().as_bytes());
    Ok((s, text, from))
}

/// The text of a regular file of at most [`MAX_FILE_BYTES`]. Opened with `O_NONBLOCK` and
/// checked with fstat(2) before any read, so that a FIFO, a terminal or a device is refused
/// at once instead of blocking (open(2): a FIFO opened for reading with `O_NONBLOCK` returns
/// without waiting for a writer).
///
/// # Errors
/// [`Failure::Usage`] naming the file: cannot be opened or read, not a regular file, too
/// large, or not UTF-8.
fn read_regular(path: &Path) -> Result<String, Failure> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let q = quoted(path);
    let cannot = |e: std::io::Error| Failure::Usage(format!("cannot read {q}: {e}"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(Failure::Usage(format!(
            "{q} is not a regular file (a directory, FIFO, socket or device); give a scenario \
             file"
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Failure::Usage(format!(
            "{q} is larger than {} MiB; a scenario file is a small TOML text",
            MAX_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| Failure::Usage(format!("cannot read {q}: it is not UTF-8 text")))
}

/// A step's options (quick ones with `quick`), the load included, as typed.
fn step_args(step: &Step, quick: bool) -> Vec<String> {
    let mut args = match (quick, &step.quick_args) {
        (true, Some(q)) => q.clone(),
        _ => step.args.clone(),
    };
    if let (StepKind::Run, Some(l)) = (step.kind, &step.load) {
        args.extend(["--load".to_string(), l.clone()]);
    }
    args
}

/// How long a step measures, ns: its `-D`, or `-l` wake-ups × the period (the shorter when
/// both are given), once per planned run (methods × rounds); a clocks step's `--duration`.
/// Start-up and a load's settling second come on top. `None` when the options do not parse
/// (the step is then refused before anything runs) or give no end.
fn step_length_ns(step: &Step, quick: bool) -> Option<i64> {
    let args = step_args(step, quick);
    match step.kind {
        StepKind::Run => {
            let p = StepRun::try_parse_from(std::iter::once("run".to_string()).chain(args)).ok()?;
            let plan = crate::options::run_plan(&p.args).ok()?;
            let c = &plan.config;
            let by_loops = c.loops.map(|l| (l as i64).saturating_mul(c.period_ns));
            let one = match (c.duration_ns, by_loops) {
                (Some(d), Some(l)) => d.min(l),
                (d, l) => d.or(l)?,
            };
            let runs = plan.methods.len() as i64 * i64::from(plan.rounds.max(1));
            Some(one.saturating_mul(runs))
        }
        StepKind::Clocks => {
            let p = StepClocks::try_parse_from(std::iter::once("clocks".to_string()).chain(args))
                .ok()?;
            Some(super::clocks::clocks_config(&p.args).ok()?.budget_ns)
        }
    }
}

/// The sum of every step's [`step_length_ns`]; `None` if one of them has none.
fn scenario_length_ns(s: &Scenario, quick: bool) -> Option<i64> {
    s.steps.iter().try_fold(0i64, |sum, st| {
        Some(sum.saturating_add(step_length_ns(st, quick)?))
    })
}

/// A measuring time as people read it: `≈ 3 min 20 s`, `≈ 2.00 s`, or `length unknown`.
fn length_text(ns: Option<i64>) -> String {
    match ns {
        Some(ns) if ns >= 60 * NS_PER_SEC => {
            let s = (ns + NS_PER_SEC / 2) / NS_PER_SEC;
            match s % 60 {
                0 => format!("≈ {} min", s / 60),
                r => format!("≈ {} min {r} s", s / 60),
            }
        }
        Some(ns) => format!("≈ {}", tickscope_report::units::ns_i(ns)),
        None => "length unknown".into(),
    }
}

/// The first line of a clap error, as `tickscope` prints it.
fn clap_line(e: &clap::Error) -> String {
    let r = e.render().to_string();
    r.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid options")
        .trim_start_matches("error: ")
        .to_string()
}

/// Checks every step's options before anything runs.
fn check(s: &Scenario, from: &str, quick: bool) -> Result<(), Failure> {
    for step in &s.steps {
        let args = step_args(step, quick);
        let bad = |m: String| {
            Failure::Usage(format!(
                "{from}: step '{}': {}",
                escaped(&step.name),
                escaped(&m)
            ))
        };
        match step.kind {
            StepKind::Run => {
                let p = StepRun::try_parse_from(std::iter::once("run".to_string()).chain(args))
                    .map_err(|e| bad(clap_line(&e)))?;
                crate::options::run_plan(&p.args).map_err(bad)?;
                if p.args.json.is_some() {
                    return Err(bad("--json belongs to 'scenario run', not to a step".into()));
                }
            }
            StepKind::Clocks => {
                let p =
                    StepClocks::try_parse_from(std::iter::once("clocks".to_string()).chain(args))
                        .map_err(|e| bad(clap_line(&e)))?;
                super::clocks::clocks_config(&p.args).map_err(bad)?;
                if p.args.json.is_some() {
                    return Err(bad("--json belongs to 'scenario run', not to a step".into()));
                }
            }
        }
        crate::session_args::load(step.load.as_deref(), None).map_err(|e| match e {
            Failure::Usage(m)
            | Failure::Runtime(m)
            | Failure::Interrupted(m)
            | Failure::ThresholdHit(m) => bad(m),
        })?;
    }
    Ok(())
}

/// `scenario run`: the file reviewed and checked, then every step in turn, then the
/// document (with `--json`) and the table.
///
/// # Errors
/// [`Failure::Usage`] for a file that is refused or does not check; [`Failure::Runtime`]
/// when the document cannot be written.
fn run(a: &ScenarioRunArgs) -> Result<(), Failure> {
    let (s, _, from) = read(&a.scenario)?;
    // Before anything else runs: what the file would do besides measuring needs consent.
    let named = quoted(Path::new(&a.scenario));
    let reviewed = review(&s, &crate::step_options::CommandLine);
    if let Some(m) = reviewed.refusal(&named, a.allow_exec, a.allow_paths) {
        return Err(Failure::Usage(m));
    }
    check(&s, &named, a.quick)?;
    let out = match &a.json {
        Some(p) => prepare_outputs(&[("--json", p)], &[])?.pop(),
        None => None,
    };
    let stop = stoppable();
    let system = system::detect();
    announce(&s, &reviewed, a.quick);
    let started = SystemTime::now();
    let (records, results) = run_steps(&s, a.quick, &stop)?;
    let ended = SystemTime::now();
    let table = render(&s, &results);
    let text = table.text();
    // The document first: nothing printed after the steps can lose it.
    let written = match out {
        Some(out) => {
            let to = out.shown();
            let doc = ScenarioDocument {
                schema: SCENARIO_SCHEMA,
                tool: ToolInfo::current(),
                scenario: s.clone(),
                from,
                quick: a.quick,
                started_at: rfc3339(started),
                ended_at: rfc3339(ended),
                interrupted: stop.load(Ordering::Relaxed),
                system: system.clone(),
                steps: records,
                table,
            };
            let json = serde_json::to_string_pretty(&doc).map_err(|e| {
                Failure::Runtime(format!("cannot encode the scenario document: {e}"))
            })?;
            finish(out, json.as_bytes())?;
            Some(to)
        }
        None => None,
    };
    print_table(&s, &system, a.quick, &text, written);
    Ok(())
}

/// What the scenario reproduces and what the user allowed it to do, before the steps.
fn announce(s: &Scenario, reviewed: &Review, quick: bool) {
    let src = &s.source;
    console::line(format!(
        "scenario {} — {}",
        escaped(&s.name),
        escaped(&s.about)
    ));
    console::line(format!(
        "reproduces: \"{}\", {} ({}){}",
        escaped(&src.title),
        escaped(&src.author),
        src.year,
        if src.url.is_empty() {
            ", URL not known".to_string()
        } else {
            format!(", {}", escaped(&src.url))
        }
    ));
    if quick {
        console::line("--quick: every step is shortened; the numbers are not comparable with the published ones");
    }
    // What the user allowed, said once more before it happens.
    for f in &reviewed.commands {
        console::line(format!("runs (--allow-exec): {f}"));
    }
    for f in &reviewed.outside {
        console::line(format!("writes (--allow-paths): {f}"));
    }
}

/// A step's name and its data for the table (`None`: skipped or failed).
type Named = (String, Option<StepData>);

/// Every step in turn until the last or a stop: each one's record and, under its name, its
/// data for the table.
///
/// # Errors
/// As [`run_step`] and [`clocks_step`].
fn run_steps(
    s: &Scenario,
    quick: bool,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> Result<(Vec<StepRecord>, Vec<Named>), Failure> {
    let mut records = Vec::new();
    let mut results = Vec::new();
    for (i, step) in s.steps.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let args = step_args(step, quick);
        announce_step(s, i, step, &args, quick);
        let mut rec = StepRecord::new(&step.name, step.kind, args.clone());
        let data = match step.kind {
            StepKind::Run => run_step(step, &args, quick, &mut rec)?,
            StepKind::Clocks => clocks_step(step, &args, stop, &mut rec)?,
        };
        report_step(step, &rec);
        results.push((step.name.clone(), data));
        records.push(rec);
    }
    Ok((records, results))
}

/// The step's heading: its number, name and command line, and how long it measures.
fn announce_step(s: &Scenario, i: usize, step: &Step, args: &[String], quick: bool) {
    let kind = match step.kind {
        StepKind::Run => "run",
        StepKind::Clocks => "clocks",
    };
    console::line(format!(
        "\n== step {}/{}: {} — tickscope {kind} {}",
        i + 1,
        s.steps.len(),
        escaped(&step.name),
        escaped(&args.join(" "))
    ));
    // A quiet step prints nothing until it ends: say how long that is.
    console::line(format!(
        "   measuring for {}{}",
        length_text(step_length_ns(step, quick)).trim_start_matches("≈ "),
        if args.iter().any(|x| x == "-q" || x == "--quiet") {
            "; -q: nothing is printed until the step ends"
        } else {
            ""
        }
    ));
}

/// Why the step was skipped, if it was, and what its actions did.
fn report_step(step: &Step, rec: &StepRecord) {
    if let Some(why) = &rec.skipped {
        console::line(format!(
            "step '{}' skipped: {}",
            escaped(&step.name),
            escaped(why)
        ));
    }
    for o in &rec.actions {
        console::line(match (&o.done_at_ns, &o.error) {
            (Some(t), None) => format!(
                "action: {} on tids {:?} at {:.3} s",
                o.action,
                o.tids,
                *t as f64 / 1e9
            ),
            (Some(_), Some(e)) => format!("action: {} failed: {}", o.action, escaped(e)),
            (None, _) => format!("action: {} not done: the step ended first", o.action),
        });
    }
}

/// The table beside the published numbers, the notes, and where the document went.
fn print_table(
    s: &Scenario,
    system: &SystemInfo,
    quick: bool,
    text: &str,
    written: Option<String>,
) {
    console::line(format!(
        "\n{} — {}",
        escaped(&s.name),
        escaped(&s.table.title)
    ));
    for p in &s.published {
        console::line(format!(
            "  {}: published, {}, {}",
            escaped(&p.label),
            escaped(&p.machine),
            escaped(&p.kernel)
        ));
    }
    console::line(format!("  {}", this_machine(system)));
    if quick {
        console::line("  (--quick: shortened steps)");
    }
    console::line(text);
    for n in &s.notes {
        console::line(format!("note: {}", escaped(n)));
    }
    if let Some(to) = written {
        console::line(format!("result written to {to}"));
    }
}

/// A `run` step: measured by `tickscope run`'s own code, with the actions as a sink.
fn run_step(
    step: &Step,
    args: &[String],
    quick: bool,
    rec: &mut StepRecord,
) -> Result<Option<StepData>, Failure> {
    let parsed =
        StepRun::try_parse_from(std::iter::once("run".to_string()).chain(args.iter().cloned()))
            .map_err(|e| Failure::Usage(clap_line(&e)))?;
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let planned: Vec<Planned> = step
        .actions
        .iter()
        .map(|x| Planned {
            at_ns: crate::options::parse_duration(
                match (quick, &x.quick_at) {
                    (true, Some(q)) => q,
                    _ => &x.at,
                },
                "at",
                NS_PER_SEC,
            )
            .unwrap_or(0),
            policy: x.policy.clone(),
            priority: x.priority.unwrap_or(0),
        })
        .collect();
    let extra: Vec<Box<dyn RunSink>> = match planned.is_empty() {
        true => Vec::new(),
        false => vec![Box::new(ActionSink::new(planned, Arc::clone(&outcomes)))],
    };
    let stop = stoppable();
    let result = prepare(&parsed.args, extra, true, false, &stop)
        .map(|(session, sinks)| session.run(sinks, &stop));
    let (doc, result) = match result {
        Ok(Ok(d)) => (Some(Box::new(d)), Ok(())),
        Ok(Err(e)) => (
            e.document().map(|d| Box::new(d.clone())),
            crate::session_args::failure(e).map_or(Ok(()), Err),
        ),
        Err(f) => (None, Err(f)),
    };
    rec.actions = outcomes.lock().map(|v| v.clone()).unwrap_or_default();
    match result {
        Ok(()) => {}
        Err(Failure::Usage(m)) if doc.is_none() => rec.skipped = Some(m),
        Err(Failure::Interrupted(m))
        | Err(Failure::Runtime(m))
        | Err(Failure::Usage(m))
        | Err(Failure::ThresholdHit(m)) => rec.error = Some(m),
    }
    rec.run = doc.clone();
    Ok(doc.map(StepData::Run))
}

/// A `clocks` step: the clocks measurement, with the step's load around it.
fn clocks_step(
    step: &Step,
    args: &[String],
    stop: &Arc<std::sync::atomic::AtomicBool>,
    rec: &mut StepRecord,
) -> Result<Option<StepData>, Failure> {
    let parsed = StepClocks::try_parse_from(
        std::iter::once("clocks".to_string()).chain(args.iter().cloned()),
    )
    .map_err(|e| Failure::Usage(clap_line(&e)))?;
    let cfg = super::clocks::clocks_config(&parsed.args).map_err(Failure::Usage)?;
    let load = crate::session_args::load(step.load.as_deref(), None)?;
    let mut running = match &load {
        Some(l) => match l.start(&crate::session_args::say) {
            Ok(x) => Some(x),
            Err(m) => {
                rec.skipped = Some(m);
                return Ok(None);
            }
        },
        None => None,
    };
    let result = measure_until(&cfg, stop);
    if let Some((child, record)) = running.as_mut() {
        child.stop();
        rec.load = record.lock().ok().map(|r| r.clone());
    }
    drop(running);
    match result {
        Ok(r) if !stop.load(Ordering::Relaxed) => {
            rec.clocks = Some(Box::new(r.clone()));
            Ok(Some(StepData::Clocks(Box::new(r))))
        }
        Ok(_) => {
            rec.error = Some("interrupted".into());
            Ok(None)
        }
        Err(e) => {
            rec.skipped = Some(e.to_string());
            Ok(None)
        }
    }
}
