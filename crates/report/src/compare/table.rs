//! The comparison as a table for people: on the terminal (box drawing) or as Markdown
//! (for issues and READMEs). Times carry their units; settings that are the same
//! everywhere and the columns' notes follow the table. On the terminal the table and the
//! notes are fitted to its width ([`crate::fit`]); Markdown stays whole.

use super::{CompareFormat, Comparison};
use comfy_table::{presets, CellAlignment};

/// Which table flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// Box-drawing table for the terminal.
    Terminal,
    /// A GitHub-flavoured Markdown table.
    Markdown,
}

impl CompareFormat for Table {
    fn render(&self, cmp: &Comparison) -> String {
        let mut table = comfy_table::Table::new();
        table.load_style(match self {
            Table::Terminal => presets::UTF8_FULL_CONDENSED,
            Table::Markdown => presets::ASCII_MARKDOWN,
        });
        let mut head = vec![String::new()];
        head.extend(cmp.columns.iter().map(|c| c.label.clone()));
        table.set_header(head);
        for row in cmp.figure_rows().into_iter().chain(cmp.setting_rows(true)) {
            let mut cells = vec![row.name];
            cells.extend(row.cells.iter().map(|c| c.human()));
            table.add_row(cells);
        }
        for (i, col) in table.column_iter_mut().enumerate() {
            if i > 0 {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        // Markdown is a file format: its rows stay whole whatever the terminal.
        let mut out = match self {
            Table::Terminal => crate::fit::table(&table),
            Table::Markdown => table.to_string(),
        };
        out.push('\n');
        let common = cmp.common_settings();
        let bullet = match self {
            Table::Terminal => "",
            Table::Markdown => "- ",
        };
        if *self == Table::Markdown {
            out.push('\n');
        }
        let mut prose = String::new();
        if !common.is_empty() && cmp.columns.len() > 1 {
            let list: Vec<String> = common.iter().map(|(k, v)| format!("{k} {v}")).collect();
            prose += &format!("{bullet}same in all: {}\n", list.join(", "));
        }
        for note in cmp.notes() {
            prose += &format!("{bullet}{note}\n");
        }
        match self {
            Table::Terminal => out + &crate::fit::wrap(&prose),
            Table::Markdown => out + &prose,
        }
    }
}
