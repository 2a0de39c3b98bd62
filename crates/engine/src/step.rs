//! One wake-up on the grid: wait for the expiry, retry when a signal cut the wait short,
//! record the latency and the period, advance the grid. Shared by the measuring loop
//! ([`crate::worker::measure`]) and the periodic library's `Periodic::wait`, so that both
//! measure exactly the same thing.

use crate::grid::Grid;
use crate::record::WindowRecord;
use crate::time::Nanos;
use crate::wait::WakeMethod;
use std::io;

/// What one wake-up found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// The expiry waited for (absolute ns on the run's clock).
    pub expiry: Nanos,
    /// The wake time, the method's one clock read after the wait (absolute ns).
    pub woke: Nanos,
    /// Grid points after `expiry` that had already passed at `woke` (missed periods, see
    /// [`Grid::advance`]).
    pub missed: u64,
}

/// Waits for the grid's next expiry with `method`, then records into `record` the wake-up
/// latency `woke − expiry` and, when `last_woke` is a previous wake-up (`has_previous`), the
/// period `woke − last_woke` against the grid's nominal period; counts the missed periods in
/// [`WindowRecord::overruns`] and advances `grid`.
///
/// When a signal interrupts the wait ([`io::ErrorKind::Interrupted`]) the wait is repeated
/// towards the same expiry while `retry()` says so; otherwise `Ok(None)` is returned and
/// nothing is recorded. No allocation, no lock: the wait and its clock read only.
///
/// # Errors
/// Any other error of [`WakeMethod::wait`]; nothing is recorded and the grid stays put.
#[inline]
pub fn wake_once<M: WakeMethod + ?Sized>(
    method: &mut M,
    grid: &mut Grid,
    record: &mut WindowRecord,
    last_woke: Nanos,
    has_previous: bool,
    mut retry: impl FnMut() -> bool,
) -> io::Result<Option<Wake>> {
    let expiry = grid.expiry();
    let woke = loop {
        match method.wait(expiry, last_woke) {
            Ok(t) => break t,
            Err(e) if e.kind() == io::ErrorKind::Interrupted && retry() => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(None),
            Err(e) => return Err(e),
        }
    };
    let period = has_previous.then_some((woke - last_woke, grid.period()));
    record.record(woke - expiry, period);
    let missed = grid.advance(woke);
    record.overruns += missed;
    Ok(Some(Wake {
        expiry,
        woke,
        missed,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::OverrunPolicy;
    use crate::mock::MockMethod;

    /// A method whose first wait is interrupted, then wakes at the expiry plus 5 ns.
    struct Interrupted(MockMethod, bool);

    impl WakeMethod for Interrupted {
        fn kind(&self) -> crate::wait::MethodKind {
            self.0.kind()
        }
        fn now(&self) -> Nanos {
            self.0.now()
        }
        fn wait(&mut self, expiry: Nanos, last: Nanos) -> io::Result<Nanos> {
            if std::mem::take(&mut self.1) {
                return Err(io::Error::from_raw_os_error(libc::EINTR));
            }
            self.0.wait(expiry, last)
        }
        fn interface(&self) -> &'static str {
            "test"
        }
    }

    #[test]
    fn records_latency_period_and_missed_periods() {
        let mut m = MockMethod::new(0, vec![5, 2_500]);
        let mut grid = Grid::new(1_000, 1_000, OverrunPolicy::Skip);
        let mut rec = WindowRecord::new();
        let w = wake_once(&mut m, &mut grid, &mut rec, 0, false, || true).unwrap();
        assert_eq!(
            w,
            Some(Wake {
                expiry: 1_000,
                woke: 1_005,
                missed: 0
            })
        );
        let w = wake_once(&mut m, &mut grid, &mut rec, 1_005, true, || true).unwrap();
        assert_eq!(
            w,
            Some(Wake {
                expiry: 2_000,
                woke: 4_500,
                missed: 2
            })
        );
        assert_eq!((rec.samples(), rec.overruns), (2, 2));
        assert_eq!(grid.expiry(), 5_000);
    }

    #[test]
    fn an_interrupted_wait_is_retried_or_handed_back() {
        let mut grid = Grid::new(1_000, 1_000, OverrunPolicy::Skip);
        let mut rec = WindowRecord::new();
        let mut m = Interrupted(MockMethod::new(0, vec![5]), true);
        let w = wake_once(&mut m, &mut grid, &mut rec, 0, false, || false).unwrap();
        assert_eq!((w, rec.samples(), grid.expiry()), (None, 0, 1_000));
        let mut m = Interrupted(MockMethod::new(0, vec![5]), true);
        let w = wake_once(&mut m, &mut grid, &mut rec, 0, false, || true).unwrap();
        assert_eq!(w.map(|w| w.woke), Some(1_005));
    }
}
