//! Which thread takes the `itimer` method's SIGALRM (`harness = false`: the process's first
//! thread must block SIGALRM before any other thread starts, as `tickscope`'s `main` does with
//! [`reserve_alarm`], and the test harness's own threads would not).
//!
//! Structure only, on the real kernel: counts of forwarded signals and the order of wake
//! times, never their size.

use std::sync::mpsc;
use tickscope_engine::wait::{reserve_alarm, Itimer, WakeMethod};

const MS: i64 = 1_000_000;

/// The kernel id of the calling thread.
fn gettid() -> i32 {
    // SAFETY: gettid cannot fail.
    unsafe { libc::gettid() }
}

/// Arms `it` at 1 ms and waits for `n` wake-ups, each at or after its expiry; returns the
/// SIGALRMs passed on from another thread.
fn wake_ups(it: &mut Itimer, n: i64) -> Option<u64> {
    let start = it.now();
    it.arm(start + MS, MS).expect("setitimer");
    let mut last = start;
    for k in 1..=n {
        let woke = it.wait(start + k * MS, last).expect("wait");
        assert!(woke >= start + k * MS, "wake-up {k} before its expiry");
        last = woke;
    }
    it.observations().signals_forwarded
}

/// Every other thread blocks SIGALRM: the kernel hands each process-directed SIGALRM of the
/// interval timer to the measuring thread, in its `sigsuspend`, and none is passed on.
fn sigalrm_reaches_the_measuring_thread_directly() {
    let forwarded = std::thread::spawn(|| {
        let mut it = Itimer::new().expect("the interval timer is free");
        wake_ups(&mut it, 20)
    })
    .join()
    .expect("measuring thread");
    assert_eq!(forwarded, Some(0));
}

/// A SIGALRM that lands on another thread (here sent to it directly, while that thread accepts
/// it) is passed on to the measuring thread and counted once; the measuring thread still wakes
/// at its expiries.
fn a_sigalrm_on_another_thread_is_passed_on() {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let measuring = std::thread::spawn(move || {
        let mut it = Itimer::new().expect("the interval timer is free");
        ready_tx.send(()).expect("main waits");
        go_rx.recv().expect("main says go");
        wake_ups(&mut it, 5)
    });
    ready_rx.recv().expect("measuring thread ready");
    let (tid_tx, tid_rx) = mpsc::channel();
    let other = std::thread::spawn(move || {
        tid_tx.send(gettid()).expect("main waits");
        // SAFETY: sigsuspend with the current mask minus SIGALRM: SIGALRM is accepted only
        // while this thread waits here, and the call returns once its handler has run.
        unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
            libc::sigdelset(&mut mask, libc::SIGALRM);
            libc::sigsuspend(&mask);
        }
    });
    let other_tid = tid_rx.recv().expect("other thread started");
    // SAFETY: a thread-directed SIGALRM to a thread of this process; it waits for it (or
    // holds it pending until it does).
    let sent = unsafe { libc::tgkill(libc::getpid(), other_tid, libc::SIGALRM) };
    assert_eq!(sent, 0, "tgkill");
    other.join().expect("other thread");
    go_tx.send(()).expect("measuring thread waits");
    let forwarded = measuring.join().expect("measuring thread");
    assert_eq!(forwarded, Some(1));
}

fn main() {
    reserve_alarm().expect("block SIGALRM in the first thread");
    let tests: [(&str, fn()); 2] = [
        (
            "sigalrm_reaches_the_measuring_thread_directly",
            sigalrm_reaches_the_measuring_thread_directly,
        ),
        (
            "a_sigalrm_on_another_thread_is_passed_on",
            a_sigalrm_on_another_thread_is_passed_on,
        ),
    ];
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for (name, test) in tests {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        test();
        println!("test {name} ... ok");
    }
}
