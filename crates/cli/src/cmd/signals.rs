//! Ctrl-C, SIGTERM and SIGHUP, installed first thing in `main`.
//!
//! A command that can stop early and still finish properly (`run`, `clocks`, `monitor`,
//! `scenario run`, `doctor --measure`) claims the stop with [`stoppable`]: the first signal
//! then sets the flag it returns and is remembered ([`stop_signal`]) — the summary still
//! prints and result files are still written, or, when the stop came before anything was
//! measured, the command says `interrupted before measuring` and exits 128 + the signal
//! number ([`crate::exit::Failure::Interrupted`]). A second signal exits at once.
//!
//! Before a command has claimed the stop (while the command line is parsed and the command
//! set up) and on the second signal, the process exits at once with status 128 + the signal
//! number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, as shells report a death by that
//! signal) after removing every temporary file it owns (see
//! [`tickscope_report::output::remove_pending_files`]), so nothing half-written is left
//! beside a destination; before the claim it first prints `tickscope: interrupted before
//! measuring` (`tickscope: interrupted` for a command that [`measures_nothing`]). Only a
//! signal that arrives before `main` has installed the handlers gets the kernel's default
//! action (the process dies of it; a shell shows the same 128 + N).
//!
//! SIGHUP (the terminal went away) is handled as SIGTERM. The handlers only write to a
//! pipe (`signal-hook`'s iterator); the work happens on a thread of its own.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static CLAIMED: AtomicBool = AtomicBool::new(false);
/// Set by [`measures_nothing`]: an early signal then says `interrupted` alone.
static MEASURES_NOTHING: AtomicBool = AtomicBool::new(false);
/// The signal of the first claimed stop; 0 while there was none.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

fn flag() -> &'static Arc<AtomicBool> {
    STOP.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// The exit status of a process ended by signal `signal`: 128 + its number, as shells
/// report it (`bash(1)`, "EXIT STATUS"); 130 (SIGINT's) when no signal is known.
pub fn exit_status(signal: Option<i32>) -> i32 {
    128 + signal.unwrap_or(SIGINT)
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
            for signal in signals.forever() {
                let claimed = CLAIMED.load(Ordering::SeqCst);
                if claimed
                    && SIGNAL
                        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                {
                    flag().store(true, Ordering::SeqCst);
                    continue; // the first stop of a stoppable command
                }
                match (claimed, MEASURES_NOTHING.load(Ordering::SeqCst)) {
                    (true, _) => {}
                    (false, false) => eprintln!("tickscope: interrupted before measuring"),
                    (false, true) => eprintln!("tickscope: interrupted"),
                }
                tickscope_report::output::remove_pending_files();
                tickscope_engine::child::kill_all_now();
                tickscope_explain::tracefs::remove_all_now();
                std::process::exit(exit_status(Some(signal)));
            }
        })?;
    Ok(())
}

/// Claims the first stop signal for the calling command and returns the flag it sets.
pub fn stoppable() -> Arc<AtomicBool> {
    CLAIMED.store(true, Ordering::SeqCst);
    Arc::clone(flag())
}

/// Marks the command as one that measures nothing (`report`, `hlog`, …): a signal then
/// says `tickscope: interrupted`, not `… before measuring`.
pub fn measures_nothing() {
    MEASURES_NOTHING.store(true, Ordering::SeqCst);
}

/// The signal that stopped a stoppable command (SIGINT, SIGTERM or SIGHUP); `None` when
/// there was none or the stop was [`request_stop`]'s.
pub fn stop_signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Asks a stoppable command to stop as a first signal would (standard output was closed).
pub fn request_stop() {
    flag().store(true, Ordering::SeqCst);
}
