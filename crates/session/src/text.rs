//! The text forms of durations and intervals shared by the command line, scenario files and
//! task lists: `250us`, `1m30s`, `85Hz`; a bare number in the unit the caller names.

use tickscope_engine::run::MAX_PERIOD_NS;
use tickscope_engine::time::{Nanos, NS_PER_US};

/// What a duration is called in messages, and its accepted forms.
const DURATION_FORMS: (&str, &str) = ("a duration", "250us, 1ms, 10s, 1m30s, 2h or 1d");
/// What an interval is called in messages, and its accepted forms.
const INTERVAL_FORMS: (&str, &str) = ("a period or a frequency", "250us, 1ms, 85Hz or 1000 (µs)");

/// Parses a duration with a unit (`250us`, `1ms`, `10s`, `5m`, `2h`, `1.5ms`) or a bare
/// number in `bare_unit_ns` units. Returns ns, > 0.
///
/// # Errors
/// One sentence naming `what` when the text is not a number with a known unit, is zero or
/// negative, or exceeds `i64::MAX` ns (about 292 years).
pub fn parse_duration(s: &str, what: &str, bare_unit_ns: Nanos) -> Result<Nanos, String> {
    parse_duration_as(
        s,
        what,
        bare_unit_ns,
        DURATION_FORMS,
        (Nanos::MAX, "too large"),
    )
}

/// [`parse_duration`] with `forms`, what the value is called and its examples (`"250us, 1ms
/// …"`) in the message, and `max`: the largest value accepted (ns) and what the message says
/// of a larger one.
fn parse_duration_as(
    s: &str,
    what: &str,
    bare_unit_ns: Nanos,
    forms: (&str, &str),
    max: (Nanos, &str),
) -> Result<Nanos, String> {
    let t = s.trim().replace('µ', "u");
    let err = || format!("{what} '{s}' is not {}; write it like {}", forms.0, forms.1);
    if t.is_empty() {
        return Err(err());
    }
    // Number-and-unit pairs, summed: `1m30s`, `1h 30m`, `1d`; a bare number only alone.
    let mut ns = 0.0;
    let mut rest = t.as_str();
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(split);
        let value: f64 = num.parse().map_err(|_| err())?;
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let unit_ns: f64 = match unit.trim() {
            "" if ns == 0.0 && next.is_empty() => bare_unit_ns as f64,
            "ns" | "nsec" => 1.0,
            "us" | "usec" => 1e3,
            "ms" | "msec" => 1e6,
            "s" | "sec" => 1e9,
            "m" | "min" => 60e9,
            "h" | "hr" => 3600e9,
            "d" | "day" | "days" => 86_400e9,
            _ => return Err(err()),
        };
        ns += value * unit_ns;
        rest = next.trim_start();
    }
    // Compared as f64, before the conversion to integer ns (which would saturate).
    if !(ns.is_finite() && ns.round() <= max.0 as f64) {
        return Err(format!("{what} '{s}' is {}", max.1));
    }
    let ns = ns.round() as Nanos;
    if ns <= 0 {
        return Err(format!("{what} must be greater than zero (got '{s}')"));
    }
    Ok(ns)
}

/// Parses the interval: a duration (bare number = µs, as in cyclictest `-i`) or a frequency
/// (`85Hz`, `1kHz`). Returns the period in ns, rounded to the nearest ns, in
/// 1 ..= [`MAX_PERIOD_NS`] (1 h, the limit the engine and the C API share).
///
/// # Errors
/// One sentence when the text is neither a duration nor a frequency, or gives a period that
/// is not positive, shorter than 1 ns or longer than 1 h.
pub fn parse_interval(s: &str) -> Result<Nanos, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    const TOO_LONG: &str = "longer than 1h, the longest period accepted";
    for (suffix, mult) in [("khz", 1e3), ("hz", 1.0)] {
        if let Some(num) = lower.strip_suffix(suffix) {
            let f: f64 = num.trim().parse().map_err(|_| {
                format!(
                    "interval '{s}' is not {}; write it like {}",
                    INTERVAL_FORMS.0, INTERVAL_FORMS.1
                )
            })?;
            let hz = f * mult;
            if !(hz > 0.0 && hz.is_finite()) {
                return Err(format!(
                    "interval frequency must be greater than zero (got '{s}')"
                ));
            }
            if hz > 1e9 {
                return Err(format!("interval '{s}' is shorter than 1 ns"));
            }
            // Compared as f64, before the conversion (which would saturate).
            let period = (1e9 / hz).round();
            if !period.is_finite() || period > MAX_PERIOD_NS as f64 {
                return Err(format!("interval '{s}' is {TOO_LONG}"));
            }
            return Ok(period as Nanos);
        }
    }
    parse_duration_as(
        t,
        "interval",
        NS_PER_US,
        INTERVAL_FORMS,
        (MAX_PERIOD_NS, TOO_LONG),
    )
}
