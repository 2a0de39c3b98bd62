//! # tickscope-explain: why was a wake-up late?
//!
//! Capture and analysis for `tickscope run --explain` (the report crate renders; this crate
//! traces and attributes, on the collector thread, never the measuring one):
//!
//! * [`events`] decodes the text of a tracefs `trace_pipe` into [`events::Event`]s;
//! * [`name`] shares the names events carry from a bounded table (no allocation per event);
//! * [`window`] keeps a bounded window of recent events per CPU;
//! * [`idle_switch`] puts back the idle task's switches out a tracefs instance did not
//!   record;
//! * [`attribution`] breaks one late wake-up into segments S0–S5 plus a residual, and names
//!   its cause by the timer's model (pure code over a list of events); [`spin`] does it for
//!   a thread that spins to its expiry (no timer to follow); [`model`] picks which;
//! * [`table`] counts causes per thread;
//! * [`context`] reads `/proc` counters per window (steal, interrupts, softirqs, the
//!   thread's switches, migrations, CPU, policy and priority) and their deltas;
//! * [`tracefs`] is the one guard that owns a private trace instance;
//! * [`backend`] is where the events come from: BPF, or tracefs text as the fallback;
//! * [`bpf`] is the one guard that owns the BPF capture programs (the lean backend), and
//!   [`bpf_records`] decodes what they send into [`events::Event`]s;
//! * [`wakeups`] joins another program's armed expiries with its wake-ups and [`infer`]
//!   finds its periodic threads (`tickscope attach`); [`roster`] says which threads are
//!   measured, following the ones found periodic later;
//! * [`run_clock`] moves a run on another clock (`--clock realtime`, …) to the trace's;
//! * [`on_late`] parses `--on-late THRESHOLD:ACTION[,ACTION…]`; [`on_late_exec`] runs
//!   their commands, bounded;
//! * [`controller`] runs all of it on the collector thread during a run: the trace
//!   instance, the late wake-ups waiting for the trace, the `--on-late` actions, and the
//!   result document's [`section`]; a capture keeps a [`bundle`].
//!
//! Time is integer ns on CLOCK_MONOTONIC throughout.

#![deny(missing_docs)]

pub mod attribution;
pub mod backend;
pub mod bpf;
mod bpf_ksym;
mod bpf_load;
pub mod bpf_loader;
pub mod bpf_records;
mod bpf_shared;
pub mod bundle;
pub mod context;
pub mod controller;
pub mod cpu_quota;
pub mod events;
pub mod idle_switch;
pub mod infer;
mod kallsyms;
pub mod model;
pub mod name;
pub mod observer;
pub mod on_late;
pub mod on_late_exec;
pub mod roster;
pub mod run_clock;
pub mod section;
pub mod spin;
pub mod table;
pub mod tracefs;
pub mod wakeups;
pub mod window;

pub use attribution::{Breakdown, Cause, LateSample, Setting};
pub use events::{parse_line, Event, Kind, LineParser, Nanos};
pub use model::attribute;
pub use name::Name;
