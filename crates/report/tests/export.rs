//! The exporters of `tickscope run` (`--histogram-file`, `--csv`), pinned with snapshots
//! of deterministic documents.

mod common;

use tickscope_report::export::csv::CsvExport;
use tickscope_report::export::histogram_file::HistogramFile;
use tickscope_report::export::Exporter;

fn text(e: &dyn Exporter, doc: &tickscope_report::RunDocument) -> String {
    String::from_utf8(e.render(doc).unwrap()).unwrap()
}

/// The histogram file without its 2500 zero-filled middle lines: head and tail.
fn head_and_tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let data_end = lines.iter().position(|l| l.starts_with("# Total")).unwrap();
    let mut kept: Vec<&str> = lines[..40].to_vec();
    kept.push("…");
    kept.extend(&lines[data_end - 3..]);
    kept.join("\n")
}

#[test]
fn histogram_file_two_threads() {
    let doc = common::document(2, 3);
    let out = text(&HistogramFile, &doc);
    // One line per µs up to the largest latency (2.6 ms).
    assert_eq!(out.lines().filter(|l| !l.starts_with('#')).count(), 2602);
    insta::assert_snapshot!(head_and_tail(&out));
}

#[test]
fn histogram_file_counts_every_wake_up() {
    let doc = common::document(1, 3);
    let out = text(&HistogramFile, &doc);
    let total: u64 = out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 3000);
    assert!(out.contains("# Early wake-ups (latency < 0, counted in bucket 0): 00001"));
}

#[test]
fn histogram_file_of_several_runs_has_a_column_per_run_and_thread() {
    let doc = common::two_method_document(1, 3);
    let out = text(&HistogramFile, &doc);
    assert!(out.contains("columns: nanosleep-abs T0, nanosleep-rel T0"));
    assert!(out.contains("# Thread 1:"));
}

#[test]
fn csv_two_threads() {
    let doc = common::document(2, 3);
    insta::assert_snapshot!(text(&CsvExport, &doc));
}

#[test]
fn csv_two_methods() {
    let doc = common::two_method_document(1, 2);
    insta::assert_snapshot!(text(&CsvExport, &doc));
}
