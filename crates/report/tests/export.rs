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

/// cyclictest's `-h 50`: buckets 0-49 µs, every latency of 50 µs or more an overflow that
/// `# Total` excludes, the listed cycle numbers, then "others" for the rest; `-H` adds the
/// summed column.
#[test]
fn histogram_with_a_range_counts_real_overflows() {
    use tickscope_report::export::histogram_file::{render_with, HistogramOptions};
    let doc = common::document(2, 3);
    let opts = HistogramOptions {
        range_us: Some(50),
        all_column: true,
        overflow_cycles: vec![vec![7, 1200], vec![]],
    };
    let out = render_with(&doc, &opts);
    let data: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(data.len(), 50, "one line per µs below the range");
    let field = |label: &str, col: usize| -> u64 {
        let line = out.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..]
            .split_whitespace()
            .nth(col)
            .unwrap()
            .parse()
            .unwrap()
    };
    for col in 0..2 {
        let total = field("# Total:", col);
        let over = field("# Histogram Overflows:", col);
        assert_eq!(
            total + over,
            3000,
            "column {col}: every wake-up is counted once"
        );
        assert!(over > 0, "this document has wake-ups above 50 µs");
    }
    assert_eq!(
        field("# Total:", 2),
        field("# Total:", 0) + field("# Total:", 1)
    );
    insta::assert_snapshot!(head_and_tail_of_range(&out));
}

/// The first and last data lines and the footer of a ranged histogram.
fn head_and_tail_of_range(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let data_end = lines.iter().position(|l| l.starts_with("# Total")).unwrap();
    let mut kept: Vec<&str> = lines[..8].to_vec();
    kept.push("…");
    kept.extend(&lines[data_end - 2..]);
    kept.join("\n")
}
