//! How the loop waits for each expiry: the three strategies and their tunables.

use crate::error::Error;
use tickscope_engine::time::Nanos;
use tickscope_engine::wait::{MethodKind, MethodOptions};

/// How the loop waits for each expiry of its grid.
///
/// tickscope's `run --method …` measures which of these wins on a given machine; the loop
/// lets a program use the winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Sleep to the expiry with `clock_nanosleep(clock, TIMER_ABSTIME, expiry)`. Costs almost
    /// no CPU; the wake-up is as late as the kernel's timer, scheduler and idle states make it
    /// (tens of µs on the project's machine, see `shared/guide/machine.md`).
    Sleep,
    /// Spin on the clock until the expiry, sleeping briefly after every `sleep_every` clock
    /// reads so that the scheduler (and RT throttling) still sees the thread yield. The most
    /// precise wake-up, at the price of a whole core.
    Busy {
        /// Clock reads between two short sleeps, ≥ 1.
        sleep_every: u32,
    },
    /// Sleep until `margin` before the expiry, then spin the rest of the way: nearly the
    /// precision of [`Strategy::Busy`] for a fraction of its CPU.
    Hybrid {
        /// How long before the expiry the sleep ends.
        margin: Margin,
    },
}

/// How far before the expiry a [`Strategy::Hybrid`] wait stops sleeping and starts spinning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Margin {
    /// A fixed margin in ns, 1 ..= the period.
    Fixed(Nanos),
    /// Calibrated while the loop runs from the sleep's measured lateness.
    Auto,
}

/// The default `sleep_every` of [`Strategy::Busy`]: clock reads between two short sleeps.
pub const DEFAULT_SLEEP_EVERY: u32 = 1000;

impl Strategy {
    /// Busy-waiting with the default guard, [`DEFAULT_SLEEP_EVERY`] clock reads per sleep.
    pub fn busy() -> Strategy {
        Strategy::Busy {
            sleep_every: DEFAULT_SLEEP_EVERY,
        }
    }

    /// The hybrid with an auto-calibrated margin.
    pub fn hybrid() -> Strategy {
        Strategy::Hybrid {
            margin: Margin::Auto,
        }
    }

    /// The strategy's short name: `sleep`, `busy` or `hybrid`.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Sleep => "sleep",
            Strategy::Busy { .. } => "busy",
            Strategy::Hybrid { .. } => "hybrid",
        }
    }

    /// Parses a name as returned by [`Strategy::name`], with default tunables
    /// ([`Strategy::busy`], [`Strategy::hybrid`]); `None` for anything else.
    pub fn from_name(name: &str) -> Option<Strategy> {
        match name {
            "sleep" => Some(Strategy::Sleep),
            "busy" => Some(Strategy::busy()),
            "hybrid" => Some(Strategy::hybrid()),
            _ => None,
        }
    }

    /// The engine's wake-up method and options for this strategy with period `period` ns.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a tunable out of range; [`Error::Unsupported`] for a
    /// strategy the engine in this build does not provide.
    pub(crate) fn method(&self, period: Nanos) -> Result<(MethodKind, MethodOptions), Error> {
        match *self {
            Strategy::Sleep => Ok((MethodKind::NanosleepAbs, MethodOptions::default())),
            Strategy::Busy { sleep_every } => {
                if sleep_every == 0 {
                    return Err(Error::InvalidArgument(
                        "busy: sleep_every must be at least 1 clock read".into(),
                    ));
                }
                Err(unsupported("busy"))
            }
            Strategy::Hybrid { margin } => {
                if let Margin::Fixed(m) = margin {
                    if !(1..=period).contains(&m) {
                        return Err(Error::InvalidArgument(format!(
                            "hybrid: the margin must be 1 ..= {period} ns (the period), not {m}"
                        )));
                    }
                }
                Err(unsupported("hybrid"))
            }
        }
    }
}

fn unsupported(name: &str) -> Error {
    Error::Unsupported(format!(
        "the {name} strategy is not available in this build of tickscope's engine yet"
    ))
}
