//! The one home of a run's defaults, used by [`super::RunConfig::new`] and by the front
//! ends' option defaults (the CLI's `-D`, `--timer-slack`, `--pm-qos`, `--policy auto`).

use crate::time::{Nanos, NS_PER_SEC};

/// The real-time priority `auto` tries (cyclictest's usual `-p 90`: cyclictest(8),
/// rt-tests, <https://git.kernel.org/pub/scm/utils/rt-tests/rt-tests.git>).
pub const AUTO_PRIORITY: u8 = 90;

/// How long a run lasts when neither a duration nor a number of wake-ups is given, ns
/// (10 s).
pub const DURATION_NS: Nanos = 10 * NS_PER_SEC;

/// The timer slack of the measuring threads, ns: 1, the finest the kernel accepts (0 means
/// "the default", 50 µs; `prctl(2)`, PR_SET_TIMERSLACK).
pub const TIMER_SLACK_NS: u64 = 1;

/// The PM QoS CPU wake-up latency limit held during a run, µs: 0, no deep C-state
/// (Linux, Documentation/power/pm_qos_interface.rst).
pub const PM_QOS_US: i32 = 0;
