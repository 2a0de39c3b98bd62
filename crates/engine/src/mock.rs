//! A virtual clock and wake-up method, so the engine's logic is tested without real time.
//!
//! [`MockMethod`] keeps its own time. Each wait jumps the time to the expiry plus the next
//! latency of a script (repeated when it runs out), never backwards, so tests can say
//! exactly when every wake-up happens.

use crate::time::{Clock, Nanos};
use crate::wait::{MethodKind, WakeMethod};
use std::cell::Cell;
use std::io;

/// A clock that only moves when told to.
#[derive(Debug, Default)]
pub struct MockClock {
    now: Cell<Nanos>,
}

impl MockClock {
    /// A clock reading `start` ns.
    pub fn new(start: Nanos) -> Self {
        MockClock {
            now: Cell::new(start),
        }
    }

    /// Sets the time (ns). The mock allows any value; callers keep it monotonic.
    pub fn set(&self, t: Nanos) {
        self.now.set(t);
    }
}

impl Clock for MockClock {
    fn now(&self) -> Nanos {
        self.now.get()
    }
}

/// A wake-up method on virtual time with scripted latencies.
#[derive(Debug)]
pub struct MockMethod {
    clock: MockClock,
    latencies: Vec<Nanos>,
    next: usize,
}

impl MockMethod {
    /// Starts at `start` ns; the k-th wait returns at its expiry plus
    /// `latencies[k % latencies.len()]` (or at the previous wake time if that is later).
    ///
    /// # Panics
    /// If `latencies` is empty.
    pub fn new(start: Nanos, latencies: Vec<Nanos>) -> Self {
        assert!(!latencies.is_empty(), "the latency script needs a value");
        MockMethod {
            clock: MockClock::new(start),
            latencies,
            next: 0,
        }
    }
}

impl WakeMethod for MockMethod {
    fn kind(&self) -> MethodKind {
        MethodKind::NanosleepAbs
    }

    fn now(&self) -> Nanos {
        self.clock.now()
    }

    fn wait(&mut self, expiry: Nanos, _last_woke: Nanos) -> io::Result<Nanos> {
        let lat = self.latencies[self.next];
        self.next = (self.next + 1) % self.latencies.len();
        let woke = (expiry + lat).max(self.clock.now());
        self.clock.set(woke);
        Ok(woke)
    }

    fn interface(&self) -> &'static str {
        "mock"
    }
}
