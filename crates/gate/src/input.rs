//! Reading a baseline or candidate file into a [`Series`]: tickscope's JSON results (every
//! schema version: `tickscope.run/1` and `/2`), HdrHistogram interval logs (tickscope's
//! `--hlog`, `tickscope hlog merge` of a fleet, other writers), cyclictest `--json` and
//! jitterdebugger results; for a task set (`run --tasks`, its result or its log) also each
//! task's series. The format is recognised from the content, as `tickscope
//! compare` does ([`tickscope_report::import`]).

use crate::series::{Series, Window, WindowKind};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;
use tickscope_engine::result::{ThreadStats, WindowStats};
use tickscope_engine::time::Nanos;
use tickscope_report::document::{MethodRun, RunDocument};
use tickscope_report::import::{self, hlog::Reader, open_input};
use tickscope_report::quoted;
use tickscope_report::sink::hlog::TASKS_PREFIX;

/// A file as the gate reads it: the whole run, and for a task-set result (`tickscope run
/// --tasks … --json`) each task as a series of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// The whole run (every thread or task merged).
    pub whole: Series,
    /// A task set's tasks in the order given, named as the result names them (task `i` is
    /// thread `i`: its release latencies, overruns and per-second windows); `None` for any
    /// other run.
    pub tasks: Option<Vec<(String, Series)>>,
}

/// Reads `path` (`-` for standard input).
///
/// # Errors
/// One line naming the file: unreadable, of no known format, malformed, holding several
/// runs (a `--methods`/`--rounds` comparison: the gate compares one run per file), a task
/// set whose tasks are not its threads, or no wake-ups.
pub fn read(path: &Path) -> Result<Input, String> {
    let name = path.display().to_string();
    let fail = |p: String| format!("{}: {p}", quoted(path));
    let mut input = open_input(path).map_err(|e| e.to_string())?;
    let mut tasks = None;
    let series = if input.is_hlog().map_err(|e| e.to_string())? {
        let (whole, of_tasks) =
            read_hlog(input.into_reader(), name).map_err(|p| fail(format!("interval log: {p}")))?;
        tasks = of_tasks;
        whole
    } else {
        let text = input.into_text().map_err(|e| e.to_string())?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| fail(format!("not valid JSON: {e}")))?;
        if json.get("schema").is_some() {
            let doc = RunDocument::from_json_value(json)
                .map_err(|p| fail(format!("tickscope result: {p}")))?;
            import::validate::check(&doc).map_err(|p| fail(format!("tickscope result: {p}")))?;
            tasks = task_series(&doc, &name).map_err(fail)?;
            from_document(&doc, name).map_err(fail)?
        } else {
            let stem = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            let found = import::parse(&name, &stem, &text).map_err(|e| e.to_string())?;
            from_tool(found, name).map_err(fail)?
        }
    };
    if series.samples == 0 {
        return Err(fail("no wake-ups in the file".into()));
    }
    Ok(Input {
        whole: series,
        tasks,
    })
}

/// A tickscope document's single run: its merged histogram, overruns and windows.
fn from_document(doc: &RunDocument, source: String) -> Result<Series, String> {
    let run = single_run(doc)?;
    let summary = &run.summary;
    let windows_of = if summary.windows.is_empty() && run.threads.len() == 1 {
        &run.threads[0].windows
    } else {
        &summary.windows
    };
    Ok(from_stats(summary, windows_of, run.interrupted, source))
}

/// The only run of `doc`.
fn single_run(doc: &RunDocument) -> Result<&MethodRun, String> {
    match doc.each_run() {
        [run] => Ok(run),
        runs => Err(format!(
            "holds {} runs (--methods or --rounds); the gate compares one run per file",
            runs.len()
        )),
    }
}

/// One series of a tickscope run (a thread, or every thread merged): its histogram and
/// overruns from `stats`, its windows from `windows_of`.
fn from_stats(
    stats: &ThreadStats,
    windows_of: &[WindowStats],
    interrupted: bool,
    source: String,
) -> Series {
    let total = stats
        .latency_ns
        .as_ref()
        .map(|l| l.histogram.buckets.clone())
        .unwrap_or_default();
    // Windows of one length only: a result keeps a day-long run's windows after its first
    // hour as windows of a minute (tickscope_report::coarse), whose p99 is not a second's.
    let grain = windows_of
        .iter()
        .filter(|w| w.samples > 0)
        .map(|w| w.span.max(1))
        .min()
        .unwrap_or(1);
    let longer = windows_of
        .iter()
        .filter(|w| w.samples > 0 && w.span.max(1) != grain)
        .count();
    let windows: Vec<Window> = windows_of
        .iter()
        .filter(|w| w.samples > 0 && w.span.max(1) == grain)
        .map(|w| Window {
            samples: w.samples,
            overruns: Some(w.overruns),
            p99: w.latency_p99,
            histogram: Vec::new(),
        })
        .collect();
    let mut notes = Vec::new();
    if interrupted {
        notes.push("the run was interrupted: the figures cover what ran".into());
    }
    if longer > 0 {
        notes.push(format!(
            "{longer} longer windows (a day-long run's minutes after its first hour) left out \
             of the window tests; the interval log keeps every window"
        ));
    }
    let window_kind = if windows.is_empty() {
        notes.push("the result keeps no windows".into());
        WindowKind::None
    } else {
        WindowKind::Summaries
    };
    Series {
        source,
        format: "tickscope",
        samples: total.iter().map(|b| b.1).sum(),
        total,
        overruns: Some(stats.overruns),
        windows,
        window_kind,
        notes,
    }
}

/// The tasks of a task-set result, each as a series of its own; `None` for a result of
/// any other run.
fn task_series(doc: &RunDocument, source: &str) -> Result<Option<Vec<(String, Series)>>, String> {
    let Some(set) = &doc.tasks else {
        return Ok(None);
    };
    let run = single_run(doc)?;
    if set.tasks.len() != run.threads.len() {
        return Err(format!(
            "a task set of {} tasks with {} threads (task i is thread i)",
            set.tasks.len(),
            run.threads.len()
        ));
    }
    Ok(Some(
        set.tasks
            .iter()
            .zip(&run.threads)
            .map(|(task, thread)| {
                let series =
                    from_stats(thread, &thread.windows, run.interrupted, source.to_string());
                (task.name.clone(), series)
            })
            .collect(),
    ))
}

/// Another tool's result (cyclictest, jitterdebugger): its threads' histograms merged.
/// Wake-ups beyond the histogram's range are placed at the largest latency the tool
/// recorded, so a tail quantile among them is the run's maximum.
fn from_tool(found: Vec<import::Measurement>, source: String) -> Result<Series, String> {
    let [m] = <[import::Measurement; 1]>::try_from(found)
        .map_err(|f| format!("holds {} runs; the gate compares one per file", f.len()))?;
    let mut total = BTreeMap::<Nanos, u64>::new();
    let mut notes = m.notes.clone();
    let mut overflow = 0u64;
    for (_, t) in &m.threads {
        let Some(l) = &t.latency_ns else { continue };
        let held: u64 = l.histogram.buckets.iter().map(|b| b.1).sum();
        for &(v, c) in &l.histogram.buckets {
            *total.entry(v).or_default() += c;
        }
        if t.samples > held {
            *total.entry(l.max).or_default() += t.samples - held;
            overflow += t.samples - held;
        }
    }
    if overflow > 0 {
        notes.push(format!(
            "{overflow} wake-ups beyond the histogram's range counted at the thread's maximum"
        ));
    }
    let total: Vec<(Nanos, u64)> = total.into_iter().collect();
    Ok(Series {
        source,
        format: m.format.name(),
        samples: total.iter().map(|b| b.1).sum(),
        total,
        overruns: None,
        windows: Vec::new(),
        window_kind: WindowKind::None,
        notes,
    })
}

/// Which intervals of a log make the windows: tag `all` (tickscope's merge of its threads),
/// else the untagged intervals, else every tag but the `.early` ones, merged per start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    All,
    Untagged,
    Others,
}

/// The task names of a task set's log (`run --tasks … --hlog`: its header line
/// [`TASKS_PREFIX`]), task `k` being tag `T<k>`; `None` for any other log.
fn task_names(comments: &[String]) -> Option<Vec<String>> {
    comments
        .iter()
        .find_map(|c| c.trim().strip_prefix(TASKS_PREFIX))
        .and_then(|names| serde_json::from_str(names).ok())
}

/// One task's windows of a task set's log: its tag's intervals (one per start, ms) of the
/// shortest length — a day-long log's minutes after the first stretch are left out, with a
/// note, as from a result file.
fn logged_task(source: &str, intervals: Intervals, mut notes: Vec<String>) -> Series {
    let shortest = intervals
        .values()
        .map(|w| w.0)
        .fold(f64::INFINITY, f64::min);
    let (kept, longer): (Vec<_>, Vec<_>) = intervals
        .into_values()
        .partition(|w| w.0 <= shortest * 1.001);
    if !longer.is_empty() {
        notes.push(format!(
            "{} longer intervals (a day-long run's minutes after its first stretch) left out \
             of the window tests",
            longer.len()
        ));
    }
    let windows = kept
        .into_iter()
        .map(|(_, histogram)| Window {
            histogram,
            ..Window::default()
        })
        .collect();
    Series::from_histogram_windows(source.to_string(), "hlog", windows, notes)
}

/// One tag's intervals of a log by start (ms): each its length (s) and histogram.
type Intervals = BTreeMap<i64, (f64, Vec<(Nanos, u64)>)>;

/// A log's whole run and, for a task set's log, each task's series: see [`read_hlog`].
type FromLog = (Series, Option<Vec<(String, Series)>>);

/// An interval log's windows: one per interval start (ms), histograms of the chosen tag;
/// for a task set's log also each task's, from its tag `T<k>`.
fn read_hlog<R: BufRead>(src: R, source: String) -> Result<FromLog, String> {
    let mut reader = Reader::new(src);
    let mut names: Option<Vec<String>> = None;
    let mut per_task: BTreeMap<usize, Intervals> = BTreeMap::new();
    let mut first = true;
    // One sparse histogram per (class, start in ms): a day-long log holds 86 400 windows, so
    // each is kept as a short sorted list, merged when a start repeats (several tags, or
    // hosts merged by `hlog merge` at the same instant).
    let mut found: BTreeMap<(Class, i64), Vec<(Nanos, u64)>> = BTreeMap::new();
    let mut all_seen = false;
    while let Some(head) = reader.next_head()? {
        if std::mem::take(&mut first) {
            names = task_names(reader.comments());
        }
        let class = match head.tag.as_str() {
            "all" => Class::All,
            import::hlog::UNTAGGED => Class::Untagged,
            t if t.ends_with(".early") => continue,
            _ => Class::Others,
        };
        let task = names.as_ref().and_then(|n| {
            head.tag
                .strip_prefix('T')
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k < n.len())
        });
        all_seen |= class == Class::All;
        if all_seen && class != Class::All && task.is_none() {
            continue;
        }
        let h = reader.histogram()?;
        let buckets: Vec<(Nanos, u64)> = h
            .iter_recorded()
            .map(|v| {
                let value = Nanos::try_from(v.value_iterated_to()).unwrap_or(Nanos::MAX);
                (value, v.count_at_value())
            })
            .collect();
        if let Some(k) = task {
            let start = (head.start * 1000.0).round() as i64;
            per_task
                .entry(k)
                .or_default()
                .insert(start, (head.length, buckets.clone()));
            if all_seen && class != Class::All {
                continue;
            }
        }
        let window = found
            .entry((class, (head.start * 1000.0).round() as i64))
            .or_default();
        if window.is_empty() {
            *window = buckets;
        } else {
            let mut merged: BTreeMap<Nanos, u64> = window.drain(..).collect();
            for (v, c) in buckets {
                *merged.entry(v).or_default() += c;
            }
            window.extend(merged);
        }
    }
    let class = found
        .keys()
        .map(|k| k.0)
        .min()
        .ok_or("the log has no intervals")?;
    let mut notes = reader.warnings().to_vec();
    notes.push(match class {
        Class::All => "windows: intervals tagged 'all'".to_string(),
        Class::Untagged => "windows: the untagged intervals".to_string(),
        Class::Others => "windows: every tag's intervals merged per start".to_string(),
    });
    let windows = found
        .into_iter()
        .filter(|(k, _)| k.0 == class)
        .map(|(_, histogram)| Window {
            histogram,
            ..Window::default()
        })
        .collect();
    let tasks = names.map(|names| {
        names
            .into_iter()
            .enumerate()
            .map(|(k, name)| {
                let intervals = per_task.remove(&k).unwrap_or_default();
                let notes = vec![format!("task {name}: intervals tagged 'T{k}'")];
                (name, logged_task(&source, intervals, notes))
            })
            .collect()
    });
    Ok((
        Series::from_histogram_windows(source, "hlog", windows, notes),
        tasks,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;
    use crate::synthetic::Model;
    use crate::tasks::judge_tasks;
    use crate::verdict::Outcome;
    use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
    use hdrhistogram::serialization::V2DeflateSerializer;
    use std::time::Duration;

    /// A task set's log as `run --tasks … --hlog` writes it: the tasks header line, then per
    /// second `T0`, `T1` and `all`; task 1's stalls `scale` times as long.
    fn task_set_log(seed: u64, scale: f64) -> Vec<u8> {
        let model = |s: f64| Model {
            windows: 120,
            stall_scale: s,
            ..Model::default()
        };
        let (t0, t1) = (
            model(1.0).histograms(seed),
            model(scale).histograms(seed + 100),
        );
        let mut buf = Vec::new();
        let mut ser = V2DeflateSerializer::new();
        let mut b = IntervalLogWriterBuilder::new();
        b.add_comment("tool: tickscope (test)");
        b.add_comment(&format!("{TASKS_PREFIX}[\"1ms\",\"control\"]"));
        let mut w = b.begin_log_with(&mut buf, &mut ser).unwrap();
        for (s, (a, c)) in t0.iter().zip(&t1).enumerate() {
            let mut all = a.clone();
            all.add(c).unwrap();
            for (tag, h) in [("T0", a), ("T1", c), ("all", &all)] {
                let at = Duration::from_secs(s as u64);
                w.write_histogram(h, at, Duration::from_secs(1), Tag::new(tag))
                    .unwrap();
            }
        }
        drop(w);
        buf
    }

    #[test]
    fn a_task_set_log_gives_each_task_with_window_histograms() {
        let log = task_set_log(1, 1.0);
        let (whole, tasks) = read_hlog(&log[..], "base".into()).unwrap();
        let tasks = tasks.expect("a task set's log");
        let names: Vec<&str> = tasks.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(names, ["1ms", "control"]);
        for (_, s) in &tasks {
            assert_eq!(s.window_kind, crate::series::WindowKind::Histograms);
            assert_eq!(s.windows.len(), 120);
        }
        assert_eq!(whole.samples, tasks[0].1.samples + tasks[1].1.samples);
        // A log without the header line is one run.
        let plain = String::from_utf8_lossy(&log).replace(TASKS_PREFIX, "other: ");
        assert!(read_hlog(plain.as_bytes(), "x".into()).unwrap().1.is_none());
    }

    #[test]
    fn a_regression_in_one_task_of_a_log_fails_that_task_with_full_power() {
        let base = read_hlog(&task_set_log(1, 1.0)[..], "base".into()).unwrap();
        let same = read_hlog(&task_set_log(2, 1.0)[..], "same".into()).unwrap();
        let worse = read_hlog(&task_set_log(2, 2.0)[..], "worse".into()).unwrap();
        let (base, same, worse) = (base.1.unwrap(), same.1.unwrap(), worse.1.unwrap());
        let rules = Rules::default();
        let v = judge_tasks(&base, &same, "same", &rules);
        assert!(v.iter().all(|v| v.outcome == Outcome::Pass), "{v:#?}");
        let v = judge_tasks(&base, &worse, "worse", &rules);
        assert_eq!(v[0].outcome, Outcome::Pass, "{v:#?}");
        assert_eq!(v[1].outcome, Outcome::Regression, "{v:#?}");
        assert!(!v[1].notes.iter().any(|n| n.contains("reduced power")));
    }
}
