//! Ctrl-C and SIGTERM: the first asks the run to stop (the summary still prints and result
//! files are still written); the second exits at once with status 130.

use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Installs the handlers and returns the flag they set.
///
/// # Errors
/// The OS error if a handler cannot be installed.
pub fn stop_flag() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Order matters: the conditional exit sees the flag before this signal sets it.
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))?;
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    Ok(stop)
}
