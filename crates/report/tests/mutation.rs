//! A seeded corpus of broken files made from every fixture goes through everything `compare`
//! and `report` do with a file — import, validation, every comparison format, the HTML
//! report and its plots — and none may panic: each is either rendered or refused with an
//! error (which the CLI turns into one line and exit status 2).

mod mutants;

use std::panic::{catch_unwind, AssertUnwindSafe};
use tickscope_report::compare::{format_by_name, Comparison};
use tickscope_report::export::foreign_html;
use tickscope_report::export::html::HtmlReport;
use tickscope_report::export::Exporter;
use tickscope_report::import::{self, SourceFormat};
use tickscope_report::plot::PlotOptions;
use tickscope_report::RunDocument;

/// Mutants per fixture.
const PER_FIXTURE: usize = 600;

/// What `compare` and `report` do with one file's text; an `Err` is a refusal.
fn compare_and_report(text: &str) -> Result<(), String> {
    let found = import::parse("m.json", "m", text).map_err(|e| e.to_string())?;
    let cmp = Comparison::new(found.clone(), &[])?;
    for name in ["table", "markdown", "csv", "json"] {
        format_by_name(name).expect("a known format").render(&cmp);
    }
    match found.first().map(|m| m.format) {
        Some(SourceFormat::Tickscope) => {
            let doc: RunDocument = serde_json::from_str(text).map_err(|e| e.to_string())?;
            HtmlReport::default()
                .render(&doc)
                .map_err(|e| e.to_string())?;
        }
        Some(_) => {
            foreign_html::render(&found, "m.json", &PlotOptions::default())
                .map_err(|e| e.to_string())?;
        }
        None => {}
    }
    Ok(())
}

#[test]
fn no_mutant_of_any_fixture_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut fixtures: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 5, "every fixture is mutated");
    let (mut rendered, mut refused) = (0, 0);
    for (i, path) in fixtures.iter().enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        for (what, mutant) in mutants::mutants(&text, 0x7153_0000 + i as u64, PER_FIXTURE) {
            match catch_unwind(AssertUnwindSafe(|| compare_and_report(&mutant))) {
                Ok(Ok(())) => rendered += 1,
                Ok(Err(e)) => {
                    assert!(
                        !e.contains('\n'),
                        "{}: {what}: two lines: {e}",
                        path.display()
                    );
                    refused += 1;
                }
                Err(_) => panic!("{}: {what}: panicked", path.display()),
            }
        }
    }
    eprintln!("{rendered} mutants rendered, {refused} refused, none panicked");
    assert!(refused > 0 && rendered > 0, "the corpus has both kinds");
}
