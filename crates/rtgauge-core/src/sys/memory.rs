//! Anonymous memory: pages, and regions faulted in (and locked) before measuring.

use crate::probe::ProbeError;
use crate::units::format_size;

pub fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to) * to
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no pointer arguments.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// Anonymous memory of `len` bytes, faulted in now (and locked if `lock`), released on drop.
pub struct Region {
    pub ptr: *mut u8,
    pub len: usize,
    /// Why mlock failed, when it was asked for and refused.
    pub lock_error: Option<String>,
}

impl Region {
    pub fn new(probe: &'static str, len: usize, lock: bool) -> Result<Region, ProbeError> {
        // SAFETY: anonymous private mapping, no file; checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(ProbeError::os(
                probe,
                format!(
                    "mapping {} of memory (lower the sizes, or free memory)",
                    format_size(len as u64)
                ),
            ));
        }
        let ptr = ptr as *mut u8;
        // MAP_POPULATE is advisory; writing every page guarantees private, writable, present
        // pages (no copy-on-write of the zero page later).
        let page = page_size();
        let mut off = 0;
        while off < len {
            // SAFETY: off < len, inside the mapping.
            unsafe { ptr.add(off).write_volatile(0) };
            off += page;
        }
        // SAFETY: the range is the mapping just created.
        let lock_error = (lock && unsafe { libc::mlock(ptr as *const _, len) } != 0)
            .then(|| std::io::Error::last_os_error().to_string());
        Ok(Region {
            ptr,
            len,
            lock_error,
        })
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping created in new(); nothing points into it any more.
        unsafe { libc::munmap(self.ptr as *mut _, self.len) };
    }
}
