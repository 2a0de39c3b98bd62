//! The node_exporter textfile of `tickscope monitor` (`--textfile FILE`): the metrics
//! rewritten every `--textfile-interval` through [`tickscope_report::Output`] (temporary file,
//! sync, rename: a reader sees the old file or the new one, never half of one — the textfile
//! collector's own advice, <https://github.com/prometheus/node_exporter#textfile-collector>).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tickscope_report::sink::prometheus::Exposition;
use tickscope_report::{quoted, Output};

/// Rewrites `out` with `expo` every `every` until `done`, then once more (the last values),
/// on a thread named `tickscope-textfile`, pinned to `cpus` when given. The thread's result
/// is the first write error, as one sentence.
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
                if let Err(e) = crate::housekeeping::pin_current(c) {
                    eprintln!("tickscope: cannot pin the textfile thread: {e}");
                }
            }
            let q = quoted(out.path());
            let mut next = Instant::now() + every;
            while !done.load(Ordering::Relaxed) {
                if Instant::now() >= next {
                    out.checkpoint(&expo.encode())
                        .map_err(|e| format!("--textfile: cannot write {q}: {e}"))?;
                    next += every;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            out.finish(&expo.encode())
                .map_err(|e| format!("--textfile: cannot write {q}: {e}"))
        })
}
