//! # tickscope-system: what the machine is, and what limits its timer latency
//!
//! Everything tickscope reads about the machine, apart from the measuring core
//! (`tickscope-engine`, the only crate the C library links):
//!
//! * [`system`] — the facts recorded with every run (kernel, CPU, clock source, preemption
//!   model, hypervisor), read once at start;
//! * [`facts`] — the readers of `/proc` and `/sys` behind `tickscope doctor` (one file per
//!   concern, over a [`facts::Root`] that is the live system or a fixture tree);
//! * [`doctor`] — the checks that turn facts into findings, and the knob measurements;
//! * [`clocks`] — what reading each clock costs and how finely it ticks;
//! * [`procstat`] — `/proc/stat` snapshots and the load achieved between two of them;
//! * [`target`] — another program's threads, policy, timer slack and CPU time
//!   (`tickscope attach`).
//!
//! Rendering is the `tickscope-report` crate's job.

#![deny(missing_docs)]

pub mod clocks;
pub mod doctor;
pub mod facts;
pub mod procstat;
pub mod system;
pub mod target;
