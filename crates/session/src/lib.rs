//! One tickscope invocation's measurement, from plan to final document, for every command
//! that measures (`tickscope run`, `monitor`, `scenario run`, and `attach`): the order in
//! which sinks see events and documents, how failures fold into one reason, where
//! tickscope's own threads run (the housekeeping CPUs), the load that runs for exactly the
//! length of the measurement, and the trace controller that explains late wake-ups.
//!
//! The command line parses its flags into the typed [`Plan`] and [`Session`] fields, builds
//! its sinks, and makes one call, [`Session::run`]. Nothing here parses flags or prints to
//! the terminal; lines for the user go through [`Session::say`].
//!
//! One concept per file: [`session`] (the lifecycle), [`deliver`](crate::session) (events and
//! annotation), [`error`] (the folded outcome), [`housekeeping`] (placement), [`load`] (the
//! load child), [`trace`] (the explain sinks), [`attach`] (another program's wake-ups as a
//! run).

pub mod attach;
mod deliver;
pub mod error;
pub mod housekeeping;
pub mod load;
pub mod scenario;
pub mod session;
pub mod tasks;
pub mod text;
pub mod trace;

pub use error::Error;
pub use housekeeping::Placement;
pub use session::{Companion, Plan, Runner, Session};
