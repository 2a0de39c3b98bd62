//! The `--load SPEC` syntax: a named source (`cpu[:N]`, `memory`, `io`, `sched`, `net`,
//! see [`super::sources`]), `stress-ng:"ARGS"` passed to stress-ng verbatim, or
//! `exec:"CMD"` run by `/bin/sh -c`.

use super::sources;

/// A parsed `--load` spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadSpec {
    /// A named source with an optional worker count (`cpu:2`).
    Source {
        /// The source's name, as in [`sources::SOURCES`].
        name: &'static str,
        /// Workers asked for; `None`: one per load CPU (stress-ng's 0 = every online CPU
        /// without `--load-cpus`).
        count: Option<u32>,
    },
    /// stress-ng with these arguments, verbatim (split like a POSIX shell would).
    StressNg(Vec<String>),
    /// A shell command line.
    Exec(String),
}

/// Removes one pair of surrounding double or single quotes, if any.
fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

impl LoadSpec {
    /// Parses a `--load` value.
    ///
    /// # Errors
    /// One sentence naming the spec and listing the accepted forms.
    pub fn parse(spec: &str) -> Result<LoadSpec, String> {
        let forms = || {
            format!(
                "--load '{spec}' is not a load: use {}, stress-ng:\"ARGS\" or exec:\"CMD\"",
                sources::SOURCES
                    .iter()
                    .map(sources::Source::form)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let (head, rest) = match spec.split_once(':') {
            Some((h, r)) => (h.trim(), Some(r)),
            None => (spec.trim(), None),
        };
        match (head, rest) {
            ("stress-ng", Some(args)) => {
                let words = shlex::split(unquote(args))
                    .filter(|w| !w.is_empty())
                    .ok_or_else(|| {
                        format!("--load '{spec}': the stress-ng arguments are not well quoted")
                    })?;
                Ok(LoadSpec::StressNg(words))
            }
            ("exec", Some(cmd)) if !unquote(cmd).trim().is_empty() => {
                Ok(LoadSpec::Exec(unquote(cmd).to_string()))
            }
            (name, count) => {
                let source = sources::source(name).ok_or_else(forms)?;
                let count = match count {
                    None => None,
                    Some(n) if source.counted => match n.trim().parse::<u32>() {
                        Ok(n) if (1..=4096).contains(&n) => Some(n),
                        _ => {
                            return Err(format!(
                                "--load '{spec}': N must be a number of workers from 1 to 4096"
                            ))
                        }
                    },
                    Some(_) => return Err(forms()),
                };
                Ok(LoadSpec::Source {
                    name: source.name,
                    count,
                })
            }
        }
    }

    /// True when the load runs stress-ng (needs it installed).
    pub fn needs_stress_ng(&self) -> bool {
        !matches!(self, LoadSpec::Exec(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            LoadSpec::parse("cpu").unwrap(),
            LoadSpec::Source {
                name: "cpu",
                count: None
            }
        );
        assert_eq!(
            LoadSpec::parse("cpu:3").unwrap(),
            LoadSpec::Source {
                name: "cpu",
                count: Some(3)
            }
        );
        assert_eq!(
            LoadSpec::parse("stress-ng:\"--vm 1 --vm-bytes '64 M'\"").unwrap(),
            LoadSpec::StressNg(vec![
                "--vm".into(),
                "1".into(),
                "--vm-bytes".into(),
                "64 M".into()
            ])
        );
        assert_eq!(
            LoadSpec::parse("exec:\"sleep 100\"").unwrap(),
            LoadSpec::Exec("sleep 100".into())
        );
        for bad in [
            "",
            "gpu",
            "cpu:0",
            "cpu:x",
            "memory:2x",
            "exec:",
            "stress-ng:\"--cpu",
            "net:1:2",
        ] {
            assert!(LoadSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
