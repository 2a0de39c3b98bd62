use super::*;
use crate::export::csv::CsvExport;
use crate::export::Exporter;
use crate::sink::synthetic;

/// The table `CsvSink` writes for `run`, and the sink (to ask what it held).
fn written(run: &synthetic::Run) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let mut sink = CsvSink::new(Output::prepare(&path).unwrap());
    run.feed(&mut sink);
    let (bytes, _) = sink.held();
    let series = run.config.cpus.len() + usize::from(run.config.cpus.len() > 1);
    assert!(bytes <= series * CHUNK, "{bytes} B of rows held in memory");
    let doc = run.document();
    sink.run_finished(&run.ctx(), &doc).unwrap();
    sink.finish(&doc, &mut Vec::new()).unwrap();
    std::fs::read_to_string(&path).unwrap()
}

/// `run`'s document with every window kept, as a run that keeps them in memory ends.
fn with_windows(run: &synthetic::Run) -> RunDocument {
    let mut doc = run.document();
    let r = &mut doc.runs[0];
    for w in &run.windows {
        for (t, stats) in &w.report.threads {
            r.threads[*t].windows.push(stats.clone());
        }
        if r.threads.len() > 1 {
            r.summary.windows.push(w.report.merged.clone());
        }
    }
    doc
}

/// Spooled row by row, the table is byte for byte the one rendered from a document holding
/// every window — with several threads (and the merged series) and with one, with rows
/// that went through the spool (more than a chunk per series) and rows still buffered.
#[test]
fn spooled_rows_equal_the_table_rendered_from_every_window() {
    for threads in [1, 3] {
        let run = synthetic::run(threads, 240, 5);
        let expected = String::from_utf8(CsvExport.render(&with_windows(&run)).unwrap()).unwrap();
        let got = written(&run);
        assert_eq!(got, expected, "{threads} threads");
        // 240 windows of ~150 B: past a chunk per series, so the spool was used.
        let rows = got
            .lines()
            .filter(|l| l.split(',').nth(4) == Some("window"))
            .count();
        assert_eq!(rows, 240 * (threads + usize::from(threads > 1)));
        assert!(rows * 100 / (threads + usize::from(threads > 1)) > CHUNK);
    }
}

/// After the first hour a series' rows are minutes, merged exactly: every wake-up is in a
/// row, the rows after the hour start a minute apart, and the memory held stays within a
/// chunk per series however long the run.
#[test]
fn rows_after_the_first_hour_are_minutes() {
    let run = synthetic::run(2, 3600 + 150, 2);
    let table = written(&run);
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    let mut windows: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for r in reader.records() {
        let r = r.unwrap();
        let samples: u64 = r[7].parse().unwrap();
        match &r[4] {
            "total" => {
                totals.insert(r[3].to_string(), samples);
            }
            _ => windows
                .entry(r[3].to_string())
                .or_default()
                .push((r[5].parse().unwrap(), samples)),
        }
    }
    assert_eq!(windows.len(), 3, "threads 0 and 1, and all");
    for (series, rows) in &windows {
        let sum: u64 = rows.iter().map(|r| r.1).sum();
        assert_eq!(sum, totals[series], "{series}");
        let starts: Vec<u64> = rows.iter().map(|r| r.0).collect();
        assert_eq!(
            starts.len(),
            3600 + 3,
            "{series}: 3600 seconds, then 3 minutes"
        );
        assert_eq!(&starts[3599..], &[3599, 3600, 3660, 3720]);
    }
}
