//! `tickscope gate`: a regression gate on whole wake-up-latency distributions.
//!
//! Every real-time gate in common use tests one maximum against a threshold; a maximum grows
//! with run length and a moved tail can pass. This crate compares a baseline run (or a
//! fleet's merged runs) with candidate runs on tail quantiles with confidence intervals, a
//! shape test and overrun counts, and decides pass / regression / improvement /
//! inconclusive. Statistics and their sources: `docs/gate.md`.
//!
//! * The sampling unit is the one-second **window**, not the wake-up: latencies are
//!   autocorrelated, so the tests resample blocks of windows ([`bootstrap`]).
//! * Quantiles are compared at equal run length with intervals ([`quantile`]); the shape
//!   test is window-level ([`shape`]); overruns are counts ([`overruns`]); the tests of a
//!   candidate decide together under Holm's correction ([`holm`]).
//! * Task sets (`run --tasks`) are judged task by task, matched by name ([`tasks`]).
//! * Rules come from a small TOML file ([`rules`]); the verdict is deterministic (seeded
//!   ChaCha8) — the same inputs and rules give the same verdict.

pub mod bootstrap;
pub mod finding;
pub mod grid;
pub mod holm;
pub mod input;
pub mod overruns;
pub mod pair;
pub mod quantile;
pub mod report;
pub mod rules;
pub mod series;
pub mod shape;
pub mod synthetic;
pub mod tasks;
pub mod verdict;

pub use report::Report;
pub use rules::Rules;
pub use series::Series;
pub use verdict::{judge, Outcome, Verdict};
