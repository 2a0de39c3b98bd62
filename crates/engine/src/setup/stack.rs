//! Pre-faulting the measuring thread's stack, so the loop never touches a fresh stack page.

/// Bytes of stack touched by [`prefault_stack`]; measuring threads get a stack at least
/// four times as large.
pub const PREFAULT_BYTES: usize = 256 * 1024;

/// Writes to [`PREFAULT_BYTES`] of the calling thread's stack below the current frame, so
/// those pages are mapped (and, under `mlockall`, locked) before the measuring loop starts.
#[inline(never)]
pub fn prefault_stack() {
    let mut buf = [0u8; PREFAULT_BYTES];
    // One write per 4 KiB page is enough; black_box keeps the writes from being removed.
    for i in (0..PREFAULT_BYTES).step_by(4096) {
        buf[i] = 1;
    }
    std::hint::black_box(&buf);
}
