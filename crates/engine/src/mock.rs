//! A virtual clock and wake-up method, so the engine's logic is tested without real time.
//!
//! [`MockMethod`] keeps its own time. Each wait jumps the time to the expiry plus the next
//! latency of a script (repeated when it runs out), never backwards, so tests can say
//! exactly when every wake-up happens. [`MockTimebase`] is the clock of the spinning
//! methods (`busy`, `hybrid`): readings cost time, sleeps end a scripted overshoot late.

use crate::time::{Clock, Nanos};
use crate::wait::{SpinClock, WakeMethod};
use std::cell::Cell;
use std::io;

/// A clock that only moves when told to.
#[derive(Debug, Default)]
pub(crate) struct MockClock {
    now: Cell<Nanos>,
}

impl MockClock {
    /// A clock reading `start` ns.
    pub(crate) fn new(start: Nanos) -> Self {
        MockClock {
            now: Cell::new(start),
        }
    }

    /// Sets the time (ns). The mock allows any value; callers keep it monotonic.
    pub(crate) fn set(&self, t: Nanos) {
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

/// A clock for the spinning methods ([`crate::wait::Busy`], [`crate::wait::Hybrid`]) on
/// virtual time: every reading costs `read_cost` ns, and every sleep ends a scripted
/// overshoot after the later of its target and the current time (the script repeats).
/// It counts readings and sleeps, the mock's measure of CPU spent and of system calls.
#[derive(Debug)]
pub struct MockTimebase {
    now: Cell<Nanos>,
    read_cost: Nanos,
    overshoots: Vec<Nanos>,
    next: Cell<usize>,
    reads: Cell<u64>,
    sleeps: Cell<u64>,
}

impl MockTimebase {
    /// Starts at `start` ns; each reading advances the time by `read_cost` ns (≥ 0); the
    /// k-th sleep ends `overshoots[k % len]` ns late.
    ///
    /// # Panics
    /// If `overshoots` is empty.
    pub fn new(start: Nanos, read_cost: Nanos, overshoots: Vec<Nanos>) -> Self {
        assert!(!overshoots.is_empty(), "the overshoot script needs a value");
        MockTimebase {
            now: Cell::new(start),
            read_cost: read_cost.max(0),
            overshoots,
            next: Cell::new(0),
            reads: Cell::new(0),
            sleeps: Cell::new(0),
        }
    }

    /// Readings taken so far.
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }

    /// Sleeps taken so far.
    pub fn sleeps(&self) -> u64 {
        self.sleeps.get()
    }
}

impl Clock for MockTimebase {
    fn now(&self) -> Nanos {
        let t = self.now.get();
        self.now.set(t + self.read_cost);
        self.reads.set(self.reads.get() + 1);
        t
    }
}

impl SpinClock for MockTimebase {
    fn now(&self) -> Nanos {
        Clock::now(self)
    }

    fn sleep_until(&self, t: Nanos) -> io::Result<()> {
        let k = self.next.get();
        self.next.set((k + 1) % self.overshoots.len());
        self.sleeps.set(self.sleeps.get() + 1);
        self.now.set(self.now.get().max(t) + self.overshoots[k]);
        Ok(())
    }
}
