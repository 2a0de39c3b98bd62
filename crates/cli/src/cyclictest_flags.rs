//! cyclictest's flags that tickscope spells differently, and what to write instead.
//!
//! A cyclictest user's fingers type `-x`, `-c 1` or `-v`; clap would only say "unexpected
//! argument". (`-S`, `-n`, `-b`, `-y`, bare `-t` and bare `-a` mean in `tickscope run` what
//! they mean in cyclictest.) Each row names the cyclictest flag (short and long forms, as rt-tests
//! `cyclictest --help` prints them) and tickscope's equivalent, or why there is none.

/// (cyclictest flags, what tickscope does instead).
const FLAGS: &[(&[&str], &str)] = &[
    (&["-x", "--posix_timers"], "use '--method posix-timer'"),
    (&["-r", "--relative"], "use '--method nanosleep-rel'"),
    (&["-s", "--system"], "use '--method nanosleep' (sys_nanosleep, relative)"),
    (&["-c", "--clock"], "use '--clock monotonic|realtime|boottime|tai' (cyclictest -c 0 is monotonic, -c 1 realtime)"),
    (&["--latency"], "use '--pm-qos US' (held on /dev/cpu_dma_latency for the run)"),
    (&["--default-system"], "use '--no-pm-qos' to leave /dev/cpu_dma_latency alone"),
    (&["-v", "--verbose"], "use '--samples -' (every wake-up as CSV on standard output)"),
    (&["-N", "--nsecs"], "tickscope reports nanoseconds always; the --samples CSV and --json are in ns"),
    (&["--tracemark"], "use '--on-late US:mark' (a trace_marker line for each late wake-up)"),
    (&["--priospread"], "tickscope's threads all use the priority of -p"),
    (&["--mainaffinity"], "tickscope's collector thread is not pinned; pin the whole process with 'taskset'"),
    (&["-A", "--aligned", "--secaligned"], "tickscope's threads already start on a common, aligned first expiry"),
    (&["-M", "--refresh_on_max"], "tickscope prints one line per second, with each thread's maximum so far"),
    (&["--json"], "tickscope's --json takes a file name, as cyclictest's does; check the value"),
];

/// What to write instead of the cyclictest flag `arg` (as typed, perhaps with `=value`), or
/// `None` when it is not one of cyclictest's.
pub fn hint(arg: &str) -> Option<&'static str> {
    let name = arg.split('=').next().unwrap_or(arg);
    // A short flag may carry its value attached (`-c1`).
    let short = if name.len() > 2 && !name.starts_with("--") {
        &name[..2]
    } else {
        name
    };
    FLAGS
        .iter()
        .find(|(names, _)| names.contains(&name) || names.contains(&short))
        .map(|(_, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_flags_get_a_hint_and_others_none() {
        assert!(hint("-x").unwrap().contains("posix-timer"));
        assert!(hint("-c1").unwrap().contains("--clock"));
        assert!(hint("--latency=0").unwrap().contains("--pm-qos"));
        assert!(hint("--frobnicate").is_none());
    }
}
