//! The comparison as CSV for spreadsheets and scripts: one row per quantity (key with its
//! unit: `latency_p99_ns`), one column per measurement; plain numbers, empty where a format
//! does not record the quantity; every recorded setting, not only those that differ.

use super::{Cell, CompareFormat, Comparison, Row};

/// CSV output (RFC 4180 quoting, by the `csv` crate).
#[derive(Debug, Clone, Copy)]
pub struct Csv;

impl CompareFormat for Csv {
    fn render(&self, cmp: &Comparison) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut head = vec!["quantity".to_string()];
        head.extend(cmp.columns.iter().map(|c| c.label.clone()));
        let text_row = |key: &str, f: &dyn Fn(usize) -> String| Row {
            name: key.into(),
            key: key.into(),
            cells: (0..cmp.columns.len()).map(|i| Cell::Text(f(i))).collect(),
        };
        let rows = [
            text_row("source", &|i| cmp.columns[i].source.clone()),
            text_row("format", &|i| cmp.columns[i].format.name().to_string()),
            text_row("resolution_ns", &|i| {
                cmp.columns[i]
                    .resolution_ns
                    .map_or(String::new(), |r| r.to_string())
            }),
        ]
        .into_iter()
        .chain(cmp.figure_rows())
        .chain(cmp.setting_rows(false));
        let write = |w: &mut csv::Writer<Vec<u8>>, rec: Vec<String>| {
            w.write_record(rec)
                .expect("writing CSV to memory cannot fail");
        };
        write(&mut w, head);
        for row in rows {
            let mut rec = vec![row.key];
            rec.extend(row.cells.iter().map(Cell::raw));
            write(&mut w, rec);
        }
        String::from_utf8(w.into_inner().expect("flushing to memory cannot fail"))
            .expect("CSV of UTF-8 strings is UTF-8")
    }
}
