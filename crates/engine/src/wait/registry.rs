//! The method registry: what each wake-up method declares about itself, and the macro that
//! turns one registration line per method into [`super::MethodKind`].
//!
//! A method is one file that implements [`WakeMethod`] and defines a
//! `pub(super) const DESCRIPTOR: MethodDescriptor`, plus one line in the `methods!` table of
//! `wait/mod.rs`:
//!
//! ```text
//! /// doc of the variant
//! NanosleepAbs = "nanosleep-abs" in nanosleep_abs,
//! ```
//!
//! From that line come the module declaration, the enum variant (with its serde name),
//! [`super::MethodKind::ALL`], [`super::MethodKind::name`], [`super::MethodKind::NAMES`],
//! and [`super::MethodKind::descriptor`], which gives the kernel call, the limits
//! [`super::check`] enforces, the throttle facts, `create` and the process-wide guard.

use super::{MethodOptions, WakeMethod};
use crate::error::{Error, Message};
use crate::time::{ClockId, Nanos};
use std::any::Any;
use std::io;

/// Builds a method on the measuring thread: `(clock, options)` → the method or the OS error
/// that stopped its kernel objects being created.
pub type CreateFn = fn(ClockId, &MethodOptions) -> io::Result<Box<dyn WakeMethod>>;

/// A method that can drive at most `max` measuring threads, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadLimit {
    /// The most measuring threads the method can drive (≥ 1).
    pub max: usize,
    /// Why, in kernel terms (for example that `setitimer(ITIMER_REAL)` is one per process).
    pub why: &'static str,
    /// The method to use instead, with a word on why it does better (for messages).
    pub instead: &'static str,
}

/// A method whose period must be a whole multiple of `step` ns, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeriodStep {
    /// The step, ns (> 0).
    pub step: Nanos,
    /// Why, in kernel terms (for example that `setitimer(2)` takes a `struct timeval`).
    pub why: &'static str,
    /// The step in words, as in "an interval of whole µs".
    pub unit: &'static str,
}

/// How much of a CPU a spinning method keeps busy, for the real-time throttling warning
/// ([`super::throttle_warning`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Spin {
    /// The share of a CPU spent spinning, 0.0 ..= 1.0.
    pub share: f64,
    /// A remark appended to the warning (for example that naps do not help).
    pub note: Option<Message>,
}

/// Process-wide set-up a method needs in the coordinating thread for the whole run (for
/// `itimer`: SIGALRM blocked there, so that the process's signal reaches the measuring
/// thread). The guard is dropped when the run ends.
#[derive(Debug, Clone, Copy)]
pub struct ProcessGuard {
    /// Sets it up in the calling (coordinating) thread; the returned box undoes it on drop.
    pub set_up: fn() -> io::Result<Box<dyn Any>>,
    /// What setting it up is, for the error message (for example "block SIGALRM in the
    /// coordinating thread").
    pub what: &'static str,
}

/// Everything the engine knows about a wake-up method besides its code.
#[derive(Debug, Clone, Copy)]
pub struct MethodDescriptor {
    /// The kernel call that makes the method, with its manual section (for messages).
    pub kernel_call: &'static str,
    /// The one clock the method's kernel timer runs on, for methods whose call takes no
    /// clock; `None` when it takes the run's clock.
    pub fixed_clock: Option<ClockId>,
    /// Clocks the kernel call refuses although it takes a clock (`timerfd`: CLOCK_TAI).
    pub refused_clocks: &'static [ClockId],
    /// How many measuring threads it can drive, when limited.
    pub thread_limit: Option<ThreadLimit>,
    /// The step its period must be a multiple of, when it has one.
    pub period_step: Option<PeriodStep>,
    /// What `EBUSY` from setting it up means, when it means something particular.
    pub busy_means: Option<&'static str>,
    /// How much it spins with these options and period, for methods that spin.
    pub spin: Option<fn(&MethodOptions, Nanos) -> Option<Spin>>,
    /// Process-wide set-up held for the run, when the method needs any.
    pub process_guard: Option<ProcessGuard>,
    /// Builds the method (see [`CreateFn`]).
    pub create: CreateFn,
}

impl MethodDescriptor {
    /// A method with no limits, no spin and no process-wide set-up; fill the rest with
    /// struct update syntax: `MethodDescriptor { fixed_clock: …, ..MethodDescriptor::new(…) }`.
    pub const fn new(kernel_call: &'static str, create: CreateFn) -> Self {
        MethodDescriptor {
            kernel_call,
            fixed_clock: None,
            refused_clocks: &[],
            thread_limit: None,
            period_step: None,
            busy_means: None,
            spin: None,
            process_guard: None,
            create,
        }
    }

    /// Sets up the method's process-wide guard in the calling thread, if it declares one.
    ///
    /// # Errors
    /// [`crate::error::ErrorKind::Os`] when the set-up fails.
    pub fn set_up_process_guard(&self) -> Result<Option<Box<dyn Any>>, Error> {
        match self.process_guard {
            None => Ok(None),
            Some(g) => (g.set_up)()
                .map(Some)
                .map_err(|e| Error::os(format!("cannot {}", g.what), e)),
        }
    }
}

/// Declares the wake-up methods: one line each, `Variant = "name" in module,` with the
/// variant's doc comment above it. See the module docs.
macro_rules! methods {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal in $module:ident, )+) => {
        $( mod $module; )+

        /// The wake-up methods tickscope knows, by the name used in `--method`. Declared,
        /// one line each, by the registry in `wait/mod.rs` (see [`registry`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum MethodKind {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )+
        }

        impl MethodKind {
            /// Every method, in the order `--method all` runs them (the registry's order).
            pub const ALL: &'static [MethodKind] = &[$( MethodKind::$variant, )+];

            /// Every method's name, in [`MethodKind::ALL`] order.
            pub const NAMES: &'static [&'static str] = &[$( $name, )+];

            /// The name used on the command line and in result files.
            pub fn name(self) -> &'static str {
                match self {
                    $( MethodKind::$variant => $name, )+
                }
            }

            /// What the method declares about itself (its module's `DESCRIPTOR`).
            pub fn descriptor(self) -> &'static MethodDescriptor {
                match self {
                    $( MethodKind::$variant => &$module::DESCRIPTOR, )+
                }
            }
        }
    };
}

pub(super) use methods;
