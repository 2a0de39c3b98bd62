//! `tickscope compare`: results side by side, one column per measurement (a file, or a run
//! inside a file), in the shape of the source documents' tables (docs/sources.md) — figures first, then the settings
//! that differ between the columns.
//!
//! The columns come from [`crate::import`]; this module only arranges them. One file per
//! output format, each behind [`CompareFormat`].

pub mod comparison;
pub mod csv;
pub mod json;
pub mod table;

pub use comparison::{figure, Cell, CompareFormat, Comparison, Row, FIGURES};

/// The format for a `--format` name: `table`, `markdown`, `csv` or `json`.
pub fn format_by_name(name: &str) -> Option<Box<dyn CompareFormat>> {
    match name {
        "table" => Some(Box::new(table::Table::Terminal)),
        "markdown" | "md" => Some(Box::new(table::Table::Markdown)),
        "csv" => Some(Box::new(csv::Csv)),
        "json" => Some(Box::new(json::Json)),
        _ => None,
    }
}
