//! From another program's trace events to its timer wake-ups: which expiry each wake-up
//! answered, and when the thread was running again — `tickscope attach`'s measurement.
//!
//! The join key works for any thread: `timer:hrtimer_start` from the thread carries the
//! absolute expiry it asked for (`softexpires`; `expires` adds the timer slack, see
//! `hrtimer_set_expires_range_ns()` in `include/linux/hrtimer.h`), and the thread's next
//! `raw_syscalls:sys_exit` of its wait says when it ran again. Each thread keeps the expiries
//! it armed and has not yet answered; a `sys_exit` answers every one at or before it (the
//! latest is the wake-up's expiry, the earlier ones were passed: overruns), an
//! `hrtimer_cancel` removes one (a wait that ended on an event or a signal), and a `sys_exit`
//! before any armed expiry is not a timer wake-up. An expiry is answered once: a wait that
//! ended on an event after its expiry had passed and is retried for the same deadline (a
//! condition variable signalled late) adds no second wake-up.
//!
//! A timer re-armed inside the wait's own return path (a periodic `timerfd`: `timerfd_read()`
//! forwards and restarts it before returning, `fs/timerfd.c`) has an expiry after the
//! `sys_exit`, so it waits for the next wake-up, as it should.
//!
//! Timers on `CLOCK_REALTIME` and `CLOCK_TAI` carry expiries on their own clock (the timer
//! base's, `kernel/time/hrtimer.c`); they are moved to CLOCK_MONOTONIC with the offsets
//! given ([`ClockOffsets`]), so that every expiry and wake-up is on the trace's `mono` clock.

use crate::events::{Event, Kind, Nanos};
use std::collections::HashMap;

/// hrtimer callbacks that wake a waiting thread: a sleep or a wait's timeout
/// (`hrtimer_wakeup`, `kernel/time/hrtimer.c`), a timerfd (`timerfd_tmrproc`,
/// `fs/timerfd.c`), a POSIX timer (`posix_timer_fn`, `kernel/time/posix-timers.c`), an
/// interval timer (`it_real_fn`, `kernel/time/itimer.c`).
pub const TIMER_FUNCTIONS: [&str; 4] = [
    "hrtimer_wakeup",
    "timerfd_tmrproc",
    "posix_timer_fn",
    "it_real_fn",
];

/// Resolution of a text trace's event timestamps, ns: `trace_pipe` prints µs
/// (`trace_print_time()`, `kernel/trace/trace_output.c`), truncated; a wake-up time read from
/// it is up to 999 ns early.
pub const TS_RESOLUTION_NS: Nanos = 1000;

/// Expiries above this, ns, are on `CLOCK_REALTIME` or `CLOCK_TAI` (counted from 1970: more
/// than three years), never on a monotonic clock of a machine up for less than three years.
pub(crate) const EPOCH_CLOCK_NS: Nanos = 100_000_000_000_000_000;

/// At most this many expiries are kept per thread (older ones are dropped: a thread that
/// arms timers it never waits on).
const ARMED_CAP: usize = 64;

/// `clock_nanosleep`'s clock ids (`include/uapi/linux/time.h`).
pub const CLOCK_REALTIME: u64 = 0;
/// `CLOCK_MONOTONIC`.
pub const CLOCK_MONOTONIC: u64 = 1;
/// `CLOCK_BOOTTIME`.
pub const CLOCK_BOOTTIME: u64 = 7;
/// `CLOCK_TAI`.
pub const CLOCK_TAI: u64 = 11;

/// Each clock minus CLOCK_MONOTONIC, ns, read when tracing starts (`clock_gettime(2)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockOffsets {
    /// CLOCK_REALTIME − CLOCK_MONOTONIC.
    pub realtime: Nanos,
    /// CLOCK_TAI − CLOCK_MONOTONIC.
    pub tai: Nanos,
    /// CLOCK_BOOTTIME − CLOCK_MONOTONIC (time spent suspended).
    pub boottime: Nanos,
}

impl ClockOffsets {
    /// The offsets now (`clock_gettime(2)`, one read of each clock).
    pub fn now() -> Self {
        use tickscope_engine::time::read_clock;
        let mono = read_clock(libc::CLOCK_MONOTONIC);
        ClockOffsets {
            realtime: read_clock(libc::CLOCK_REALTIME) - mono,
            tai: read_clock(libc::CLOCK_TAI) - mono,
            boottime: read_clock(libc::CLOCK_BOOTTIME) - mono,
        }
    }

    /// The offset of clock id `clock`, ns (0 for CLOCK_MONOTONIC and unknown ids).
    pub fn of(&self, clock: u64) -> Nanos {
        match clock {
            CLOCK_REALTIME => self.realtime,
            CLOCK_TAI => self.tai,
            CLOCK_BOOTTIME => self.boottime,
            _ => 0,
        }
    }
}

/// One timer wake-up of a traced thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WakeUp {
    /// The thread.
    pub tid: i32,
    /// The expiry asked for, ns on CLOCK_MONOTONIC (`softexpires`).
    pub expiry: Nanos,
    /// The `sys_exit` of the wait, ns on CLOCK_MONOTONIC (µs resolution,
    /// [`TS_RESOLUTION_NS`]).
    pub woke: Nanos,
    /// The system call the thread returned from.
    pub nr: i64,
    /// That call's arguments, when its `sys_enter` was seen.
    pub enter_args: Option<[u64; 6]>,
    /// The timer's callback (one of [`TIMER_FUNCTIONS`]).
    pub function: &'static str,
    /// The clock id the timer runs on (a `clock_nanosleep`'s first argument, otherwise
    /// CLOCK_REALTIME for an expiry counted from 1970 and CLOCK_MONOTONIC for the rest).
    pub clock: u64,
    /// When the timer was armed, ns (the `hrtimer_start`).
    pub armed_at: Nanos,
    /// Earlier expiries of the thread answered by the same wake-up (passed: overruns).
    pub passed: u32,
}

/// What one event meant to the tracker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Nothing that [`Tracker`] reports.
    Nothing,
    /// A timer wake-up.
    WakeUp(WakeUp),
    /// A traced thread exited (`sched_process_exit`).
    Exit(i32),
}

#[derive(Debug, Clone, Copy)]
struct Armed {
    timer: u64,
    expiry: Nanos,
    at: Nanos,
    function: &'static str,
    clock: u64,
}

#[derive(Debug, Default)]
struct ThreadState {
    armed: Vec<Armed>,
    enter: Option<(i64, [u64; 6])>,
    /// The expiry of the thread's last wake-up.
    answered: Option<Nanos>,
}

/// Turns the events of traced threads into their timer wake-ups (see the module text).
#[derive(Debug)]
pub struct Tracker {
    offsets: ClockOffsets,
    wait_syscalls: Option<Vec<i64>>,
    threads: HashMap<i32, ThreadState>,
}

impl Tracker {
    /// A tracker for every thread whose events it is given. `wait_syscalls`: the system
    /// calls whose `sys_exit` counts as a wake-up (`None`: any).
    pub fn new(offsets: ClockOffsets, wait_syscalls: Option<Vec<i64>>) -> Self {
        Tracker {
            offsets,
            wait_syscalls,
            threads: HashMap::new(),
        }
    }

    /// Restricts the wake-ups, from now on, to `sys_exit`s of these system calls.
    pub fn set_wait_syscalls(&mut self, nrs: Vec<i64>) {
        self.wait_syscalls = Some(nrs);
    }

    /// Takes one event (in trace order per thread).
    pub fn push(&mut self, e: &Event) -> Seen {
        match &e.kind {
            Kind::HrtimerStart {
                timer,
                function,
                expires,
                softexpires,
            } if e.pid > 0 => {
                let Some(function) = TIMER_FUNCTIONS.iter().find(|f| *f == function) else {
                    return Seen::Nothing;
                };
                let state = self.threads.entry(e.pid).or_default();
                let asked = softexpires.unwrap_or(*expires);
                let clock = match state.enter {
                    // A relative sleep on CLOCK_REALTIME runs on the monotonic base
                    // (`__hrtimer_setup()`, kernel/time/hrtimer.c): its expiry is monotonic.
                    Some((nr, args)) if nr == libc::SYS_clock_nanosleep => {
                        match args[0] == CLOCK_REALTIME && asked <= EPOCH_CLOCK_NS {
                            true => CLOCK_MONOTONIC,
                            false => args[0],
                        }
                    }
                    _ if asked > EPOCH_CLOCK_NS => CLOCK_REALTIME,
                    _ => CLOCK_MONOTONIC,
                };
                // Re-armed before it fired: the old expiry is gone. One that fired stays, to be
                // answered by the wake-up it caused (a timerfd re-arms in its read).
                state
                    .armed
                    .retain(|a| a.timer != *timer || a.expiry <= e.ts);
                if state.armed.len() >= ARMED_CAP {
                    state.armed.remove(0);
                }
                state.armed.push(Armed {
                    timer: *timer,
                    expiry: asked - self.offsets.of(clock),
                    at: e.ts,
                    function,
                    clock,
                });
                Seen::Nothing
            }
            Kind::HrtimerCancel { timer } => {
                for s in self.threads.values_mut() {
                    s.armed.retain(|a| a.timer != *timer);
                }
                Seen::Nothing
            }
            Kind::SysEnter { nr, args } if e.pid > 0 => {
                self.threads.entry(e.pid).or_default().enter = Some((*nr, *args));
                Seen::Nothing
            }
            Kind::SysExit { nr } if e.pid > 0 => {
                let Some(state) = self.threads.get_mut(&e.pid) else {
                    return Seen::Nothing;
                };
                let enter = state.enter.take().filter(|(n, _)| n == nr).map(|(_, a)| a);
                if let Some(waits) = &self.wait_syscalls {
                    if !waits.contains(nr) {
                        return Seen::Nothing;
                    }
                }
                let due = |a: &Armed| a.expiry < e.ts + TS_RESOLUTION_NS;
                // An expiry already answered, armed again (a wait woken by an event after its
                // expiry had passed, then retried for the same deadline: a condition variable
                // signalled late, a sleep interrupted): still one wake-up, the first.
                let last = state.answered;
                let answered: Vec<Armed> = state
                    .armed
                    .iter()
                    .copied()
                    .filter(|a| due(a) && Some(a.expiry) != last)
                    .collect();
                let latest = answered.iter().copied().max_by_key(|a| a.expiry);
                let passed = answered.len().saturating_sub(1) as u32;
                state.armed.retain(|a| !due(a));
                if let Some(a) = latest {
                    state.answered = Some(a.expiry);
                }
                match latest {
                    Some(a) => Seen::WakeUp(WakeUp {
                        tid: e.pid,
                        expiry: a.expiry,
                        woke: e.ts,
                        nr: *nr,
                        enter_args: enter,
                        function: a.function,
                        clock: a.clock,
                        armed_at: a.at,
                        passed,
                    }),
                    None => Seen::Nothing,
                }
            }
            Kind::TaskExit { pid } => match self.threads.remove(pid) {
                Some(_) => Seen::Exit(*pid),
                None => Seen::Nothing,
            },
            _ => Seen::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::parse_line;

    fn run(text: &str, waits: Option<Vec<i64>>) -> Vec<Seen> {
        let mut t = Tracker::new(ClockOffsets::default(), waits);
        text.lines()
            .filter_map(parse_line)
            .map(|e| t.push(&e))
            .filter(|s| *s != Seen::Nothing)
            .collect()
    }

    #[test]
    fn an_absolute_sleep_is_joined_with_its_sys_exit() {
        let seen = run(
            "loop-11977 [001] .....  9887.488037: sys_enter: NR 230 (1, 1, 7ffcb07727c0, 0, 0, 0)
             loop-11977 [001] d..1.  9887.488038: hrtimer_start: hrtimer=00000000b4845342 function=hrtimer_wakeup expires=9887488615114 softexpires=9887488565114 mode=ABS was_armed=0
             loop-11977 [001] .....  9887.488632: sys_exit: NR 230 = 0",
            None,
        );
        let Seen::WakeUp(w) = &seen[0] else {
            panic!("{seen:?}")
        };
        assert_eq!(
            (w.tid, w.expiry, w.woke),
            (11977, 9887488565114, 9887488632000)
        );
        assert_eq!(
            (w.nr, w.enter_args.map(|a| a[1]), w.clock),
            (230, Some(1), 1)
        );
        assert_eq!((w.function, w.passed), ("hrtimer_wakeup", 0));
    }

    #[test]
    fn a_timerfd_rearmed_before_its_sys_exit_waits_for_the_next_wake_up() {
        let seen = run(
            "loop-11979 [001] d..2.  9887.488554: hrtimer_start: hrtimer=00000000b71f2e7d function=timerfd_tmrproc expires=9887490522741 softexpires=9887490522741 mode=ABS was_armed=0
             loop-11979 [001] .....  9887.488555: sys_exit: NR 0 = 8
             loop-11979 [001] .....  9887.488557: sys_enter: NR 0 (3, 7fa2bee95e98, 8, 7fa2beea9b60, 0, 7ffcb07726c7)
             loop-11979 [001] d..2.  9887.490555: hrtimer_start: hrtimer=00000000b71f2e7d function=timerfd_tmrproc expires=9887492522741 softexpires=9887492522741 mode=ABS was_armed=0
             loop-11979 [001] .....  9887.490556: sys_exit: NR 0 = 8",
            None,
        );
        assert_eq!(seen.len(), 1, "{seen:?}");
        let Seen::WakeUp(w) = &seen[0] else { panic!() };
        assert_eq!((w.expiry, w.woke, w.nr), (9887490522741, 9887490556000, 0));
        assert_eq!(w.function, "timerfd_tmrproc");
    }

    #[test]
    fn cancelled_and_early_waits_are_not_wake_ups_and_other_calls_are_ignored() {
        let seen = run(
            "app-5 [000] d..1.  100.000010: hrtimer_start: hrtimer=00000000000000aa function=hrtimer_wakeup expires=100005000000 softexpires=100005000000 mode=ABS was_armed=0
             app-5 [000] d..1.  100.000020: hrtimer_cancel: hrtimer=00000000000000aa
             app-5 [000] .....  100.000030: sys_exit: NR 232 = 1
             app-5 [000] d..1.  100.000040: hrtimer_start: hrtimer=00000000000000bb function=hrtimer_wakeup expires=100005000000 softexpires=100005000000 mode=ABS was_armed=0
             app-5 [000] .....  100.000050: sys_exit: NR 232 = 1
             app-5 [000] .....  100.006000: sys_exit: NR 1 = 8
             app-5 [000] .....  100.006010: sys_exit: NR 232 = 0
             app-5 [000] .....  100.100000: sched_process_exit: comm=app pid=5 prio=120 group_dead=true",
            Some(vec![232]),
        );
        assert_eq!(seen.len(), 2, "{seen:?}");
        let Seen::WakeUp(w) = &seen[0] else { panic!() };
        assert_eq!((w.expiry, w.woke), (100005000000, 100006010000));
        assert_eq!(seen[1], Seen::Exit(5));
    }

    #[test]
    fn a_relative_realtime_sleep_is_on_the_monotonic_base() {
        // glibc's usleep(): clock_nanosleep(CLOCK_REALTIME, 0, …), as cyclictest's main thread.
        let mut t = Tracker::new(
            ClockOffsets {
                realtime: 1_700_000_000_000_000_000,
                ..Default::default()
            },
            None,
        );
        let lines = [
            "ct-7 [000] .....  60.000000: sys_enter: NR 230 (0, 0, 7ffcb07727c0, 0, 0, 0)",
            "ct-7 [000] d..1.  60.000001: hrtimer_start: hrtimer=0000000000000003 function=hrtimer_wakeup expires=60010051000 softexpires=60010001000 mode=REL was_armed=0",
            "ct-7 [000] .....  60.010060: sys_exit: NR 230 = 0",
        ];
        let seen: Vec<Seen> = lines
            .iter()
            .filter_map(|l| parse_line(l))
            .map(|e| t.push(&e))
            .collect();
        let Seen::WakeUp(w) = &seen[2] else {
            panic!("{seen:?}")
        };
        assert_eq!(
            (w.expiry, w.woke, w.clock),
            (60_010_001_000, 60_010_060_000, CLOCK_MONOTONIC)
        );
    }

    #[test]
    fn passed_expiries_are_counted_and_realtime_is_moved_to_monotonic() {
        let mut t = Tracker::new(
            ClockOffsets {
                realtime: 1_700_000_000_000_000_000,
                ..Default::default()
            },
            None,
        );
        let lines = [
            "rt-9 [000] d..1.  50.000000: hrtimer_start: hrtimer=0000000000000001 function=posix_timer_fn expires=1700000050001000000 softexpires=1700000050001000000 mode=ABS was_armed=0",
            "rt-9 [000] d..1.  50.000001: hrtimer_start: hrtimer=0000000000000002 function=posix_timer_fn expires=1700000050002000000 softexpires=1700000050002000000 mode=ABS was_armed=0",
            "rt-9 [000] .....  50.002500: sys_exit: NR 128 = 14",
        ];
        let seen: Vec<Seen> = lines
            .iter()
            .filter_map(|l| parse_line(l))
            .map(|e| t.push(&e))
            .collect();
        let Seen::WakeUp(w) = &seen[2] else {
            panic!("{seen:?}")
        };
        assert_eq!(
            (w.expiry, w.passed, w.clock),
            (50_002_000_000, 1, CLOCK_REALTIME)
        );
    }
}
