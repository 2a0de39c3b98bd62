//! From the flags of `run` and `monitor` to the session's typed options
//! ([`tickscope_session`]): the housekeeping placement and the load, worded in the flags'
//! terms; and the session's outcome back to an exit's [`Failure`].

use crate::exit::Failure;
use tickscope_engine::setup::{allowed_cpus, format_cpu_list, parse_cpu_list};
use tickscope_report::RunDocument;
use tickscope_session::housekeeping::{choose, PlacementError, Shared};
use tickscope_session::load::{find_in_path, LoadRequest, INSTALL_HINT};
use tickscope_session::{Error, Placement};

/// The session's lines for the user go to the terminal ([`crate::console`]).
pub fn say(line: &str) {
    crate::console::line(line);
}

/// The housekeeping placement for `--housekeeping-cpus` (`asked`) and measuring threads
/// pinned as `measured` (`None` = unpinned).
///
/// # Errors
/// One sentence when `asked` is not a CPU list, names a CPU this process may not use, or
/// overlaps a measured CPU.
pub fn placement(asked: Option<&str>, measured: &[Option<usize>]) -> Result<Placement, String> {
    let asked = asked
        .map(|l| parse_cpu_list(l.trim()).map_err(|e| format!("--housekeeping-cpus: {e}")))
        .transpose()?;
    let affinity = |e: std::io::Error| format!("cannot read the CPU affinity: {e}");
    let cpus = choose(asked.as_deref(), measured).map_err(|e| match e {
        PlacementError::Affinity(e) => affinity(e),
        PlacementError::NotAllowed { cpu, allowed } => format!(
            "--housekeeping-cpus: CPU {cpu} is not available to this process (allowed: {})",
            format_cpu_list(&allowed)
        ),
        PlacementError::Overlap { asked, overlap } => format!(
            "--housekeeping-cpus {} overlaps the measured CPUs ({}); tickscope's own \
             threads must stay off them",
            format_cpu_list(&asked),
            format_cpu_list(&overlap)
        ),
    })?;
    let cpus = cpus.map_err(|why| {
        match why {
            Shared::Unpinned => {
                "measuring threads are unpinned, so every CPU is measured; pin them with -a \
                 and tickscope's own threads move off them"
            }
            Shared::EveryCpu => {
                "every CPU is measured; give --housekeeping-cpus or measure fewer CPUs"
            }
        }
        .to_string()
    });
    Placement::new(cpus).map_err(affinity)
}

/// Checks `--load` and `--load-cpus`. `None` without `--load`.
///
/// # Errors
/// [`Failure::Usage`] for a malformed spec or CPU list, `--load-cpus` without `--load`, or
/// a stress-ng load without stress-ng installed (the message gives the install command).
pub fn load(load: Option<&str>, load_cpus: Option<&str>) -> Result<Option<LoadRequest>, Failure> {
    let Some(text) = load else {
        if load_cpus.is_some() {
            return Err(Failure::Usage("--load-cpus needs --load".into()));
        }
        return Ok(None);
    };
    let cpus = match load_cpus {
        None => Vec::new(),
        Some(l) => {
            let cpus =
                parse_cpu_list(l).map_err(|e| Failure::Usage(format!("--load-cpus: {e}")))?;
            let allowed = allowed_cpus().map_err(|e| {
                Failure::Usage(format!("cannot read the CPUs this process may use: {e}"))
            })?;
            if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
                return Err(Failure::Usage(format!(
                    "--load-cpus: CPU {c} is not available to this process (available: {})",
                    format_cpu_list(&allowed)
                )));
            }
            cpus
        }
    };
    let request = LoadRequest::new(text, cpus).map_err(Failure::Usage)?;
    if request.needs_stress_ng() && find_in_path("stress-ng").is_none() {
        return Err(Failure::Usage(format!(
            "--load {text} runs stress-ng, which is not installed (not on PATH); install it \
             with: {INSTALL_HINT}"
        )));
    }
    Ok(Some(request))
}

/// The exit for a session's outcome. Every failure but the reason is printed here, oldest
/// first; a stop before the first run is an interruption when a signal caused it and a
/// quiet end otherwise (standard output was closed).
///
/// # Errors
/// The session's failure as a [`Failure`] of its class.
pub fn outcome(result: Result<RunDocument, Error>) -> Result<(), Failure> {
    match result {
        Ok(_) => Ok(()),
        Err(e) => match failure(e) {
            Some(f) => Err(f),
            None => Ok(()),
        },
    }
}

/// [`outcome`]'s failure; `None` for a quiet end.
pub fn failure(e: Error) -> Option<Failure> {
    Some(match e {
        Error::Setup(m) => Failure::Usage(m),
        Error::Engine(e) => Failure::from(e),
        Error::StoppedBeforeMeasuring => match crate::cmd::signals::stop_signal() {
            Some(_) => Failure::Interrupted("interrupted before measuring".into()),
            None => return None,
        },
        Error::Output { earlier, last, .. } => {
            for e in earlier {
                eprintln!("tickscope: {e}");
            }
            Failure::Runtime(last)
        }
        Error::Run { message, .. } => Failure::Runtime(message),
        Error::ThresholdHit { .. } => Failure::ThresholdHit(
            "stopped: a wake-up was later than the --on-late/--break threshold".into(),
        ),
    })
}
