//! The node_exporter textfile of `tickscope monitor` (`--textfile FILE`): the metrics
//! rewritten every `--textfile-interval` through [`tickscope_report::Output`] (temporary file,
//! sync, rename: a reader sees the old file or the new one, never half of one — the textfile
//! collector's own advice, <https://github.com/prometheus/node_exporter#textfile-collector>).
//!
//! A failed rewrite (a full disk, a directory made read-only) leaves the previous file in
//! place, is said at once on standard error — once per distinct error, not every interval —
//! and counted in `tickscope_output_errors_total{output="textfile"}`; the next interval tries
//! again, and the first rewrite that succeeds after a failure is said too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tickscope_report::sink::prometheus::Exposition;
use tickscope_report::{quoted, Output};

/// The `output` label of the textfile's errors in `tickscope_output_errors_total`.
pub const OUTPUT_LABEL: &str = "textfile";

/// Rewrites `out` with `expo` every `every` until `done`, then once more (the last values),
/// on a thread named `tickscope-textfile`, pinned to `cpus` when given. A failed rewrite is
/// reported, counted and retried (see the module docs). The thread's result is the error of
/// the last write, as one sentence.
///
/// # Errors
/// The OS error when the thread cannot be started.
pub fn spawn(
    mut out: Output,
    expo: Exposition,
    every: Duration,
    done: Arc<AtomicBool>,
    cpus: Option<Vec<usize>>,
) -> std::io::Result<JoinHandle<Result<(), String>>> {
    std::thread::Builder::new()
        .name("tickscope-textfile".into())
        .spawn(move || {
            if let Some(c) = &cpus {
                if let Err(e) = tickscope_session::housekeeping::pin_current(c) {
                    eprintln!("tickscope: cannot pin the textfile thread: {e}");
                }
            }
            expo.watch_output(OUTPUT_LABEL);
            let q = quoted(out.path());
            let mut failing: Option<String> = None;
            let mut next = Instant::now() + every;
            while !done.load(Ordering::Relaxed) {
                let now = Instant::now();
                if now >= next {
                    match out.checkpoint(&expo.encode()) {
                        Ok(()) => {
                            if let Some(e) = failing.take() {
                                eprintln!("tickscope: --textfile: {q} written again (after: {e})");
                            }
                        }
                        Err(e) => {
                            expo.output_failed(OUTPUT_LABEL);
                            let e = e.to_string();
                            if failing.as_ref() != Some(&e) {
                                eprintln!(
                                    "tickscope: --textfile: cannot write {q}: {e}; the previous \
                                     file stays, retrying every {}",
                                    humantime(every)
                                );
                            }
                            failing = Some(e);
                        }
                    }
                    next += every;
                    if next <= now {
                        // After a stall (a slow disk): one interval from now, not a burst.
                        next = now + every;
                    }
                }
                std::thread::sleep(Duration::from_millis(100).min(every));
            }
            out.finish(&expo.encode())
                .map_err(|e| format!("--textfile: cannot write {q}: {e}"))
        })
}

/// `every` as the user writes it: whole seconds as `15s`, else milliseconds.
fn humantime(every: Duration) -> String {
    match every.subsec_millis() {
        0 => format!("{}s", every.as_secs()),
        _ => format!("{}ms", every.as_millis()),
    }
}
