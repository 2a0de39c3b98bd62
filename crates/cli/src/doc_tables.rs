//! The reference tables of docs/, made from the registries — export formats, load sources,
//! doctor checks, built-in scenarios — and the test that fails when a page's copy between
//! its markers differs from what the registry gives now.
//!
//! A page holds each table between `<!-- begin generated: NAME -->` and
//! `<!-- end generated: NAME -->`. After adding a format, source, check or scenario, rewrite
//! the pages with [`BLESS`] set (the failure message gives the command) and commit them.

use std::path::{Path, PathBuf};

/// The environment variable that makes the test rewrite the pages instead of failing.
const BLESS: &str = "TICKSCOPE_BLESS";

/// One generated table: (page under the workspace root, marker name, renderer).
type Table = (&'static str, &'static str, fn() -> String);

/// Every generated table.
const TABLES: &[Table] = &[
    ("docs/run.md", "export-formats", export_formats),
    ("docs/run.md", "load-sources", load_sources),
    ("docs/doctor.md", "doctor-checks", doctor_checks),
    ("docs/scenarios.md", "scenarios", scenarios),
];

/// `--export`'s formats ([`tickscope_report::sink::registry::FORMATS`]).
fn export_formats() -> String {
    let mut t = String::from(
        "| `--export` format | flag | the file holds | with several methods or rounds |\n\
         |---|---|---|---|\n",
    );
    for f in tickscope_report::sink::registry::FORMATS {
        let several = if f.single_run_only {
            "refused (one run only)"
        } else {
            "every run"
        };
        t += &format!(
            "| `{}` | `{}` | {} | {} |\n",
            f.name, f.flag, f.about, several
        );
    }
    t
}

/// `--load`'s named sources ([`tickscope_session::load::sources::SOURCES`]) and the two
/// forms that pass a command through.
fn load_sources() -> String {
    let mut t = String::from("| `--load` | what runs |\n|---|---|\n");
    for s in tickscope_session::load::sources::SOURCES {
        t += &format!("| `{}` | stress-ng: {} |\n", s.form(), s.about);
    }
    t += "| `stress-ng:\"ARGS\"` | stress-ng with ARGS, verbatim |\n";
    t += "| `exec:\"CMD\"` | CMD run by `/bin/sh -c` (no stress-ng needed) |\n";
    t
}

/// The doctor's checks, in report order ([`tickscope_system::doctor::CHECKS`]).
fn doctor_checks() -> String {
    let mut t = String::from("| check | looks at | in a run's result |\n|---|---|---|\n");
    for c in tickscope_system::doctor::CHECKS {
        let in_run = if c.bears_on_run() { "yes" } else { "no" };
        t += &format!("| `{}` | {} | {} |\n", c.id(), c.about(), in_run);
    }
    t
}

/// The built-in scenarios ([`tickscope_session::scenario::builtin::BUILTIN`]).
///
/// # Panics
/// When a built-in scenario does not parse (its own test fails first).
fn scenarios() -> String {
    use tickscope_session::scenario::{builtin::BUILTIN, format::Scenario};
    let mut t = String::from("| scenario | measures | source |\n|---|---|---|\n");
    for (name, text) in BUILTIN {
        let s = Scenario::parse(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let title = if s.source.url.is_empty() {
            s.source.title.clone()
        } else {
            format!("[{}]({})", s.source.title, s.source.url)
        };
        t += &format!(
            "| `{name}` | {} | {}, {} ({}) |\n",
            s.about.replace('\n', " ").replace('|', "\\|"),
            title.replace('|', "\\|"),
            s.source.author,
            s.source.year
        );
    }
    t
}

/// The workspace root (two levels above this crate).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `page` with the section `name` replaced by `table`; `Err` when its markers are missing.
fn replace_section(page: &str, name: &str, table: &str) -> Result<String, String> {
    let begin = format!("<!-- begin generated: {name} -->\n");
    let end = format!("<!-- end generated: {name} -->");
    let start = page
        .find(&begin)
        .ok_or_else(|| format!("no line {begin:?}"))?
        + begin.len();
    let stop = start
        + page[start..]
            .find(&end)
            .ok_or_else(|| format!("no line {end:?} after the begin marker"))?;
    Ok(format!("{}{table}{}", &page[..start], &page[stop..]))
}

#[test]
fn doc_tables_match_the_registries() {
    let bless = std::env::var_os(BLESS).is_some();
    let mut stale = Vec::new();
    for (file, name, render) in TABLES {
        let path = root().join(file);
        let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let new = replace_section(&page, name, &render()).unwrap_or_else(|e| panic!("{file}: {e}"));
        if new == page {
            continue;
        }
        if bless {
            std::fs::write(&path, new).unwrap_or_else(|e| panic!("{file}: {e}"));
        } else {
            stale.push(format!("{file} ({name})"));
        }
    }
    assert!(
        stale.is_empty(),
        "the tables of {} differ from the registries; rewrite them with \
         `{BLESS}=1 cargo test -p tickscope-cli --bin tickscope doc_tables` and commit the pages",
        stale.join(", ")
    );
}

#[test]
fn a_section_is_replaced_between_its_markers_only() {
    let page = "a\n<!-- begin generated: x -->\nold\n<!-- end generated: x -->\nb\n";
    assert_eq!(
        replace_section(page, "x", "new\n").unwrap(),
        "a\n<!-- begin generated: x -->\nnew\n<!-- end generated: x -->\nb\n"
    );
    assert!(replace_section(page, "y", "new\n").is_err());
}
