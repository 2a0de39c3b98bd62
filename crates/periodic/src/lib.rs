//! # tickscope: precise periodic loops for Rust and C programs
//!
//! A control loop, a sampler or a game tick wants to run every `period` ns, on time. This
//! crate is the loop that tickscope's measurements are about, ready to use:
//!
//! ```
//! use tickscope::{Periodic, Strategy};
//!
//! fn main() -> Result<(), tickscope::Error> {
//!     let mut looper = Periodic::new(1_000_000, Strategy::Sleep)?; // every 1 ms
//!     for _ in 0..1000 {
//!         let tick = looper.wait()?;
//!         // … the periodic work; it starts tick.latency ns after its expiry
//!         if tick.overruns > 0 {
//!             eprintln!("{} overruns", tick.overruns);
//!         }
//!     }
//!     let s = looper.stats(); // the same statistics as `tickscope run`, any time
//!     let p99 = s.latency.map_or(0, |l| l.p99);
//!     println!("{} ticks, p99 latency {p99} ns, CPU {:.1} %", s.samples, s.cpu_percent);
//!     Ok(())
//! }
//! ```
//!
//! * **Strategies** ([`Strategy`]): sleep with an absolute `clock_nanosleep`; busy-wait,
//!   with a trip through the kernel every so many clock reads; or a hybrid that sleeps until
//!   a margin before the expiry and spins the rest, the margin fixed or learnt as it runs.
//!   `tickscope run --method nanosleep-abs|busy|hybrid` tells which wins on a machine.
//! * **Ticks** ([`Tick`]): each wait returns the grid index, the expiry, the wake-up time,
//!   the latency (signed ns) and the overruns (expiries passed).
//! * **Statistics** ([`Stats`]): latency and period distributions, overruns and CPU
//!   use, readable between any two waits while the loop goes on.
//! * **Setup on request** ([`Builder`], [`Periodic::set_policy`] …): scheduling policy and
//!   priority, CPU affinity, `mlockall`, timer slack; each restored when the loop is dropped.
//! * **Several rates in one thread** ([`Executive`]): periodic tasks, each on its own exact
//!   grid, dispatched by priority in the calling thread, with per-task statistics and a
//!   schedulability [`Plan`].
//! * **C ABI** ([`ffi`], [`ffi_executive`]): the same loop and executive for C and C++
//!   through `include/tickscope.h`, `libtickscope.a` and `libtickscope.so`.
//!
//! ## A fixed grid instead of "sleep for the period"
//!
//! The Cpp-Periodic-Task README (docs/sources.md) takes its
//! next deadline from the time it woke. Each wake-up's lateness is then added to the
//! following period, so the mean period is the nominal period plus the mean latency (its own
//! sleep results show 7519 µs for a 7500 µs period), and a correction term would be needed
//! to pull it back. Here the expiries are `t0 + k·period`, computed from `k` alone: a late
//! wake-up makes that one tick late but does not move the next expiry, so over `n` ticks
//! the loop advances exactly `n·period` and the mean period equals the nominal period — no
//! drift, and nothing to correct. When a wake-up is so late that later expiries have
//! already passed, the [`OverrunPolicy`] says whether to skip them (default) or return
//! them at once, late. `bench/periodic.sh` measures the difference.
//!
//! All times are integer nanoseconds ([`Nanos`], `i64`) on one clock, `CLOCK_MONOTONIC`
//! unless chosen otherwise. The waiting, recording, statistics and settings are those of
//! `tickscope-engine`; this crate puts them behind a loop.

#![deny(missing_docs)]

mod error;
pub mod executive;
#[cfg(feature = "explain")]
pub mod explain;
pub mod ffi;
pub mod ffi_executive;
mod periodic;
mod strategy;

pub use error::Error;
pub use executive::{
    Completion, Control, Executive, Plan, QueueKind, Release, StopHandle, Task, TaskId, TaskStats,
};
#[cfg(feature = "explain")]
pub use explain::{CauseCount, Explanation};
pub use periodic::{Builder, Periodic, Stats, Tick, MAX_PERIOD_NS};
pub use strategy::{Strategy, DEFAULT_SLEEP_EVERY};
pub use tickscope_engine::grid::OverrunPolicy;
pub use tickscope_engine::result::{LatencyStats, PeriodStats};
pub use tickscope_engine::setup::Policy;
pub use tickscope_engine::time::{ClockId, Nanos};
pub use tickscope_engine::wait::{Margin, MarginStats, MethodObservations};
