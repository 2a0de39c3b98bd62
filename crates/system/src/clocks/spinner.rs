//! A thread that keeps a sibling CPU busy, for a bounded time, and is always stopped.
//!
//! The clock_gettime 2010 post saw two reads take 58 ns instead of 113 ns while another
//! shell ran `while(1);`: a busy package does not drop into deep idle states. [`Spinner`]
//! reproduces that next to the measuring CPU. It spins with plain arithmetic rather than
//! `pause`, which a hypervisor may turn into a VM exit (pause-loop exiting).

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use tickscope_engine::setup::{allowed_cpus, parse_cpu_list, AffinityGuard};
use tickscope_engine::time::{read_clock, Nanos};

/// A spinning thread pinned to one CPU. Dropping it stops the thread and waits for it; the
/// thread also stops by itself when its time limit passes, whatever happens to the guard.
#[derive(Debug)]
pub struct Spinner {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    cpu: usize,
}

impl Spinner {
    /// Starts a thread pinned to `cpu` that spins until the [`Spinner`] is dropped or
    /// `limit_ns` ns (on `CLOCK_MONOTONIC`) have passed, whichever comes first.
    ///
    /// # Errors
    /// The error of spawning the thread or of pinning it (`EINVAL` for a CPU that is offline
    /// or outside the process's cpuset); no thread is left running.
    pub fn start(cpu: usize, limit_ns: Nanos) -> io::Result<Spinner> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let (pinned_tx, pinned_rx) = mpsc::sync_channel(1);
        let handle = thread::Builder::new()
            .name("tickscope-spin".into())
            .spawn(move || {
                let _pin = match AffinityGuard::pin(cpu) {
                    Ok(g) => g,
                    Err(e) => {
                        let _ = pinned_tx.send(Err(e));
                        return;
                    }
                };
                let _ = pinned_tx.send(Ok(()));
                let deadline = read_clock(libc::CLOCK_MONOTONIC).saturating_add(limit_ns);
                let mut x = 0u64;
                while !flag.load(Ordering::Relaxed) && read_clock(libc::CLOCK_MONOTONIC) < deadline
                {
                    for _ in 0..10_000 {
                        x = std::hint::black_box(x.wrapping_add(1));
                    }
                }
            })?;
        let pinned = pinned_rx
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the spinning thread ended at start")));
        let spinner = Spinner {
            stop,
            handle: Some(handle),
            cpu,
        };
        // On error, dropping `spinner` joins the thread, which has already returned.
        pinned.map(|()| spinner)
    }

    /// The CPU the thread spins on.
    pub fn cpu(&self) -> usize {
        self.cpu
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A CPU next to `cpu` to spin on, and whether it is an SMT sibling (same core, from
/// `/sys/devices/system/cpu/cpuN/topology/thread_siblings_list`); otherwise the first other
/// CPU this process may use. `None` when there is no other CPU.
pub fn sibling_cpu(cpu: usize) -> Option<(usize, bool)> {
    let allowed = allowed_cpus().ok()?;
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
    let smt = std::fs::read_to_string(path)
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()).ok())
        .and_then(|sibs| sibs.into_iter().find(|&c| c != cpu && allowed.contains(&c)));
    match smt {
        Some(c) => Some((c, true)),
        None => allowed.into_iter().find(|&c| c != cpu).map(|c| (c, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_and_stops_when_dropped_or_at_its_limit() {
        let cpus = allowed_cpus().unwrap();
        let start = read_clock(libc::CLOCK_MONOTONIC);
        let s = Spinner::start(cpus[0], 10_000_000_000).unwrap();
        assert_eq!(s.cpu(), cpus[0]);
        drop(s);
        // Limited to 1 ms: the thread ends by itself; dropping just joins.
        let s = Spinner::start(cpus[0], 1_000_000).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        drop(s);
        assert!(read_clock(libc::CLOCK_MONOTONIC) - start < 5_000_000_000);
        assert!(Spinner::start(libc::CPU_SETSIZE as usize - 1, 1_000_000).is_err());
    }

    #[test]
    fn sibling_is_another_allowed_cpu() {
        let cpus = allowed_cpus().unwrap();
        match sibling_cpu(cpus[0]) {
            Some((c, _)) => assert!(c != cpus[0] && cpus.contains(&c)),
            None => assert_eq!(cpus.len(), 1),
        }
    }
}
