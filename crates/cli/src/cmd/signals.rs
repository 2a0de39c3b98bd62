//! Ctrl-C, SIGTERM and SIGHUP, installed first thing in `main`.
//!
//! A command that can stop early and still finish properly (`run`, `clocks`) claims the
//! stop with [`stoppable`]: the first signal then sets the flag it returns — the summary
//! still prints and result files are still written — and a second one exits at once. For
//! any other command, or on the second signal, the process exits at once with status 130
//! after removing every temporary file it owns (see
//! [`tickscope_report::output::remove_pending_files`]), so nothing half-written is left
//! beside a destination.
//!
//! SIGHUP (the terminal went away) is handled as SIGTERM. The handlers only write to a
//! pipe (`signal-hook`'s iterator); the work happens on a thread of its own.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Exit status of an immediate exit: 128 + SIGINT, as shells report it.
pub const IMMEDIATE_EXIT_STATUS: i32 = 130;

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static CLAIMED: AtomicBool = AtomicBool::new(false);

fn flag() -> &'static Arc<AtomicBool> {
    STOP.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Installs the handlers. Call once, before anything else.
///
/// # Errors
/// The OS error if a handler or its thread cannot be set up.
pub fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("tickscope-signals".into())
        // Under mlockall a thread's whole stack is resident: keep this idle one small.
        .stack_size(64 * 1024)
        .spawn(move || {
            for _ in signals.forever() {
                if CLAIMED.load(Ordering::SeqCst) && !flag().swap(true, Ordering::SeqCst) {
                    continue; // the first stop of a stoppable command
                }
                tickscope_report::output::remove_pending_files();
                crate::load::child::kill_all_now();
                tickscope_explain::tracefs::remove_all_now();
                std::process::exit(IMMEDIATE_EXIT_STATUS);
            }
        })?;
    Ok(())
}

/// Claims the first stop signal for the calling command and returns the flag it sets.
pub fn stoppable() -> Arc<AtomicBool> {
    CLAIMED.store(true, Ordering::SeqCst);
    Arc::clone(flag())
}

/// Asks a stoppable command to stop as a first signal would (standard output was closed).
pub fn request_stop() {
    flag().store(true, Ordering::SeqCst);
}
