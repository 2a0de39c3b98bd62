//! cyclictest's `--json=FILE` results (rt-tests ≥ 2.0).
//!
//! Shape (rt-tests `src/cyclictest/cyclictest.c`, `write_stats`; two keys really end in a
//! colon):
//! `{"file_version": 1, "cmdline:": "…", "rt_test_version:": "2.40", "sysinfo": {"release": …},
//! "num_threads": N, "resolution_in_ns": 0|1, "thread": {"0": {"histogram": {"<µs>": count},
//! "cycles", "min", "max", "avg", "cpu", "node"}}}`.
//!
//! Values are whole µs, or whole ns when cyclictest ran with `-N` (`resolution_in_ns: 1`).
//! The histogram is filled only with `-h N`/`-H N`, and holds values below N; cyclictest counts
//! the rest as overflows, which show here as `cycles` minus the histogram's total.
//! Policy, priority and interval are read from the recorded command line.

use super::{text, tool_measurement, tool_threads, Importer, Measurement, Setting, SourceFormat};
use serde_json::Value;
use std::collections::BTreeMap;
use tickscope_engine::time::Nanos;

/// Reads cyclictest `--json` files.
#[derive(Debug, Clone, Copy)]
pub struct CyclictestImporter;

impl Importer for CyclictestImporter {
    fn format(&self) -> SourceFormat {
        SourceFormat::Cyclictest
    }

    fn recognizes(&self, json: &Value) -> bool {
        json.get("thread").is_some()
    }

    fn import(&self, json: Value, stem: &str) -> Result<Vec<Measurement>, String> {
        let threads = json
            .get("thread")
            .and_then(Value::as_object)
            .ok_or("'thread' is not an object")?;
        let ns = json.get("resolution_in_ns").and_then(Value::as_u64) == Some(1);
        let unit_ns = if ns { 1 } else { 1000 };
        let parsed = tool_threads(threads, "thread", "cycles", unit_ns)?;
        let cmdline = text(&json, "/cmdline:").or_else(|| text(&json, "/cmdline"));
        let mut settings = BTreeMap::new();
        let version = text(&json, "/rt_test_version:").or_else(|| text(&json, "/rt_test_version"));
        settings.insert(
            Setting::Tool,
            match version {
                Some(v) => format!("cyclictest {v}"),
                None => "cyclictest".into(),
            },
        );
        if let Some(k) = text(&json, "/sysinfo/release") {
            settings.insert(Setting::Kernel, k);
        }
        if json.pointer("/sysinfo/realtime").and_then(Value::as_i64) == Some(1) {
            settings.insert(Setting::Preemption, "rt (PREEMPT_RT)".into());
        }
        if let Some(cmd) = &cmdline {
            let opts = CommandLine::parse(cmd);
            settings.insert(Setting::Method, opts.method().into());
            let (policy, priority) = opts.policy();
            settings.insert(Setting::Policy, policy);
            settings.insert(Setting::Priority, priority);
            // The threads the file holds (its "num_threads" is not trusted for a size).
            settings.insert(Setting::Interval, opts.intervals(parsed.len()));
            settings.insert(Setting::Clock, opts.clock().into());
            settings.insert(
                Setting::PmQos,
                if opts.has("default-system") {
                    "not held".into()
                } else {
                    "0 µs".into()
                },
            );
            settings.insert(Setting::Command, cmd.clone());
        }
        // The histogram ends at -h N (or -H N), in the file's unit.
        let limit = cmdline.as_deref().map(CommandLine::parse).and_then(|c| {
            let n: Option<Nanos> = c
                .value("histogram")
                .or_else(|| c.value("histofall"))
                .and_then(|v| v.parse().ok());
            n.map(|n| n * unit_ns)
        });
        let mut m = tool_measurement(
            SourceFormat::Cyclictest,
            stem,
            &parsed,
            (unit_ns, limit),
            settings,
        );
        if let Some(rc) = json.get("return_code").and_then(Value::as_i64) {
            if rc != 0 {
                m.notes
                    .push(format!("cyclictest ended with return code {rc}"));
            }
        }
        Ok(vec![m])
    }
}

/// cyclictest's short options that take a value (`getopt` string of rt-tests 2.x), the
/// long name each stands for, and those whose value is optional (must be attached).
const SHORT_WITH_VALUE: &[(char, &str)] = &[
    ('b', "breaktrace"),
    ('c', "clock"),
    ('d', "distance"),
    ('D', "duration"),
    ('F', "fifo"),
    ('h', "histogram"),
    ('H', "histofall"),
    ('i', "interval"),
    ('l', "loops"),
    ('p', "priority"),
];
const SHORT_OPTIONAL_VALUE: &[(char, &str)] = &[('a', "affinity"), ('t', "threads")];
const SHORT_FLAGS: &[(char, &str)] = &[
    ('m', "mlockall"),
    ('M', "refresh_on_max"),
    ('N', "nsecs"),
    ('q', "quiet"),
    ('r', "relative"),
    ('R', "resolution"),
    ('s', "system"),
    ('S', "smp"),
    ('u', "unbuffered"),
    ('v', "verbose"),
    ('x', "posix_timers"),
    ('n', "nanosleep"),
];

/// A cyclictest command line, as options by long name (the last value wins).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    options: BTreeMap<String, Option<String>>,
}

impl CommandLine {
    /// Splits a recorded command line (space-separated, as cyclictest writes it) into
    /// options. Unknown options are kept by name; stray words are ignored.
    pub fn parse(cmdline: &str) -> Self {
        let mut options = BTreeMap::new();
        let mut words = cmdline.split_whitespace().skip(1).peekable();
        while let Some(w) = words.next() {
            if let Some(long) = w.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => {
                        let takes = SHORT_WITH_VALUE.iter().any(|(_, l)| *l == long)
                            || long == "policy"
                            || long == "prio";
                        let next = if takes { words.next() } else { None };
                        (long, next.map(str::to_string))
                    }
                };
                let name = if name == "prio" { "priority" } else { name };
                options.insert(name.to_string(), value);
            } else if let Some(shorts) = w.strip_prefix('-') {
                for (i, c) in shorts.char_indices() {
                    let rest = &shorts[i + c.len_utf8()..];
                    let find = |table: &[(char, &'static str)]| {
                        table.iter().find(|(s, _)| *s == c).map(|(_, l)| *l)
                    };
                    if let Some(long) = find(SHORT_WITH_VALUE) {
                        let value = if rest.is_empty() {
                            words.next().map(str::to_string)
                        } else {
                            Some(rest.to_string())
                        };
                        options.insert(long.to_string(), value);
                        break;
                    }
                    if let Some(long) = find(SHORT_OPTIONAL_VALUE) {
                        let value = (!rest.is_empty()).then(|| rest.to_string());
                        options.insert(long.to_string(), value);
                        break;
                    }
                    let long = find(SHORT_FLAGS).map_or_else(|| c.to_string(), str::to_string);
                    options.insert(long, None);
                }
            }
        }
        CommandLine { options }
    }

    /// Whether the option (long name) was given.
    pub fn has(&self, long: &str) -> bool {
        self.options.contains_key(long)
    }

    /// The option's value, if it was given one.
    pub fn value(&self, long: &str) -> Option<&str> {
        self.options.get(long).and_then(|v| v.as_deref())
    }

    /// Policy and priority as cyclictest applies them: a priority above 0 means SCHED_FIFO
    /// (also with `--policy other`, which cyclictest then overrides), `--policy rr` means
    /// SCHED_RR; otherwise SCHED_OTHER at nice 0.
    pub fn policy(&self) -> (String, String) {
        let prio: u32 = self
            .value("priority")
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let asked = self.value("policy").unwrap_or("");
        match (asked, prio) {
            ("rr", p) if p > 0 => ("rr".into(), p.to_string()),
            ("batch" | "idle", 0) => (asked.into(), "nice 0".into()),
            (_, p) if p > 0 => ("fifo".into(), p.to_string()),
            _ => ("other".into(), "nice 0".into()),
        }
    }

    /// The interval (`-i`, µs; default 1000 µs) as text with its unit.
    pub fn interval(&self) -> String {
        let us: f64 = self
            .value("interval")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000.0);
        crate::units::interval((us * 1000.0).round() as i64)
    }

    /// The intervals of `threads` threads: cyclictest gives thread k the interval
    /// `-i + k·-d` (distance, default 500 µs) unless a histogram is asked for (`-h`/`-H`),
    /// in which case every thread uses `-i` (rt-tests `cyclictest.c`, `main`: "same interval
    /// on CPUs" only `if (histogram)`). One value when all are equal, else each thread's.
    pub fn intervals(&self, threads: usize) -> String {
        let distance: f64 = self
            .value("distance")
            .and_then(|v| v.parse().ok())
            .unwrap_or(500.0);
        let same = threads <= 1
            || distance == 0.0
            || self.value("histogram").is_some()
            || self.value("histofall").is_some();
        if same {
            return self.interval();
        }
        let us: f64 = self
            .value("interval")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000.0);
        let each: Vec<String> = (0..threads)
            .map(|k| {
                let ns = ((us + k as f64 * distance) * 1000.0).round() as i64;
                format!("T{k} {}", crate::units::interval(ns))
            })
            .collect();
        format!("{} (cyclictest -d {distance} without -h)", each.join(", "))
    }

    /// How cyclictest waited, in tickscope's method names: `nanosleep-abs` (absolute
    /// `clock_nanosleep`, its default), `nanosleep-rel` with `-r`, `posix-timer` with `-x`.
    pub fn method(&self) -> &'static str {
        if self.has("posix_timers") {
            "posix-timer"
        } else if self.has("relative") {
            "nanosleep-rel"
        } else {
            "nanosleep-abs"
        }
    }

    /// The clock: `-c 1` is CLOCK_REALTIME, otherwise CLOCK_MONOTONIC.
    pub fn clock(&self) -> &'static str {
        if self.value("clock") == Some("1") {
            "realtime"
        } else {
            "monotonic"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_short_long_and_bundled_options() {
        let c = CommandLine::parse("cyclictest -mq -p90 -i 250 --json=x.json -t -a1 -h 400");
        assert!(c.has("mlockall") && c.has("quiet"));
        assert_eq!(c.value("priority"), Some("90"));
        assert_eq!(c.value("interval"), Some("250"));
        assert_eq!(c.value("json"), Some("x.json"));
        assert_eq!(c.value("threads"), None);
        assert!(c.has("threads"));
        assert_eq!(c.value("affinity"), Some("1"));
        assert_eq!(c.value("histogram"), Some("400"));
        assert_eq!(c.policy(), ("fifo".into(), "90".into()));
        assert_eq!(c.interval(), "250 µs");
    }

    #[test]
    fn policy_follows_cyclictest_rules() {
        let other = CommandLine::parse("cyclictest --policy other");
        assert_eq!(other.policy(), ("other".into(), "nice 0".into()));
        let forced = CommandLine::parse("cyclictest --policy=other --priority=80");
        assert_eq!(forced.policy(), ("fifo".into(), "80".into()));
        let rr = CommandLine::parse("cyclictest --policy rr -p 5 -r");
        assert_eq!(rr.policy(), ("rr".into(), "5".into()));
        assert_eq!(rr.method(), "nanosleep-rel");
        assert_eq!(rr.interval(), "1.00 ms");
        // Without -h each thread's interval grows by the distance (default 500 µs).
        let two = CommandLine::parse("cyclictest -t 2 -i 1000 -q");
        assert_eq!(
            two.intervals(2),
            "T0 1.00 ms, T1 1.50 ms (cyclictest -d 500 without -h)"
        );
        let hist = CommandLine::parse("cyclictest -t 2 -i 1000 -h 400");
        assert_eq!(hist.intervals(2), "1.00 ms");
        let d0 = CommandLine::parse("cyclictest -t 2 -i 1000 -d 0");
        assert_eq!(d0.intervals(2), "1.00 ms");
    }
}
