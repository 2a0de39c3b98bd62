//! The engine's errors in the CLI's words: the engine names settings ("leave PM QoS alone",
//! "method itimer: …"); here they get the flags that change them, so a message still says
//! exactly what to type.

use tickscope_engine::{ErrorKind, Setting};

/// Engine phrases (settings, in the engine's words) and the command line's words for them
/// (the flags), so that a message says exactly what to type — the sentences users saw
/// before the engine stopped naming flags (issue 10 §4), word for word.
const FLAGS: &[(&str, &str)] = &[
    ("leave PM QoS alone", "pass --no-pm-qos"),
    ("do without locking memory", "pass --no-mlock"),
    ("lower the deadline runtime", "lower --deadline-runtime"),
    ("use a nice value of 0 or higher", "use --nice 0 or higher"),
    (
        "unpinned rather than one thread per CPU",
        "without -a/--affinity and without --threads all",
    ),
    (
        "use one thread, or the posix-timer method",
        "use -t 1, or --method posix-timer",
    ),
    ("choose another method", "choose another --method"),
    (
        "napping every N readings does not prevent it: the naps",
        "--busy-sleep-every does not prevent it: its naps",
    ),
    (
        " (the nanosleep-abs and nanosleep-rel methods sleep on any clock)",
        " (nanosleep-abs and nanosleep-rel sleep on any clock)",
    ),
];

/// An engine sentence with flags: a method's limit gets `--` before `method NAME: `, every
/// phrase of [`FLAGS`] the command line's words, and "measure CLOCK_A, CLOCK_B or CLOCK_C"
/// becomes "use --clock a, b or c".
pub fn worded(message: &str) -> String {
    // "method NAME: why" is about the --method setting; "method NAME is …" is not.
    let names_the_setting = message
        .strip_prefix("method ")
        .and_then(|rest| rest.split_once(": "))
        .is_some_and(|(name, _)| !name.contains(' '));
    let mut out = if names_the_setting {
        format!("--{message}")
    } else {
        message.to_string()
    };
    for (phrase, flag) in FLAGS {
        out = out.replacen(phrase, flag, 1);
    }
    if let Some(i) = out.find("; measure CLOCK_").map(|i| i + 2) {
        let list_start = i + "measure ".len();
        let list_len = out[list_start..]
            .find(|c: char| !(c.is_ascii_uppercase() || "_, or".contains(c)))
            .unwrap_or(out.len() - list_start);
        // The list ends at a clock name, not at the space before what follows.
        let list = out[list_start..list_start + list_len].trim_end();
        let clocks = list.replace("CLOCK_", "").to_lowercase();
        out.replace_range(i..list_start + list.len(), &format!("use --clock {clocks}"));
    }
    out
}

/// The notes of a run's settings (policy, memory lock, PM QoS, method) in the command
/// line's words, as they read before issue 10 ("… or pass --no-mlock"). For `cmd/run.rs`:
/// the applied settings of `RunEvent::Started` and of each outcome before the sinks see them.
pub fn word_notes(applied: &mut tickscope_engine::run::Applied) {
    for note in [
        &mut applied.policy_note,
        &mut applied.mlock_note,
        &mut applied.pm_qos_note,
        &mut applied.method_note,
    ]
    .into_iter()
    .flatten()
    {
        *note = worded(note);
    }
}

/// An engine error's sentence for the command line, with the flag of the setting it names.
pub fn sentence(e: &tickscope_engine::Error) -> String {
    let flag = match e.kind() {
        ErrorKind::InvalidConfig { setting } => match setting {
            Setting::Interval => Some("--interval"),
            Setting::Loops => Some("--loops"),
            Setting::Duration => Some("--duration"),
            Setting::Threads => Some("--threads"),
            Setting::Budget => Some("--duration"),
            _ => None,
        },
        _ => None,
    };
    let text = worded(e.message());
    match flag {
        Some(f) if !text.starts_with("--") => format!("{f}: {text}"),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_get_their_flags() {
        assert_eq!(
            worded("method itimer: only one; use one thread, or the posix-timer method, which"),
            "--method itimer: only one; use -t 1, or --method posix-timer, which"
        );
        assert!(worded("run as root or leave PM QoS alone").ends_with("root or pass --no-pm-qos"));
        assert_eq!(worded("nothing to add"), "nothing to add");
        assert_eq!(
            worded("so not; measure CLOCK_MONOTONIC (the nanosleep-abs and nanosleep-rel methods sleep on any clock)"),
            "so not; use --clock monotonic (nanosleep-abs and nanosleep-rel sleep on any clock)"
        );
        assert_eq!(
            worded("not TAI; measure CLOCK_MONOTONIC, CLOCK_REALTIME or CLOCK_BOOTTIME"),
            "not TAI; use --clock monotonic, realtime or boottime"
        );
    }

    #[test]
    fn notes_of_the_settings_get_their_flags() {
        use tickscope_engine::run::{run, Backend, RunConfig};
        let cfg = RunConfig {
            backend: Backend::Mock {
                latencies: vec![1_000],
            },
            loops: Some(1),
            ..RunConfig::new(1_000_000)
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut applied = run(&cfg, &stop, &mut |_| {}).unwrap().applied;
        applied.pm_qos_note = Some("run as root or leave PM QoS alone".into());
        applied.mlock_note = Some("raise 'ulimit -l', or do without locking memory".into());
        word_notes(&mut applied);
        assert_eq!(
            applied.pm_qos_note.as_deref(),
            Some("run as root or pass --no-pm-qos")
        );
        assert_eq!(
            applied.mlock_note.as_deref(),
            Some("raise 'ulimit -l', or pass --no-mlock")
        );
    }

    #[test]
    fn setting_errors_keep_their_flags() {
        use std::io;
        use tickscope_engine::setup::{privileges, Policy};
        use tickscope_engine::wait::{self, MethodKind};
        let e = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            worded(&privileges::explain_pm_qos_error(&e)),
            "cannot hold /dev/cpu_dma_latency: permission denied (the device is root-only); \
             run as root or pass --no-pm-qos"
        );
        let deadline = Policy::Deadline {
            runtime_ns: 1,
            deadline_ns: 2,
            period_ns: 2,
        };
        let e = io::Error::from_raw_os_error(libc::EBUSY);
        assert_eq!(
            worded(&privileges::explain_policy_error(&deadline, &e)),
            "cannot set SCHED_DEADLINE runtime 1 ns / period 2 ns: SCHED_DEADLINE admission \
             control refused the bandwidth: the runtime/period of all deadline threads must \
             fit in sched_rt_runtime_us/sched_rt_period_us per CPU; lower --deadline-runtime \
             or use fewer threads"
        );
        let e = io::Error::from_raw_os_error(libc::ENOSYS);
        assert_eq!(
            worded(&wait::explain_setup_error(MethodKind::Timerfd, &e)),
            "method timerfd is not supported by this kernel: timerfd_create(2) is not \
             implemented (ENOSYS); choose another --method (nanosleep-abs works on every kernel)"
        );
        let o = tickscope_engine::wait::MethodOptions {
            busy_sleep_every: Some(1000),
            ..Default::default()
        };
        let fifo = Policy::Fifo { priority: 90 };
        let w = wait::throttle_warning(
            MethodKind::Busy,
            &o,
            &fifo,
            1_000_000,
            Some(950_000),
            Some(1_000_000),
        );
        let w = worded(&w.unwrap());
        assert!(
            w.contains(" (--busy-sleep-every does not prevent it: its naps give no CPU time back)"),
            "{w}"
        );
        let e = io::Error::from_raw_os_error(libc::EPERM);
        let m = worded(&privileges::explain_mlock_error(&e));
        assert!(
            m.ends_with(", or pass --no-mlock") || !m.contains("ulimit"),
            "{m}"
        );
    }
}
