//! The engine's errors in the command line's words: the settings an engine message names
//! become the flags that set them.

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

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
