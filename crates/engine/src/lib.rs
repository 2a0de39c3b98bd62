//! # tickscope-engine: how precisely does this machine wake a periodic task?
//!
//! A measuring thread wakes at the expiries of a fixed grid `t0 + k·period` on one clock,
//! reads that clock once on waking, and records
//!
//! * the **wake-up latency** `woke − expiry` (signed ns: an early wake-up is negative), and
//! * the **period** `dt = woke − previous woke` (ns), whose spread around the nominal period
//!   is the period jitter,
//!
//! and counts **overruns**: expiries that passed before the thread woke for the one
//! before (see [`grid`]). Samples go into HdrHistograms allocated before the loop, so memory
//! stays bounded whatever the run length; finished one-second windows travel to a collector
//! thread through wait-free rings ([`worker`]), which builds per-second and total
//! statistics ([`result`]).
//!
//! All time is integer nanoseconds ([`time::Nanos`], `i64`). The engine measures and never
//! formats: rendering is the `tickscope-report` crate's job. The two text helpers every
//! crate above shares live here, outside the measuring path: [`units`] (ns in units that
//! read well) and [`quote`] (paths and names in one-line messages).
//!
//! Layout: [`time`] clocks; [`child`] processes tickscope starts; [`wait`] wake-up methods
//! (one file each); [`setup`] guards for
//! everything changed on the system; [`worker`] the measuring loop; [`grid`] the overrun
//! rule; [`record`], [`histogram`], [`moments`] recording; [`stats`] summaries; [`run`](mod@run) the
//! coordinator; [`schedule`] the order of a comparison of methods; [`significance`] whether an A/B
//! difference is more than noise; [`probe`] the few system reads a
//! refused setting is worded from; [`mock`] a virtual clock for tests. Machine facts,
//! `doctor` and the clock comparison are the `tickscope-system` crate's: the C library
//! links this crate alone.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod child;
pub mod error;
pub mod grid;
pub mod histogram;
pub mod mock;
pub(crate) mod mock_bulk;
pub mod moments;
pub mod probe;
pub mod quote;
pub mod record;
pub mod result;
pub mod run;
pub mod sample;
pub mod schedule;
pub mod setup;
pub mod significance;
pub mod stats;
pub mod time;
pub mod units;
pub mod wait;
pub mod window_counts;
pub mod window_histogram;
pub mod worker;
pub mod zeroed_pages;

pub use error::{Error, ErrorKind, Facility, Setting};
pub use run::{run, PolicyRequest, RunConfig, RunEvent, RunOutcome};
