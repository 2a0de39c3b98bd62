//! One file per subcommand.

pub mod attach;
pub mod clocks;
pub mod compare;
pub mod completions;
pub mod doctor;
pub mod explain;
pub mod gate;
pub mod hlog;
pub mod man;
pub mod monitor;
pub mod monitor_attach;
pub mod plan;
pub mod report;
pub mod run;
pub mod scenario;
pub mod signals;
pub mod sinks;
pub mod stat_lines;
pub mod tasks;
