//! From flags as typed to a validated [`RunPlan`]: every check that can fail on bad input
//! happens here, with a message that says what was wrong and how to write it.

use crate::cli::RunArgs;
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::run::{PolicyRequest, RunConfig, AUTO_PRIORITY};
use tickscope_engine::setup::{allowed_cpus, format_cpu_list, parse_cpu_list, Policy};
use tickscope_engine::time::{ClockId, Nanos, NS_PER_SEC, NS_PER_US};
use tickscope_engine::wait::{self, Margin, MethodKind, MethodOptions};

/// Parses a duration with a unit (`250us`, `1ms`, `10s`, `5m`, `2h`, `1.5ms`) or a bare
/// number in `bare_unit_ns` units. Returns ns, > 0.
///
/// # Errors
/// One sentence naming `what` when the text is not a number with a known unit, is zero or
/// negative, or exceeds `i64::MAX` ns (about 292 years).
pub fn parse_duration(s: &str, what: &str, bare_unit_ns: Nanos) -> Result<Nanos, String> {
    let t = s.trim().replace('µ', "u");
    let err = || format!("{what} '{s}' is not a duration; write it like 250us, 1ms, 10s, 5m or 2h");
    if t.is_empty() {
        return Err(err());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| err())?;
    let unit_ns: f64 = match unit.trim() {
        "" => bare_unit_ns as f64,
        "ns" | "nsec" => 1.0,
        "us" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" | "hr" => 3600e9,
        _ => return Err(err()),
    };
    let ns = value * unit_ns;
    if !ns.is_finite() || ns >= i64::MAX as f64 {
        return Err(format!("{what} '{s}' is too large"));
    }
    let ns = ns.round() as Nanos;
    if ns <= 0 {
        return Err(format!("{what} must be greater than zero (got '{s}')"));
    }
    Ok(ns)
}

/// Parses the interval: a duration (bare number = µs, as in cyclictest `-i`) or a frequency
/// (`85Hz`, `1kHz`). Returns the period in ns, rounded to the nearest ns.
///
/// # Errors
/// One sentence when the text is neither a duration nor a frequency, or gives a period that
/// is not positive or shorter than 1 ns.
pub fn parse_interval(s: &str) -> Result<Nanos, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    for (suffix, mult) in [("khz", 1e3), ("hz", 1.0)] {
        if let Some(num) = lower.strip_suffix(suffix) {
            let f: f64 = num.trim().parse().map_err(|_| {
                format!("interval '{s}' is not a frequency; write it like 85Hz or 1kHz")
            })?;
            let hz = f * mult;
            if !(hz > 0.0 && hz.is_finite()) {
                return Err(format!(
                    "interval frequency must be greater than zero (got '{s}')"
                ));
            }
            if hz > 1e9 {
                return Err(format!("interval '{s}' is shorter than 1 ns"));
            }
            return Ok((1e9 / hz).round() as Nanos);
        }
    }
    parse_duration(t, "interval", NS_PER_US)
}

fn parse_int<T: std::str::FromStr>(s: &str, what: &str, range: &str) -> Result<T, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{what} '{s}' is not a whole number in {range}"))
}

/// Parses an optional count that must be at least 1.
fn parse_count<T: std::str::FromStr + PartialEq + From<u8>>(
    s: Option<&str>,
    what: &str,
    range: &str,
) -> Result<Option<T>, String> {
    s.map(|s| {
        let v: T = parse_int(s, what, range)?;
        if v == T::from(0) {
            Err(format!("{what} must be at least 1"))
        } else {
            Ok(v)
        }
    })
    .transpose()
}

/// Resolves the threads and their CPUs: `None` entries are unpinned threads.
fn resolve_cpus(
    threads: Option<&str>,
    affinity: Option<&str>,
) -> Result<Vec<Option<usize>>, String> {
    let allowed =
        allowed_cpus().map_err(|e| format!("cannot read the CPUs this process may use: {e}"))?;
    let listed = match affinity {
        Some(a) => {
            let cpus = parse_cpu_list(a).map_err(|e| format!("--affinity: {e}"))?;
            if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
                return Err(format!(
                    "--affinity: CPU {bad} is not present or not available to this process \
                     (available: {})",
                    format_cpu_list(&allowed)
                ));
            }
            Some(cpus)
        }
        None => None,
    };
    match (threads.map(str::trim), listed) {
        (Some("all"), list) => {
            let cpus = list.unwrap_or(allowed);
            Ok(cpus.into_iter().map(Some).collect())
        }
        (Some(n), list) => {
            let n: usize = parse_int(n, "--threads", "1..=4096 or 'all'")?;
            if !(1..=4096).contains(&n) {
                return Err(format!("--threads must be 1..=4096 or 'all' (got {n})"));
            }
            Ok(match list {
                Some(cpus) => (0..n).map(|k| Some(cpus[k % cpus.len()])).collect(),
                None => vec![None; n],
            })
        }
        (None, Some(cpus)) => Ok(cpus.into_iter().map(Some).collect()),
        (None, None) => Ok(vec![None]),
    }
}

/// Resolves the policy flags into a request.
fn resolve_policy(a: &RunArgs, period: Nanos) -> Result<PolicyRequest, String> {
    let priority = a
        .priority
        .as_deref()
        .map(|p| {
            let v: u8 = parse_int(p, "--priority", "1..=99")?;
            if (1..=99).contains(&v) {
                Ok(v)
            } else {
                Err(format!("--priority must be 1..=99 (got {v})"))
            }
        })
        .transpose()?;
    let nice = a
        .nice
        .as_deref()
        .map(|n| {
            let v: i32 = parse_int(n, "--nice", "-20..=19")?;
            if (-20..=19).contains(&v) {
                Ok(v)
            } else {
                Err(format!("--nice must be -20..=19 (got {v})"))
            }
        })
        .transpose()?;
    let name = a.policy.trim().to_ascii_lowercase();
    let rt = matches!(name.as_str(), "fifo" | "rr");
    if priority.is_some() && !(rt || name == "auto") {
        return Err(format!(
            "--priority applies to fifo and rr, not to policy {name}; use --nice for other and batch"
        ));
    }
    if nice.is_some() && !matches!(name.as_str(), "other" | "batch") {
        return Err(format!(
            "--nice applies to policies other and batch, not to {name}"
        ));
    }
    if a.deadline_runtime.is_some() && name != "deadline" {
        return Err("--deadline-runtime needs --policy deadline".into());
    }
    let prio = priority.unwrap_or(AUTO_PRIORITY);
    Ok(match name.as_str() {
        "auto" if priority.is_some() => PolicyRequest::Exact(Policy::Fifo { priority: prio }),
        "auto" => PolicyRequest::Auto,
        "other" => PolicyRequest::Exact(Policy::Other {
            nice: nice.unwrap_or(0),
        }),
        "batch" => PolicyRequest::Exact(Policy::Batch {
            nice: nice.unwrap_or(0),
        }),
        "idle" => PolicyRequest::Exact(Policy::Idle),
        "fifo" => PolicyRequest::Exact(Policy::Fifo { priority: prio }),
        "rr" => PolicyRequest::Exact(Policy::Rr { priority: prio }),
        "deadline" => {
            let runtime = match a.deadline_runtime.as_deref() {
                Some(r) => parse_duration(r, "--deadline-runtime", NS_PER_US)?,
                None => (period / 10).max(20 * NS_PER_US).min(period),
            };
            if runtime > period {
                return Err(format!(
                    "--deadline-runtime ({runtime} ns) must not exceed the interval ({period} ns)"
                ));
            }
            if runtime < 1024 {
                return Err("--deadline-runtime must be at least 1024ns (a kernel limit)".into());
            }
            PolicyRequest::Exact(Policy::Deadline {
                runtime_ns: runtime,
                deadline_ns: period,
                period_ns: period,
            })
        }
        other => {
            return Err(format!(
                "unknown policy '{other}'; use one of auto, other, batch, idle, fifo, rr, deadline"
            ))
        }
    })
}

/// Resolves the methods' tunables; a tunable for a method that does not run is an error.
fn resolve_method_options(a: &RunArgs, methods: &[MethodKind]) -> Result<MethodOptions, String> {
    let busy_sleep_every: Option<u32> = parse_count(
        a.busy_sleep_every.as_deref(),
        "--busy-sleep-every",
        "1..=4294967295",
    )?;
    if busy_sleep_every.is_some() && !methods.contains(&MethodKind::Busy) {
        return Err("--busy-sleep-every applies to --method busy".into());
    }
    let margin = match a.margin.trim() {
        "auto" => Margin::Auto,
        m => {
            if !methods.contains(&MethodKind::Hybrid) {
                return Err("--margin applies to --method hybrid".into());
            }
            Margin::Fixed(parse_duration(m, "--margin", NS_PER_US)?)
        }
    };
    Ok(MethodOptions {
        busy_sleep_every,
        margin,
    })
}

/// Parses `--method`: one name, a comma-separated list, or `all`. Returns the methods and
/// whether `all` was asked for.
fn parse_methods(s: &str) -> Result<(Vec<MethodKind>, bool), String> {
    if s.trim() == "all" {
        return Ok((MethodKind::ALL.to_vec(), true));
    }
    let mut methods = Vec::new();
    for name in s.split(',').map(str::trim) {
        let m = MethodKind::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = MethodKind::ALL.iter().map(|m| m.name()).collect();
            format!(
                "unknown method '{name}'; use one or more of {} (comma-separated), or all",
                names.join(", ")
            )
        })?;
        if methods.contains(&m) {
            return Err(format!("--method lists {name} twice"));
        }
        methods.push(m);
    }
    Ok((methods, false))
}

/// What `tickscope run` is asked to do: one configuration, run once per method and round.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The configuration of every run; its `method` is the first method's.
    pub config: RunConfig,
    /// The methods, in the order of the first round.
    pub methods: Vec<MethodKind>,
    /// Rounds over the methods (≥ 1).
    pub rounds: u32,
    /// With `--method all`: the methods left out because they cannot run with these
    /// settings, each with the reason.
    pub left_out: Vec<String>,
}

impl RunPlan {
    /// Whether this is a comparison (several methods or rounds) rather than a single run.
    pub fn is_comparison(&self) -> bool {
        self.methods.len() > 1 || self.rounds > 1
    }
}

/// Turns `tickscope run` flags into a run plan.
///
/// # Errors
/// One sentence naming the flag, what was wrong and the accepted form.
pub fn run_plan(a: &RunArgs) -> Result<RunPlan, String> {
    let (listed, all) = parse_methods(&a.method)?;
    let config = run_config(a, &listed)?;
    let rounds: u32 = parse_count(Some(&a.rounds), "--rounds", "1..=1000")?.unwrap_or(1);
    if rounds > 1000 {
        return Err(format!("--rounds must be 1..=1000 (got {rounds})"));
    }
    let threads = config.cpus.len();
    let mut methods = Vec::new();
    let mut left_out = Vec::new();
    for m in listed {
        match wait::check(m, config.clock, threads, config.period_ns)
            .map_err(|e| crate::engine_errors::sentence(&e))
        {
            Ok(()) => methods.push(m),
            Err(why) if all => {
                let prefix = format!("--method {}: ", m.name());
                let why = why.strip_prefix(&prefix).unwrap_or(&why);
                left_out.push(format!("--method all: leaving out {}: {why}", m.name()));
            }
            Err(why) => return Err(why),
        }
    }
    let Some(&first) = methods.first() else {
        return Err("--method all: no method can run with these settings".into());
    };
    Ok(RunPlan {
        config: RunConfig {
            method: first,
            ..config
        },
        methods,
        rounds,
        left_out,
    })
}

/// Turns `tickscope run` flags into the configuration every run of `methods` shares (its
/// `method` is set by [`run_plan`]).
fn run_config(a: &RunArgs, methods: &[MethodKind]) -> Result<RunConfig, String> {
    let period = parse_interval(&a.interval)?;
    let loops: Option<u64> = parse_count(a.loops.as_deref(), "--loops", "1..")?;
    let duration = match (&a.duration, loops) {
        (Some(d), _) => Some(parse_duration(d, "--duration", NS_PER_SEC)?),
        (None, Some(_)) => None,
        (None, None) => Some(tickscope_engine::run::defaults::DURATION_NS),
    };
    let clock =
        ClockId::from_name(a.clock.trim().to_ascii_lowercase().as_str()).ok_or_else(|| {
            format!(
                "unknown clock '{}'; use monotonic, realtime, boottime or tai",
                a.clock
            )
        })?;
    let overrun = match a.overrun.trim() {
        "skip" => OverrunPolicy::Skip,
        "catch-up" | "catchup" => OverrunPolicy::CatchUp,
        o => return Err(format!("unknown --overrun '{o}'; use skip or catch-up")),
    };
    let method_options = resolve_method_options(a, methods)?;
    let policy = resolve_policy(a, period)?;
    let cpus = resolve_cpus(a.threads.as_deref(), a.affinity.as_deref())?;
    if matches!(policy, PolicyRequest::Exact(Policy::Deadline { .. }))
        && cpus.iter().any(Option::is_some)
    {
        return Err(
            "SCHED_DEADLINE threads cannot be pinned to single CPUs (the kernel requires their \
             affinity to span the root domain); use -t N without -a or 'all'"
                .into(),
        );
    }
    let timer_slack: u64 = parse_int(&a.timer_slack, "--timer-slack", "1..")?;
    let (pm_qos_us, pm_qos_required) = match (&a.pm_qos, a.no_pm_qos) {
        (_, true) => (None, false),
        (Some(v), false) => {
            let us: i32 = parse_int(v, "--pm-qos", "0..=2000000000 (µs)")?;
            if us < 0 {
                return Err(format!("--pm-qos must be 0 or more µs (got {us})"));
            }
            (Some(us), true)
        }
        (None, false) => (Some(tickscope_engine::run::defaults::PM_QOS_US), false),
    };
    Ok(RunConfig {
        method: methods[0],
        method_options,
        clock,
        period_ns: period,
        loops,
        duration_ns: duration,
        policy,
        cpus,
        mlock: !a.no_mlock || a.mlock,
        timer_slack_ns: Some(timer_slack),
        pm_qos_us,
        pm_qos_required,
        overrun,
        ..RunConfig::new(period)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        assert_eq!(parse_interval("1ms"), Ok(1_000_000));
        assert_eq!(parse_interval("250us"), Ok(250_000));
        assert_eq!(parse_interval("250µs"), Ok(250_000));
        assert_eq!(parse_interval("1000"), Ok(1_000_000));
        assert_eq!(parse_interval("85Hz"), Ok(11_764_706));
        assert_eq!(parse_interval("1kHz"), Ok(1_000_000));
        assert_eq!(parse_interval("1.5ms"), Ok(1_500_000));
        for bad in ["0", "-1ms", "0Hz", "abc", "1 parsec", "", "1e400s"] {
            assert!(parse_interval(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s", "d", NS_PER_SEC), Ok(10 * NS_PER_SEC));
        assert_eq!(parse_duration("5m", "d", NS_PER_SEC), Ok(300 * NS_PER_SEC));
        assert_eq!(parse_duration("2h", "d", NS_PER_SEC), Ok(7200 * NS_PER_SEC));
        assert_eq!(parse_duration("3", "d", NS_PER_SEC), Ok(3 * NS_PER_SEC));
        assert!(parse_duration("soon", "d", NS_PER_SEC).is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(resolve_cpus(None, None), Ok(vec![None]));
        assert_eq!(resolve_cpus(Some("3"), None), Ok(vec![None; 3]));
        assert_eq!(resolve_cpus(Some("3"), Some("0")), Ok(vec![Some(0); 3]));
        assert_eq!(resolve_cpus(None, Some("0")), Ok(vec![Some(0)]));
        let all = resolve_cpus(Some("all"), None).unwrap();
        assert!(all.iter().all(Option::is_some) && !all.is_empty());
        assert!(resolve_cpus(None, Some("999"))
            .unwrap_err()
            .contains("not present"));
        assert!(resolve_cpus(Some("0"), None).is_err());
    }
}

#[cfg(test)]
mod method_tests {
    use super::*;

    #[test]
    fn method_lists() {
        assert_eq!(
            parse_methods("busy, hybrid"),
            Ok((vec![MethodKind::Busy, MethodKind::Hybrid], false))
        );
        assert_eq!(parse_methods("all"), Ok((MethodKind::ALL.to_vec(), true)));
        assert!(parse_methods("busy,busy").unwrap_err().contains("twice"));
        assert!(parse_methods("busy,")
            .unwrap_err()
            .contains("unknown method ''"));
    }
}
