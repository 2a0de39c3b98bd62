//! The run's clock against the trace's: a run on `--clock realtime`, `tai` or `boottime`
//! reads its expiries and wake-ups on that clock, while every trace event is stamped on
//! CLOCK_MONOTONIC (BPF's `bpf_ktime_get_ns()`, tracefs' `mono` trace clock). Its late
//! wake-ups are moved to CLOCK_MONOTONIC before they are looked for in the trace, and so are
//! the values a thread's own wait timer carries on the timer's clock.
//!
//! A timer keeps its expiry on its base's clock (`hrtimer_start`'s `expires` and
//! `softexpires`, `hrtimer_expire_entry`'s `now`), except that a *relative* CLOCK_REALTIME
//! timer runs on the monotonic base (`__hrtimer_setup()`, kernel/time/hrtimer.c). The offset
//! between two clocks changes only when a clock is set (`clock_settime(2)`, a leap second,
//! a suspend for CLOCK_BOOTTIME): NTP's slewing moves them alike (clock_gettime(2)).
//!
//! Which clock a time is on is told by where it lies, not by the run's settings: `tickscope
//! attach` streams wake-ups already moved to CLOCK_MONOTONIC (by [`crate::wakeups`]) under
//! its first thread's clock, and its threads may each wait on another clock. A time just
//! past (a wake-up received, a window just ended) is on the clock whose `now` it is nearest;
//! a thread's timer for a wake-up is on the clock that puts it nearest that wake-up's
//! expiry. CLOCK_REALTIME and CLOCK_TAI are 37 s apart and decades from the others;
//! CLOCK_BOOTTIME is apart by the time spent suspended (0 on a machine never suspended:
//! then the two are one).

use crate::events::{Event, Kind, Nanos};
use crate::wakeups::ClockOffsets;
use tickscope_engine::time::ClockId;

/// The clocks a time can be on, as offsets to CLOCK_MONOTONIC at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clocks {
    /// Each clock minus CLOCK_MONOTONIC, ns.
    pub offsets: ClockOffsets,
    /// CLOCK_MONOTONIC when they were read, ns.
    pub mono_now: Nanos,
}

impl Clocks {
    /// The clocks now (`clock_gettime(2)` of each, through the vDSO).
    pub fn now() -> Self {
        let offsets = ClockOffsets::now();
        Clocks {
            offsets,
            mono_now: tickscope_engine::time::read_clock(libc::CLOCK_MONOTONIC),
        }
    }

    /// The offset of `clock` (0 for CLOCK_MONOTONIC), ns.
    pub fn offset_of(&self, clock: ClockId) -> Nanos {
        match clock {
            ClockId::Monotonic => 0,
            ClockId::Realtime => self.offsets.realtime,
            ClockId::Tai => self.offsets.tai,
            ClockId::Boottime => self.offsets.boottime,
        }
    }

    /// What to subtract from `t`, a time just past (ns, within seconds of now) on either
    /// CLOCK_MONOTONIC or `clock`, to put it on CLOCK_MONOTONIC: 0 or `clock`'s offset,
    /// whichever puts it nearer to now.
    pub fn offset_of_recent(&self, t: Nanos, clock: ClockId) -> Nanos {
        let other = self.offset_of(clock);
        let away = |o: Nanos| (t.saturating_sub(o).saturating_sub(self.mono_now)).saturating_abs();
        match away(other) < away(0) {
            true => other,
            false => 0,
        }
    }

    /// Moves the values thread `tid`'s own wait timer carries on its clock (the starts by
    /// `tid` of a timer with a callback in `functions`, and the expiries of those timers) to
    /// CLOCK_MONOTONIC: each start by the clock's offset that puts its soft expiry nearest
    /// `expiry` (the late wake-up's, ns on CLOCK_MONOTONIC), each expiry by its start's.
    /// A start whose soft expiry is within `near` ns of `expiry` is on CLOCK_MONOTONIC
    /// already (a window of events holds no other: `near` is its span and a period more), so
    /// that a CLOCK_BOOTTIME offset of a short suspend never moves the next period's start
    /// onto this one. Other events are left as they are.
    pub fn events_to_monotonic(
        &self,
        events: &mut [Event],
        tid: i32,
        functions: &[String],
        (expiry, near): (Nanos, Nanos),
    ) {
        let o = self.offsets;
        let candidates = [0, o.realtime, o.tai, o.boottime];
        if candidates[1..].iter().all(|c| *c == 0) {
            return;
        }
        let mut timers: Vec<(u64, Nanos)> = Vec::new();
        for e in events.iter_mut() {
            match &mut e.kind {
                Kind::HrtimerStart {
                    timer,
                    function,
                    expires,
                    softexpires,
                } if e.pid == tid && functions.iter().any(|f| f == function) => {
                    let soft = softexpires.unwrap_or(*expires);
                    let away = |c: &Nanos| soft.saturating_sub(*c).abs_diff(expiry);
                    let offset = match away(&0) <= near.unsigned_abs() {
                        true => 0,
                        false => candidates.iter().copied().min_by_key(away).unwrap_or(0),
                    };
                    *expires -= offset;
                    if let Some(s) = softexpires.as_mut() {
                        *s -= offset;
                    }
                    match timers.iter_mut().find(|(t, _)| t == timer) {
                        Some(slot) => slot.1 = offset,
                        None => timers.push((*timer, offset)),
                    }
                }
                Kind::HrtimerExpireEntry { timer, now, .. } => {
                    if let Some((_, offset)) = timers.iter().find(|(t, _)| t == timer) {
                        *now -= offset;
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::Name;

    const REAL: Nanos = 1_764_000_000_000_000_000;
    const TAI: Nanos = REAL + 37_000_000_000;

    fn clocks(boottime: Nanos) -> Clocks {
        Clocks {
            offsets: ClockOffsets {
                realtime: REAL,
                tai: TAI,
                boottime,
            },
            mono_now: 10_000_000,
        }
    }

    fn start(pid: i32, timer: u64, function: &str, soft: Nanos) -> Event {
        Event {
            ts: 1_000,
            cpu: 1,
            pid,
            comm: Name::from("t"),
            kind: Kind::HrtimerStart {
                timer,
                function: function.into(),
                expires: soft + 50,
                softexpires: Some(soft),
            },
        }
    }

    fn entry(timer: u64, now: Nanos) -> Event {
        Event {
            ts: 2_000,
            cpu: 1,
            pid: 0,
            comm: Name::from("swapper/1"),
            kind: Kind::HrtimerExpireEntry {
                timer,
                function: "hrtimer_wakeup".into(),
                now,
                user: None,
            },
        }
    }

    fn soft(e: &Event) -> (Nanos, Option<Nanos>) {
        match e.kind {
            Kind::HrtimerStart {
                expires,
                softexpires,
                ..
            } => (expires, softexpires),
            _ => unreachable!(),
        }
    }

    fn wait_functions() -> Vec<String> {
        vec!["hrtimer_wakeup".to_string()]
    }

    #[test]
    fn a_threads_timer_on_another_clock_is_moved_and_nothing_else() {
        let mut events = vec![
            start(7, 0xa, "hrtimer_wakeup", REAL + 1_500),
            // Another thread's, another callback's, a monotonic timer of the thread, a TAI one.
            start(8, 0xb, "hrtimer_wakeup", REAL + 1_500),
            start(7, 0xc, "perf_swevent_hrtimer", REAL + 1_500),
            start(7, 0xd, "hrtimer_wakeup", 1_700),
            start(7, 0xe, "hrtimer_wakeup", TAI + 900),
            entry(0xa, REAL + 1_600),
            entry(0xb, REAL + 1_600),
            entry(0xe, TAI + 1_000),
        ];
        clocks(0).events_to_monotonic(&mut events, 7, &wait_functions(), (1_500, 3_000));
        assert_eq!(soft(&events[0]), (1_550, Some(1_500)));
        assert_eq!(soft(&events[1]), (REAL + 1_550, Some(REAL + 1_500)));
        assert_eq!(soft(&events[2]), (REAL + 1_550, Some(REAL + 1_500)));
        assert_eq!(soft(&events[3]), (1_750, Some(1_700)));
        assert_eq!(soft(&events[4]), (950, Some(900)));
        assert!(matches!(
            events[5].kind,
            Kind::HrtimerExpireEntry { now: 1_600, .. }
        ));
        assert!(
            matches!(events[6].kind, Kind::HrtimerExpireEntry { now, .. } if now == REAL + 1_600)
        );
        assert!(matches!(
            events[7].kind,
            Kind::HrtimerExpireEntry { now: 1_000, .. }
        ));
    }

    #[test]
    fn boottime_is_told_from_monotonic_by_the_expiry_and_all_on_one_moves_nothing() {
        // Suspended 5 s: a boottime timer is 5 s after the wake-up's monotonic expiry.
        let mk = |soft| {
            vec![
                start(7, 0xa, "hrtimer_wakeup", soft),
                entry(0xa, soft + 100),
            ]
        };
        let mut events = mk(5_000_002_000);
        clocks(5_000_000_000).events_to_monotonic(
            &mut events,
            7,
            &wait_functions(),
            (2_000, 3_000),
        );
        assert_eq!(soft(&events[0]).1, Some(2_000));
        assert!(matches!(
            events[1].kind,
            Kind::HrtimerExpireEntry { now: 2_100, .. }
        ));
        // A monotonic timer of the same thread stays.
        let mut events = mk(2_000);
        clocks(5_000_000_000).events_to_monotonic(
            &mut events,
            7,
            &wait_functions(),
            (2_000, 3_000),
        );
        assert_eq!(events, mk(2_000));
        // A short suspend (1.5 µs here): the next period's monotonic start (2 µs on) is in
        // the window, and stays; moved, it would look like this wake-up's (0.5 µs on).
        let mut events = mk(4_000);
        clocks(1_500).events_to_monotonic(&mut events, 7, &wait_functions(), (2_000, 3_000));
        assert_eq!(events, mk(4_000));
        // Every clock the same: nothing to move.
        let mut events = mk(2_000);
        let same = Clocks {
            offsets: ClockOffsets::default(),
            mono_now: 0,
        };
        same.events_to_monotonic(&mut events, 7, &wait_functions(), (9_000, 3_000));
        assert_eq!(events, mk(2_000));
    }

    #[test]
    fn a_recent_time_is_on_the_clock_whose_now_it_is_nearest() {
        let c = clocks(0);
        // A realtime run's wake-up 20 ms ago, and attach's, already monotonic.
        assert_eq!(
            c.offset_of_recent(REAL + 10_000_000 - 20_000_000, ClockId::Realtime),
            REAL
        );
        assert_eq!(
            c.offset_of_recent(10_000_000 - 20_000_000, ClockId::Realtime),
            0
        );
        assert_eq!(c.offset_of_recent(TAI + 9_000_000, ClockId::Tai), TAI);
        assert_eq!(c.offset_of_recent(9_000_000, ClockId::Monotonic), 0);
    }

    #[test]
    fn the_offsets_are_the_clocks_distance() {
        let c = Clocks::now();
        let mono = tickscope_engine::time::read_clock(libc::CLOCK_MONOTONIC);
        let wall = tickscope_engine::time::read_clock(libc::CLOCK_REALTIME);
        // The same distance within a second (a clock set between the reads aside).
        let real = c.offset_of(ClockId::Realtime);
        assert!((wall - mono - real).abs() < 1_000_000_000, "{real}");
        assert_eq!(c.offset_of(ClockId::Monotonic), 0);
        assert_eq!(c.offset_of_recent(wall, ClockId::Realtime), real);
    }
}
