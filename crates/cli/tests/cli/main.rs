//! The `tickscope` binary end to end: one test binary, a module per command or concern,
//! with the helpers they share in [`common`]. Real time is involved in most, so they assert
//! structure (counts, ordering, exit status, one-line errors), never timing.

mod common;

mod arguments;
mod attach;
mod clocks;
mod cyclictest;
mod doc_links;
mod doctor;
mod early_signals;
mod executive;
mod explain;
mod gate;
mod hlog;
mod inputs;
mod install;
mod layout;
mod load;
mod long_runs;
mod methods;
mod mock;
mod module_cycles;
mod monitor;
mod monitor_abuse;
mod monitor_attach;
mod outputs;
mod policy;
mod protected_links;
mod report;
mod run;
mod scenario;
mod width;
