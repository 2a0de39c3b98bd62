//! Helpers shared by the integration tests.

use std::path::Path;

/// The first fenced block of language `lang` in README's "Use it in your program" section.
pub fn readme_block(lang: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let section = readme
        .split_once("\n## Use it in your program\n")
        .expect("README has a \"Use it in your program\" section")
        .1;
    let start = section
        .find(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("no {lang} block in the section"))
        + lang.len()
        + 4;
    let len = section[start..].find("```\n").unwrap();
    section[start..start + len].to_string()
}
