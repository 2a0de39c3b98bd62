//! The loop itself: a fixed grid of expiries, a wake-up method, running statistics and the
//! settings the caller asked for.

use crate::error::Error;
use crate::strategy::Strategy;
use std::io;
use std::marker::PhantomData;
use tickscope_engine::grid::{Grid, OverrunPolicy};
use tickscope_engine::record::WindowRecord;
use tickscope_engine::result::{LatencyStats, PeriodStats};
use tickscope_engine::setup::{
    privileges, AffinityGuard, MlockGuard, Policy, PolicyGuard, TimerSlackGuard,
};
use tickscope_engine::stats::{latency_stats, period_stats};
use tickscope_engine::time::{read_clock, ClockId, Nanos};
use tickscope_engine::wait::{self, MethodObservations, WakeMethod};
use tickscope_engine::worker::{wake_step, Step};

pub use tickscope_engine::run::MAX_PERIOD_NS;

/// One wake-up of the loop, as returned by [`Periodic::wait`]. Times are ns on the loop's
/// clock (`CLOCK_MONOTONIC` unless [`Builder::clock`] chose another).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// Position of this expiry on the grid: `expiry = t0 + index·period`, 0 for the first.
    /// Consecutive ticks differ by 1 unless periods were skipped ([`OverrunPolicy::Skip`]).
    pub index: u64,
    /// The expiry waited for (absolute ns).
    pub expiry: Nanos,
    /// When the thread woke: one clock read right after the wait (absolute ns).
    pub woke: Nanos,
    /// `woke − expiry`, ns; negative if the wait returned early.
    pub latency: Nanos,
    /// Grid points after this tick's expiry that had already passed when it woke, counted
    /// once each. With [`OverrunPolicy::Skip`] they are skipped (the next tick's index is
    /// `index + overruns + 1`); with [`OverrunPolicy::CatchUp`] the next waits return them at
    /// once, late.
    pub overruns: u64,
}

/// The loop's running statistics, the same ones `tickscope run` reports, since the first
/// wait or the last [`Periodic::reset_stats`].
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// The nominal period, ns.
    pub period_ns: Nanos,
    /// Ticks recorded.
    pub samples: u64,
    /// Overruns (sum of [`Tick::overruns`]).
    pub overruns: u64,
    /// Wake-up latency (`woke − expiry`); `None` before the first tick.
    pub latency: Option<LatencyStats>,
    /// Period dt between consecutive wake-ups against the nominal period; `None` before the
    /// second tick.
    pub period: Option<PeriodStats>,
    /// CPU time the calling thread used since the statistics started, ns
    /// (`CLOCK_THREAD_CPUTIME_ID`; covers the program's own work between waits too).
    pub cpu_time_ns: Nanos,
    /// Wall time since the statistics started, ns.
    pub wall_time_ns: Nanos,
    /// `cpu_time_ns / wall_time_ns` in % of one core (0 when no time has passed).
    pub cpu_percent: f64,
    /// What the wait method observed about itself since the loop started (not reset by
    /// [`Periodic::reset_stats`]): the hybrid's margin (initial, calibrated, current, how
    /// often a sleep overshot it), the busy-wait's kernel trips.
    pub method: MethodObservations,
}

/// Thread settings the caller asked for; each guard restores its setting when dropped.
#[derive(Debug, Default)]
struct Setup {
    policy: Option<PolicyGuard>,
    affinity: Option<AffinityGuard>,
    slack: Option<TimerSlackGuard>,
    mlock: Option<MlockGuard>,
}

/// Where the loop is on its grid, from the first wait on.
#[derive(Debug)]
struct Running {
    grid: Grid,
    /// The first expiry, t0.
    first_expiry: Nanos,
    /// The previous wake-up, or the start time before the first tick.
    last_woke: Nanos,
    /// Whether a tick has happened (the next one has a period dt).
    ticked: bool,
}

/// A periodic loop: each [`Periodic::wait`] returns at the next expiry of the fixed grid
/// `t0 + k·period`, where `t0` is one period after the first call.
///
/// The loop is bound to the thread that created it (it is neither `Send` nor `Sync`): the
/// policy, affinity and timer slack it sets are those of that thread, and they are restored
/// when it is dropped there. Build it on the thread that runs the loop.
///
/// ```
/// use tickscope::{Periodic, Strategy};
///
/// let mut looper = Periodic::new(1_000_000, Strategy::Sleep)?; // 1 ms
/// for _ in 0..20 {
///     let tick = looper.wait()?;
///     // … the program's periodic work; `tick.latency` says how late it started (ns).
///     assert_eq!(tick.expiry + tick.latency, tick.woke);
/// }
/// let stats = looper.stats();
/// assert_eq!(stats.samples, 20);
/// println!("mean period {:.0} ns", stats.period.unwrap().mean);
/// # Ok::<(), tickscope::Error>(())
/// ```
pub struct Periodic {
    method: Box<dyn WakeMethod>,
    strategy: Strategy,
    clock: ClockId,
    period: Nanos,
    overrun: OverrunPolicy,
    running: Option<Running>,
    record: Box<WindowRecord>,
    stats_since: (Nanos, Nanos),
    setup: Setup,
    /// The explainer of late wake-ups ([`Periodic::explain`]).
    #[cfg(feature = "explain")]
    explainer: Option<crate::explain::Explainer>,
    _thread_bound: PhantomData<*const ()>,
}

impl std::fmt::Debug for Periodic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Periodic")
            .field("strategy", &self.strategy)
            .field("clock", &self.clock)
            .field("period", &self.period)
            .field("overrun", &self.overrun)
            .field("running", &self.running)
            .field("setup", &self.setup)
            .finish_non_exhaustive()
    }
}

/// Options for a [`Periodic`] loop, from [`Periodic::builder`]. Nothing on the system is
/// changed unless asked for here or later through the loop's setters.
///
/// ```
/// use tickscope::{OverrunPolicy, Periodic, Strategy};
///
/// let mut looper = Periodic::builder(500_000) // 500 µs
///     .strategy(Strategy::Sleep)
///     .overrun(OverrunPolicy::CatchUp)
///     .timer_slack(1) // 1 ns: no batching of this thread's timers
///     .build()?;
/// let first = looper.wait()?;
/// let second = looper.wait()?;
/// assert_eq!(second.expiry - first.expiry, 500_000);
/// # Ok::<(), tickscope::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until build() is called"]
pub struct Builder {
    period: Nanos,
    strategy: Strategy,
    overrun: OverrunPolicy,
    clock: ClockId,
    policy: Option<Policy>,
    cpu: Option<usize>,
    mlock: bool,
    timer_slack: Option<u64>,
}

impl Builder {
    /// How to wait (default [`Strategy::Sleep`]).
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// What to do after a wake-up later than the next expiry (default
    /// [`OverrunPolicy::Skip`]; [`OverrunPolicy::Relative`] is for executive tasks and is
    /// refused by [`Builder::build`]: a loop's ticks are numbered on one fixed grid).
    pub fn overrun(mut self, overrun: OverrunPolicy) -> Self {
        self.overrun = overrun;
        self
    }

    /// The clock the grid lives on (default [`ClockId::Monotonic`]).
    pub fn clock(mut self, clock: ClockId) -> Self {
        self.clock = clock;
        self
    }

    /// Run the calling thread under `policy` (see [`Periodic::set_policy`]).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Pin the calling thread to CPU `cpu` (see [`Periodic::pin_to_cpu`]).
    pub fn cpu(mut self, cpu: usize) -> Self {
        self.cpu = Some(cpu);
        self
    }

    /// Lock the process's memory (see [`Periodic::lock_memory`]).
    pub fn mlock(mut self) -> Self {
        self.mlock = true;
        self
    }

    /// Set the calling thread's timer slack to `ns` (see [`Periodic::set_timer_slack`]).
    pub fn timer_slack(mut self, ns: u64) -> Self {
        self.timer_slack = Some(ns);
        self
    }

    /// Creates the loop and applies the settings asked for, in the order memory lock,
    /// affinity, policy, timer slack. The grid starts at the first [`Periodic::wait`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a period outside 1 ..= [`MAX_PERIOD_NS`], a strategy
    /// tunable out of range or [`OverrunPolicy::Relative`]; [`Error::Unsupported`] for a strategy that cannot run on the
    /// chosen clock;
    /// [`Error::Os`] if the wake-up method or a setting cannot be set up — settings already
    /// applied are then restored before returning.
    pub fn build(self) -> Result<Periodic, Error> {
        if !(1..=MAX_PERIOD_NS).contains(&self.period) {
            return Err(Error::InvalidArgument(format!(
                "the period must be 1 ..= {MAX_PERIOD_NS} ns (1 hour), not {}",
                self.period
            )));
        }
        if self.overrun == OverrunPolicy::Relative {
            return Err(Error::InvalidArgument(
                "a Periodic loop skips or catches up after an overrun; the relative policy \
                 (moving the grid) is for executive tasks (Task::overrun)"
                    .into(),
            ));
        }
        let (kind, options) = self.strategy.method(self.period)?;
        let method = wait::create(kind, self.clock, &options).map_err(|e| {
            let name = self.strategy.name();
            match e.kind() {
                io::ErrorKind::Unsupported => {
                    Error::Unsupported(format!("the {name} strategy cannot run here: {e}"))
                }
                _ => Error::os(format!("cannot set up the {name} strategy"), e),
            }
        })?;
        let mut looper = Periodic {
            method,
            strategy: self.strategy,
            clock: self.clock,
            period: self.period,
            overrun: self.overrun,
            running: None,
            record: Box::new(WindowRecord::new()),
            stats_since: (0, 0),
            setup: Setup::default(),
            #[cfg(feature = "explain")]
            explainer: None,
            _thread_bound: PhantomData,
        };
        if self.mlock {
            looper.lock_memory()?;
        }
        if let Some(cpu) = self.cpu {
            looper.pin_to_cpu(cpu)?;
        }
        if let Some(policy) = self.policy {
            looper.set_policy(policy)?;
        }
        if let Some(ns) = self.timer_slack {
            looper.set_timer_slack(ns)?;
        }
        Ok(looper)
    }
}

impl Periodic {
    /// A loop waking every `period` ns with `strategy`, on `CLOCK_MONOTONIC`, skipping passed
    /// periods, changing nothing on the system.
    ///
    /// # Errors
    /// As [`Builder::build`].
    pub fn new(period: Nanos, strategy: Strategy) -> Result<Periodic, Error> {
        Periodic::builder(period).strategy(strategy).build()
    }

    /// [`Periodic::new`] with the period as a [`Duration`](std::time::Duration).
    ///
    /// # Errors
    /// As [`Builder::build`]; a period beyond `i64` ns (292 years) is out of range like any
    /// period above the one-hour limit.
    pub fn every(period: std::time::Duration, strategy: Strategy) -> Result<Periodic, Error> {
        Periodic::new(duration_ns(period), strategy)
    }

    /// [`Periodic::builder`] with the period as a [`Duration`](std::time::Duration).
    pub fn builder_every(period: std::time::Duration) -> Builder {
        Periodic::builder(duration_ns(period))
    }

    /// Options for a loop waking every `period` ns (checked by [`Builder::build`]).
    pub fn builder(period: Nanos) -> Builder {
        Builder {
            period,
            strategy: Strategy::Sleep,
            overrun: OverrunPolicy::Skip,
            clock: ClockId::Monotonic,
            policy: None,
            cpu: None,
            mlock: false,
            timer_slack: None,
        }
    }

    /// Blocks until the next expiry of the grid and returns the tick.
    ///
    /// The first call starts the grid: `t0` = now + period. Each later expiry is
    /// `t0 + k·period`, computed from `k`, never from a wake-up time, so lateness does not
    /// accumulate. A signal that interrupts the wait is absorbed (the wait resumes towards
    /// the same absolute expiry). Recording the statistics costs a few hundred ns and never
    /// allocates. The wait is not a `pthread_cancel(3)` cancellation point: the sleep is a
    /// direct system call (see `tickscope_engine::wait`'s `sleep_until`); stop a loop with a
    /// flag.
    ///
    /// # Errors
    /// [`Error::Os`] if the wake-up method fails (for example `EINVAL` from the kernel for
    /// a clock it cannot sleep on). The loop stays usable; the next call waits for the same
    /// expiry.
    pub fn wait(&mut self) -> Result<Tick, Error> {
        let running = match self.running {
            Some(ref mut r) => r,
            None => {
                let started = self.start()?;
                #[cfg(feature = "explain")]
                if let Some(x) = self.explainer.as_ref() {
                    x.going(started.first_expiry);
                }
                self.running.insert(started)
            }
        };
        let step = wake_step(
            self.method.as_mut(),
            &mut running.grid,
            &mut self.record,
            &mut running.last_woke,
            !running.ticked,
            || true,
        )
        .map_err(|e| Error::os(format!("the {} wait failed", self.strategy.name()), e))?;
        let Step {
            expiry,
            woke,
            overruns,
        } = step.expect("a wait that resumes on every signal always ends in a wake-up");
        let latency = woke - expiry;
        running.ticked = true;
        #[cfg(feature = "explain")]
        if let Some(x) = self.explainer.as_mut() {
            x.push(expiry, woke);
        }
        Ok(Tick {
            index: ((expiry - running.first_expiry) / self.period) as u64,
            expiry,
            woke,
            latency,
            overruns,
        })
    }

    /// Starts the grid one period from now and the statistics' clocks.
    fn start(&mut self) -> Result<Running, Error> {
        let now = self.method.now();
        let first_expiry = now + self.period;
        self.method
            .arm(first_expiry, self.period)
            .map_err(|e| Error::os(format!("cannot arm the {} wait", self.strategy.name()), e))?;
        self.stats_since = (now, thread_cpu());
        Ok(Running {
            grid: Grid::new(first_expiry, self.period, self.overrun),
            first_expiry,
            last_woke: now,
            ticked: false,
        })
    }

    /// The statistics so far (since the first wait or the last [`Periodic::reset_stats`]).
    /// The loop goes on undisturbed; call it between two waits. Allocates (the percentiles
    /// come from a histogram), so keep it out of the time-critical part of a period.
    pub fn stats(&self) -> Stats {
        let r = &self.record;
        let (wall0, cpu0) = self.stats_since;
        let (wall_time_ns, cpu_time_ns) = match self.running {
            Some(_) => (self.method.now() - wall0, thread_cpu() - cpu0),
            None => (0, 0),
        };
        Stats {
            period_ns: self.period,
            samples: r.samples(),
            overruns: r.overruns,
            latency: latency_stats(&r.latency, &r.latency_hist),
            period: period_stats(&r.period, &r.period_dev_hist, self.period),
            cpu_time_ns,
            wall_time_ns,
            cpu_percent: if wall_time_ns > 0 {
                100.0 * cpu_time_ns as f64 / wall_time_ns as f64
            } else {
                0.0
            },
            method: self.method.observations(),
        }
    }

    /// Turns on explanation of this loop's wake-ups later than `threshold_ns` (cargo feature
    /// `explain`): each one is broken into its causes — another thread, an interrupt,
    /// leaving an idle state, … — by the same trace capture and attribution as `tickscope
    /// run --explain`, on a housekeeping thread the library starts (off the loop's CPU when
    /// it is pinned). [`Periodic::wait`] only hands each late wake-up over: one wait-free
    /// push into a fixed ring, no lock, no allocation, no system call. Read the result with
    /// [`Periodic::explanation`]. Calling it again restarts with the new threshold. Tracing
    /// stops when the loop is dropped.
    ///
    /// # Errors
    /// [`Error::Os`] with `EPERM` when tracing is not permitted (root, or `CAP_BPF` and
    /// `CAP_PERFMON`; the message says so), [`Error::InvalidArgument`] for a negative
    /// threshold, [`Error::Os`] when the housekeeping thread cannot be started.
    #[cfg(feature = "explain")]
    pub fn explain(&mut self, threshold_ns: Nanos) -> Result<(), Error> {
        self.explainer = None;
        let (method, _) = self.strategy.method(self.period)?;
        let cpus = tickscope_engine::setup::allowed_cpus().unwrap_or_default();
        let info = crate::explain::LoopInfo {
            // SAFETY: gettid has no preconditions.
            tid: unsafe { libc::gettid() },
            cpu: (cpus.len() == 1).then(|| cpus[0]),
            method,
            period_ns: self.period,
            clock: self.clock,
        };
        let explainer = crate::explain::Explainer::start(threshold_ns, info)?;
        if let Some(r) = self.running.as_ref() {
            explainer.going(r.grid.expiry());
        }
        self.explainer = Some(explainer);
        Ok(())
    }

    /// Why this loop's wake-ups were late, so far ([`Periodic::explain`]); `None` when
    /// explanation is off. Takes the lock the housekeeping thread publishes under and
    /// allocates: call it between waits, like [`Periodic::stats`].
    #[cfg(feature = "explain")]
    pub fn explanation(&self) -> Option<crate::explain::Explanation> {
        self.explainer
            .as_ref()
            .map(crate::explain::Explainer::snapshot)
    }

    /// Forgets the statistics (for example after a warm-up) without touching the grid: the
    /// next tick's period dt is still measured from the previous wake-up.
    pub fn reset_stats(&mut self) {
        self.record.clear();
        if self.running.is_some() {
            self.stats_since = (self.method.now(), thread_cpu());
        }
    }

    /// The period, ns.
    pub fn period(&self) -> Nanos {
        self.period
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The clock the grid lives on.
    pub fn clock(&self) -> ClockId {
        self.clock
    }

    /// The overrun policy.
    pub fn overrun(&self) -> OverrunPolicy {
        self.overrun
    }

    /// The current time on the loop's clock, ns.
    pub fn now(&self) -> Nanos {
        self.method.now()
    }

    /// Runs the calling thread under `policy` until the loop is dropped (then the previous
    /// policy returns). Calling it again replaces the setting: the previous policy is
    /// restored first, so after an error the thread runs as before the loop changed it.
    ///
    /// # Errors
    /// [`Error::Os`] with `EPERM` when the process may not use the policy (the message says
    /// how to allow it: root, `CAP_SYS_NICE`, `ulimit -r`), `EINVAL` for a priority outside
    /// 1 ..= 99 (FIFO, RR) or a nice value outside −20 ..= 19.
    pub fn set_policy(&mut self, policy: Policy) -> Result<(), Error> {
        self.setup.policy = None;
        let guard = PolicyGuard::apply(policy)
            .map_err(|e| Error::os(privileges::explain_policy_error(&policy, &e), e))?;
        self.setup.policy = Some(guard);
        Ok(())
    }

    /// Pins the calling thread to CPU `cpu` (0-based) until the loop is dropped. Calling it
    /// again replaces the setting, as for [`Periodic::set_policy`].
    ///
    /// # Errors
    /// [`Error::Os`] with `EINVAL` when the CPU is offline, absent or outside the process's
    /// cpuset.
    pub fn pin_to_cpu(&mut self, cpu: usize) -> Result<(), Error> {
        self.setup.affinity = None;
        let guard = AffinityGuard::pin(cpu)
            .map_err(|e| Error::os(format!("cannot pin the loop's thread to CPU {cpu}"), e))?;
        self.setup.affinity = Some(guard);
        Ok(())
    }

    /// Locks the process's memory into RAM (`mlockall`) until the loop is dropped, so no
    /// page fault delays a wake-up: the current mappings, and the future ones too where no
    /// `RLIMIT_MEMLOCK` applies (root, `CAP_IPC_LOCK` or `ulimit -l unlimited`; under a
    /// limit, locking future mappings could make a later allocation abort the program).
    /// Call it once the program's memory is allocated. Process-wide: dropping the loop
    /// unlocks everything, also what another part of the program locked. Does nothing if
    /// the loop already holds the lock.
    ///
    /// # Errors
    /// [`Error::Os`] with `EPERM` or `ENOMEM` when the process may not lock that much
    /// (`RLIMIT_MEMLOCK`, `CAP_IPC_LOCK`; the message says which).
    pub fn lock_memory(&mut self) -> Result<(), Error> {
        if self.setup.mlock.is_none() {
            let guard = MlockGuard::lock()
                .map_err(|e| Error::os(privileges::explain_mlock_error(&e), e))?;
            self.setup.mlock = Some(guard);
        }
        Ok(())
    }

    /// Sets the calling thread's timer slack to `ns` (0 is taken as 1: to the kernel 0 means
    /// "the default", 50 µs) until the loop is dropped. Real-time policies ignore the slack.
    ///
    /// # Errors
    /// [`Error::Os`] with the error of `prctl(PR_SET_TIMERSLACK)`.
    pub fn set_timer_slack(&mut self, ns: u64) -> Result<(), Error> {
        self.setup.slack = None;
        let guard = TimerSlackGuard::set(ns)
            .map_err(|e| Error::os(format!("cannot set the timer slack to {ns} ns"), e))?;
        self.setup.slack = Some(guard);
        Ok(())
    }
}

/// The calling thread's CPU time, ns.
fn thread_cpu() -> Nanos {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// A `Duration` as ns; one beyond `i64` saturates, so [`Builder::build`] refuses it as out of
/// range.
fn duration_ns(d: std::time::Duration) -> Nanos {
    Nanos::try_from(d.as_nanos()).unwrap_or(Nanos::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_may_be_a_duration() {
        use std::time::Duration;
        let p = Periodic::every(Duration::from_micros(500), Strategy::Sleep).unwrap();
        assert_eq!(p.period(), 500_000);
        assert!(Periodic::every(Duration::ZERO, Strategy::Sleep).is_err());
        assert!(Periodic::every(Duration::from_secs(u64::MAX), Strategy::Sleep).is_err());
        let b = Periodic::builder_every(Duration::from_millis(2))
            .build()
            .unwrap();
        assert_eq!(b.period(), 2_000_000);
    }
    use tickscope_engine::setup::{allowed_cpus, current_policy, current_timer_slack};

    #[test]
    fn rejects_periods_out_of_range() {
        for p in [0, -1, MAX_PERIOD_NS + 1] {
            let e = Periodic::new(p, Strategy::Sleep).unwrap_err();
            assert_eq!(e.errno(), libc::EINVAL, "{p}");
            assert!(e.to_string().contains("period"), "{e}");
        }
    }

    #[test]
    fn ticks_follow_the_grid() {
        let period = 200_000;
        let mut p = Periodic::new(period, Strategy::Sleep).unwrap();
        assert_eq!(p.stats().samples, 0);
        let before = p.now();
        let first = p.wait().unwrap();
        assert_eq!(first.index, 0);
        assert!(first.expiry >= before + period);
        let mut last = first;
        for _ in 0..30 {
            let t = p.wait().unwrap();
            assert_eq!(t.latency, t.woke - t.expiry);
            assert_eq!(t.expiry, first.expiry + t.index as Nanos * period);
            assert_eq!(t.index, last.index + last.overruns + 1, "skip policy");
            assert!(t.woke >= t.expiry, "absolute sleeps never return early");
            last = t;
        }
        let s = p.stats();
        assert_eq!(s.samples, 31);
        assert_eq!(s.period.as_ref().unwrap().samples, 30);
        assert!(s.latency.unwrap().min >= 0);
        assert!(s.wall_time_ns >= 31 * period);
        assert!(s.cpu_percent >= 0.0);
    }

    #[test]
    fn overruns_by_the_program_are_counted_and_skipped_or_caught_up() {
        let period = 1_000_000;
        for policy in [OverrunPolicy::Skip, OverrunPolicy::CatchUp] {
            let mut p = Periodic::builder(period).overrun(policy).build().unwrap();
            let t0 = p.wait().unwrap();
            // Work for 3.5 periods: the next expiry and at least two after it pass.
            std::thread::sleep(std::time::Duration::from_micros(3_500));
            let late = p.wait().unwrap();
            // On a loaded machine the first tick itself may be late and skip some.
            let skipped_by_t0 = match policy {
                OverrunPolicy::Skip => t0.overruns,
                _ => 0,
            };
            assert_eq!(late.index, 1 + skipped_by_t0);
            assert!(late.latency >= 2_500_000, "{late:?}");
            assert!(late.overruns >= 2, "{late:?}");
            let next = p.wait().unwrap();
            match policy {
                OverrunPolicy::Skip => assert_eq!(next.index, late.index + late.overruns + 1),
                _ => {
                    assert_eq!(next.index, 2);
                    assert!(next.latency > 0);
                }
            }
            assert!(t0.index == 0 && p.stats().overruns >= 2);
        }
    }

    #[test]
    fn the_relative_policy_is_refused_for_a_loop() {
        let e = Periodic::builder(1_000_000)
            .overrun(OverrunPolicy::Relative)
            .build()
            .unwrap_err();
        assert_eq!(e.errno(), libc::EINVAL);
    }

    #[test]
    fn reset_stats_keeps_the_grid() {
        let mut p = Periodic::new(100_000, Strategy::Sleep).unwrap();
        let mut last = p.wait().unwrap();
        for _ in 0..4 {
            last = p.wait().unwrap();
        }
        p.reset_stats();
        assert_eq!((p.stats().samples, p.stats().overruns), (0, 0));
        let t = p.wait().unwrap();
        assert_eq!(t.index, last.index + last.overruns + 1);
        let s = p.stats();
        assert_eq!((s.samples, s.period.unwrap().samples), (1, 1));
    }

    #[test]
    fn settings_are_restored_on_drop() {
        let slack = current_timer_slack();
        let cpus = allowed_cpus().unwrap();
        let policy = current_policy().unwrap();
        {
            let p = Periodic::builder(1_000_000)
                .timer_slack(1)
                .cpu(cpus[0])
                .policy(Policy::Batch { nice: 0 })
                .build()
                .unwrap();
            assert_eq!(current_timer_slack(), 1);
            assert_eq!(allowed_cpus().unwrap(), vec![cpus[0]]);
            assert_eq!(current_policy().unwrap(), Policy::Batch { nice: 0 });
            drop(p);
        }
        assert_eq!(current_timer_slack(), slack);
        assert_eq!(allowed_cpus().unwrap(), cpus);
        assert_eq!(current_policy().unwrap(), policy);
    }

    #[test]
    fn a_failed_setting_restores_the_ones_before_it() {
        let slack = current_timer_slack();
        let cpus = allowed_cpus().unwrap();
        let e = Periodic::builder(1_000_000)
            .cpu(cpus[0])
            .policy(Policy::Fifo { priority: 200 })
            .build()
            .unwrap_err();
        assert_eq!(e.errno(), libc::EINVAL, "{e}");
        assert_eq!(allowed_cpus().unwrap(), cpus);
        assert_eq!(current_timer_slack(), slack);
    }

    #[test]
    fn busy_and_hybrid_wake_on_the_grid_and_report_themselves() {
        let period = 500_000;
        for strategy in [Strategy::busy(), Strategy::hybrid()] {
            let mut p = Periodic::new(period, strategy).unwrap();
            let first = p.wait().unwrap();
            for _ in 0..40 {
                let t = p.wait().unwrap();
                assert_eq!(t.expiry, first.expiry + t.index as Nanos * period);
                assert!(t.latency >= 0, "{strategy:?} woke early: {t:?}");
            }
            let s = p.stats();
            assert_eq!(s.samples, 41);
            match strategy {
                Strategy::Busy { .. } => assert!(s.method.naps.is_some()),
                _ => assert_eq!(s.method.margin.unwrap().mode, "auto"),
            }
        }
    }

    #[test]
    fn bad_strategy_tunables_are_refused() {
        use tickscope_engine::wait::Margin;
        let busy = Strategy::Busy {
            sleep_every: Some(0),
        };
        let e = Periodic::new(1_000_000, busy).unwrap_err();
        assert_eq!(e.errno(), libc::EINVAL);
        for margin in [Margin::Fixed(0), Margin::Fixed(1_000_001)] {
            let e = Periodic::new(1_000_000, Strategy::Hybrid { margin }).unwrap_err();
            assert_eq!(e.errno(), libc::EINVAL, "{margin:?}");
        }
    }
}
