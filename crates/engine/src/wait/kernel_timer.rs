//! Periodic kernel timers (`timerfd`, `posix-timer`, `itimer`) against the engine's grid.
//!
//! These methods arm the kernel timer once, with the run's period, instead of once per
//! wake-up. The kernel then keeps its own grid: when the thread is late it does not queue
//! one notification per expiry but reports how many expired (`timerfd`: the count `read(2)`
//! returns, `timerfd_create(2)`; `posix-timer`: 1 + `timer_getoverrun(2)`), or merges them
//! silently (`itimer`: one pending SIGALRM, `signal(7)`), and re-arms for the first grid
//! point after it delivered the notification.
//!
//! The engine's grid rule ([`crate::grid`]) decides which expiry the thread waits for next,
//! and both rules agree only if the method remembers which expiries the kernel has already
//! reported. [`Fired`] does: a wait for an expiry the kernel already reported returns at
//! once (that is how `--overrun catch-up` wakes once per passed expiry), and a notification
//! for an expiry before the one waited for — possible under `--overrun skip` when a grid
//! point passes between the notification and the clock read — is consumed and waited past,
//! never returned as an early wake-up. The overruns are counted by the engine either
//! way; the kernel's own count is kept beside it as a cross-check
//! ([`super::MethodObservations::timer_overruns`]).

use crate::time::{read_clock, to_timespec, Nanos};
use std::io;

/// One notification from a periodic kernel timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fire {
    /// The wake time, read once right after the notification (ns).
    pub woke: Nanos,
    /// How many expiries it reports, when the kernel says (`None`: at least one; the grid
    /// points up to `woke` are taken as reported).
    pub count: Option<u64>,
}

/// The expiries of a periodic kernel timer reported so far (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Fired {
    first: Nanos,
    period: Nanos,
    last: Nanos,
    overruns: u64,
}

impl Fired {
    /// A timer armed for `first` and every `period` ns after it; nothing reported yet.
    ///
    /// # Panics
    /// If `period` is not positive.
    pub(crate) fn new(first: Nanos, period: Nanos) -> Self {
        assert!(period > 0, "period must be positive");
        Fired {
            first,
            period,
            last: first - period,
            overruns: 0,
        }
    }

    /// Whether the kernel has reported `expiry` (or a later one) already.
    #[inline]
    pub(crate) fn covers(&self, expiry: Nanos) -> bool {
        expiry <= self.last
    }

    /// Takes a notification into account.
    #[inline]
    pub(crate) fn record(&mut self, fire: Fire) {
        match fire.count {
            Some(n) => {
                self.last += n as Nanos * self.period;
                self.overruns += n.saturating_sub(1);
            }
            None => {
                let k = (fire.woke - self.first).div_euclid(self.period);
                self.last = self.last.max(self.first + k * self.period);
            }
        }
    }

    /// Expiries the kernel reported beyond one per notification: its own count of
    /// overruns.
    pub(crate) fn overruns(&self) -> u64 {
        self.overruns
    }
}

/// The `itimerspec` of a periodic timer first expiring at the absolute time `first` (ns)
/// and every `period` ns after it (`timer_settime(2)`, `timerfd_settime(2)`).
pub(crate) fn periodic_spec(first: Nanos, period: Nanos) -> libc::itimerspec {
    libc::itimerspec {
        it_interval: to_timespec(period),
        it_value: to_timespec(first),
    }
}

/// Waits until the kernel timer has reported `expiry`: returns at once (one clock read on
/// `clock`) if it already has, else calls `block` — which blocks for the next notification
/// and reads the clock right after it — until a notification covers `expiry`.
///
/// # Errors
/// The error of `block` ([`io::ErrorKind::Interrupted`] for a signal; the caller retries).
#[inline]
pub(crate) fn wait_for(
    fired: &mut Fired,
    clock: libc::clockid_t,
    expiry: Nanos,
    mut block: impl FnMut() -> io::Result<Fire>,
) -> io::Result<Nanos> {
    if fired.covers(expiry) {
        return Ok(read_clock(clock));
    }
    loop {
        let fire = block()?;
        fired.record(fire);
        if fired.covers(expiry) {
            return Ok(fire.woke);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Nanos = 1_000;

    /// A scripted kernel: notifications in order, each `(woke, count)`.
    fn kernel(script: Vec<(Nanos, Option<u64>)>) -> impl FnMut() -> io::Result<Fire> {
        let mut it = script.into_iter();
        move || {
            let (woke, count) = it.next().expect("a wait blocked past the script");
            Ok(Fire { woke, count })
        }
    }

    #[test]
    fn one_notification_per_expiry_wakes_each_wait() {
        let mut f = Fired::new(10_000, P);
        let mut k = kernel(vec![(10_050, Some(1)), (11_020, Some(1))]);
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 10_000, &mut k).unwrap(),
            10_050
        );
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 11_000, &mut k).unwrap(),
            11_020
        );
        assert_eq!(f.overruns(), 0);
    }

    #[test]
    fn catch_up_returns_at_once_for_expiries_the_kernel_already_counted() {
        let mut f = Fired::new(10_000, P);
        // Woke 2.5 periods late: the read reports expiries 10 000, 11 000 and 12 000.
        let mut k = kernel(vec![(12_500, Some(3)), (13_010, Some(1))]);
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 10_000, &mut k).unwrap(),
            12_500
        );
        // 11 000 and 12 000 are covered: no blocking (the script would run out otherwise).
        assert!(wait_for(&mut f, libc::CLOCK_MONOTONIC, 11_000, &mut k).unwrap() > 0);
        assert!(wait_for(&mut f, libc::CLOCK_MONOTONIC, 12_000, &mut k).unwrap() > 0);
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 13_000, &mut k).unwrap(),
            13_010
        );
        assert_eq!(f.overruns(), 2);
    }

    #[test]
    fn skip_never_returns_a_notification_for_an_earlier_expiry() {
        let mut f = Fired::new(10_000, P);
        // The read reported 10 000 alone, but the clock read after it came at 11 001, after
        // expiry 11 000 fired in the kernel; the grid skips to 12 000. The next read reports
        // 11 000 at once; the wait must block again for 12 000.
        let mut k = kernel(vec![
            (11_001, Some(1)),
            (11_002, Some(1)),
            (12_030, Some(1)),
        ]);
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 10_000, &mut k).unwrap(),
            11_001
        );
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 12_000, &mut k).unwrap(),
            12_030
        );
    }

    #[test]
    fn uncounted_notifications_cover_the_grid_points_up_to_their_time() {
        let mut f = Fired::new(10_000, P);
        // itimer: one merged SIGALRM at 12 500 stands for 10 000, 11 000 and 12 000.
        let mut k = kernel(vec![(12_500, None), (13_004, None)]);
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 10_000, &mut k).unwrap(),
            12_500
        );
        assert!(f.covers(12_000) && !f.covers(13_000));
        assert_eq!(
            wait_for(&mut f, libc::CLOCK_MONOTONIC, 13_000, &mut k).unwrap(),
            13_004
        );
        // The kernel did not count: no overruns from it.
        assert_eq!(f.overruns(), 0);
    }

    #[test]
    fn errors_leave_the_state_alone() {
        let mut f = Fired::new(10_000, P);
        let r = wait_for(&mut f, libc::CLOCK_MONOTONIC, 10_000, || {
            Err(io::Error::from_raw_os_error(libc::EINTR))
        });
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::Interrupted);
        assert!(!f.covers(10_000));
    }
}
