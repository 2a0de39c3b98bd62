//! The coordinator's seam: where a run gets its settings, its wake-up methods and its time.
//!
//! [`SystemBackend`] is the real machine: PM QoS, `mlockall`, policy, affinity, timer slack
//! and the methods of [`crate::wait`] on the kernel's clocks. The mock backend
//! ([`super::mock_backend`]) changes nothing on the system and runs every measuring thread
//! on virtual time, so the whole coordinator is tested — and can be demonstrated — without
//! real time.

use super::thread::SetupReport;
use super::{PolicyRequest, RunConfig, AUTO_PRIORITY};
use crate::error::{Error, ErrorKind, Message, Setting};
use crate::setup::{
    self, privileges, AffinityGuard, MlockGuard, PmQosGuard, Policy, PolicyGuard, TimerSlackGuard,
};
use crate::time::{read_clock, Clock, ClockId, Nanos, SystemClock};
use crate::wait::{self, WakeMethod};
use std::any::Any;
use std::time::{Duration, SystemTime};

/// Process-wide settings held for a run; dropping it restores them.
pub(crate) struct ProcessHold {
    /// Guards restored on drop, in order.
    pub(crate) _guards: Vec<Box<dyn Any>>,
    /// The PM QoS limit held, µs.
    pub(crate) pm_qos_us: Option<i32>,
    /// Why PM QoS is not held, when it was asked for.
    pub(crate) pm_qos_note: Option<String>,
}

/// Memory locking, held for a run.
pub(crate) struct MemoryHold {
    /// The guard restored on drop.
    pub(crate) _guard: Option<Box<dyn Any>>,
    /// Whether memory is locked.
    pub(crate) locked: bool,
    /// What limits the locking, or why it failed.
    pub(crate) note: Option<String>,
}

/// A measuring thread, set up on that thread and ready to arm.
pub(crate) struct PreparedThread {
    /// The per-thread settings, restored on drop (on the same thread).
    pub(crate) guards: Box<dyn Any>,
    /// The wake-up method.
    pub(crate) method: Box<dyn WakeMethod>,
    /// What was set, for the coordinator.
    pub(crate) report: SetupReport,
}

/// Where a run gets its settings, methods and time (see the module docs).
pub(crate) trait Backend: Send + Sync {
    /// Takes the process-wide settings in the coordinating thread.
    fn hold_process(&self, cfg: &RunConfig) -> Result<ProcessHold, Error>;
    /// Locks memory (after every thread allocated what its loop touches).
    fn lock_memory(&self, cfg: &RunConfig) -> MemoryHold;
    /// Applies thread `index`'s settings on the calling (measuring) thread and builds its
    /// method.
    fn prepare_thread(
        &self,
        cfg: &RunConfig,
        index: usize,
        cpu: Option<usize>,
    ) -> Result<PreparedThread, Error>;
    /// The time on the run's clock, ns (for the first expiry).
    fn now(&self, clock: ClockId) -> Nanos;
    /// The wall-clock time measuring starts.
    fn started_at(&self) -> SystemTime;
    /// The wall-clock time measuring ended, `wall` ns of measuring after `started_at`.
    fn ended_at(&self, started_at: SystemTime, wall: Nanos) -> SystemTime;
    /// `sched_rt_runtime_us` and `sched_rt_period_us` (for the throttling warning).
    fn rt_limits(&self) -> (Option<i64>, Option<i64>);
    /// Interrupts a measuring thread's wait after a stop.
    fn kick(&self, thread: libc::pthread_t);
    /// How often the collector looks for finished windows.
    fn poll_interval(&self) -> Duration;
    /// Whether waits take no real time, so the loop waits for the collector instead of
    /// growing a window ([`crate::worker::LoopParams::lossless`]).
    fn virtual_time(&self) -> bool;
    /// The calling thread's CPU time, ns (0 where it is not measured).
    fn thread_cpu_time(&self) -> Nanos;
}

/// The real machine.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SystemBackend;

impl Backend for SystemBackend {
    fn hold_process(&self, cfg: &RunConfig) -> Result<ProcessHold, Error> {
        let mut guards: Vec<Box<dyn Any>> = Vec::new();
        let (mut pm_qos_us, mut pm_qos_note) = (None, None);
        if let Some(us) = cfg.pm_qos_us {
            match PmQosGuard::hold(us) {
                Ok(g) => {
                    pm_qos_us = Some(g.limit_us());
                    guards.push(Box::new(g));
                }
                Err(e) if cfg.pm_qos_required => return Err(privileges::pm_qos_error(e)),
                Err(e) => pm_qos_note = Some(privileges::explain_pm_qos_error(&e).to_string()),
            }
        }
        // Lets a stop interrupt a long wait instead of waiting up to a whole period.
        let wake = setup::WakeSignalGuard::install()
            .map_err(|e| Error::os("cannot install the wake-up signal handler", e))?;
        guards.push(Box::new(wake));
        // Process-wide set-up the method declares (itimer: SIGALRM blocked in this thread).
        if let Some(g) = cfg.method.descriptor().set_up_process_guard()? {
            guards.push(g);
        }
        Ok(ProcessHold {
            _guards: guards,
            pm_qos_us,
            pm_qos_note,
        })
    }

    fn lock_memory(&self, cfg: &RunConfig) -> MemoryHold {
        if !cfg.mlock {
            return MemoryHold {
                _guard: None,
                locked: false,
                note: None,
            };
        }
        // See MlockGuard for why MCL_FUTURE is used only where no RLIMIT_MEMLOCK applies.
        let (guard, note) = match MlockGuard::lock() {
            Ok(g) if g.locks_future() => (Some(g), None),
            Ok(g) => {
                let limit = privileges::memlock_limit().unwrap_or(0) / 1024;
                let note = format!(
                    "current mappings only (RLIMIT_MEMLOCK is {limit} KiB, so later ones are \
                     not locked; the measuring loop allocates nothing)"
                );
                (Some(g), Some(note))
            }
            Err(e) => (None, Some(privileges::explain_mlock_error(&e).to_string())),
        };
        MemoryHold {
            locked: guard.is_some(),
            _guard: guard.map(|g| Box::new(g) as Box<dyn Any>),
            note,
        }
    }

    fn prepare_thread(
        &self,
        cfg: &RunConfig,
        _index: usize,
        cpu: Option<usize>,
    ) -> Result<PreparedThread, Error> {
        let affinity = match cpu {
            Some(c) => Some(AffinityGuard::pin(c).map_err(|e| {
                let msg = format!("cannot pin a measuring thread to CPU {c}: {e}");
                refused(Setting::Affinity, msg).with_source(e)
            })?),
            None => None,
        };
        let (policy_guard, policy, note) = apply_policy(cfg.policy)?;
        let slack = match cfg.timer_slack_ns {
            Some(ns) => Some(TimerSlackGuard::set(ns).map_err(|e| {
                let msg = format!("cannot set timer slack: {e}");
                refused(Setting::TimerSlack, msg).with_source(e)
            })?),
            None => None,
        };
        // The method's limits were checked once, by RunConfig::validate.
        let method = (cfg.method.descriptor().create)(cfg.clock, &cfg.method_options)
            .map_err(|e| wait::setup_error(cfg.method, e))?;
        let mut cpu_clock: libc::clockid_t = 0;
        // SAFETY: pthread_self is this thread; `cpu_clock` is writable.
        unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut cpu_clock) };
        let report = SetupReport {
            tid: setup::gettid(),
            cpu_clock: Some(cpu_clock),
            policy: setup::current_policy().unwrap_or(policy),
            policy_note: note,
            slack: setup::current_timer_slack(),
            interface: method.interface(),
            granularity: method.granularity_ns(),
        };
        Ok(PreparedThread {
            guards: Box::new((affinity, policy_guard, slack)),
            method,
            report,
        })
    }

    fn now(&self, clock: ClockId) -> Nanos {
        SystemClock(clock).now()
    }

    fn started_at(&self) -> SystemTime {
        SystemTime::now()
    }

    fn ended_at(&self, _started_at: SystemTime, _wall: Nanos) -> SystemTime {
        SystemTime::now()
    }

    fn rt_limits(&self) -> (Option<i64>, Option<i64>) {
        (privileges::rt_runtime_us(), privileges::rt_period_us())
    }

    fn kick(&self, thread: libc::pthread_t) {
        setup::kick(thread);
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(20)
    }

    fn virtual_time(&self) -> bool {
        false
    }

    fn thread_cpu_time(&self) -> Nanos {
        read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
    }
}

/// Applies the requested policy to the calling thread: the guard, the policy asked of the
/// kernel and the note for `auto`.
fn apply_policy(request: PolicyRequest) -> Result<(PolicyGuard, Policy, Option<String>), Error> {
    let auto = request == PolicyRequest::Auto;
    let policy = match request {
        PolicyRequest::Exact(p) => p,
        PolicyRequest::Auto => Policy::Fifo {
            priority: AUTO_PRIORITY,
        },
    };
    match PolicyGuard::apply(policy) {
        Ok(g) => Ok((g, policy, auto.then(auto_note))),
        Err(e) if auto => {
            let why = privileges::explain_policy_error(&policy, &e);
            let other = Policy::Other { nice: 0 };
            let g = PolicyGuard::apply(other).map_err(|e| privileges::policy_error(&other, e))?;
            Ok((g, policy, Some(format!("auto: using other, because {why}"))))
        }
        Err(e) => Err(privileges::policy_error(&policy, e)),
    }
}

/// The note of an `auto` policy that got SCHED_FIFO.
pub(crate) fn auto_note() -> String {
    format!("auto: using fifo priority {AUTO_PRIORITY}, the process may set it")
}

/// A setting the system refused, saying `msg`.
fn refused(setting: Setting, msg: String) -> Error {
    Error::new(ErrorKind::Refused { setting }, Message::text(msg))
}
