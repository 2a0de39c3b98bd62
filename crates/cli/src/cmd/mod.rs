//! One file per subcommand.

pub mod clocks;
pub mod compare;
pub mod exports;
pub mod plan;
pub mod report;
pub mod run;
pub mod signals;
pub mod task_spec;
pub mod tasks;
