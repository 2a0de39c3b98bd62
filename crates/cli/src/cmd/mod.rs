//! One file per subcommand.

pub mod clocks;
pub mod compare;
pub mod hlog;
pub mod monitor;
pub mod report;
pub mod run;
pub mod signals;
pub mod sinks;
