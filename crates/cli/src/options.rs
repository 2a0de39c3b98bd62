//! From flags as typed to a validated [`RunPlan`]: every check that can fail on bad input
//! happens here, with a message that says what was wrong and how to write it.

use crate::cli::{RunArgs, PIN_EACH};
use tickscope_engine::grid::OverrunPolicy;
use tickscope_engine::run::{loops_span_ns, PolicyRequest, RunConfig, AUTO_PRIORITY, MAX_RUN_NS};
use tickscope_engine::setup::{allowed_cpus, format_cpu_list, parse_cpu_list, privileges, Policy};
use tickscope_engine::time::{ClockId, Nanos, NS_PER_SEC, NS_PER_US};
use tickscope_engine::wait::{self, Margin, MethodKind, MethodOptions};
use tickscope_report::units::ns_i;

pub use tickscope_session::text::{parse_duration, parse_interval};

/// Checks that the run's stop rules fit [`MAX_RUN_NS`] (100 years) with the period: the
/// duration itself and `loops` × `period`.
///
/// # Errors
/// One sentence naming the flag and the limit.
fn check_run_length(
    duration: Option<Nanos>,
    loops: Option<u64>,
    period: Nanos,
) -> Result<(), String> {
    if duration.is_some_and(|d| d > MAX_RUN_NS) {
        return Err("--duration must be at most 876000h (100 years)".into());
    }
    if let Some(l) = loops {
        if loops_span_ns(l, period).is_none_or(|ns| ns > MAX_RUN_NS) {
            return Err(format!(
                "--loops {l} at this interval would run longer than 100 years (the longest \
                 run accepted); use fewer loops"
            ));
        }
    }
    Ok(())
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

/// Resolves the threads and their CPUs: `None` entries are unpinned threads. A bare `-a`
/// ([`PIN_EACH`]) pins round-robin over the allowed CPUs; without `-t` that is one thread
/// on the first of them, as cyclictest's bare `-a` (rt-tests `cyclictest --help`, 2.4).
fn resolve_cpus(
    threads: Option<&str>,
    affinity: Option<&str>,
) -> Result<Vec<Option<usize>>, String> {
    let allowed =
        allowed_cpus().map_err(|e| format!("cannot read the CPUs this process may use: {e}"))?;
    let listed = match affinity {
        Some(PIN_EACH) if threads.is_none() => {
            return Ok(allowed.first().map(|c| vec![Some(*c)]).unwrap_or_default())
        }
        Some(PIN_EACH) => Some(allowed.clone()),
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

/// An optional whole number given by `flag` that must be in `range` (`shown` in messages).
///
/// # Errors
/// One sentence naming the flag when the text is not a whole number or is out of range.
fn in_range<T>(
    text: Option<&str>,
    flag: &str,
    range: std::ops::RangeInclusive<T>,
    shown: &str,
) -> Result<Option<T>, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    text.map(|t| {
        let v: T = parse_int(t, flag, shown)?;
        match range.contains(&v) {
            true => Ok(v),
            false => Err(format!("{flag} must be {shown} (got {v})")),
        }
    })
    .transpose()
}

/// SCHED_DEADLINE for `period`: the runtime given (`--deadline-runtime`) or a tenth of the
/// period (at least 20 µs, at most the period); the deadline and period are the interval.
///
/// # Errors
/// One sentence when the runtime is malformed, exceeds the interval, or is below the
/// kernel's 1024 ns.
fn deadline(runtime: Option<&str>, period: Nanos) -> Result<PolicyRequest, String> {
    let runtime = match runtime {
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
    Ok(PolicyRequest::Exact(Policy::Deadline {
        runtime_ns: runtime,
        deadline_ns: period,
        period_ns: period,
    }))
}

/// Resolves the policy flags into a request.
fn resolve_policy(a: &RunArgs, period: Nanos) -> Result<PolicyRequest, String> {
    let priority: Option<u8> = in_range(a.priority.as_deref(), "--priority", 1..=99, "1..=99")?;
    let nice: Option<i32> = in_range(a.nice.as_deref(), "--nice", -20..=19, "-20..=19")?;
    let name = a.policy.trim().to_ascii_lowercase();
    let rt = matches!(name.as_str(), "fifo" | "rr");
    if priority.is_some() && !(rt || name == "auto") {
        return Err(format!(
            "--priority applies to fifo and rr, not to policy {name}; use --nice for other and batch"
        ));
    }
    if nice.is_some() && !matches!(name.as_str(), "other" | "normal" | "batch") {
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
        // cyclictest's name for SCHED_OTHER (`--policy normal`).
        "other" | "normal" => PolicyRequest::Exact(Policy::Other {
            nice: nice.unwrap_or(0),
        }),
        "batch" => PolicyRequest::Exact(Policy::Batch {
            nice: nice.unwrap_or(0),
        }),
        "idle" => PolicyRequest::Exact(Policy::Idle),
        "fifo" => PolicyRequest::Exact(Policy::Fifo { priority: prio }),
        "rr" => PolicyRequest::Exact(Policy::Rr { priority: prio }),
        "deadline" => deadline(a.deadline_runtime.as_deref(), period)?,
        other => {
            return Err(format!(
                "unknown policy '{other}'; use one of auto, other (or normal), batch, idle, fifo, rr, deadline"
            ))
        }
    })
}

/// Resolves the methods' tunables; a tunable for a method that does not run is an error, and
/// so is a fixed `--margin` not shorter than the period (`period`, ns) — it would make the
/// hybrid a busy-wait; the C API refuses a margin above the period too.
fn resolve_method_options(
    a: &RunArgs,
    methods: &[MethodKind],
    period: Nanos,
) -> Result<MethodOptions, String> {
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
            let margin = parse_duration(m, "--margin", NS_PER_US)?;
            if margin >= period {
                return Err(format!(
                    "--margin {m} is not shorter than the interval ({}): the hybrid would spin \
                     the whole period; use a smaller margin, or --method busy",
                    ns_i(period)
                ));
            }
            Margin::Fixed(margin)
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

/// The CPUs this process may use, when the measuring threads `cpus` (one entry per thread,
/// `None` = unpinned) can hold every one of them at once; `None` when one stays free.
///
/// # Errors
/// One sentence when the CPUs this process may use cannot be read.
fn holds_every_cpu(cpus: &[Option<usize>]) -> Result<Option<Vec<usize>>, String> {
    let allowed =
        allowed_cpus().map_err(|e| format!("cannot read the CPUs this process may use: {e}"))?;
    let unpinned = cpus.iter().filter(|c| c.is_none()).count();
    let uncovered = allowed
        .iter()
        .filter(|c| !cpus.contains(&Some(**c)))
        .count();
    Ok((uncovered <= unpinned).then_some(allowed))
}

/// The policy the measuring threads will run under: `auto` is fifo where the process may set
/// it (CAP_SYS_NICE, or RLIMIT_RTPRIO ≥ [`AUTO_PRIORITY`]; sched(7)), else other.
fn expected_policy(request: &PolicyRequest) -> Policy {
    match *request {
        PolicyRequest::Exact(p) => p,
        PolicyRequest::Auto
            if privileges::has_cap_sys_nice()
                || privileges::rtprio_limit() >= u64::from(AUTO_PRIORITY) =>
        {
            Policy::Fifo {
                priority: AUTO_PRIORITY,
            }
        }
        PolicyRequest::Auto => Policy::Other { nice: 0 },
    }
}

/// The share of a CPU above which real-time threads spinning on every CPU need
/// `--allow-rt-spin-all-cpus`: more than half of each CPU — `busy` (all of it, until RT
/// throttling stops it) or `hybrid` with a fixed margin above half the period (the auto
/// margin never exceeds half).
const RT_SPIN_CONFIRM_SHARE: f64 = 0.5;

/// Refuses `kind` when its threads, holding every CPU in `cpus` (the CPUs this process may
/// use), would spin more than [`RT_SPIN_CONFIRM_SHARE`] of each at a real-time policy: the
/// message says what that leaves every other task ([`wait::starvation`]) and how to confirm.
///
/// # Errors
/// `--method NAME: spinning … would leave every other task …; … --allow-rt-spin-all-cpus`.
fn rt_spin_refusal(kind: MethodKind, cfg: &RunConfig, cpus: &[usize]) -> Result<(), String> {
    let policy = expected_policy(&cfg.policy);
    let (rt_runtime, rt_period) = (privileges::rt_runtime_us(), privileges::rt_period_us());
    let Some(s) = wait::starvation(
        kind,
        &cfg.method_options,
        &policy,
        cfg.period_ns,
        rt_runtime,
        rt_period,
    ) else {
        return Ok(());
    };
    if s.held_share <= RT_SPIN_CONFIRM_SHARE {
        return Ok(());
    }
    let spinning = match wait::spin_share(kind, &cfg.method_options, cfg.period_ns) {
        Some(share) if share < 1.0 => format!("spinning {:.0} % of every period", 100.0 * share),
        _ => "spinning".to_string(),
    };
    let left = match (s.longest_wait_ns, s.throttling) {
        (None, _) => format!(
            "no CPU time until the run ends (RT throttling is off: sched_rt_runtime_us {})",
            rt_runtime.map_or("unreadable".into(), |r| r.to_string())
        ),
        (Some(wait), Some((r, p))) => format!(
            "only {:.1} % of each CPU — what RT throttling gives back (sched_rt_runtime_us {r} \
             of sched_rt_period_us {p}) — in waits of up to {}",
            100.0 * s.others_share,
            ns_i(wait)
        ),
        (Some(wait), None) => format!(
            "only {:.1} % of each CPU, in waits of up to {}",
            100.0 * s.others_share,
            ns_i(wait)
        ),
    };
    Err(format!(
        "--method {}: {spinning} under {} on every CPU this process may use ({}) would leave \
         every other task there (shells, sshd, kernel workers) {left}; leave a CPU free \
         (-a, -t) or confirm with --allow-rt-spin-all-cpus",
        kind.name(),
        policy.name(),
        format_cpu_list(cpus),
    ))
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
    let mut config = run_config(a, &listed)?;
    if let Some(script) = &a.debug_mock {
        config.backend = mock_backend(script)?;
    }
    let rounds: u32 = parse_count(Some(&a.rounds), "--rounds", "1..=1000")?.unwrap_or(1);
    if rounds > 1000 {
        return Err(format!("--rounds must be 1..=1000 (got {rounds})"));
    }
    let mut methods = Vec::new();
    let mut left_out = Vec::new();
    let every_cpu = holds_every_cpu(&config.cpus)?;
    // The engine says which methods can run with these settings; the CLI adds its own
    // safety rule (no real-time spinning on every CPU without the flag that allows it).
    let (_, cannot) = tickscope_engine::schedule::runnable(&config, &listed);
    for m in listed {
        let limit = cannot.iter().find(|c| c.0 == m);
        let checked = match limit {
            Some((_, why)) => Err(crate::engine_errors::worded(why)),
            None => Ok(()),
        }
        .and_then(|()| match (&every_cpu, a.allow_rt_spin_all_cpus) {
            (Some(cpus), false) => rt_spin_refusal(m, &config, cpus),
            _ => Ok(()),
        });
        match checked {
            Ok(()) => methods.push(m),
            Err(why) if all => {
                let prefix = format!("--method {}: ", m.name());
                let why = why.strip_prefix(&prefix).unwrap_or(&why);
                left_out.push(format!("--method all: leaving out {}: {why}", m.name()));
            }
            Err(why) => return Err(why),
        }
    }
    let Some(first) = tickscope_engine::schedule::schedule(&methods, rounds)
        .first()
        .copied()
    else {
        return Err("--method all: no method can run with these settings".into());
    };
    Ok(RunPlan {
        config: first.config(&config),
        methods,
        rounds,
        left_out,
    })
}

/// The hidden `--debug-mock LATENCIES`: virtual time with this latency script.
///
/// # Errors
/// One sentence when a latency is not a duration.
fn mock_backend(script: &str) -> Result<tickscope_engine::run::Backend, String> {
    let latencies = script
        .split(',')
        .map(|l| parse_duration(l, "--debug-mock latency", NS_PER_US))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(tickscope_engine::run::Backend::Mock { latencies })
}

/// `--timer-slack`, ns: at most the interval.
///
/// # Errors
/// One sentence when it is not a whole number or is longer than `period`.
fn timer_slack(text: &str, period: Nanos) -> Result<u64, String> {
    let timer_slack: u64 = parse_int(text, "--timer-slack", "1..")?;
    if timer_slack > period as u64 {
        return Err(format!(
            "--timer-slack {timer_slack} ns is longer than the interval ({}): the kernel may \
             delay each wake-up by up to the slack, so periods would pass unmeasured and -D \
             would be overshot; use at most the interval (default 1)",
            ns_i(period)
        ));
    }
    Ok(timer_slack)
}

/// `--pm-qos` / `--no-pm-qos`: the latency limit to hold, µs, and whether a failure to
/// hold it is an error (only when given explicitly); by default 0 µs if allowed.
///
/// # Errors
/// One sentence when the value is not a whole number of µs ≥ 0.
fn pm_qos(text: Option<&str>, off: bool) -> Result<(Option<i32>, bool), String> {
    Ok(match (text, off) {
        (_, true) => (None, false),
        (Some(v), false) => {
            let us: i32 = parse_int(v, "--pm-qos", "0..=2000000000 (µs)")?;
            if us < 0 {
                return Err(format!("--pm-qos must be 0 or more µs (got {us})"));
            }
            (Some(us), true)
        }
        (None, false) => (Some(tickscope_engine::run::defaults::PM_QOS_US), false),
    })
}

/// cyclictest's `-d`: only 0 (every thread the same interval).
///
/// # Errors
/// One sentence for any other distance.
fn check_distance(d: &str) -> Result<(), String> {
    match parse_int::<u64>(d, "--distance", "0").ok() {
        Some(0) => Ok(()),
        _ => Err(format!(
            "--distance {d}: every tickscope thread uses the same interval; only \
             cyclictest's -d 0 is accepted (run one tickscope per interval instead)"
        )),
    }
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
    check_run_length(duration, loops, period)?;
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
    let method_options = resolve_method_options(a, methods, period)?;
    let policy = resolve_policy(a, period)?;
    if let Some(d) = &a.distance {
        check_distance(d)?;
    }
    // cyclictest's -S: one pinned thread per CPU, the same as -t all (-a may name the CPUs).
    let threads = match a.smp {
        true => Some("all"),
        false => a.threads.as_deref(),
    };
    let cpus = resolve_cpus(threads, a.affinity.as_deref())?;
    if matches!(policy, PolicyRequest::Exact(Policy::Deadline { .. }))
        && cpus.iter().any(Option::is_some)
    {
        return Err(
            "SCHED_DEADLINE threads cannot be pinned to single CPUs (the kernel requires their \
             affinity to span the root domain); use -t N without -a or 'all'"
                .into(),
        );
    }
    let timer_slack = timer_slack(&a.timer_slack, period)?;
    let (pm_qos_us, pm_qos_required) = pm_qos(a.pm_qos.as_deref(), a.no_pm_qos)?;
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
    use tickscope_engine::run::MAX_PERIOD_NS;

    /// The message `tickscope run ARGS` stops with before measuring.
    fn refusal(args: &str) -> String {
        use clap::Parser;
        let argv = ["tickscope", "run"]
            .into_iter()
            .chain(args.split_whitespace());
        let crate::cli::Command::Run(a) = crate::cli::Cli::try_parse_from(argv).unwrap().command
        else {
            unreachable!("parsed as run")
        };
        run_plan(&a).unwrap_err()
    }

    /// The messages users saw before the engine's errors became kinds (snapshot taken on
    /// this branch before the change, commit 8b1be6f), word for word.
    #[test]
    fn refusals_before_a_run_keep_their_wording() {
        let cases = [
            (
                "--policy deadline -a 0",
                "SCHED_DEADLINE threads cannot be pinned to single CPUs (the kernel requires \
                 their affinity to span the root domain); use -t N without -a or 'all'",
            ),
            (
                "--policy deadline --deadline-runtime 5ms",
                "--deadline-runtime (5000000 ns) must not exceed the interval (1000000 ns)",
            ),
            (
                "--method nanosleep --clock realtime",
                "--method nanosleep: nanosleep(2) takes no clock and always runs on \
                 CLOCK_MONOTONIC, so it cannot measure CLOCK_REALTIME; use --clock monotonic \
                 (nanosleep-abs and nanosleep-rel sleep on any clock)",
            ),
            (
                "--method timerfd --clock tai",
                "--method timerfd: timerfd_create(2) does not accept CLOCK_TAI; use --clock \
                 monotonic, realtime or boottime",
            ),
            (
                "--method itimer -t 2",
                "--method itimer: setitimer(ITIMER_REAL) is one timer per process and its \
                 SIGALRM goes to the whole process, so it can drive only one measuring thread \
                 (asked for 2); use -t 1, or --method posix-timer, which aims a timer at each \
                 thread",
            ),
            (
                "--method epoll,itimer -t 2",
                "--method itimer: setitimer(ITIMER_REAL) is one timer per process and its \
                 SIGALRM goes to the whole process, so it can drive only one measuring thread \
                 (asked for 2); use -t 1, or --method posix-timer, which aims a timer at each \
                 thread",
            ),
            (
                "--method itimer -i 85Hz",
                "--method itimer: setitimer(2) takes its interval in whole µs (a struct \
                 timeval) and 11764706 ns is not; choose an interval of whole µs",
            ),
            ("-l 0", "--loops must be at least 1"),
            (
                "--busy-sleep-every 3",
                "--busy-sleep-every applies to --method busy",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(refusal(args), want, "tickscope run {args}");
        }
    }

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
    fn intervals_beyond_one_hour_are_refused_at_parse_time() {
        assert_eq!(parse_interval("1h"), Ok(MAX_PERIOD_NS));
        assert_eq!(parse_interval("3600000000000ns"), Ok(MAX_PERIOD_NS));
        for bad in [
            "1e-300Hz",
            "0.0000000001Hz",
            "2562047.7h",
            "3600000000001ns",
            "61m",
            "0.0002Hz",
            "infHz",
            "NaNHz",
            "99999999999999999999999h",
        ] {
            let e = parse_interval(bad).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
            if !bad.starts_with("inf") && !bad.starts_with("NaN") {
                assert!(e.contains("longer than 1h"), "{bad}: {e}");
            }
        }
    }

    #[test]
    fn the_interval_message_names_every_form() {
        for bad in ["fast", "fastHz", "1 parsec", ""] {
            let e = parse_interval(bad).unwrap_err();
            assert!(e.contains("250us, 1ms, 85Hz or 1000 (µs)"), "{bad:?}: {e}");
        }
        let e = parse_duration("soon", "--duration", NS_PER_SEC).unwrap_err();
        assert!(e.contains("10s, 1m30s, 2h or 1d"), "{e}");
    }

    #[test]
    fn run_length_limits() {
        assert_eq!(
            check_run_length(Some(MAX_RUN_NS), None, MAX_PERIOD_NS),
            Ok(())
        );
        assert!(check_run_length(Some(MAX_RUN_NS + 1), None, 1).is_err());
        let most = (MAX_RUN_NS / MAX_PERIOD_NS) as u64;
        assert_eq!(check_run_length(None, Some(most), MAX_PERIOD_NS), Ok(()));
        assert!(check_run_length(None, Some(most + 1), MAX_PERIOD_NS).is_err());
        assert!(check_run_length(None, Some(u64::MAX), 1).is_err());
    }

    /// `tickscope run ARGS` parsed into a plan.
    fn plan(args: &[&str]) -> Result<RunPlan, String> {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["tickscope", "run"].iter().chain(args).copied())
            .map_err(|e| e.to_string())?;
        match cli.command {
            crate::cli::Command::Run(a) => run_plan(&a),
            _ => unreachable!(),
        }
    }

    #[test]
    fn cyclictests_bare_t_bare_a_and_smp() {
        let allowed = allowed_cpus().unwrap();
        let every: Vec<Option<usize>> = allowed.iter().copied().map(Some).collect();
        let cpus = |args: &[&str]| plan(args).unwrap().config.cpus;
        assert_eq!(cpus(&["-S"]), every, "-S: one pinned thread per CPU");
        assert_eq!(cpus(&["-t"]), every, "bare -t: all");
        assert_eq!(cpus(&["-t", "-a"]), every);
        assert_eq!(
            cpus(&["-a"]),
            vec![Some(allowed[0])],
            "bare -a: one pinned thread"
        );
        assert_eq!(cpus(&["-a", "-t", "3"]).len(), 3);
        assert!(cpus(&["-a", "-t", "3"]).iter().all(Option::is_some));
        assert_eq!(cpus(&["-t", "2"]), vec![None, None]);
        assert!(plan(&["-n", "-d", "0", "-y", "other"]).is_ok());
        assert!(plan(&["-d", "1"]).unwrap_err().contains("-d 0"));
    }

    #[test]
    fn timer_slack_at_most_the_interval() {
        assert!(plan(&["-i", "1ms", "--timer-slack", "1000000"]).is_ok());
        let e = plan(&["-i", "1ms", "--timer-slack", "1000001"]).unwrap_err();
        assert!(
            e.starts_with("--timer-slack 1000001 ns is longer than the interval"),
            "{e}"
        );
        assert!(plan(&["--timer-slack", "18446744073709551615"]).is_err());
    }

    #[test]
    fn margin_shorter_than_the_interval() {
        let ok = plan(&["--method", "hybrid", "-i", "1ms", "--margin", "999us"]).unwrap();
        assert_eq!(ok.config.method_options.margin, Margin::Fixed(999_000));
        for m in ["1ms", "2ms"] {
            let e = plan(&["--method", "hybrid", "-i", "1ms", "--margin", m]).unwrap_err();
            assert!(e.contains("not shorter than the interval"), "{e}");
        }
    }

    #[test]
    fn which_threads_hold_every_cpu() {
        let allowed = allowed_cpus().unwrap();
        let n = allowed.len();
        let all: Vec<Option<usize>> = allowed.iter().copied().map(Some).collect();
        assert_eq!(holds_every_cpu(&all), Ok(Some(allowed.clone())));
        assert_eq!(holds_every_cpu(&vec![None; n]), Ok(Some(allowed.clone())));
        if n > 1 {
            assert_eq!(holds_every_cpu(&all[1..]), Ok(None));
            assert_eq!(holds_every_cpu(&vec![None; n - 1]), Ok(None));
            // The same CPU twice still leaves one free.
            assert_eq!(holds_every_cpu(&vec![all[0]; n]), Ok(None));
        }
    }

    #[test]
    fn rt_spinning_on_every_cpu_needs_the_flag() {
        let spin = ["--policy", "fifo", "--method", "busy", "-t", "all"];
        let e = plan(&spin).unwrap_err();
        assert!(
            e.starts_with("--method busy: spinning under fifo on every CPU"),
            "{e}"
        );
        assert!(
            e.contains("--allow-rt-spin-all-cpus") && !e.contains('\n'),
            "{e}"
        );
        let mut confirmed = spin.to_vec();
        confirmed.push("--allow-rt-spin-all-cpus");
        assert!(plan(&confirmed).is_ok());
        // Not real-time, not spinning, or a CPU left free: no confirmation needed.
        assert!(plan(&["--policy", "other", "--method", "busy", "-t", "all"]).is_ok());
        assert!(plan(&["--policy", "fifo", "--method", "hybrid", "-t", "all"]).is_ok());
        let half = ["--method", "hybrid", "--margin", "500us", "-i", "1ms"];
        assert!(plan(&[&half[..], &["--policy", "fifo", "-t", "all"]].concat()).is_ok());
        // SCHED_DEADLINE holds each CPU for its runtime only (a tenth of the period here).
        let n = allowed_cpus().unwrap().len().to_string();
        assert!(plan(&["--policy", "deadline", "--method", "busy", "-t", &n]).is_ok());
        if allowed_cpus().unwrap().len() > 1 {
            assert!(plan(&["--policy", "fifo", "--method", "busy", "-t", "1"]).is_ok());
        }
        // --method all leaves the spinning method out, with the reason.
        let p = plan(&["--policy", "rr", "--method", "all", "-t", "all"]).unwrap();
        assert!(!p.methods.contains(&MethodKind::Busy));
        assert!(p
            .left_out
            .iter()
            .any(|l| l.starts_with("--method all: leaving out busy: spinning under rr")));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s", "d", NS_PER_SEC), Ok(10 * NS_PER_SEC));
        assert_eq!(parse_duration("5m", "d", NS_PER_SEC), Ok(300 * NS_PER_SEC));
        assert_eq!(parse_duration("2h", "d", NS_PER_SEC), Ok(7200 * NS_PER_SEC));
        assert_eq!(parse_duration("3", "d", NS_PER_SEC), Ok(3 * NS_PER_SEC));
        assert!(parse_duration("soon", "d", NS_PER_SEC).is_err());
        // cyclictest's forms: days, and units combined.
        assert_eq!(
            parse_duration("1d", "d", NS_PER_SEC),
            Ok(86_400 * NS_PER_SEC)
        );
        assert_eq!(
            parse_duration("1m30s", "d", NS_PER_SEC),
            Ok(90 * NS_PER_SEC)
        );
        assert_eq!(
            parse_duration("1h 30m", "d", NS_PER_SEC),
            Ok(5400 * NS_PER_SEC)
        );
        assert_eq!(parse_duration("1.5ms", "d", NS_PER_SEC), Ok(1_500_000));
        for bad in ["1m30", "30 s5", "1x", "m", "1m-5s"] {
            assert!(parse_duration(bad, "d", NS_PER_SEC).is_err(), "{bad}");
        }
    }

    #[test]
    fn normal_is_cyclictests_name_for_other() {
        assert_eq!(
            plan(&["--policy", "normal"]).unwrap().config.policy,
            plan(&["--policy", "other"]).unwrap().config.policy
        );
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
