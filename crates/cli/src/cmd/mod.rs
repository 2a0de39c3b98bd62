//! One file per subcommand.

pub mod compare;
pub mod exports;
pub mod report;
pub mod run;
pub mod signals;
