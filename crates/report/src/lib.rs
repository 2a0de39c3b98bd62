//! # tickscope-report: result files and everything that renders them
//!
//! The engine measures and returns plain data; this crate turns it into things people read
//! and programs parse, and never measures. One file per format:
//!
//! * [`document`] — the `tickscope.run/1` result document (schema in `docs/result-schema.md`);
//! * [`file`](mod@file) — writing any result file atomically (temporary file + rename);
//! * [`quote`] — paths in one-line messages;
//! * [`units`] — nanoseconds in units that read well, always labelled;
//! * [`terminal`] — the header, the per-second lines and the summary table;
//! * [`import`] — reading tickscope, cyclictest and jitterdebugger result files;
//! * [`compare`] — results side by side (table, Markdown, CSV, JSON);
//! * [`export`] — files rendered from a run: cyclictest-style histogram, CSV, raw samples,
//!   the HTML report;
//! * [`plot`] — histogram, percentile and timeline plots as SVG and PNG;
//! * [`methods_table`] — the comparison of wake-up methods (`--method a,b` or `all`).

#![deny(missing_docs)]

pub mod clocks;
pub mod compare;
pub mod document;
pub mod executive;
pub mod export;
pub mod file;
pub mod import;
pub mod methods_table;
pub mod plot;
pub mod quote;
pub mod terminal;
pub mod units;

pub use document::{MethodRun, RunDocument, RunView, ToolInfo, RUN_SCHEMA};
pub use file::{write_atomic, AtomicFile};
pub use quote::quoted;
