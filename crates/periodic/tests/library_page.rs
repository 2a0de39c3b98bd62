//! The Rust snippet in docs/library.md (the library's page) is the crate's first doc example,
//! which `cargo test` compiles and runs; so the page's code is code that works.

mod common;

#[test]
fn library_page_rust_snippet_is_the_crate_doc_example() {
    let lib = include_str!("../src/lib.rs");
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .fold(String::new(), |acc, l| acc + l + "\n");
    let start = doc.find("```\n").unwrap() + 4;
    let len = doc[start..].find("```\n").unwrap();
    assert_eq!(common::library_page_block("rust"), doc[start..start + len]);
}
