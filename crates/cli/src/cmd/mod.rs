//! One file per subcommand.

pub mod clocks;
pub mod run;
pub mod signals;
