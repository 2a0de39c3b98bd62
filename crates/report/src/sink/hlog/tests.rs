use super::*;
use crate::import::hlog::{Interval, Reader, Totals};
use crate::sink::synthetic;

/// Every interval of a log, collected — for these tests only: the readers themselves never
/// hold every interval.
struct Read {
    intervals: Vec<Interval>,
    start_time: Option<f64>,
    warnings: Vec<String>,
    text: String,
}

fn parse(text: &str) -> Result<Read, String> {
    let mut r = Reader::new(text.as_bytes());
    let intervals = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok(Read {
        intervals,
        start_time: r.start_time(),
        warnings: r.warnings().to_vec(),
        text: text.to_string(),
    })
}

impl Read {
    fn tags(&self) -> Vec<&str> {
        let mut t: Vec<&str> = self.intervals.iter().map(|i| i.tag.as_str()).collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    fn origin(&self) -> f64 {
        self.start_time.unwrap()
    }

    /// The intervals of `tag` starting in [from, to) s after StartTime, merged by a
    /// streaming pass ([`Totals`]).
    fn merged(&self, tag: &str, from: Option<f64>, to: Option<f64>) -> Option<Histogram<u64>> {
        let origin = self.origin();
        let mut totals = Totals::default();
        totals
            .add_log(&mut Reader::new(self.text.as_bytes()), |h| {
                let t = h.start - origin;
                h.tag == tag
                    && !from.is_some_and(|f| t < f - 1e-9)
                    && !to.is_some_and(|e| t >= e - 1e-9)
            })
            .unwrap();
        totals.tags.remove(tag)?.histogram
    }
}

/// Runs `run` through an HlogSink into a temporary file; returns the log's text.
fn write(run: &synthetic::Run) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.hlog");
    let mut sink = HlogSink::new(Output::prepare(&path).unwrap()).unwrap();
    run.feed(&mut sink);
    let doc_notes = &mut Vec::new();
    let ctx = run.ctx();
    let doc = run.document();
    sink.run_finished(&ctx, &doc).unwrap();
    sink.finish(&doc, doc_notes).unwrap();
    assert_eq!(doc_notes.len(), 1, "{doc_notes:?}");
    std::fs::read_to_string(&path).unwrap()
}

#[test]
fn round_trip_keeps_every_count_per_window_and_thread() {
    let run = synthetic::run(2, 4, 1000);
    let text = write(&run);
    assert!(text.contains("\"StartTimestamp\""), "{text}");
    assert!(text.contains("#[StartTime: "));
    let log = parse(&text).unwrap();
    assert!(log.warnings.is_empty());
    assert_eq!(log.tags(), vec!["T0", "T0.early", "T1", "T1.early", "all"]);
    for (w, window) in run.windows.iter().enumerate() {
        let at = |tag: &str| {
            log.intervals
                .iter()
                .find(|i| i.tag == tag && (i.start - log.origin() - w as f64).abs() < 1e-6)
                .unwrap_or_else(|| panic!("{tag} window {w}"))
        };
        let mut all = new_histogram();
        for t in 0..2 {
            let mut lat = new_histogram();
            let mut early = new_histogram();
            for s in &window.samples[t] {
                let l = s.woke - s.expiry;
                match l >= 0 {
                    true => lat.record(l as u64).unwrap(),
                    false => early.record(l.unsigned_abs()).unwrap(),
                }
            }
            let got = &at(&format!("T{t}")).histogram;
            assert_eq!(got, &lat);
            assert_eq!(&at(&format!("T{t}.early")).histogram, &early);
            assert_eq!(got.len() + early.len(), window.report.threads[t].1.samples);
            all.add(&lat).unwrap();
        }
        assert_eq!(at("all").histogram, all);
        assert_eq!(at("all").length, 1.0);
    }
}

#[test]
fn merged_percentiles_equal_the_in_memory_merge() {
    let run = synthetic::run(3, 5, 400);
    let log = parse(&write(&run)).unwrap();
    let mut memory = new_histogram();
    for w in &run.windows[1..4] {
        for s in w.samples.iter().flatten() {
            let l = s.woke - s.expiry;
            if l >= 0 {
                memory.record(l as u64).unwrap();
            }
        }
    }
    let merged = log.merged("all", Some(1.0), Some(4.0)).unwrap();
    assert_eq!(merged.len(), memory.len());
    for q in [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
        assert_eq!(
            merged.value_at_quantile(q),
            memory.value_at_quantile(q),
            "q {q}"
        );
    }
    // And the engine agrees on the non-negative part of each thread's total.
    let engine = &run.totals[0].latency_hist;
    let t0 = log.merged("T0", None, None).unwrap();
    assert_eq!(
        t0.len() + log.merged("T0.early", None, None).unwrap().len(),
        engine.len()
    );
}

#[test]
fn a_cut_short_last_line_is_left_out_with_a_warning() {
    let run = synthetic::run(1, 3, 100);
    let text = write(&run);
    let cut = &text[..text.len() - 20];
    let log = parse(cut).unwrap();
    assert_eq!(log.warnings.len(), 1);
    assert_eq!(
        log.intervals.len(),
        parse(&text).unwrap().intervals.len() - 1
    );
}

/// The log is at its path and parses while the run goes on: after the samples and report
/// of window w, every window before w is in the file (w itself may still get samples).
#[test]
fn the_log_is_readable_and_valid_while_the_run_goes_on() {
    let run = synthetic::run(2, 5, 300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.hlog");
    let mut sink = HlogSink::new(Output::prepare(&path).unwrap()).unwrap();
    let ctx = run.ctx();
    sink.started(&ctx, &run.applied);
    for (w, window) in run.windows.iter().enumerate() {
        for (t, s) in window.samples.iter().enumerate() {
            sink.samples(t, s);
        }
        sink.window(&ctx, &window.report);
        // Opened with the first window written, so that a run failing before it leaves an
        // existing file alone.
        let Ok(text) = std::fs::read_to_string(&path) else {
            assert!(w < 2, "window {w}: no log yet");
            continue;
        };
        let log = parse(&text).unwrap();
        let windows_in = log.intervals.iter().filter(|i| i.tag == "all").count();
        assert!(
            windows_in + 1 >= w,
            "window {w}: {windows_in} windows in the file"
        );
        if w >= 2 {
            assert!(windows_in >= 1, "window {w}: nothing written yet");
        }
    }
    let doc = run.document();
    sink.finish(&doc, &mut Vec::new()).unwrap();
    let log = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(log.intervals.iter().filter(|i| i.tag == "all").count(), 5);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// The result's `hlog` section names the log as written: the path as given, the tags in
/// the log, the interval length, and the log's own StartTime (to the ms).
#[test]
fn the_section_matches_the_log_it_names() {
    let run = synthetic::run(2, 3, 200);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.hlog");
    let mut sink = HlogSink::new(Output::prepare(&path).unwrap()).unwrap();
    run.feed(&mut sink);
    let mut doc = run.document();
    sink.annotate(&mut doc);
    sink.run_finished(&run.ctx(), &doc).unwrap();
    sink.finish(&doc, &mut Vec::new()).unwrap();
    let log = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let section = doc.hlog.expect("annotated");
    assert_eq!(section.path, path.to_string_lossy());
    assert_eq!(section.window_ns, run.config.window_ns);
    assert_eq!(
        section.tags,
        vec!["T0", "T1", "all", "T0.early", "T1.early"]
    );
    let mut in_log: Vec<&str> = log.tags();
    let mut named: Vec<&str> = section.tags.iter().map(String::as_str).collect();
    in_log.sort_unstable();
    named.sort_unstable();
    assert_eq!(in_log, named);
    let named_start = humantime::parse_rfc3339(section.start_time.as_deref().unwrap())
        .unwrap()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let log_start = log.start_time.expect("StartTime line");
    assert!(
        (named_start - log_start).abs() < 1e-6,
        "{named_start} {log_start}"
    );
    // Round trip through JSON keeps it.
    let json = serde_json::to_string(&section).unwrap();
    assert!(json.contains("\"start_time\":"), "{json}");
    assert_eq!(serde_json::from_str::<HlogSection>(&json).unwrap(), section);
}

thread_local! {
    static WARNED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn record_warning(line: &str) {
    WARNED.with(|w| w.borrow_mut().push(line.to_string()));
}

/// A log on a full device (`/dev/full`: every write fails with ENOSPC, as on a full disk):
/// the first failed window is said at once — one line, once — while the run goes on, and
/// the sink fails at the end with the same error.
#[test]
fn a_full_disk_is_said_at_the_first_failed_window_once() {
    let full = std::path::Path::new("/dev/full");
    if std::fs::OpenOptions::new().write(true).open(full).is_err() {
        eprintln!("skipping a_full_disk_is_said_at_the_first_failed_window_once: /dev/full cannot be opened here");
        return;
    }
    let run = synthetic::run(2, 6, 200);
    let mut sink = HlogSink::new(Output::prepare(full).unwrap()).unwrap();
    sink.warn = record_warning;
    let ctx = run.ctx();
    sink.started(&ctx, &run.applied);
    let mut first_said = None;
    for (w, window) in run.windows.iter().enumerate() {
        for (t, s) in window.samples.iter().enumerate() {
            sink.samples(t, s);
        }
        sink.window(&ctx, &window.report);
        if first_said.is_none() && WARNED.with(|x| !x.borrow().is_empty()) {
            first_said = Some(w);
        }
    }
    let w = first_said.expect("the write error was said before the run ended");
    assert!(w < run.windows.len() - 1, "said only at window {w}");
    let doc = run.document();
    sink.run_finished(&ctx, &doc).unwrap();
    let end = sink.finish(&doc, &mut Vec::new()).unwrap_err();
    let warned = WARNED.with(|x| x.borrow().clone());
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(!warned[0].contains('\n'), "{warned:?}");
    assert!(
        warned[0].starts_with("--hlog: cannot write '/dev/full': "),
        "{warned:?}"
    );
    assert!(warned[0].contains("the run goes on"), "{warned:?}");
    assert!(end.0.starts_with("cannot write '/dev/full': "), "{end:?}");
}

/// The log is built from the engine's window histograms, not from the wake-ups: fed only
/// the windows (no sample at all), it holds for every window and tag exactly the histogram
/// the window's wake-ups give — read back with the `hdrhistogram` crate's own interval-log
/// reader and deserializer — and the sink asks the engine for no raw sample.
#[test]
fn the_windows_alone_give_the_histograms_of_the_samples() {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    use std::collections::BTreeMap;
    let run = synthetic::run(2, 4, 700);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.hlog");
    let mut sink = HlogSink::new(Output::prepare(&path).unwrap()).unwrap();
    assert!(!sink.needs().raw_samples && sink.needs().latency_histograms);
    let ctx = run.ctx();
    sink.started(&ctx, &run.applied);
    for w in &run.windows {
        sink.window(&ctx, &w.report);
    }
    let doc = run.document();
    sink.finish(&doc, &mut Vec::new()).unwrap();
    let text = std::fs::read(&path).unwrap();
    let mut got: BTreeMap<(u64, String), Histogram<u64>> = BTreeMap::new();
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(&text) {
        let LogEntry::Interval(i) = entry.unwrap() else {
            continue;
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(i.encoded_histogram())
            .unwrap();
        let h: Histogram<u64> = de.deserialize(&mut bytes.as_slice()).unwrap();
        let tag = i.tag().map_or("", |t| t.as_str()).to_string();
        got.insert((i.start_timestamp().as_secs_f64().round() as u64, tag), h);
    }
    let mut want: BTreeMap<(u64, String), Histogram<u64>> = BTreeMap::new();
    for (w, window) in run.windows.iter().enumerate() {
        let mut all = new_histogram();
        for (t, samples) in window.samples.iter().enumerate() {
            let (mut lat, mut early) = (new_histogram(), new_histogram());
            for s in samples {
                let l = s.woke - s.expiry;
                match l >= 0 {
                    true => lat.record(l as u64).unwrap(),
                    false => early.record(l.unsigned_abs()).unwrap(),
                }
            }
            all.add(&lat).unwrap();
            want.insert((w as u64, format!("T{t}")), lat);
            if !early.is_empty() {
                want.insert((w as u64, format!("T{t}.early")), early);
            }
        }
        want.insert((w as u64, "all".into()), all);
    }
    // Interval starts are relative to StartTime: shift them to window indices.
    let origin = got.keys().map(|k| k.0).min().unwrap();
    let got: BTreeMap<_, _> = got
        .into_iter()
        .map(|((t, tag), h)| ((t - origin, tag), h))
        .collect();
    assert_eq!(got.len(), want.len());
    for (key, h) in &want {
        let g = got.get(key).unwrap_or_else(|| panic!("{key:?} missing"));
        assert_eq!(g, h, "{key:?}");
        assert_eq!(g.max(), h.max(), "{key:?}");
        assert_eq!(g.len(), h.len(), "{key:?}");
    }
}
