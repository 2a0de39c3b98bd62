//! `tickscope compare` output, pinned with snapshots: the real fixtures side by side in
//! every format.

use std::path::PathBuf;
use tickscope_report::compare::{format_by_name, Comparison};
use tickscope_report::import::{self, Measurement};

fn load(name: &str) -> Vec<Measurement> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let stem = name.trim_end_matches(".json");
    import::parse(name, stem, &text).unwrap()
}

fn comparison(labels: &[&str]) -> Comparison {
    let columns = [
        "tickscope-fifo-2threads.json",
        "cyclictest-fifo-2threads.json",
        "jitterdebugger-2cpus.json",
    ]
    .iter()
    .flat_map(|n| load(n))
    .collect();
    let labels: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
    Comparison::new(columns, &labels).unwrap()
}

fn render(format: &str, cmp: &Comparison) -> String {
    format_by_name(format).unwrap().render(cmp)
}

#[test]
fn table() {
    insta::assert_snapshot!(render("table", &comparison(&["tickscope", "cyclictest"])));
}

#[test]
fn markdown() {
    insta::assert_snapshot!(render("markdown", &comparison(&[])));
}

#[test]
fn csv() {
    insta::assert_snapshot!(render("csv", &comparison(&[])));
}

#[test]
fn json() {
    insta::assert_snapshot!(render("json", &comparison(&["a", "b", "c"])));
}

#[test]
fn same_settings_are_summarised_not_repeated() {
    let cols: Vec<Measurement> = load("cyclictest-fifo-2threads.json")
        .into_iter()
        .chain(load("cyclictest-fifo-2threads.json"))
        .collect();
    let cmp = Comparison::new(cols, &[]).unwrap();
    assert_eq!(cmp.columns[1].label, "cyclictest-fifo-2threads (2)");
    assert!(cmp.setting_rows(true).is_empty());
    let out = render("table", &cmp);
    assert!(out.contains("same in all: tool cyclictest 2.40, kernel 6.18.44-fc-v595"));
}

#[test]
fn too_many_labels_is_an_error() {
    let cols = load("jitterdebugger-2cpus.json");
    let labels = vec!["a".to_string(), "b".to_string()];
    let e = Comparison::new(cols, &labels).unwrap_err();
    assert_eq!(
        e,
        "2 labels for 1 columns; give at most one --label per column"
    );
    assert!(format_by_name("yaml").is_none());
}
