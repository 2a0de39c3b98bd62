//! Scenarios: the classic experiments (and a user's own) as one command each. A scenario is
//! a TOML file ([`format`](mod@format)); built-ins are embedded from `scenarios/*.toml` ([`builtin`]);
//! each step is a `run` (or `clocks`) with the options as on the command line, optionally a
//! load and timed actions ([`actions`]); the table ([`table`]) shows the source's numbers
//! beside this machine's, from named figures ([`metrics`]). A file is reviewed before it runs
//! ([`review`]): commands and outputs outside the working directory need the user's consent.

pub mod actions;
pub mod builtin;
pub mod document;
pub mod format;
pub mod metrics;
pub mod review;
pub mod table;
