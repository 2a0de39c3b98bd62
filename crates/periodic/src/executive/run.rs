//! The executive itself: tasks, their grids, the queue of next expiries, the wait and the
//! dispatch loop.

use super::plan::Plan;
use super::queue::{ExpiryQueue, HeapQueue, ScanQueue};
use super::rate::RateGrid;
use super::record::{Sample, TaskRecord, TaskStats};
use super::task::{Completion, Control, Release, Task, TaskId};
use crate::error::Error;
use crate::strategy::Strategy;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickscope_engine::time::{read_clock, ClockId, Nanos};
use tickscope_engine::wait::{self, MethodObservations, WakeMethod};

/// A task's callback: user code run at each release.
type Callback<'a> = Box<dyn FnMut(&Release) -> Control + 'a>;

/// The observer of finished releases ([`Executive::on_complete`]).
type Observer<'a> = Box<dyn FnMut(&Completion) + 'a>;

/// The most tasks an executive takes.
pub const MAX_TASKS: usize = 1024;

/// Which queue of next expiries the executive uses (see [`super::queue`]); both dispatch
/// in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueKind {
    /// Two binary heaps (the default).
    #[default]
    Heap,
    /// A linear scan of one array.
    Scan,
}

#[derive(Debug)]
enum Queue {
    Heap(HeapQueue),
    Scan(ScanQueue),
}

impl Queue {
    #[inline]
    fn q(&mut self) -> &mut dyn ExpiryQueue {
        match self {
            Queue::Heap(h) => h,
            Queue::Scan(s) => s,
        }
    }
}

/// A task, its callback and where it is.
struct Slot<'a> {
    task: Task,
    rank: u32,
    callback: Callback<'a>,
    grid: Option<RateGrid>,
    first_expiry: Nanos,
    record: TaskRecord,
}

/// The executive's state once its grids have started.
#[derive(Debug, Clone, Copy)]
struct Running {
    t0: Nanos,
    /// The latest clock reading (a wake-up or a release's end).
    now: Nanos,
    /// Statistics start: wall and thread CPU time.
    since: (Nanos, Nanos),
}

/// Stops a running executive from another thread or a signal handler: the executive checks
/// it before each release (so a thread asleep until the next expiry returns after it).
/// Cloneable and `Send`.
#[derive(Debug, Clone, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// Asks the executive to return from its `run*` call before the next release. The flag
    /// stays set until the next `run*` call starts.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Several periodic tasks in the calling thread, each on its own exact grid
/// `t0 + phase + k·period` (integer ns, one clock, no common base tick), dispatched
/// fixed-priority and non-preemptively: the thread waits (with the [`Strategy`]) until the
/// earliest next expiry, then runs the released task of highest priority; tasks due at the
/// same instant run in priority order (rate-monotonic unless set, see [`Task::priority`]).
///
/// ```
/// use tickscope::{Control, Executive, Strategy, Task};
///
/// let mut fast = 0;
/// let mut slow = 0;
/// let mut ex = Executive::new(Strategy::Sleep);
/// ex.add(Task::new(1_000_000), |_| { fast += 1; Control::Continue })?;   // 1 ms
/// ex.add(Task::new(2_500_000), |_| { slow += 1; Control::Continue })?;   // 2.5 ms
/// // Seven releases: on an undisturbed machine at 0, 0, 1, 2, 2.5, 3, 4 ms after t0 (5 fast,
/// // 2 slow); a stall longer than a period skips releases (counted as overruns), so only
/// // the structure is certain:
/// ex.run_until(7)?;
/// let stats = ex.stats();
/// drop(ex);
/// assert_eq!(fast + slow, 7);
/// assert_eq!((stats[0].releases, stats[1].releases), (fast, slow));
/// # Ok::<(), tickscope::Error>(())
/// ```
///
/// Like [`Periodic`](crate::Periodic), it belongs to the thread that created it (neither
/// `Send` nor `Sync`); stop it from elsewhere with a [`StopHandle`].
pub struct Executive<'a> {
    slots: Vec<Slot<'a>>,
    strategy: Strategy,
    clock: ClockId,
    queue_kind: QueueKind,
    execution_time: bool,
    observer: Option<Observer<'a>>,
    method: Option<Box<dyn WakeMethod>>,
    queue: Option<Queue>,
    running: Option<Running>,
    stop: StopHandle,
    _thread_bound: PhantomData<*const ()>,
}

impl std::fmt::Debug for Executive<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executive")
            .field("tasks", &self.tasks())
            .field("strategy", &self.strategy)
            .field("clock", &self.clock)
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

impl<'a> Executive<'a> {
    /// An executive with no task yet, waiting with `strategy` on `CLOCK_MONOTONIC`. Changes
    /// nothing on the system; the wait method is set up at the first `run*` call.
    pub fn new(strategy: Strategy) -> Self {
        Executive {
            slots: Vec::new(),
            strategy,
            clock: ClockId::Monotonic,
            queue_kind: QueueKind::Heap,
            execution_time: false,
            observer: None,
            method: None,
            queue: None,
            running: None,
            stop: StopHandle::default(),
            _thread_bound: PhantomData,
        }
    }

    /// The clock the grids live on (default monotonic). Before the first run only.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] once the executive has run.
    pub fn set_clock(&mut self, clock: ClockId) -> Result<(), Error> {
        self.not_started("the clock")?;
        self.clock = clock;
        Ok(())
    }

    /// Which queue of next expiries to use (default [`QueueKind::Heap`]). Before the first
    /// run only.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] once the executive has run.
    pub fn set_queue(&mut self, kind: QueueKind) -> Result<(), Error> {
        self.not_started("the queue")?;
        self.queue_kind = kind;
        Ok(())
    }

    /// Measure each release's execution time on the thread's CPU clock
    /// (`CLOCK_THREAD_CPUTIME_ID`, a system call: about 200 ns per read on the project's
    /// machine, two per release — see `tickscope clocks`). Off by default; budgets are then
    /// checked against the wall time `end − start`. Before the first run only.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] once the executive has run.
    pub fn measure_execution_time(&mut self, on: bool) -> Result<(), Error> {
        self.not_started("execution-time measurement")?;
        self.execution_time = on;
        Ok(())
    }

    /// Calls `observer` after every release's callback has returned, with the release's end,
    /// response time, execution time (when measured), and whether it missed its deadline
    /// or overran its budget — the values the statistics count, one release at a time (to
    /// keep per-window histograms, say). It runs in the dispatch loop, so it must be as
    /// short as the tasks allow. Replaces any observer before; before the first run only.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] once the executive has run.
    pub fn on_complete(&mut self, observer: impl FnMut(&Completion) + 'a) -> Result<(), Error> {
        self.not_started("the completion observer")?;
        self.observer = Some(Box::new(observer));
        Ok(())
    }

    fn not_started(&self, what: &str) -> Result<(), Error> {
        match self.running {
            None => Ok(()),
            Some(_) => Err(Error::InvalidArgument(format!(
                "{what} cannot change once the executive has run"
            ))),
        }
    }

    /// Adds a task whose `callback` runs at each release; returns its id (0, 1, … in the
    /// order added). Allocates the task's statistics (about 300 KiB of histograms).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a field out of range ([`Task::validate`]), more than
    /// [`MAX_TASKS`] tasks, or once the executive has run.
    pub fn add(
        &mut self,
        task: Task,
        callback: impl FnMut(&Release) -> Control + 'a,
    ) -> Result<TaskId, Error> {
        self.not_started("the task set")?;
        task.validate()?;
        if self.slots.len() >= MAX_TASKS {
            return Err(Error::InvalidArgument(format!(
                "an executive takes at most {MAX_TASKS} tasks"
            )));
        }
        self.slots.push(Slot {
            record: TaskRecord::new(self.execution_time),
            task,
            rank: 0,
            callback: Box::new(callback),
            grid: None,
            first_expiry: 0,
        });
        Ok(TaskId(self.slots.len() - 1))
    }

    /// The tasks, in the order added.
    pub fn tasks(&self) -> Vec<&Task> {
        self.slots.iter().map(|s| &s.task).collect()
    }

    /// The schedulability analysis of the task set from the declared budgets (see [`Plan`]).
    pub fn plan(&self) -> Plan {
        let tasks: Vec<Task> = self.slots.iter().map(|s| s.task.clone()).collect();
        Plan::of(&tasks)
    }

    /// A handle that stops the run from another thread or a signal handler.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Runs until a callback returns [`Control::Stop`] or the [`StopHandle`] is used.
    /// Returns the releases run by this call.
    ///
    /// # Errors
    /// As [`Executive::run_until`].
    pub fn run(&mut self) -> Result<u64, Error> {
        self.dispatch(None, u64::MAX)
    }

    /// Runs every release whose expiry is at most `duration` ns from now, then returns the
    /// number run (earlier if stopped). The first call starts the grids; later calls continue
    /// them.
    ///
    /// # Errors
    /// As [`Executive::run_until`], and [`Error::InvalidArgument`] for a negative duration.
    pub fn run_for(&mut self, duration: Nanos) -> Result<u64, Error> {
        if duration < 0 {
            return Err(Error::InvalidArgument(format!(
                "the duration must be ≥ 0 ns, not {duration}"
            )));
        }
        let now = self.start()?;
        self.dispatch(Some(now.saturating_add(duration)), u64::MAX)
    }

    /// Runs `releases` releases in all (fewer if stopped) and returns the number run.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] with no task; [`Error::InvalidArgument`] or
    /// [`Error::Unsupported`] when the strategy cannot run (as for
    /// [`Periodic`](crate::Periodic)); [`Error::Os`] when a wait fails.
    pub fn run_until(&mut self, releases: u64) -> Result<u64, Error> {
        self.dispatch(None, releases)
    }

    /// Sets up the wait method, the queue and the grids if not done yet: `t0` is one
    /// shortest period from now. Returns the current time.
    fn start(&mut self) -> Result<Nanos, Error> {
        if let Some(r) = self.running {
            return Ok(self.method.as_ref().map_or(r.now, |m| m.now()));
        }
        if self.slots.is_empty() {
            return Err(Error::InvalidArgument(
                "the executive has no task to run".into(),
            ));
        }
        let shortest = self.slots.iter().map(|s| s.task.period).min().unwrap_or(1);
        if self.method.is_none() {
            let (kind, options) = self.strategy.method(shortest)?;
            let name = self.strategy.name();
            let m = wait::create(kind, self.clock, &options).map_err(|e| match e.kind() {
                io::ErrorKind::Unsupported => {
                    Error::Unsupported(format!("the {name} strategy cannot run here: {e}"))
                }
                _ => Error::os(format!("cannot set up the {name} strategy"), e),
            })?;
            self.method = Some(m);
        }
        let method = self.method.as_mut().expect("set above");
        let now = method.now();
        let t0 = now + shortest;
        method
            .arm(t0, shortest)
            .map_err(|e| Error::os(format!("cannot arm the {} wait", self.strategy.name()), e))?;
        // Ranks: higher priority first, then shorter period (rate-monotonic), then order added.
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_by_key(|&i| {
            let t = &self.slots[i].task;
            (std::cmp::Reverse(t.priority), t.period, i)
        });
        let n = self.slots.len();
        let mut queue = match self.queue_kind {
            QueueKind::Heap => Queue::Heap(HeapQueue::with_capacity(n)),
            QueueKind::Scan => Queue::Scan(ScanQueue::with_capacity(n)),
        };
        for (rank, &i) in order.iter().enumerate() {
            let s = &mut self.slots[i];
            s.rank = rank as u32;
            s.first_expiry = t0 + s.task.phase;
            let (num, den) = s.task.exact_period_ns();
            s.grid = Some(RateGrid::new(
                s.first_expiry,
                num.into(),
                den.into(),
                s.task.overrun,
            ));
            queue.q().push(i as u32, s.first_expiry, s.rank);
        }
        self.queue = Some(queue);
        self.running = Some(Running {
            t0,
            now,
            since: (now, self.thread_cpu_if_measured()),
        });
        Ok(now)
    }

    fn thread_cpu_if_measured(&self) -> Nanos {
        if self.execution_time {
            thread_cpu()
        } else {
            0
        }
    }

    /// The dispatch loop: releases with expiry ≤ `until` (if any), at most `limit` of them.
    fn dispatch(&mut self, until: Option<Nanos>, limit: u64) -> Result<u64, Error> {
        self.start()?;
        self.stop.0.store(false, Ordering::Relaxed);
        let until = until.unwrap_or(Nanos::MAX);
        let measure_cpu = self.execution_time;
        let method = self.method.as_mut().expect("started");
        let queue = self.queue.as_mut().expect("started").q();
        let running = self.running.as_mut().expect("started");
        let mut done = 0u64;
        while done < limit {
            if self.stop.0.load(Ordering::Relaxed) {
                break;
            }
            // A released task, or wait for the earliest expiry.
            let (task, expiry, start, woken) = match queue.pop_released(running.now.min(until)) {
                Some((task, expiry)) => (task, expiry, method.now(), false),
                None => {
                    let next = queue.earliest().expect("every task is queued");
                    if next > until {
                        break;
                    }
                    let woke = loop {
                        match method.wait(next, running.now) {
                            Ok(t) => break t,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                                if self.stop.0.load(Ordering::Relaxed) {
                                    return Ok(done);
                                }
                            }
                            Err(e) => {
                                return Err(Error::os(
                                    format!("the {} wait failed", self.strategy.name()),
                                    e,
                                ))
                            }
                        }
                    };
                    // Never behind the last reading (a mock or a faulty clock could be).
                    running.now = woke.max(running.now);
                    match queue.pop_released(running.now.min(until)) {
                        Some((task, expiry)) => (task, expiry, running.now, true),
                        None => continue, // woke early: wait again
                    }
                }
            };
            let slot = &mut self.slots[task as usize];
            let grid = slot.grid.as_mut().expect("started");
            let index = grid.index();
            let overruns = grid.advance(start);
            let release = Release {
                task: TaskId(task as usize),
                index,
                expiry,
                start,
                latency: start - expiry,
                overruns,
            };
            let cpu0 = if measure_cpu { thread_cpu() } else { 0 };
            let control = (slot.callback)(&release);
            let end = method.now().max(start);
            let cpu_ns = measure_cpu.then(|| thread_cpu() - cpu0);
            running.now = end;
            let (deadline_missed, budget_overrun) = slot.record.record(
                &slot.task,
                Sample {
                    expiry,
                    start,
                    end,
                    cpu_ns,
                    woken,
                    overruns,
                },
            );
            if let Some(observe) = self.observer.as_mut() {
                observe(&Completion {
                    release,
                    end,
                    response: end - expiry,
                    execution: cpu_ns,
                    woken,
                    deadline_missed,
                    budget_overrun,
                });
            }
            queue.push(task, grid.expiry(), slot.rank);
            done += 1;
            if control == Control::Stop {
                break;
            }
        }
        Ok(done)
    }

    /// Per-task statistics since the first run (or [`Executive::reset_stats`]), in the order
    /// the tasks were added. Allocates; call it between runs.
    pub fn stats(&self) -> Vec<TaskStats> {
        self.slots.iter().map(|s| s.record.stats(&s.task)).collect()
    }

    /// Forgets the statistics (after a warm-up, say) without touching the grids.
    pub fn reset_stats(&mut self) {
        for s in &mut self.slots {
            s.record.clear();
        }
        let cpu = self.thread_cpu_if_measured();
        if let (Some(r), Some(m)) = (self.running.as_mut(), self.method.as_ref()) {
            r.since = (m.now(), cpu);
        }
    }

    /// `t0`, the instant every task's grid starts from (phase 0), once the executive has run.
    pub fn t0(&self) -> Option<Nanos> {
        self.running.map(|r| r.t0)
    }

    /// The next expiry of task `id` (absolute ns), once the executive has run.
    pub fn next_expiry(&self, id: TaskId) -> Option<Nanos> {
        self.slots.get(id.0)?.grid.as_ref().map(RateGrid::expiry)
    }

    /// Wall time since the statistics started, ns (0 before the first run).
    pub fn wall_time_ns(&self) -> Nanos {
        match (self.running, self.method.as_ref()) {
            (Some(r), Some(m)) => m.now() - r.since.0,
            _ => 0,
        }
    }

    /// What the wait method observed about itself (hybrid margin, busy-wait naps).
    pub fn method_report(&self) -> MethodObservations {
        self.method
            .as_ref()
            .map(|m| m.observations())
            .unwrap_or_default()
    }

    /// The current time on the executive's clock, ns.
    pub fn now(&self) -> Nanos {
        match self.method.as_ref() {
            Some(m) => m.now(),
            None => read_clock(self.clock.raw()),
        }
    }

    /// Replaces the wait method (tests: a virtual clock). Before the first run only.
    #[cfg(test)]
    pub(crate) fn with_method(mut self, method: Box<dyn WakeMethod>) -> Self {
        self.method = Some(method);
        self
    }
}

/// The calling thread's CPU time, ns.
fn thread_cpu() -> Nanos {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}
