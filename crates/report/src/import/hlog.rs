//! HdrHistogram interval logs (`.hlog`): reading them, for `tickscope compare` and
//! `tickscope hlog`, whoever wrote them — tickscope's `--hlog`, jHiccup, cassandra-stress,
//! HdrHistogram's Java/C/Python/Rust writers.
//!
//! The format (HdrHistogram, `HistogramLogWriter.java`,
//! <https://github.com/HdrHistogram/HdrHistogram/blob/master/src/main/java/org/HdrHistogram/HistogramLogWriter.java>):
//! comment lines `#…`, optional `#[StartTime: s]` and `#[BaseTime: s]`, a legend line,
//! then one line per interval, `[Tag=NAME,]start,length,max,base64(compressed histogram)`.
//! Parsing is the `hdrhistogram` crate's (`serialization::interval_log::IntervalLogIterator`
//! and `serialization::Deserializer`). Interval starts are made absolute (seconds since the
//! epoch) as the Java reader does: a start below a year in seconds is relative to BaseTime,
//! else to StartTime when given (tickscope writes StartTime and relative starts).
//!
//! A last line cut short (a log still being written, or a crash) is left out with a
//! warning; a bad line anywhere else is an error.

use super::{LatencyFigures, Measurement, Setting, SourceFormat};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// The tag given to intervals without one (foreign logs usually have none).
pub const UNTAGGED: &str = "";

/// One interval of a log.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Its tag ([`UNTAGGED`] when none).
    pub tag: String,
    /// Start, seconds: since the epoch when the log gives StartTime or BaseTime, else as
    /// written.
    pub start: f64,
    /// Length, seconds.
    pub length: f64,
    /// The values recorded in the interval (tickscope: ns).
    pub histogram: Histogram<u64>,
}

/// A parsed log: its intervals in file order, the time it started (StartTime, seconds since
/// the epoch, when it says) and the warnings (a truncated last line).
#[derive(Debug, Clone, Default)]
pub struct Log {
    /// Every interval.
    pub intervals: Vec<Interval>,
    /// StartTime, seconds since the epoch.
    pub start_time: Option<f64>,
    /// Comment lines (without `#`), e.g. tickscope's settings.
    pub comments: Vec<String>,
    /// Remarks on what was left out.
    pub warnings: Vec<String>,
}

/// Seconds below which an interval start is taken as relative (a year, as HdrHistogram's
/// Java reader decides between absolute and relative timestamps).
const RELATIVE_BELOW: f64 = 365.0 * 24.0 * 3600.0;

/// Whether `text` looks like an interval log rather than JSON.
pub fn looks_like_hlog(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('#') || t.starts_with("\"StartTimestamp\"") || t.starts_with("Tag=")
}

/// Parses an interval log.
///
/// # Errors
/// One sentence: a line that is not an interval, comment or legend (except a cut-short last
/// line), or a histogram that cannot be decoded.
pub fn parse(text: &str) -> Result<Log, String> {
    let mut log = Log {
        comments: text
            .lines()
            .filter_map(|l| l.strip_prefix('#'))
            .filter(|l| !l.starts_with('['))
            .map(str::to_string)
            .collect(),
        ..Log::default()
    };
    let mut base_time = None;
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        match entry {
            Ok(LogEntry::StartTime(t)) => log.start_time = Some(t.as_secs_f64()),
            Ok(LogEntry::BaseTime(t)) => base_time = Some(t.as_secs_f64()),
            Ok(LogEntry::Interval(i)) => {
                let bytes = base64_decode(i.encoded_histogram())?;
                let histogram: Histogram<u64> = de
                    .deserialize(&mut &bytes[..])
                    .map_err(|e| format!("a histogram cannot be decoded: {e:?}"))?;
                let mut start = i.start_timestamp().as_secs_f64();
                if start < RELATIVE_BELOW {
                    start += base_time.or(log.start_time).unwrap_or(0.0);
                }
                log.intervals.push(Interval {
                    tag: i.tag().map_or(UNTAGGED, |t| t.as_str()).to_string(),
                    start,
                    length: i.duration().as_secs_f64(),
                    histogram,
                });
            }
            Err(e) => {
                let hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                    offset,
                } = e;
                let rest = &text[offset.min(text.len())..];
                let line_no = text[..offset.min(text.len())].lines().count() + 1;
                if !rest.trim_end().contains('\n') {
                    log.warnings.push(format!(
                        "line {line_no} is cut short and was left out (a log still being \
                         written?)"
                    ));
                    break;
                }
                return Err(format!(
                    "line {line_no} is not an interval, a comment or the legend"
                ));
            }
        }
    }
    Ok(log)
}

/// Decodes standard base64 (the crate's writer uses the standard alphabet with padding).
fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| format!("a histogram is not base64: {e}"))
}

impl Log {
    /// Every tag, sorted.
    pub fn tags(&self) -> Vec<&str> {
        let mut t: Vec<&str> = self.intervals.iter().map(|i| i.tag.as_str()).collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// The intervals of `tag` that start in `[from, to)` (seconds from the log's first
    /// interval start), merged. `None` when none is.
    pub fn merged(&self, tag: &str, from: Option<f64>, to: Option<f64>) -> Option<Histogram<u64>> {
        let origin = self.origin();
        let mut out: Option<Histogram<u64>> = None;
        for i in self.intervals.iter().filter(|i| i.tag == tag) {
            let t = i.start - origin;
            if from.is_some_and(|f| t < f - 1e-9) || to.is_some_and(|e| t >= e - 1e-9) {
                continue;
            }
            match &mut out {
                Some(h) => h.add(&i.histogram).map_err(|_| ()).ok()?,
                None => {
                    let mut h = i.histogram.clone();
                    h.auto(true);
                    out = Some(h);
                }
            }
        }
        out
    }

    /// The start of the log: StartTime, else the first interval's start, seconds.
    pub fn origin(&self) -> f64 {
        self.start_time
            .or_else(|| self.intervals.iter().map(|i| i.start).reduce(f64::min))
            .unwrap_or(0.0)
    }
}

/// The tag a comparison column is made of: `all` (tickscope's merge of every thread) when
/// present, else untagged intervals, else every tag merged.
fn column_tag(log: &Log) -> Option<String> {
    let tags = log.tags();
    ["all", UNTAGGED]
        .iter()
        .find(|t| tags.contains(t))
        .map(|t| t.to_string())
}

/// The unit of a foreign interval log's values, as `compare --hlog-unit` names it: the
/// factor to ns. tickscope's own logs are always ns.
pub fn unit_factor(name: &str) -> Option<i64> {
    match name {
        "ns" => Some(1),
        "us" | "µs" => Some(1_000),
        "ms" => Some(1_000_000),
        _ => None,
    }
}

/// Whether a column read from an interval log comes from another tool (its values' unit is
/// the writer's choice; tickscope writes ns and says so in its header).
pub fn is_foreign(m: &Measurement) -> bool {
    m.format == SourceFormat::Hlog
        && !m
            .settings
            .get(&Setting::Tool)
            .is_some_and(|t| t.starts_with("tickscope"))
}

/// Rescales a foreign interval log's column whose values are in units of `factor` ns (1000
/// for µs) to ns; does nothing to tickscope's own logs or with a factor of 1.
pub fn rescale(m: &mut Measurement, factor: i64) {
    if factor == 1 || !is_foreign(m) {
        return;
    }
    if let Some(l) = m.latency_ns.as_mut() {
        let f = |v: i64| v.saturating_mul(factor);
        l.min = f(l.min);
        l.max = f(l.max);
        l.mean *= factor as f64;
        for p in [&mut l.p50, &mut l.p99, &mut l.p99_9] {
            *p = p.map(f);
        }
    }
    for n in &mut m.notes {
        if let Some(head) = n.strip_suffix("values taken as ns") {
            *n = format!("{head}values taken as {} ns each (--hlog-unit)", factor);
        }
    }
}

/// The settings a tickscope interval log's header records (`method: timerfd`,
/// `interval_ns: 1000000`, …), in the words the result file's importer uses
/// ([`super::tickscope`]), so that the log and the result of one run compare equal. Empty
/// for another tool's log.
pub fn header_settings(comments: &[String]) -> BTreeMap<Setting, String> {
    let mut out = BTreeMap::new();
    let ours = comments
        .iter()
        .any(|c| c.trim().starts_with("tool: tickscope"));
    if !ours {
        return out;
    }
    for c in comments {
        let Some((key, value)) = c.trim().split_once(": ") else {
            continue;
        };
        let value = value.trim().to_string();
        let setting = match key {
            "method" => Setting::Method,
            "policy" => Setting::Policy,
            "priority" => Setting::Priority,
            "clock" => Setting::Clock,
            "kernel" => Setting::Kernel,
            "preemption" => Setting::Preemption,
            "pm_qos" => Setting::PmQos,
            "timer_slack" => Setting::TimerSlack,
            "interval_ns" => match value.parse::<i64>() {
                Ok(ns) => {
                    out.insert(Setting::Interval, crate::units::interval(ns));
                    continue;
                }
                Err(_) => continue,
            },
            "threads (cpu)" => {
                out.insert(Setting::Threads, value.split(',').count().to_string());
                continue;
            }
            _ => continue,
        };
        out.insert(setting, value);
    }
    out
}

/// One comparison column from an interval log (values taken as ns; see the module docs).
///
/// # Errors
/// As [`parse`], or a log without intervals.
pub fn import(text: &str, stem: &str) -> Result<Measurement, String> {
    let log = parse(text)?;
    let hist = match column_tag(&log) {
        Some(tag) => log.merged(&tag, None, None),
        None => {
            let mut all: Option<Histogram<u64>> = None;
            for t in log.tags().into_iter().filter(|t| !t.ends_with(".early")) {
                if let Some(h) = log.merged(t, None, None) {
                    match &mut all {
                        Some(a) => a.add(&h).map_err(|e| format!("{e:?}"))?,
                        None => all = Some(h),
                    }
                }
            }
            all
        }
    }
    .ok_or("the log has no intervals")?;
    let q = |p: f64| Some(hist.highest_equivalent(hist.value_at_quantile(p)) as i64);
    let tool = log
        .comments
        .iter()
        .find_map(|c| c.trim().strip_prefix("tool: "))
        .unwrap_or("HdrHistogram interval log");
    let mut settings = header_settings(&log.comments);
    settings.insert(Setting::Tool, tool.to_string());
    let mut notes = log.warnings.clone();
    notes.push(format!(
        "from an interval log ({} intervals, tags {}); values taken as ns",
        log.intervals.len(),
        log.tags()
            .iter()
            .map(|t| if t.is_empty() { "(none)" } else { t })
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(Measurement {
        label: stem.to_string(),
        source: String::new(),
        format: SourceFormat::Hlog,
        settings,
        samples: hist.len(),
        latency_ns: Some(LatencyFigures {
            min: hist.min() as i64,
            mean: hist.mean(),
            p50: q(0.5),
            p99: q(0.99),
            p99_9: q(0.999),
            max: hist.max() as i64,
            lower_bounds: Vec::new(),
        }),
        resolution_ns: None,
        dt_sd_ns: None,
        overruns: None,
        cpu_percent: None,
        notes,
        threads: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tickscope_header_gives_the_settings_and_another_tools_none() {
        let ours: Vec<String> = [
            "tool: tickscope 0.1.0",
            "method: timerfd",
            "policy: fifo",
            "priority: 90",
            "interval_ns: 250000",
            "clock: monotonic",
            "threads (cpu): 0,1,unpinned",
            "timer_slack: 1 ns",
            "unit: ns; tags T<k> thread k",
        ]
        .map(String::from)
        .to_vec();
        let s = header_settings(&ours);
        assert_eq!(s[&Setting::Method], "timerfd");
        assert_eq!(s[&Setting::Priority], "90");
        assert_eq!(s[&Setting::Interval], "250 µs");
        assert_eq!(s[&Setting::Threads], "3");
        assert_eq!(s[&Setting::TimerSlack], "1 ns");
        assert!(
            !s.contains_key(&Setting::Load),
            "a log does not record the load"
        );
        let theirs = vec!["method: timerfd".to_string()];
        assert!(header_settings(&theirs).is_empty());
    }
}
