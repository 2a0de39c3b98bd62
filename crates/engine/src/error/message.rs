//! Messages that name settings, not flags: the words for a setting are the front end's.
//!
//! A [`Message`] is text interleaved with references to the run's settings ([`Piece`]).
//! The engine renders them in its own words ("method itimer", "turn memory locking off");
//! a front end renders them in its words through [`Words`] (the command line: "--method
//! itimer", "pass --no-mlock"; the periodic library: its own). Notes built while a run goes
//! on (for example [`crate::run::Applied::mlock_note`]) are rendered with the words
//! installed by [`set_words`], the engine's until a front end installs its own.

use std::fmt;
use std::sync::OnceLock;

/// A setting of a run, as a message refers to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// The wake-up method ([`crate::run::RunConfig::method`]).
    Method,
    /// The clock ([`crate::run::RunConfig::clock`]).
    Clock,
    /// The period between expiries ([`crate::run::RunConfig::period_ns`]).
    Interval,
    /// The number of measuring threads ([`crate::run::RunConfig::cpus`]).
    Threads,
    /// The CPUs the threads are pinned to ([`crate::run::RunConfig::cpus`]).
    Affinity,
    /// The scheduling policy ([`crate::run::RunConfig::policy`]).
    Policy,
    /// The nice value of a SCHED_OTHER/SCHED_BATCH policy.
    Nice,
    /// The runtime of a SCHED_DEADLINE policy.
    DeadlineRuntime,
    /// Memory locking ([`crate::run::RunConfig::mlock`]).
    MemoryLock,
    /// The PM QoS CPU latency limit ([`crate::run::RunConfig::pm_qos_us`]).
    PmQos,
    /// The timer slack ([`crate::run::RunConfig::timer_slack_ns`]).
    TimerSlack,
    /// The number of wake-ups per thread ([`crate::run::RunConfig::loops`]).
    Loops,
    /// The length of the run ([`crate::run::RunConfig::duration_ns`]).
    Duration,
    /// The statistics window ([`crate::run::RunConfig::window_ns`]).
    Window,
    /// `busy`'s naps ([`crate::wait::MethodOptions::busy_sleep_every`]).
    BusySleepEvery,
    /// A measurement budget (`tickscope clocks`).
    Budget,
}

impl Setting {
    /// The engine's name for the setting ("method", "memory locking", …).
    pub fn name(self) -> &'static str {
        match self {
            Setting::Method => "method",
            Setting::Clock => "clock",
            Setting::Interval => "interval",
            Setting::Threads => "threads",
            Setting::Affinity => "CPU affinity",
            Setting::Policy => "policy",
            Setting::Nice => "nice",
            Setting::DeadlineRuntime => "deadline runtime",
            Setting::MemoryLock => "memory locking",
            Setting::PmQos => "PM QoS",
            Setting::TimerSlack => "timer slack",
            Setting::Loops => "loops",
            Setting::Duration => "duration",
            Setting::Window => "statistics window",
            Setting::BusySleepEvery => "busy sleep every",
            Setting::Budget => "budget",
        }
    }
}

/// One part of a [`Message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Words that need no translation.
    Text(String),
    /// A setting, with the value it is (or should be) given: "method itimer", "threads 1";
    /// without a value, the setting itself ("deadline runtime").
    Set(Setting, Option<String>),
    /// Turning a setting off, as a remedy: "turn memory locking off".
    Off(Setting),
}

/// A front end's words for the settings a message refers to.
pub trait Words: Sync {
    /// The words for `piece` (a [`Piece::Set`] or [`Piece::Off`]); `None` for the engine's.
    fn word(&self, piece: &Piece) -> Option<String>;
}

/// The engine's own words: "method itimer", "deadline runtime", "turn memory locking off".
#[derive(Debug, Clone, Copy, Default)]
pub struct EngineWords;

impl Words for EngineWords {
    fn word(&self, piece: &Piece) -> Option<String> {
        Some(match piece {
            Piece::Text(t) => t.clone(),
            Piece::Set(s, Some(v)) => format!("{} {v}", s.name()),
            Piece::Set(s, None) => s.name().to_string(),
            Piece::Off(s) => format!("turn {} off", s.name()),
        })
    }
}

static INSTALLED: OnceLock<&'static dyn Words> = OnceLock::new();

/// Installs the words the engine renders its notes and errors with (once per process, like
/// `log::set_logger`); `false` if words were installed already.
pub fn set_words(words: &'static dyn Words) -> bool {
    INSTALLED.set(words).is_ok()
}

/// The installed words ([`EngineWords`] until [`set_words`]).
pub fn installed_words() -> &'static dyn Words {
    INSTALLED.get().copied().unwrap_or(&EngineWords)
}

/// Text with references to settings (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message(Vec<Piece>);

impl Message {
    /// A message of plain text.
    pub fn text(t: impl Into<String>) -> Self {
        Message(vec![Piece::Text(t.into())])
    }

    /// Appends text.
    pub fn t(mut self, t: impl Into<String>) -> Self {
        self.0.push(Piece::Text(t.into()));
        self
    }

    /// Appends a reference to `setting` with `value`.
    pub fn set(mut self, setting: Setting, value: impl Into<String>) -> Self {
        self.0.push(Piece::Set(setting, Some(value.into())));
        self
    }

    /// Appends a reference to `setting` itself.
    pub fn setting(mut self, setting: Setting) -> Self {
        self.0.push(Piece::Set(setting, None));
        self
    }

    /// Appends "turn `setting` off".
    pub fn off(mut self, setting: Setting) -> Self {
        self.0.push(Piece::Off(setting));
        self
    }

    /// Appends another message.
    pub fn then(mut self, other: Message) -> Self {
        self.0.extend(other.0);
        self
    }

    /// The pieces, in order.
    pub fn pieces(&self) -> &[Piece] {
        &self.0
    }

    /// The message in `words` (the engine's for the pieces `words` leaves out).
    pub fn render(&self, words: &dyn Words) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                _ => words
                    .word(p)
                    .or_else(|| EngineWords.word(p))
                    .unwrap_or_default(),
            })
            .collect()
    }
}

impl fmt::Display for Message {
    /// The message in the installed words ([`installed_words`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(installed_words()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Flags;
    impl Words for Flags {
        fn word(&self, p: &Piece) -> Option<String> {
            match p {
                Piece::Set(Setting::Method, Some(v)) => Some(format!("--method {v}")),
                Piece::Off(Setting::MemoryLock) => Some("pass --no-mlock".into()),
                _ => None,
            }
        }
    }

    #[test]
    fn settings_are_worded_by_the_front_end() {
        let m = Message::text("cannot use ")
            .set(Setting::Method, "itimer")
            .t(" with ")
            .set(Setting::Threads, "2")
            .t("; ")
            .off(Setting::MemoryLock);
        assert_eq!(
            m.render(&EngineWords),
            "cannot use method itimer with threads 2; turn memory locking off"
        );
        assert_eq!(
            m.render(&Flags),
            "cannot use --method itimer with threads 2; pass --no-mlock"
        );
    }
}
