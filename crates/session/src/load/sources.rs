//! The named load sources and the stress-ng arguments each stands for: one line per source
//! in [`SOURCES`]. stress-ng is the field's standard load generator (Colin Ian King,
//! stress-ng(1), <https://github.com/ColinIanKing/stress-ng>); tickscope drives it rather than
//! generating load itself.

/// One named load source.
pub struct Source {
    /// The name used in `--load NAME[:N]`.
    pub name: &'static str,
    /// Whether `:N` (a worker count) is accepted.
    pub counted: bool,
    /// What it loads, for messages and documentation.
    pub about: &'static str,
    /// The stress-ng stressor arguments for `n` workers (0: one per online CPU) and a
    /// directory for temporary files.
    pub args: fn(n: u32, temp: &str) -> Vec<String>,
}

impl Source {
    /// How `--load` names it: `cpu[:N]` when counted, else the bare name.
    pub fn form(&self) -> String {
        if self.counted {
            format!("{}[:N]", self.name)
        } else {
            self.name.to_string()
        }
    }
}

fn v(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Every named source.
#[rustfmt::skip]
pub const SOURCES: &[Source] = &[
    Source { name: "cpu", counted: true, about: "N busy loops (100 % CPU each)", args: |n, _| v(&["--cpu", &n.to_string(), "--cpu-method", "loop"]) },
    Source { name: "memory", counted: true, about: "N workers streaming over 64 MiB of anonymous memory each", args: |n, _| v(&["--vm", &n.max(1).to_string(), "--vm-bytes", "64M"]) },
    Source { name: "io", counted: true, about: "N workers writing and unlinking files (64 MiB each) in the temporary directory", args: |n, t| v(&["--hdd", &n.max(1).to_string(), "--hdd-bytes", "64M", "--temp-path", t]) },
    Source { name: "sched", counted: true, about: "hackbench-style messaging: N socket-pair sender/receiver pairs", args: |n, _| v(&["--sockpair", &n.max(1).to_string()]) },
    Source { name: "net", counted: true, about: "N workers sending UDP over loopback (interrupts and softirqs)", args: |n, _| v(&["--udp", &n.max(1).to_string(), "--udp-domain", "ipv4"]) },
];

/// The source called `name`.
pub fn source(name: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.name == name)
}
