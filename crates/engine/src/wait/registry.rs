//! Every wake-up method, one line each, and what each says about itself.
//!
//! A method is a file in `wait/` holding its [`WakeMethod`](super::WakeMethod) and a `DESCRIPTOR`
//! ([`MethodDescriptor`]): its kernel call, the clock it is bound to, how to create it, its
//! limits, the process-wide set-up it needs, how much of each period it spins and where its
//! wait shows in a kernel trace ([`Wakes`](super::Wakes), what `--explain` follows). The
//! `methods!` invocation at the bottom of this file is the only other place a method is
//! named: from its line come the [`MethodKind`] variant, its name in `--method` and in
//! result files, [`MethodKind::ALL`] (the order of `--method all`) and
//! [`MethodKind::descriptor`]. A test fails if a name does not lead back to its method.

use super::MethodDescriptor;
use crate::time::ClockId;
use serde::{Deserialize, Serialize};

/// Declares the methods: `Variant = "name" => module::DESCRIPTOR,` with the variant's docs.
macro_rules! methods {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal => $descriptor:path, )+) => {
        /// The wake-up methods tickscope knows, by the name used in `--method`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum MethodKind {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )+
        }

        impl MethodKind {
            /// Every method, in the order `--method all` runs them.
            pub const ALL: &'static [MethodKind] = &[ $( MethodKind::$variant, )+ ];

            /// The name used on the command line and in result files.
            pub fn name(self) -> &'static str {
                match self { $( MethodKind::$variant => $name, )+ }
            }

            /// What the method is and needs.
            pub fn descriptor(self) -> &'static MethodDescriptor {
                match self { $( MethodKind::$variant => &$descriptor, )+ }
            }
        }
    };
}

methods! {
    /// `clock_nanosleep(clock, TIMER_ABSTIME, expiry)`: sleeps to an absolute expiry. The
    /// default, as in cyclictest and the hrtimers 2007 post.
    NanosleepAbs = "nanosleep-abs" => super::nanosleep_abs::DESCRIPTOR,
    /// `clock_nanosleep(clock, 0, expiry - last_woke)`: a relative sleep aimed at the same grid.
    NanosleepRel = "nanosleep-rel" => super::nanosleep_rel::DESCRIPTOR,
    /// `nanosleep(expiry - last_woke)`: the plain call, relative, CLOCK_MONOTONIC only.
    Nanosleep = "nanosleep" => super::nanosleep::DESCRIPTOR,
    /// A periodic `timerfd` read for its expiration count.
    Timerfd = "timerfd" => super::timerfd::DESCRIPTOR,
    /// A periodic POSIX timer signalling the measuring thread, taken with `sigwaitinfo`.
    PosixTimer = "posix-timer" => super::posix_timer::DESCRIPTOR,
    /// `setitimer(ITIMER_REAL)` and a SIGALRM handler (one measuring thread only).
    Itimer = "itimer" => super::itimer::DESCRIPTOR,
    /// Sleep through `ppoll`'s timeout (no descriptors).
    Poll = "poll" => super::poll::DESCRIPTOR,
    /// Sleep through `pselect`'s timeout (no descriptors).
    Select = "select" => super::select::DESCRIPTOR,
    /// Sleep through an epoll wait's timeout (`epoll_pwait2`, else `epoll_wait`).
    Epoll = "epoll" => super::epoll::DESCRIPTOR,
    /// Sleep through a futex wait's absolute timeout (`FUTEX_WAIT_BITSET`), the wait under
    /// `pthread_cond_timedwait`.
    Futex = "futex" => super::futex::DESCRIPTOR,
    /// Spin reading the clock until the expiry, optionally napping every N readings.
    Busy = "busy" => super::busy::DESCRIPTOR,
    /// Sleep until `expiry − margin`, then spin.
    Hybrid = "hybrid" => super::hybrid::DESCRIPTOR,
}

impl MethodKind {
    /// Parses a name as returned by [`MethodKind::name`]; `None` for anything else.
    pub fn from_name(name: &str) -> Option<MethodKind> {
        MethodKind::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// The kernel call that makes the method, with its manual section (for messages).
    pub(crate) fn kernel_call(self) -> &'static str {
        self.descriptor().kernel_call
    }

    /// The one clock the method's kernel timer runs on, for methods whose call takes no
    /// clock; `None` for methods that take the run's clock.
    pub(crate) fn fixed_clock(self) -> Option<ClockId> {
        self.descriptor().fixed_clock
    }

    /// Every method's name, comma-separated, in `--method all` order (for help and messages).
    pub fn names() -> String {
        MethodKind::ALL
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_reachable_by_its_name_and_names_are_unique() {
        for &m in MethodKind::ALL {
            assert_eq!(MethodKind::from_name(m.name()), Some(m));
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(
                json,
                format!("\"{}\"", m.name()),
                "serde name = --method name"
            );
            assert!(m.kernel_call().ends_with(')'), "{}", m.kernel_call());
        }
        let mut names: Vec<&str> = MethodKind::ALL.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), MethodKind::ALL.len());
    }

    #[test]
    fn every_method_says_where_its_wait_shows_in_a_trace() {
        for &m in MethodKind::ALL {
            let wakes = m.descriptor().wakes;
            assert!(
                !wakes.callbacks.is_empty(),
                "{}: no timer callback",
                m.name()
            );
            assert!(wakes.syscalls.iter().all(|&nr| nr >= 0), "{}", m.name());
        }
    }

    #[test]
    fn every_method_file_is_registered() {
        // One file per method in wait/, besides the shared ones.
        let shared = [
            "mod.rs",
            "registry.rs",
            "descriptor.rs",
            "method.rs",
            "syscall.rs",
            "spin_clock.rs",
            "margin.rs",
            "kernel_timer.rs",
            "signals.rs",
            "sleep_until.rs",
            "spin.rs",
            "limits.rs",
            "throttle.rs",
        ];
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/wait");
        let files = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".rs") && !shared.contains(&n.as_str()))
            .count();
        assert_eq!(
            files,
            MethodKind::ALL.len(),
            "a method file without a registry line"
        );
    }
}
