//! Everything tickscope changes on the system, each as a guard that restores it when dropped.
//!
//! Process-wide: [`MlockGuard`] (`mlockall`), [`PmQosGuard`] (`/dev/cpu_dma_latency`).
//! Per measuring thread: [`AffinityGuard`], [`PolicyGuard`], [`TimerSlackGuard`], and
//! `prefault_stack`. [`privileges`] explains, in the user's terms, why a setting was refused.

mod affinity;
mod mlock;
mod pm_qos;
mod policy;
pub mod privileges;
mod slack;
mod stack;
mod wake_signal;

pub use affinity::{allowed_cpus, format_cpu_list, parse_cpu_list, AffinityGuard};
pub use mlock::MlockGuard;
pub use pm_qos::{PmQosGuard, PM_QOS_PATH};
pub(crate) use policy::read_back;
pub use policy::{current_policy, policy_of, policy_text, Policy, PolicyGuard};
pub use slack::{current_timer_slack, TimerSlackGuard};
pub(crate) use stack::{prefault_stack, THREAD_STACK_BYTES};
pub(crate) use wake_signal::{kick, WakeSignalGuard};

/// The calling thread's kernel thread id (`gettid(2)`), the id `chrt -p` and `taskset -p` take.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// The last OS error (`errno`) as an `std::io::Error`.
pub(crate) fn last_os_error() -> std::io::Error {
    std::io::Error::last_os_error()
}
