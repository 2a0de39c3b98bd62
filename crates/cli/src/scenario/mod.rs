//! Scenarios: the classic experiments (and a user's own) as one command each. A scenario is
//! a TOML file ([`format`]); built-ins are embedded from `scenarios/*.toml` ([`builtin`]);
//! each step is a `run` (or `clocks`) with the options as on the command line, optionally a
//! load and timed actions ([`actions`]); the table ([`table`]) shows the source's numbers
//! beside this machine's, from named figures ([`metrics`]).

pub mod actions;
pub mod builtin;
pub mod document;
pub mod format;
pub mod metrics;
pub mod table;
