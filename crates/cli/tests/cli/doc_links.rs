//! Every relative link in README.md, CONTRIBUTING.md and docs/*.md leads somewhere: the file
//! (or folder) exists, and a `#fragment` names a heading of the target page. Links to other
//! sites are not followed (the tests run offline). Headings become fragments as GitHub makes
//! them: lower case, punctuation other than `-` and `_` dropped, spaces turned into `-`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown pages whose links are checked.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let contributing = root().join("CONTRIBUTING.md");
    if contributing.exists() {
        pages.push(contributing);
    }
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines of `text`, those in fenced code blocks emptied and inline code spans removed
/// from the others (so that line numbers stay the file's).
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push(String::new());
            continue;
        }
        if fenced {
            out.push(String::new());
            continue;
        }
        let mut kept = String::new();
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 0 {
                kept.push_str(part);
            }
        }
        out.push(kept);
    }
    out
}

/// GitHub's fragment for a heading's text.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The fragments of a page's headings (inline code kept as text, as GitHub does).
fn anchors(text: &str) -> HashSet<String> {
    let mut fenced = false;
    let mut out = HashSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && line.starts_with('#') {
            let heading = line.trim_start_matches('#');
            if heading.starts_with(' ') {
                out.insert(slug(heading));
            }
        }
    }
    out
}

/// The targets of `[text](target)` and `![alt](target)` on a line of prose.
fn targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                out.push(after[..end].to_string());
                rest = &after[end..];
            }
            None => break,
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page.parent().unwrap();
        for (n, line) in prose(&text).iter().enumerate() {
            for target in targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, fragment) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target.as_str(), None),
                };
                let path = if file.is_empty() {
                    page.clone()
                } else {
                    dir.join(file)
                };
                let place = format!("{}:{}: {target}", page.display(), n + 1);
                if !path.exists() {
                    broken.push(format!("{place}: no such file"));
                    continue;
                }
                if let Some(fragment) = fragment {
                    let target_text = std::fs::read_to_string(&path).unwrap_or_default();
                    if !anchors(&target_text).contains(fragment) {
                        broken.push(format!("{place}: no heading with this fragment"));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_stays_short() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move a section to a page under docs/"
    );
}
