//! Runs on virtual time: the whole coordinator — threads, setup handshake, windows,
//! collector, outcome — with [`crate::mock::MockMethod`] in place of the kernel's timers
//! and nothing changed on the system. Deterministic for a given [`MockRun`] and
//! [`RunConfig`], so a front end can pin its whole output (see [`super::run_on_mock`]).

use super::backend::{auto_note, Backend, MemoryHold, PreparedThread, ProcessHold};
use super::thread::SetupReport;
use super::{PolicyRequest, RunConfig, AUTO_PRIORITY};
use crate::error::Error;
use crate::mock::MockMethod;
use crate::setup::Policy;
use crate::time::{ClockId, Nanos, NS_PER_SEC};
use std::time::{Duration, SystemTime};

/// Where virtual time starts on every thread's clock, ns (one hour, far from zero).
pub const MOCK_START_NS: Nanos = 3_600 * NS_PER_SEC;

/// The wall-clock time a mock run starts: 2026-01-01T00:00:00Z.
pub const MOCK_STARTED_AT_UNIX_S: u64 = 1_767_225_600;

/// Length of the latency script each mock thread repeats.
pub const MOCK_SCRIPT_LEN: usize = 1000;

/// A run on virtual time (see [`super::run_on_mock`]).
///
/// Every measuring thread `t` wakes at each expiry plus a latency drawn from a script of
/// [`MOCK_SCRIPT_LEN`] values (repeated), made from `seed` and `t`: 1 000 ..= 9 999 ns,
/// except the script's last wake-up, which is 2.5 periods late (so every
/// [`MOCK_SCRIPT_LEN`] wake-ups two periods are missed). The settings are reported as asked
/// (`auto`: SCHED_FIFO priority 90; timer slack as asked, else the kernel's 50 000 ns;
/// memory locked and PM QoS held as asked); RT throttling as the kernel's default
/// (950 000 µs per 1 000 000 µs); thread ids are 1, 2, …; CPU time is 0; the run starts
/// at [`MOCK_STARTED_AT_UNIX_S`] and virtual time starts at [`MOCK_START_NS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MockRun {
    /// Seed of the latency scripts.
    pub seed: u64,
}

impl MockRun {
    /// The latency script of thread `thread` for a run with period `period` ns.
    pub fn script(&self, thread: usize, period: Nanos) -> Vec<Nanos> {
        let mut state = self.seed ^ ((thread as u64 + 1) << 32);
        (0..MOCK_SCRIPT_LEN)
            .map(|k| {
                if k == MOCK_SCRIPT_LEN - 1 {
                    2 * period + period / 2
                } else {
                    1_000 + (splitmix64(&mut state) % 9_000) as Nanos
                }
            })
            .collect()
    }
}

/// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
/// OOPSLA 2014, <https://doi.org/10.1145/2660193.2660195>).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The backend of [`MockRun`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct MockBackend(pub(crate) MockRun);

impl Backend for MockBackend {
    fn hold_process(&self, cfg: &RunConfig) -> Result<ProcessHold, Error> {
        Ok(ProcessHold {
            _guards: Vec::new(),
            pm_qos_us: cfg.pm_qos_us,
            pm_qos_note: None,
        })
    }

    fn lock_memory(&self, cfg: &RunConfig) -> MemoryHold {
        MemoryHold {
            _guard: None,
            locked: cfg.mlock,
            note: None,
        }
    }

    fn prepare_thread(
        &self,
        cfg: &RunConfig,
        index: usize,
        _cpu: Option<usize>,
    ) -> Result<PreparedThread, Error> {
        let (policy, policy_note) = match cfg.policy {
            PolicyRequest::Exact(p) => (p, None),
            PolicyRequest::Auto => (
                Policy::Fifo {
                    priority: AUTO_PRIORITY,
                },
                Some(auto_note()),
            ),
        };
        let method = MockMethod::new(MOCK_START_NS, self.0.script(index, cfg.period_ns));
        let report = SetupReport {
            tid: index as i32 + 1,
            cpu_clock: None,
            policy,
            policy_note,
            slack: cfg.timer_slack_ns.unwrap_or(50_000),
            interface: "mock",
            granularity: 1,
        };
        Ok(PreparedThread {
            guards: Box::new(()),
            method: Box::new(method),
            report,
        })
    }

    fn now(&self, _clock: ClockId) -> Nanos {
        MOCK_START_NS
    }

    fn started_at(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(MOCK_STARTED_AT_UNIX_S)
    }

    fn ended_at(&self, started_at: SystemTime, wall: Nanos) -> SystemTime {
        started_at + Duration::from_nanos(wall.max(0) as u64)
    }

    fn rt_limits(&self) -> (Option<i64>, Option<i64>) {
        (Some(950_000), Some(1_000_000))
    }

    fn kick(&self, _thread: libc::pthread_t) {}

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(1)
    }

    fn virtual_time(&self) -> bool {
        true
    }

    fn thread_cpu_time(&self) -> Nanos {
        0
    }
}
