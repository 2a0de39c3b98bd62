//! Pre-faulting the measuring thread's stack, so the loop never touches a fresh stack page.

/// Bytes of stack touched by [`prefault_stack`]: 64 KiB. The measuring loop's frames are small
/// (the wait, one record, the grid, no recursion); the Linux Foundation's real-time how-to pre-faults
/// 8 KiB ("HOWTO build a simple RT application", `MAX_SAFE_STACK`,
/// <https://wiki.linuxfoundation.org/realtime/documentation/howto/applications/application_base>).
/// Every byte of it stays resident for the run (and locked under `mlockall`), so it is not
/// larger than that margin needs.
pub(crate) const PREFAULT_BYTES: usize = 64 * 1024;

/// Stack size of a measuring thread: 1 MiB, of which only the pages used are resident. The
/// set-up before the loop (method creation, scheduling, reading the thread's state) runs on
/// it too.
pub(crate) const THREAD_STACK_BYTES: usize = 1024 * 1024;

/// Writes to [`PREFAULT_BYTES`] of the calling thread's stack below the current frame, so
/// those pages are mapped (and, under `mlockall`, locked) before the measuring loop starts.
#[inline(never)]
pub(crate) fn prefault_stack() {
    let mut buf = [0u8; PREFAULT_BYTES];
    // One write per 4 KiB page is enough; black_box keeps the writes from being removed.
    for i in (0..PREFAULT_BYTES).step_by(4096) {
        buf[i] = 1;
    }
    std::hint::black_box(&buf);
}
