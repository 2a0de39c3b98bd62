//! A kernel's build configuration (`.config`, from `/proc/config.gz` or
//! `/boot/config-<release>`), kept compact.
//!
//! The kernel this was measured on (6.18, a KVM guest) sets 1 745 options; a distribution
//! kernel sets several thousand.
//! Held as a map of owned strings (two allocations and a tree slot per option), the 1 745
//! took 160 KiB of heap while tickscope started (the heap's RSS during a run, with and
//! without reading the configuration), and that memory stayed resident in the measuring
//! process for the whole run. Here the options are one string of `NAME=value` lines in the
//! file's order (33 KiB for those 1 745), searched line by line: a lookup reads the whole
//! string, and the doctor's checks make a few dozen lookups per run. On disk (facts in JSON)
//! it is still a map from name to value, as before.
//!
//! Format: Documentation/kbuild/kconfig-language.rst and kconfig.rst — `CONFIG_NAME=value`
//! per set option, string values in double quotes, `# CONFIG_NAME is not set` for the
//! others (skipped here).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The options a kernel was built with: `NAME` (without `CONFIG_`) → `y`, `m`, a number or
/// a string (without its quotes). Options "is not set" are absent. When a name is set twice,
/// the later line counts (as kconfig reads it).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "BTreeMap<String, String>", into = "BTreeMap<String, String>")]
pub struct KernelConfig {
    /// `NAME=value\n` lines, in the order they were read.
    lines: String,
}

impl KernelConfig {
    /// Parses a `.config` text: `CONFIG_NAME=value` lines, quotes around a value removed;
    /// comments and other lines skipped.
    pub fn parse(text: &str) -> Self {
        let options = text
            .lines()
            .filter_map(|l| l.strip_prefix("CONFIG_"))
            .filter_map(|l| l.split_once('='))
            .map(|(name, value)| (name, value.trim_matches('"')));
        Self::from_options(options)
    }

    /// The value of `CONFIG_<name>`, if the configuration sets it (the last line that does).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .filter(|(n, _)| *n == name)
            .last()
            .map(|(_, v)| v)
    }

    /// The options in the order they were read; a name set twice comes twice.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.lines
            .lines()
            .map(|l| l.split_once('=').unwrap_or((l, "")))
    }

    fn from_options<'a>(options: impl Iterator<Item = (&'a str, &'a str)>) -> Self {
        let mut lines = String::new();
        for (name, value) in options {
            lines.push_str(name);
            lines.push('=');
            lines.push_str(value);
            lines.push('\n');
        }
        lines.shrink_to_fit();
        KernelConfig { lines }
    }
}

/// Equal when they set the same options to the same values, whatever the order.
impl PartialEq for KernelConfig {
    fn eq(&self, other: &Self) -> bool {
        BTreeMap::from(self.clone()) == BTreeMap::from(other.clone())
    }
}

impl Eq for KernelConfig {}

impl From<BTreeMap<String, String>> for KernelConfig {
    fn from(map: BTreeMap<String, String>) -> Self {
        Self::from_options(map.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }
}

impl From<KernelConfig> for BTreeMap<String, String> {
    fn from(config: KernelConfig) -> Self {
        config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_options_are_found_and_the_rest_are_not() {
        let c = KernelConfig::parse(
            "# CONFIG_X is not set\nCONFIG_HZ=250\nCONFIG_S=\"a b\"\nCONFIG_A=y\nnoise\n",
        );
        assert_eq!(c.get("HZ"), Some("250"));
        assert_eq!(c.get("S"), Some("a b"));
        assert_eq!(c.get("A"), Some("y"));
        assert_eq!(c.get("X"), None);
        assert_eq!(c.get("H"), None);
        let names: Vec<&str> = c.iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["HZ", "S", "A"]);
    }

    #[test]
    fn the_later_of_two_lines_counts() {
        let c = KernelConfig::parse("CONFIG_HZ=100\nCONFIG_B=1\nCONFIG_HZ=1000\n");
        assert_eq!(c.get("HZ"), Some("1000"));
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#"{"B":"1","HZ":"1000"}"#);
    }

    #[test]
    fn json_is_a_map_and_reads_back_equal() {
        let c = KernelConfig::parse("CONFIG_Z=m\nCONFIG_HZ=250\nCONFIG_S=\"x\"\n");
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#"{"HZ":"250","S":"x","Z":"m"}"#);
        let back: KernelConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
        assert_eq!(KernelConfig::parse("").iter().count(), 0);
    }
}
