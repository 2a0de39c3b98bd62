//! [`SpinClock`]: the time a spinning method reads and naps on — the kernel's clock
//! ([`super::KernelClock`]) on a run, virtual time in tests.

use crate::time::Nanos;
use std::io;

/// What a spinning method needs from time: read it, and sleep until an absolute instant.
pub trait SpinClock {
    /// The current time, ns on the run's clock.
    fn now(&self) -> Nanos;

    /// Sleeps until the absolute time `t` (ns on the run's clock); returns at once when `t`
    /// has passed.
    ///
    /// # Errors
    /// [`io::ErrorKind::Interrupted`] when a signal handler cut the sleep short; any other
    /// OS error of the sleep.
    fn sleep_until(&self, t: Nanos) -> io::Result<()>;
}
