//! The HTML report laid out by a real browser: headless Chromium opens a copy of the page
//! with a measuring script added (the report itself has none), the script writes the
//! positions of the elements into the DOM, and `--dump-dom` hands that DOM back. So the
//! assertions are about where things land on a 1400 px wide window, not about the HTML text.
//!
//! Skips with a printed reason when no Chromium is installed (`apt-get install chromium`;
//! `TICKSCOPE_CHROMIUM=/path` names another binary).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tickscope_report::export::html::HtmlReport;
use tickscope_report::export::Exporter;

/// Width and height of the browser window, CSS pixels.
const WINDOW: (u32, u32) = (1400, 900);

/// The measuring script: document-relative boxes of the verdict and the first figure,
/// the ids of the figures in page order, and how many numeric table cells the browser
/// broke over more than one line.
const MEASURE: &str = r#"<script>
const box = e => { const b = e.getBoundingClientRect();
  return {top: b.top + window.scrollY, bottom: b.bottom + window.scrollY, height: b.height}; };
const wrapped = [...document.querySelectorAll('td.n')].filter(td => {
  const r = document.createRange(); r.selectNodeContents(td);
  return r.getClientRects().length > 1; }).length;
const cells = [...document.querySelectorAll('td.n')].filter(td => td.getClientRects().length > 0).length;
const out = { verdict: box(document.getElementById('verdict')),
  figure: box(document.querySelector('figure svg')),
  figures: [...document.querySelectorAll('figure')].map(f => f.id),
  wrapped: wrapped, cells: cells, width: window.innerWidth };
const pre = document.createElement('pre'); pre.id = 'measured';
pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
</script>"#;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TICKSCOPE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(move |dir| dir.join(name))
            .collect::<Vec<_>>()
    })
    .find(|p| p.is_file())
}

/// The page's DOM after layout, with the measuring script's JSON parsed.
fn measure(browser: &Path, page: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let page = page.replace("</body>", &format!("{MEASURE}\n</body>"));
    std::fs::write(&file, page).unwrap();
    let profile = dir.path().join("profile");
    // The DOM goes to a file: a pipe nobody reads while waiting would fill and stall.
    let dump = dir.path().join("dom.html");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            &format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
        ])
        .arg(format!("file://{}", file.display()))
        .stdout(std::fs::File::create(&dump).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A generous bound for a loaded 2-core VM; a hung browser fails the test, not CI.
    let deadline = Instant::now() + Duration::from_secs(180);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("chromium did not finish within 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let dom = std::fs::read_to_string(&dump).unwrap();
    let start = dom
        .find("<pre id=\"measured\">")
        .unwrap_or_else(|| panic!("no measurements in the DOM: {dom}"))
        + "<pre id=\"measured\">".len();
    let end = dom[start..].find("</pre>").unwrap() + start;
    serde_json::from_str(&dom[start..end].replace("&amp;", "&")).unwrap()
}

fn html(doc: &tickscope_report::RunDocument) -> String {
    let r = HtmlReport {
        source: "result.json".into(),
        ..Default::default()
    };
    String::from_utf8(r.render(doc).unwrap()).unwrap()
}

fn f(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The verdict and at least half of the first plot lie in the first 900 px of a 1400 px
/// wide window; numbers never wrap away from their units.
fn leads_with_the_answer(what: &str, doc: &tickscope_report::RunDocument) -> serde_json::Value {
    let Some(browser) = chromium() else {
        eprintln!("skipping the browser layout test ({what}): no chromium installed");
        return serde_json::Value::Null;
    };
    let m = measure(&browser, &html(doc));
    eprintln!("{what}: {m}");
    assert_eq!(f(&m, "width"), f64::from(WINDOW.0), "{m}");
    let (verdict, figure) = (&m["verdict"], &m["figure"]);
    assert!(
        f(verdict, "height") > 0.0,
        "{what}: the verdict is shown: {m}"
    );
    assert!(
        f(verdict, "bottom") <= f64::from(WINDOW.1),
        "{what}: the verdict lies in the first screen: {m}"
    );
    assert!(
        f(figure, "top") + f(figure, "height") / 2.0 <= f64::from(WINDOW.1),
        "{what}: at least half of the first plot lies in the first screen: {m}"
    );
    assert!(f(figure, "top") > f(verdict, "bottom"), "{what}: {m}");
    assert_eq!(
        f(&m, "wrapped"),
        0.0,
        "{what}: a number wrapped away from its unit: {m}"
    );
    m
}

#[test]
fn a_single_run_report_leads_with_its_verdict_and_plots() {
    let m = leads_with_the_answer("one run", &common::document(2, 3));
    if m.is_null() {
        return;
    }
    assert_eq!(m["figures"][0], "histogram", "{m}");
}

#[test]
fn a_methods_report_leads_with_its_verdict_and_overlays() {
    let m = leads_with_the_answer("two methods", &common::two_method_document(2, 3));
    if m.is_null() {
        return;
    }
    assert_eq!(m["figures"][0], "methods-percentiles", "{m}");
    assert_eq!(m["figures"][1], "methods-histogram", "{m}");
    assert!(f(&m, "cells") > 0.0, "the methods table is shown: {m}");
}
