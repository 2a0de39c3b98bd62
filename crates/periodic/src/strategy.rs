//! How the loop waits for each expiry: the three strategies and their tunables, mapped onto
//! the engine's wake-up methods (`nanosleep-abs`, `busy`, `hybrid`).

use crate::error::Error;
use tickscope_engine::time::Nanos;
use tickscope_engine::wait::{Margin, MethodKind, MethodOptions};

/// How the loop waits for each expiry of its grid.
///
/// tickscope's `run --method nanosleep-abs|busy|hybrid` measures which of these wins on a
/// given machine; the loop lets a program use the winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Sleep to the expiry with `clock_nanosleep(clock, TIMER_ABSTIME, expiry)`. Costs almost
    /// no CPU; the wake-up is as late as the kernel's timer, scheduler and idle states make it
    /// (tens of µs on the project's machine, see `shared/guide/machine.md`).
    Sleep,
    /// Spin on the clock until the expiry: the most precise wake-up, for a whole core.
    ///
    /// With `sleep_every: Some(n)` the spin enters the kernel (a `clock_nanosleep` to the
    /// time just read, which returns at once) after every `n` clock reads before the expiry,
    /// as the Cpp-Periodic-Task README's `step_sleep` does: a point where the scheduler can
    /// run something else, but no CPU time given back. Under SCHED_FIFO/RR a spinning
    /// thread still meets RT throttling (about 50 ms stopped per second when other tasks
    /// wait for its CPU); the guard does not prevent that.
    Busy {
        /// Clock reads between two kernel trips, ≥ 1; `None`: never enter the kernel.
        sleep_every: Option<u32>,
    },
    /// Sleep with an absolute `clock_nanosleep` until `margin` before the expiry, then spin
    /// the rest of the way: busy-wait precision whenever the sleep ends inside the margin,
    /// for about `margin − sleep lateness` of spinning per period.
    Hybrid {
        /// [`Margin::Fixed`] ns (1 ..= the period), or [`Margin::Auto`]: learnt while the
        /// loop runs from the sleeps' measured lateness (a 99.5th percentile plus a guard;
        /// the first 256 periods use half the period, at most 500 µs).
        margin: Margin,
    },
}

/// The default `sleep_every` of [`Strategy::busy`]: clock reads between two kernel trips
/// (about 25 µs of spinning at the 22 ns a vDSO clock read costs on the project's machine).
pub const DEFAULT_SLEEP_EVERY: u32 = 1000;

impl Strategy {
    /// Busy-waiting with the default guard, a kernel trip every [`DEFAULT_SLEEP_EVERY`]
    /// clock reads.
    pub fn busy() -> Strategy {
        Strategy::Busy {
            sleep_every: Some(DEFAULT_SLEEP_EVERY),
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
    /// [`Error::InvalidArgument`] for a tunable out of range.
    pub(crate) fn method(&self, period: Nanos) -> Result<(MethodKind, MethodOptions), Error> {
        let mut options = MethodOptions::default();
        let kind = match *self {
            Strategy::Sleep => MethodKind::NanosleepAbs,
            Strategy::Busy { sleep_every } => {
                if sleep_every == Some(0) {
                    return Err(Error::InvalidArgument(
                        "busy: sleep_every must be at least 1 clock read (or None: never)".into(),
                    ));
                }
                options.busy_sleep_every = sleep_every;
                MethodKind::Busy
            }
            Strategy::Hybrid { margin } => {
                if let Margin::Fixed(m) = margin {
                    if !(1..=period).contains(&m) {
                        return Err(Error::InvalidArgument(format!(
                            "hybrid: the margin must be 1 ..= {period} ns (the period), not {m}"
                        )));
                    }
                }
                options.margin = margin;
                MethodKind::Hybrid
            }
        };
        Ok((kind, options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_map_to_the_engine_methods() {
        let (k, o) = Strategy::busy().method(1_000_000).unwrap();
        assert_eq!((k, o.busy_sleep_every), (MethodKind::Busy, Some(1000)));
        let fixed = Strategy::Hybrid {
            margin: Margin::Fixed(100_000),
        };
        let (k, o) = fixed.method(1_000_000).unwrap();
        assert_eq!((k, o.margin), (MethodKind::Hybrid, Margin::Fixed(100_000)));
        assert_eq!(
            Strategy::Sleep.method(1).unwrap().0,
            MethodKind::NanosleepAbs
        );
        for name in ["sleep", "busy", "hybrid"] {
            assert_eq!(Strategy::from_name(name).unwrap().name(), name);
        }
        assert_eq!(Strategy::from_name("spin"), None);
    }
}
