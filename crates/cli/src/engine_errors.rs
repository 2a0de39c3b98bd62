//! The engine's errors in the CLI's words: the engine names settings ("leave PM QoS alone",
//! "method itimer: …"); here they get the flags that change them, so a message still says
//! exactly what to type.

use tickscope_engine::{ErrorKind, Setting};

/// Engine phrases and the flag that does what they say.
const FLAGS: &[(&str, &str)] = &[
    ("leave PM QoS alone", " (--no-pm-qos)"),
    ("do without locking memory", " (--no-mlock)"),
    ("lower the deadline runtime", " (--deadline-runtime)"),
    ("use a nice value of 0 or higher", " (--nice 0)"),
    (
        "unpinned rather than one thread per CPU",
        " (no -a/--affinity, no -t all)",
    ),
    (
        "use one thread, or the posix-timer method",
        " (-t 1, or --method posix-timer)",
    ),
    ("choose another method", " (--method)"),
];

/// An engine sentence with flags: a method's limit gets `--` before `method NAME:`, a
/// setting its flag, and every phrase of [`FLAGS`] the flag after it.
pub fn worded(message: &str) -> String {
    let mut out = match message.strip_prefix("method ") {
        Some(rest) => format!("--method {rest}"),
        None => message.to_string(),
    };
    for (phrase, flag) in FLAGS {
        if let Some(i) = out.find(phrase) {
            out.insert_str(i + phrase.len(), flag);
        }
    }
    // "measure CLOCK_MONOTONIC" is --clock monotonic.
    if let Some(i) = out.find("; measure CLOCK_").map(|i| i + 2) {
        let start = i + "measure CLOCK_".len();
        let end = out[start..]
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .map_or(out.len(), |n| start + n);
        let flag = format!(" (--clock {})", out[start..end].to_lowercase());
        out.insert_str(end, &flag);
    }
    out
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
            "--method itimer: only one; use one thread, or the posix-timer method (-t 1, or \
             --method posix-timer), which"
        );
        assert!(worded("run as root or leave PM QoS alone").ends_with("alone (--no-pm-qos)"));
        assert_eq!(worded("nothing to add"), "nothing to add");
        assert!(worded("so not; measure CLOCK_MONOTONIC (the")
            .contains("measure CLOCK_MONOTONIC (--clock monotonic) (the"));
    }
}
