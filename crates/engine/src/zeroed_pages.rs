//! Zeroed memory straight from the kernel (an anonymous `mmap(2)`), whose pages become
//! resident only when first written: a histogram's thousands of counters cost memory only
//! for the values that occur (or the range a real-time loop writes to in advance).
//!
//! The allocator cannot promise that: glibc's `calloc` clears reused memory with `memset`,
//! which makes every page resident (and, under `mlockall`, locked). Anonymous mappings are
//! zero-filled on demand ("Anonymous mappings ... initialized to zero", `mmap(2)`).

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Integers for which the all-zero bit pattern is the value 0 (sealed: `u32`, `u64`).
pub trait Zeroed: Copy + sealed::Sealed {}
impl Zeroed for u32 {}
impl Zeroed for u64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// `N` zeroed `T`s in a mapping of their own.
pub(crate) struct ZeroedPages<T: Zeroed, const N: usize> {
    ptr: NonNull<[T; N]>,
}

// SAFETY: the mapping is owned exclusively, like a `Box<[T; N]>`.
unsafe impl<T: Zeroed + Send, const N: usize> Send for ZeroedPages<T, N> {}
// SAFETY: shared access only reads, like a `Box<[T; N]>`.
unsafe impl<T: Zeroed + Sync, const N: usize> Sync for ZeroedPages<T, N> {}

impl<T: Zeroed, const N: usize> ZeroedPages<T, N> {
    const BYTES: usize = std::mem::size_of::<[T; N]>();

    /// A fresh zeroed mapping; no page is resident yet.
    ///
    /// # Panics
    /// Aborts as an allocation failure does (`handle_alloc_error`) when the kernel refuses
    /// the mapping.
    pub(crate) fn new() -> Self {
        // SAFETY: a private anonymous mapping at an address the kernel picks; no file, no
        // existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                Self::BYTES.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        match NonNull::new(p.cast::<[T; N]>()) {
            Some(ptr) if p != libc::MAP_FAILED => ZeroedPages { ptr },
            _ => std::alloc::handle_alloc_error(std::alloc::Layout::new::<[T; N]>()),
        }
    }
}

impl<T: Zeroed, const N: usize> Default for ZeroedPages<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Zeroed, const N: usize> Drop for ZeroedPages<T, N> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, of that length, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), Self::BYTES.max(1)) };
    }
}

impl<T: Zeroed, const N: usize> Deref for ZeroedPages<T, N> {
    type Target = [T; N];
    fn deref(&self) -> &[T; N] {
        // SAFETY: the mapping is readable, aligned to a page, zero-filled (a valid [T; N]
        // for the sealed integer types) and owned by `self`.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: Zeroed, const N: usize> DerefMut for ZeroedPages<T, N> {
    fn deref_mut(&mut self) -> &mut [T; N] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: Zeroed, const N: usize> Clone for ZeroedPages<T, N> {
    fn clone(&self) -> Self {
        let mut copy = Self::new();
        copy.copy_from_slice(&self[..]);
        copy
    }
}

impl<T: Zeroed + std::fmt::Debug, const N: usize> std::fmt::Debug for ZeroedPages<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZeroedPages").field("len", &N).finish()
    }
}

#[cfg(test)]
impl<T: Zeroed, const N: usize> ZeroedPages<T, N> {
    /// Pages of the mapping resident now (`mincore(2)`).
    pub(crate) fn resident_pages(&self) -> usize {
        let pages = Self::BYTES.div_ceil(4096);
        let mut vec = vec![0u8; pages];
        // SAFETY: the mapping is page-aligned, `pages` pages long, and `vec` has one byte
        // per page.
        let rc = unsafe { libc::mincore(self.ptr.as_ptr().cast(), Self::BYTES, vec.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_written_pages_are_resident() {
        let mut a: ZeroedPages<u32, 4608> = ZeroedPages::new();
        assert_eq!(a.resident_pages(), 0);
        a[0] = 1;
        a[4000] = 1;
        assert_eq!(a.resident_pages(), 2);
    }

    #[test]
    fn zeroed_writable_cloned_and_freed() {
        let mut a: ZeroedPages<u64, 4608> = ZeroedPages::new();
        assert!(a.iter().all(|&c| c == 0));
        a[4607] = 7;
        a[0] = 1;
        let b = a.clone();
        assert_eq!((b[0], b[4607], b[1]), (1, 7, 0));
        drop(a);
        assert_eq!(b[4607], 7);
    }
}
