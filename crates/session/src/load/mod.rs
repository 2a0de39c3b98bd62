//! A session's load (`tickscope run --load SPEC`): a load that runs for exactly the length of the measurement —
//! started and settled before the first wake-up, stopped and reaped after the last — and
//! recorded in the result (its command line, pid, exit, and the load it achieved per
//! window, see [`tickscope_report::sink::load`]).
//!
//! One concept per file: [`spec`] (the `--load` syntax), [`sources`] (the named sources and
//! their stress-ng arguments, one line each), [`child`] (the managed child process).

pub mod child;
pub mod sources;
pub mod spec;

use child::LoadChild;
use spec::LoadSpec;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tickscope_engine::setup::format_cpu_list;
use tickscope_report::load::LoadProcess;
use tickscope_report::sink::load::LoadSink;
use tickscope_report::sink::RunSink;

/// How long the load runs before the first wake-up: stress-ng starts its workers within
/// tens of milliseconds; a second lets them reach their steady state.
pub const SETTLE: Duration = Duration::from_secs(1);

/// The command that installs stress-ng on Debian and Ubuntu.
pub const INSTALL_HINT: &str = "apt-get install stress-ng";

/// A load asked for and not yet started.
#[derive(Debug, Clone)]
pub struct LoadRequest {
    /// The spec as given.
    pub text: String,
    /// The parsed spec.
    pub spec: LoadSpec,
    /// `--load-cpus`; empty: anywhere.
    pub cpus: Vec<usize>,
}

impl LoadRequest {
    /// A load of `text` (the `--load` syntax, see [`spec`]) on `cpus` (empty: anywhere).
    ///
    /// # Errors
    /// One sentence when `text` is not a load spec.
    pub fn new(text: &str, cpus: Vec<usize>) -> Result<LoadRequest, String> {
        Ok(LoadRequest {
            text: text.to_string(),
            spec: LoadSpec::parse(text)?,
            cpus,
        })
    }

    /// Whether this load runs stress-ng (which must then be on `PATH`, see
    /// [`find_in_path`]).
    pub fn needs_stress_ng(&self) -> bool {
        self.spec.needs_stress_ng()
    }
}

/// The first executable file called `name` in `$PATH`.
pub fn find_in_path(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

impl LoadRequest {
    /// The command line this load runs.
    pub fn argv(&self) -> Vec<String> {
        let temp = std::env::temp_dir().to_string_lossy().into_owned();
        let stress = |args: Vec<String>| {
            let mut v = vec!["stress-ng".to_string()];
            v.extend(args);
            v
        };
        match &self.spec {
            LoadSpec::Source { name, count } => {
                let src = sources::source(name).expect("parsed specs name a source");
                let n = count.unwrap_or(self.cpus.len() as u32);
                stress((src.args)(n, &temp))
            }
            LoadSpec::StressNg(args) => stress(args.clone()),
            LoadSpec::Exec(cmd) => vec!["/bin/sh".into(), "-c".into(), cmd.clone()],
        }
    }

    /// Starts the load and lets it settle for [`SETTLE`]; `say` gets one line saying what
    /// runs where (with its pid).
    ///
    /// # Errors
    /// One sentence when it cannot be started or ends before measuring starts (with its
    /// exit and the last line it wrote).
    pub fn start(
        &self,
        say: &dyn Fn(&str),
    ) -> Result<(LoadChild, Arc<Mutex<LoadProcess>>), String> {
        let argv = self.argv();
        let version = match self.spec.needs_stress_ng() {
            true => std::process::Command::new("stress-ng")
                .arg("--version")
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()),
            false => None,
        };
        let record = Arc::new(Mutex::new(LoadProcess {
            spec: self.text.clone(),
            version,
            cpus: self.cpus.clone(),
            settle_ns: SETTLE.as_nanos() as i64,
            ..LoadProcess::default()
        }));
        let mut child = LoadChild::spawn(&argv, &self.cpus, Arc::clone(&record))?;
        let about = match &self.spec {
            LoadSpec::Source { name, .. } => sources::source(name).map_or("", |s| s.about),
            _ => "",
        };
        say(&format!(
            "load: {}{}{} (pid {}, {}), settling for {} s",
            about,
            if about.is_empty() { "" } else { ": " },
            tickscope_report::escaped(&argv.join(" ")),
            child.pid(),
            match self.cpus.is_empty() {
                true => "on any CPU".to_string(),
                false => format!("on CPUs {}", format_cpu_list(&self.cpus)),
            },
            SETTLE.as_secs_f64()
        ));
        let until = Instant::now() + SETTLE;
        while Instant::now() < until {
            if let Some(how) = child.ended() {
                return Err(format!(
                    "the load '{}' ended before measuring started: {}",
                    tickscope_report::escaped(&argv.join(" ")),
                    tickscope_report::escaped(&how.to_string())
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok((child, record))
    }

    /// The sink that records the load achieved for this load.
    pub fn sink(&self, record: Arc<Mutex<LoadProcess>>) -> Box<dyn RunSink> {
        Box::new(LoadSink::new(record, self.cpus.clone()))
    }
}
