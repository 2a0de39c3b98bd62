//! A BPF array map created with `BPF_F_MMAPABLE`, mapped into this process: single aligned
//! words of its values are written in place, with no bpf(2) call and without touching the
//! rest of the value, which the programs may be writing meanwhile ("BPF_MAP_TYPE_ARRAY",
//! <https://docs.kernel.org/bpf/map_array.html>: "BPF_F_MMAPABLE … the array's memory can
//! be mmap'ed"; mmap(2)).

use std::os::fd::AsRawFd;
use std::os::fd::BorrowedFd;

/// The mapping of an mmapable array: `len` bytes from `base`, unmapped on drop.
pub(crate) struct SharedArray {
    base: *mut u8,
    len: usize,
    /// Bytes per value (the kernel rounds a value up to 8 bytes: kernel/bpf/arraymap.c
    /// `elem_size`).
    stride: usize,
    entries: usize,
}

// SAFETY: the mapping is owned by this value alone and only written through `&mut self`;
// moving it to another thread moves that ownership.
unsafe impl Send for SharedArray {}

impl SharedArray {
    /// Maps the array of map `fd`: `entries` values of `value_size` bytes.
    ///
    /// # Errors
    /// mmap(2)'s refusal: `EINVAL` when the map was not created mmapable, `EPERM` without
    /// the right to map it.
    pub(crate) fn map(
        fd: BorrowedFd<'_>,
        entries: usize,
        value_size: usize,
    ) -> std::io::Result<Self> {
        let stride = value_size.div_ceil(8) * 8;
        // SAFETY: sysconf has no memory effects.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .unwrap_or(4096)
            .max(1);
        let len = (stride * entries).div_ceil(page) * page;
        // SAFETY: a new shared mapping of the map's memory, at an address the kernel
        // chooses; nothing else refers to it yet.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(SharedArray {
            base: base.cast(),
            len,
            stride,
            entries,
        })
    }

    /// Stores `value` into 8-byte word `word` of value `index`, in place: one aligned
    /// 8-byte store, which a program reading the word sees whole, old or new (x86-64 and
    /// arm64 guarantee it for aligned 8-byte accesses). Returns whether the word exists.
    pub(crate) fn store(&mut self, index: usize, word: usize, value: u64) -> bool {
        if index >= self.entries || (word + 1) * 8 > self.stride {
            return false;
        }
        // SAFETY: index and word were checked against the mapping, which is 8-aligned (a
        // page) with 8-aligned values; the volatile store keeps it a single store.
        unsafe {
            let at = self.base.add(index * self.stride + word * 8).cast::<u64>();
            std::ptr::write_volatile(at, value);
        }
        true
    }

    /// Reads 8-byte word `word` of value `index` (`None` outside the array).
    #[cfg(test)]
    pub(crate) fn load(&self, index: usize, word: usize) -> Option<u64> {
        if index >= self.entries || (word + 1) * 8 > self.stride {
            return None;
        }
        // SAFETY: as in `store`.
        Some(unsafe {
            std::ptr::read_volatile(self.base.add(index * self.stride + word * 8).cast::<u64>())
        })
    }
}

impl Drop for SharedArray {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, of this length, used by nobody after this.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn words_outside_the_array_are_refused_and_an_anonymous_mapping_takes_stores() {
        // Any shared mappable descriptor serves for the arithmetic: a memfd of 4 pages (the
        // array takes 3).
        let fd = memfd();
        let mut a = SharedArray::map(fd.as_fd(), 100, 92).unwrap();
        assert_eq!(a.stride, 96, "a value is rounded up to 8 bytes");
        assert!(a.store(99, 11, 7));
        assert_eq!(a.load(99, 11), Some(7));
        assert_eq!(a.load(99, 10), Some(0), "the neighbour word untouched");
        assert!(!a.store(100, 0, 1));
        assert!(!a.store(0, 12, 1));
        assert_eq!(a.load(0, 12), None);
    }

    fn memfd() -> std::os::fd::OwnedFd {
        use std::os::fd::FromRawFd;
        // SAFETY: a name and flags; the kernel returns a new descriptor or -1.
        let raw = unsafe { libc::memfd_create(c"bpf-shared-test".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(raw >= 0);
        // SAFETY: just created, owned here.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        // SAFETY: ftruncate on our own descriptor.
        assert_eq!(unsafe { libc::ftruncate(fd.as_raw_fd(), 4 * 4096) }, 0);
        fd
    }
}
