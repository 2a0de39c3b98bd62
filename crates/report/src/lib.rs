//! # tickscope-report: result files and everything that renders them
//!
//! The engine measures and returns plain data; this crate turns it into things people read
//! and programs parse, and never measures. One file per format:
//!
//! * [`document`] — the `tickscope.run/2` result document (schema in `docs/result-schema.md`);
//!   [`layout`] — its windows as one list at the end, written while the run goes on;
//! * [`command_line`] — the command line recorded losslessly (non-UTF-8 arguments escaped);
//! * [`output`] — where a result file goes: checked before measuring, `-` and special files
//!   written directly, regular files replaced atomically;
//! * [`quote`] — paths and names in one-line messages, and [`units`] — nanoseconds in units
//!   that read well (both shared with the other crates, from `tickscope-engine`);
//! * [`terminal`] — the header and the summary table; [`live`] — the per-second lines;
//! * [`import`] — reading tickscope, cyclictest and jitterdebugger result files;
//! * [`compare`] — results side by side (table, Markdown, CSV, JSON);
//! * [`export`] — files rendered from a run: cyclictest-style histogram, CSV, raw samples,
//!   the HTML report;
//! * [`plot`] — histogram, percentile and timeline plots as SVG and PNG;
//! * [`sink`] — where a run's results go while it runs and when it ends: terminal, result
//!   document, exported files, every wake-up;
//! * [`methods_table`] — the comparison of wake-up methods (`--method a,b` or `all`).

#![deny(missing_docs)]

pub mod capture;
pub mod clocks;
pub mod coarse;
pub mod command_line;
pub mod compare;
pub mod doctor;
pub mod document;
pub mod executive;
pub mod explain_text;
pub mod export;
pub mod fit;
pub mod hlog_merge;
pub mod hlog_section;
pub mod hlog_stat;
pub mod import;
pub mod layout;
pub mod live;
pub mod load;
pub mod methods_table;
pub mod output;
pub mod plot;
pub mod sink;
pub mod statistics;
pub mod target;
pub mod task_set;
pub mod terminal;

pub use document::{MethodRun, RunDocument, ToolInfo, RUN_SCHEMA, RUN_SCHEMA_V1};
pub use output::{write_atomic, Output, OutputError, OutputStream};
pub use tickscope_engine::quote::{escaped, quoted};
pub use tickscope_engine::{quote, units};
