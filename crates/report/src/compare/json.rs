//! The comparison as JSON (`tickscope.compare/2`): the columns with every figure in ns and
//! every recorded setting, plus which settings differ.

use super::{CompareFormat, Comparison};
use crate::import::Measurement;
use serde::Serialize;

/// The schema identifier of the comparison JSON.
pub const COMPARE_SCHEMA: &str = "tickscope.compare/2";

/// JSON output.
#[derive(Debug, Clone, Copy)]
pub struct Json;

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    columns: &'a [Measurement],
    differing_settings: Vec<String>,
}

impl CompareFormat for Json {
    fn render(&self, cmp: &Comparison) -> String {
        let doc = Document {
            schema: COMPARE_SCHEMA,
            columns: &cmp.columns,
            differing_settings: cmp.setting_rows(true).into_iter().map(|r| r.key).collect(),
        };
        let mut s = serde_json::to_string_pretty(&doc).expect("comparisons always serialize");
        s.push('\n');
        s
    }
}
