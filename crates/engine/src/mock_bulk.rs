//! Virtual time in bulk: a window's wake-ups of a latency script counted straight into the
//! window's record, instead of one [`MockMethod`](crate::mock::MockMethod) wait at a time.
//!
//! On virtual time wake-up `k` of a thread is late by `latencies[k % L]` (`L` values). When
//! no latency exceeds the period, no wake-up passes the next expiry, so expiry `k` is
//! `first + k·P`, wake-up `k` is at that plus its latency, and its period is
//! `P + latencies[k % L] − latencies[(k − 1) % L]` — the wake-ups of a window are known
//! without waiting for them. A window of `n` wake-ups from wake-up `s` on holds each script
//! value `⌊n / L⌋` times, one more for the `n mod L` values from position `s mod L` on;
//! [`measure_in_bulk`] records each value once with its count ([`WindowRecord::record_n`]),
//! so a window costs `O(L)` instead of `O(n)`: a 24-hour run of 64 threads at 1 kHz
//! (5.5·10⁹ wake-ups) then takes the time of its 5.5·10⁶ windows. Counts, sums, extremes
//! and histograms are integers, so every record is the one the measuring loop
//! ([`crate::worker::measure`]) fills on the same script (a test compares them). Scripts
//! with a latency beyond the period (overruns) or below zero keep the measuring loop.
//!
//! [`WindowRecord::record_n`]: crate::record::WindowRecord::record_n

use crate::record::LoopRecord;
use crate::time::Nanos;
use crate::worker::{LoopEnd, LoopParams, WindowLink};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a run with this latency script (ns) and period (ns) can be counted in bulk:
/// every latency between 0 and the period (no wake-up passes the next expiry).
pub(crate) fn applies(latencies: &[Nanos], period: Nanos) -> bool {
    !latencies.is_empty() && latencies.iter().all(|&l| (0..=period).contains(&l))
}

/// Records `n` wake-ups of the script `latencies`, the first of them wake-up `s` of the
/// run, into `record`, at period `period` ns (the run's first wake-up has no period).
fn record_window(record: &mut LoopRecord, latencies: &[Nanos], period: Nanos, s: u64, n: u64) {
    let len = latencies.len() as u64;
    let (full, rest) = (n / len, n % len);
    for (j, &lat) in latencies.iter().enumerate() {
        // Wake-ups s..s+n hit position j ⌊n/L⌋ times, once more when j is among the `rest`
        // positions from s mod L on (wrapping).
        let offset = (j as u64 + len - s % len) % len;
        let count = full + u64::from(offset < rest);
        if count == 0 {
            continue;
        }
        let prev = latencies[(j + latencies.len() - 1) % latencies.len()];
        // The run's first wake-up (k = 0, position 0) is the one without a period.
        let first_here = j == 0 && s == 0;
        record.record_n(lat, None, u64::from(first_here));
        let with_period = count - u64::from(first_here);
        record.record_n(lat, Some((period + lat - prev, period)), with_period);
    }
}

/// [`crate::worker::measure`] on virtual time for a script that [`applies`]: the same
/// windows, handed over the same way (waiting for a cleared record, as
/// [`LoopParams::await_records`] asks), each filled at once. `started` is the virtual
/// clock's reading before the first wait (the mock's start).
pub(crate) fn measure_in_bulk(
    latencies: &[Nanos],
    params: &LoopParams,
    stop: &AtomicBool,
    link: &mut WindowLink,
    mut current: Box<LoopRecord>,
    started: Nanos,
) -> LoopEnd {
    let period = params.period;
    current.begin(0);
    let mut samples: u64 = 0;
    let mut index = 0;
    while samples < params.max_samples && !stop.load(Ordering::Relaxed) {
        let expiry = params.first_expiry + samples as Nanos * period;
        if expiry >= params.end {
            break;
        }
        let w = ((expiry - params.first_expiry) / params.window) as u64;
        if w != index {
            index = w;
            let mut next = link.empty.pop();
            while next.is_err() && !stop.load(Ordering::Relaxed) {
                std::thread::yield_now();
                next = link.empty.pop();
            }
            match next {
                Ok(fresh) => {
                    let done = std::mem::replace(&mut current, fresh);
                    // Cannot fail: the ring holds as many slots as there are records.
                    let _ = link.full.push(done);
                    current.begin(index);
                }
                Err(_) => current.span = index - current.index + 1,
            }
        }
        let window_end = params.first_expiry + (index as Nanos + 1) * params.window;
        let boundary = window_end.min(params.end);
        // Expiries in [expiry, boundary), at most what is left of the run's wake-ups.
        let n = ((boundary - expiry + period - 1) / period) as u64;
        let n = n.min(params.max_samples - samples);
        record_window(&mut current, latencies, period, samples, n);
        samples += n;
    }
    current.thread_cpu_ns = Some(crate::time::read_clock(libc::CLOCK_THREAD_CPUTIME_ID));
    let _ = link.full.push(current);
    let last = samples.checked_sub(1).map(|k| {
        let expiry = params.first_expiry + k as Nanos * period;
        (expiry, latencies[(k % latencies.len() as u64) as usize])
    });
    LoopEnd {
        samples,
        started,
        last_woke: last.map_or(started, |(expiry, lat)| expiry + lat),
        last_latency: last.map(|(_, lat)| lat),
        error: None,
    }
}

#[cfg(test)]
mod tests;
