//! The engine's errors in the command line's words: the settings an engine message names
//! become the flags that set them ("method itimer" → "--method itimer", "turn memory locking
//! off" → "pass --no-mlock"). See `tickscope_engine::error`.

use tickscope_engine::error::{Error, Piece, Setting, Words};

/// The command line's words for the engine's settings: its flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags;

/// The one instance, for [`tickscope_engine::error::set_words`].
pub static FLAGS: Flags = Flags;

impl Words for Flags {
    fn word(&self, piece: &Piece) -> Option<String> {
        let (setting, value) = match piece {
            Piece::Set(s, v) => (*s, v.as_deref()),
            Piece::Off(Setting::MemoryLock) => return Some("pass --no-mlock".into()),
            Piece::Off(Setting::PmQos) => return Some("pass --no-pm-qos".into()),
            _ => return None,
        };
        let flag = match (setting, value) {
            (Setting::Threads, Some("all")) => "--threads",
            (Setting::Threads, Some(_)) => "-t",
            (Setting::Threads, None) => "-t/--threads",
            (Setting::Affinity, None) => "-a/--affinity",
            (Setting::Affinity, Some(_)) => "-a",
            (Setting::Method, _) => "--method",
            (Setting::Clock, _) => "--clock",
            (Setting::Interval, _) => "--interval",
            (Setting::Policy, _) => "--policy",
            (Setting::Nice, _) => "--nice",
            (Setting::DeadlineRuntime, _) => "--deadline-runtime",
            (Setting::MemoryLock, _) => "--mlock",
            (Setting::PmQos, _) => "--pm-qos",
            (Setting::TimerSlack, _) => "--timer-slack",
            (Setting::Loops, _) => "--loops",
            (Setting::Duration | Setting::Budget, _) => "--duration",
            (Setting::BusySleepEvery, _) => "--busy-sleep-every",
            _ => return None,
        };
        Some(match value {
            Some(v) => format!("{flag} {v}"),
            None => flag.to_string(),
        })
    }
}

/// Makes the engine word its notes (memory lock, PM QoS, throttling) with these flags. Call
/// once, before the first run.
pub fn install() {
    tickscope_engine::error::set_words(&FLAGS);
}

/// One sentence for an engine error, with flags.
pub fn sentence(e: &Error) -> String {
    e.describe(&FLAGS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::exit::Failure;
    use clap::Parser;
    use std::io;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use tickscope_engine::run::{run_on_mock, MockRun, RunConfig};
    use tickscope_engine::setup::{privileges, Policy};
    use tickscope_engine::wait::{self, MethodKind, MethodOptions};

    /// The message and exit status class of an engine error, as the command line shows it.
    fn shown(e: Error) -> String {
        match Failure::from(e) {
            Failure::Usage(m) => format!("usage: {m}"),
            Failure::Runtime(m) => format!("runtime: {m}"),
            Failure::Interrupted(m) => format!("interrupted: {m}"),
        }
    }

    #[test]
    fn engine_refusals_of_a_configuration_name_the_flags() {
        let stop = Arc::new(AtomicBool::new(false));
        let mock = MockRun::default();
        let run = |cfg: RunConfig| run_on_mock(&cfg, &stop, &mut |_| {}, &mock).unwrap_err();
        let loops = RunConfig {
            loops: Some(0),
            ..RunConfig::new(1_000_000)
        };
        assert_eq!(shown(run(loops)), "usage: --loops must be at least 1");
        let duration = RunConfig {
            duration_ns: Some(0),
            ..RunConfig::new(1_000_000)
        };
        assert_eq!(shown(run(duration)), "usage: --duration must be positive");
        let itimer = RunConfig {
            method: MethodKind::Itimer,
            cpus: vec![None; 2],
            ..RunConfig::new(1_000_000)
        };
        assert_eq!(
            shown(run(itimer)),
            format!("usage: {}", refusal("--method itimer -t 2"))
        );
    }

    #[test]
    fn setting_errors_name_the_flags() {
        let e = privileges::pm_qos_error(io::Error::from_raw_os_error(libc::EACCES));
        assert_eq!(
            shown(e),
            "usage: cannot hold /dev/cpu_dma_latency: permission denied (the device is \
             root-only); run as root or pass --no-pm-qos"
        );
        let deadline = Policy::Deadline {
            runtime_ns: 1,
            deadline_ns: 2,
            period_ns: 2,
        };
        let e = privileges::policy_error(&deadline, io::Error::from_raw_os_error(libc::EBUSY));
        assert_eq!(
            shown(e),
            "usage: cannot set SCHED_DEADLINE runtime 1 ns / period 2 ns: SCHED_DEADLINE \
             admission control refused the bandwidth: the runtime/period of all deadline \
             threads must fit in sched_rt_runtime_us/sched_rt_period_us per CPU; lower \
             --deadline-runtime or use fewer threads"
        );
        let e = wait::setup_error(
            MethodKind::Timerfd,
            io::Error::from_raw_os_error(libc::ENOSYS),
        );
        assert_eq!(
            shown(e),
            "usage: method timerfd is not supported by this kernel: timerfd_create(2) is not \
             implemented (ENOSYS); choose another --method (nanosleep-abs works on every \
             kernel)"
        );
        let mlock = privileges::explain_mlock_error(&io::Error::from_raw_os_error(libc::EPERM));
        let mlock = mlock.render(&FLAGS);
        assert!(
            mlock.starts_with("cannot lock memory")
                && (mlock.ends_with(", or pass --no-mlock") || !mlock.contains("ulimit")),
            "{mlock}"
        );
        let e = Error::os(
            "cannot start measuring thread 0",
            io::Error::from_raw_os_error(libc::EAGAIN),
        );
        assert!(shown(e).starts_with("runtime: cannot start measuring thread 0: "));
    }

    #[test]
    fn notes_written_during_a_run_name_the_flags() {
        install();
        let o = MethodOptions {
            busy_sleep_every: Some(1000),
            ..MethodOptions::default()
        };
        let fifo = Policy::Fifo { priority: 90 };
        let w = wait::throttle_warning(
            MethodKind::Busy,
            &o,
            &fifo,
            1_000_000,
            Some(950_000),
            Some(1_000_000),
        )
        .unwrap();
        assert!(w.contains("--busy-sleep-every does not prevent it"), "{w}");
        let pm = privileges::explain_pm_qos_error(&io::Error::from_raw_os_error(libc::EACCES));
        assert!(pm.to_string().contains("--no-pm-qos"));
    }

    /// The message `tickscope run ARGS` stops with before measuring.
    fn refusal(args: &str) -> String {
        let argv = std::iter::once("tickscope")
            .chain(std::iter::once("run"))
            .chain(args.split_whitespace());
        let Command::Run(a) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!("parsed as run")
        };
        crate::options::run_plan(&a).unwrap_err()
    }

    #[test]
    fn methods_left_out_of_all_keep_their_wording() {
        let argv = [
            "tickscope",
            "run",
            "--method",
            "all",
            "--clock",
            "tai",
            "-t",
            "2",
        ];
        let Command::Run(a) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!("parsed as run")
        };
        let plan = crate::options::run_plan(&a).unwrap();
        let got = plan.left_out.join("\n");
        assert_left_out_wording(&got);
    }

    /// Compares with the wording of today (before the engine's errors became kinds).
    fn assert_left_out_wording(got: &str) {
        let want = "\
--method all: leaving out nanosleep: nanosleep(2) takes no clock and always runs on CLOCK_MONOTONIC, so it cannot measure CLOCK_TAI; use --clock monotonic (nanosleep-abs and nanosleep-rel sleep on any clock)
--method all: leaving out timerfd: timerfd_create(2) does not accept CLOCK_TAI; use --clock monotonic, realtime or boottime
--method all: leaving out itimer: setitimer(2) takes no clock and always runs on CLOCK_MONOTONIC, so it cannot measure CLOCK_TAI; use --clock monotonic (nanosleep-abs and nanosleep-rel sleep on any clock)
--method all: leaving out poll: ppoll(2) takes no clock and always runs on CLOCK_MONOTONIC, so it cannot measure CLOCK_TAI; use --clock monotonic (nanosleep-abs and nanosleep-rel sleep on any clock)
--method all: leaving out select: pselect(2) takes no clock and always runs on CLOCK_MONOTONIC, so it cannot measure CLOCK_TAI; use --clock monotonic (nanosleep-abs and nanosleep-rel sleep on any clock)
--method all: leaving out epoll: epoll_wait(2) takes no clock and always runs on CLOCK_MONOTONIC, so it cannot measure CLOCK_TAI; use --clock monotonic (nanosleep-abs and nanosleep-rel sleep on any clock)";
        assert_eq!(got, want);
    }

    /// Today's messages, word for word (snapshot taken before the engine's errors became
    /// kinds; see issue 10 §4).
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
}
