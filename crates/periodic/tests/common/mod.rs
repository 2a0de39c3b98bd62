//! Helpers shared by the integration tests.

use std::path::Path;

/// The first fenced block of language `lang` in docs/library.md, the library's page.
pub fn library_page_block(lang: &str) -> String {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/library.md"),
    )
    .unwrap();
    let start = page
        .find(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("no {lang} block in docs/library.md"))
        + lang.len()
        + 4;
    let len = page[start..].find("```\n").unwrap();
    page[start..start + len].to_string()
}
