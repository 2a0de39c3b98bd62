//! `--on-late THRESHOLD:ACTION[,ACTION…]` and `--break US`: what to do when a wake-up is late.
//!
//! Modelled on cyclictest's `-b`/`--tracemark` (`woodsts/rt-tests src/cyclictest/cyclictest.c`)
//! and rtla's `--on-threshold` actions (`torvalds/linux tools/tracing/rtla/src/actions.c`):
//! actions run in the order given and stop at the first that fails.

use crate::events::Nanos;
use serde::{Deserialize, Serialize};

/// One action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A line in the trace instance's `trace_marker`.
    Mark,
    /// A bundle directory with the breakdown, decoded trace window, context and settings.
    Capture,
    /// End the run (exit status 3).
    Stop,
    /// Run a shell command off the measuring thread, with a timeout.
    Exec(String),
}

/// One `--on-late` rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// Latency above which the rule fires, ns.
    pub threshold_ns: Nanos,
    /// Actions, in order.
    pub actions: Vec<Action>,
}

/// Parses a latency such as `1ms`, `200us`, `500ns`, `2s`, or a bare number of µs.
///
/// # Errors
/// One sentence naming the text.
pub fn parse_latency(text: &str) -> Result<Nanos, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a latency like 100us or 1ms"))?;
    let scale = match unit.trim() {
        "" | "us" | "µs" => 1e3,
        "ns" => 1.0,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(format!("'{text}': unknown unit (ns, us, ms, s)")),
    };
    let ns = value * scale;
    if !(ns.is_finite() && ns > 0.0 && ns < 3.6e12) {
        return Err(format!("'{text}' must be above 0 and below 1 h"));
    }
    Ok(ns.round() as Nanos)
}

/// Parses `THRESHOLD:ACTION[,ACTION…]`.
///
/// # Errors
/// One sentence: a bad threshold, an unknown or empty action, `exec=` without a command.
pub fn parse_rule(text: &str) -> Result<Rule, String> {
    let (threshold, actions) = text
        .split_once(':')
        .ok_or_else(|| format!("'{text}' is not THRESHOLD:ACTION[,ACTION…] (e.g. 1ms:capture)"))?;
    let threshold_ns = parse_latency(threshold)?;
    let mut list = Vec::new();
    // exec=CMD takes the rest, commas included.
    let mut rest = actions;
    while !rest.is_empty() {
        if let Some(cmd) = rest.strip_prefix("exec=") {
            if cmd.trim().is_empty() {
                return Err("exec= needs a command".into());
            }
            list.push(Action::Exec(cmd.to_string()));
            break;
        }
        let (a, tail) = rest.split_once(',').unwrap_or((rest, ""));
        list.push(match a.trim() {
            "mark" => Action::Mark,
            "capture" => Action::Capture,
            "stop" => Action::Stop,
            other => {
                return Err(format!(
                    "unknown action '{other}' (mark, capture, stop, exec=CMD)"
                ))
            }
        });
        rest = tail;
    }
    if list.is_empty() {
        return Err(format!("'{text}' names no action"));
    }
    Ok(Rule {
        threshold_ns,
        actions: list,
    })
}

/// `--break US`: cyclictest's `-b`, i.e. `US:mark,capture,stop`.
///
/// # Errors
/// As [`parse_latency`].
pub fn break_rule(us: &str) -> Result<Rule, String> {
    Ok(Rule {
        threshold_ns: parse_latency(us)?,
        actions: vec![Action::Mark, Action::Capture, Action::Stop],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        assert_eq!(
            parse_rule("1ms:capture").unwrap(),
            Rule {
                threshold_ns: 1_000_000,
                actions: vec![Action::Capture]
            }
        );
        let r = parse_rule("200us:mark,stop,exec=echo a,b").unwrap();
        assert_eq!(
            r.actions,
            vec![Action::Mark, Action::Stop, Action::Exec("echo a,b".into())]
        );
        assert_eq!(break_rule("150").unwrap().threshold_ns, 150_000);
        assert!(parse_rule("1ms").is_err());
        assert!(parse_rule("1ms:jump").is_err());
        assert!(parse_rule("x:mark").is_err());
        assert!(parse_rule("0us:mark").is_err());
        assert!(parse_rule("1ms:exec=").is_err());
    }
}
