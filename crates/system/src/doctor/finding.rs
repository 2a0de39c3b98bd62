//! A finding: what a check expected, what it found and where, how bad it is for wake-up
//! latency, and the fix with the kernel document behind it.
//!
//! Severities follow the kernel's own real-time checklist,
//! Documentation/core-api/real-time/kernel-configuration.rst (fatal, high, medium, info),
//! plus `ok` (as expected) and `unknown` (the source could not be read; the reason says why).

use crate::facts::Fact;
use serde::{Deserialize, Serialize};

/// How much a finding limits wake-up latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// As expected.
    Ok,
    /// Worth knowing; no action needed for most measurements.
    Info,
    /// Could not be read; [`Finding::reason`] says why.
    Unknown,
    /// Adds latency in some configurations.
    Medium,
    /// Adds latency to most measurements.
    High,
    /// No latency bound is possible until fixed.
    Fatal,
}

impl Severity {
    /// The lower-case name (`fatal`, `high`, `medium`, `info`, `ok`, `unknown`).
    pub fn name(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Unknown => "unknown",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Fatal => "fatal",
        }
    }

    /// The severity a `--fail-on` threshold names: `info`, `medium`, `high` or `fatal`
    /// (`ok` and `unknown` are not thresholds).
    ///
    /// # Errors
    /// One sentence listing the four names for anything else.
    pub fn threshold(name: &str) -> Result<Severity, String> {
        match name {
            "info" => Ok(Severity::Info),
            "medium" => Ok(Severity::Medium),
            "high" => Ok(Severity::High),
            "fatal" => Ok(Severity::Fatal),
            other => Err(format!("'{other}': use info, medium, high or fatal")),
        }
    }
}

/// A kernel document, by its path in the kernel tree and its address on docs.kernel.org.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// Path in the kernel source, e.g. `Documentation/admin-guide/pm/cpuidle.rst`.
    pub document: String,
    /// Its rendering on docs.kernel.org.
    pub url: String,
}

/// The citation of `Documentation/<path>.rst`, with its docs.kernel.org address.
pub fn doc(path: &str) -> Citation {
    let rel = path
        .trim_start_matches("Documentation/")
        .trim_end_matches(".rst")
        .trim_end_matches(".txt");
    Citation {
        document: path.to_string(),
        url: format!("https://docs.kernel.org/{rel}.html"),
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id, `area.name`, e.g. `power.cpuidle`.
    pub id: String,
    /// Short title.
    pub title: String,
    /// How bad it is.
    pub severity: Severity,
    /// What a low-latency system has.
    pub expected: String,
    /// What this machine has.
    pub found: String,
    /// The files or calls `found` came from.
    pub source: String,
    /// Why it is unknown (only for [`Severity::Unknown`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The expected effect on wake-up latency.
    pub effect: String,
    /// The exact fix: command, sysctl or boot parameter; `None` when nothing is to be done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The kernel document behind the expectation and the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation: Option<Citation>,
    /// Whether measurements on this machine are invalid until this is fixed — the timers or
    /// the timestamps are coarser than the latencies measured (no high-resolution timers,
    /// the jiffies clocksource) — rather than merely worse. `tickscope doctor` exits 3 for
    /// such a finding; every other finding is advice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalidates: bool,
}

impl Finding {
    /// A finding with the given id, title and severity; the rest empty, to be filled in.
    pub fn new(id: &str, title: &str, severity: Severity) -> Self {
        Finding {
            id: id.into(),
            title: title.into(),
            severity,
            expected: String::new(),
            found: String::new(),
            source: String::new(),
            reason: None,
            effect: String::new(),
            fix: None,
            citation: None,
            invalidates: false,
        }
    }

    /// Marks the finding as making measurements on this machine invalid
    /// ([`Finding::invalidates`]).
    pub fn invalidating(mut self) -> Self {
        self.invalidates = true;
        self
    }

    /// Sets the severity.
    pub fn severity(mut self, s: Severity) -> Self {
        self.severity = s;
        self
    }

    /// Sets what was expected.
    pub fn expected(mut self, s: impl Into<String>) -> Self {
        self.expected = s.into();
        self
    }

    /// Sets what was found and where.
    pub fn found(mut self, found: impl Into<String>, source: impl Into<String>) -> Self {
        self.found = found.into();
        self.source = source.into();
        self
    }

    /// Sets the effect on wake-up latency.
    pub fn effect(mut self, s: impl Into<String>) -> Self {
        self.effect = s.into();
        self
    }

    /// Sets the fix.
    pub fn fix(mut self, s: impl Into<String>) -> Self {
        self.fix = Some(s.into());
        self
    }

    /// Sets the citation (a `Documentation/…` path).
    pub fn cite(mut self, path: &str) -> Self {
        self.citation = Some(doc(path));
        self
    }

    /// Turns this finding into `unknown` because `fact` could not be read, when it could not.
    /// Returns `Err(finding)` to return early, `Ok(value)` otherwise.
    ///
    /// # Errors
    /// The unknown finding, when `fact` is unknown.
    #[allow(clippy::result_large_err)] // a cold path, once per check: the size does not matter
    pub fn need<'a, T>(&self, fact: &'a Fact<T>) -> Result<&'a T, Finding> {
        match fact {
            Fact::Known { value, .. } => Ok(value),
            Fact::Unknown { reason, source } => {
                let mut f = self.clone();
                f.severity = Severity::Unknown;
                f.found = "unknown".into();
                f.source = source.clone();
                f.reason = Some(reason.clone());
                Err(f)
            }
        }
    }
}

/// Sorts `findings` most important first: those that invalidate measurements, then by
/// severity (fatal, high, medium, unknown, info, ok); stable, so check order within a
/// severity.
pub fn by_importance(findings: &mut [Finding]) {
    let rank = |f: &Finding| {
        let s = match f.severity {
            Severity::Fatal => 0,
            Severity::High => 1,
            Severity::Medium => 2,
            Severity::Unknown => 3,
            Severity::Info => 4,
            Severity::Ok => 5,
        };
        (!f.invalidates, s)
    };
    findings.sort_by_key(rank);
}

/// Whether `f` is one to fix first: it invalidates measurements, or is fatal, high or
/// medium and has a fix.
pub fn fix_first(f: &Finding) -> bool {
    f.invalidates || (f.severity >= Severity::Medium && f.fix.is_some())
}

/// The worst severity of `findings` that counts for the exit status (`unknown` counts as
/// `info`), or `Ok` for none.
pub fn worst(findings: &[Finding]) -> Severity {
    findings
        .iter()
        .map(|f| match f.severity {
            Severity::Unknown => Severity::Info,
            s => s,
        })
        .max()
        .unwrap_or(Severity::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citation_urls() {
        let c = doc("Documentation/admin-guide/pm/cpuidle.rst");
        assert_eq!(c.url, "https://docs.kernel.org/admin-guide/pm/cpuidle.html");
    }

    #[test]
    fn unknown_carries_the_reason() {
        let base = Finding::new("x.y", "t", Severity::Ok);
        let f: Fact<u8> = Fact::unknown("needs root (permission denied)", "/proc/timer_list");
        let u = base.need(&f).unwrap_err();
        assert_eq!(u.severity, Severity::Unknown);
        assert_eq!(u.reason.as_deref(), Some("needs root (permission denied)"));
        assert_eq!(worst(&[u]), Severity::Info);
    }
}
