//! One file per subcommand.

pub mod clocks;
pub mod compare;
pub mod doctor;
pub mod exports;
pub mod report;
pub mod run;
pub mod signals;
