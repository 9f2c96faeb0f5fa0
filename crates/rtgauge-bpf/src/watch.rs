//! The watch slots: per CPU, the measured thread and its next programmed wake-up, shared with
//! the BPF program through a mapping of the `watches` map (BPF_F_MMAPABLE). The measuring
//! thread tells the kernel when it meant to wake with one store per period, no system call;
//! the program sends the CPU's ring to user space only when that wake-up was late.

use crate::ring::RawRing;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One slot as the program sees it (must match `struct watch` in src/bpf/recorder.bpf.c).
#[repr(C)]
pub(crate) struct RawWatch {
    programmed: AtomicU64,
    threshold: AtomicU64,
    tid: AtomicU32,
    late: AtomicU32,
    woke: AtomicU64,
    late_programmed: AtomicU64,
}

/// The mapping of every CPU's slot; unmapped when dropped.
pub(crate) struct WatchMapping {
    base: *mut RawWatch,
    len: usize,
    cpus: u32,
}

// SAFETY: the slots are atomics in shared memory; the mapping itself is not moved.
unsafe impl Send for WatchMapping {}
unsafe impl Sync for WatchMapping {}

impl WatchMapping {
    /// Maps the `watches` map of `cpus` slots from its descriptor.
    pub(crate) fn new(fd: std::os::fd::BorrowedFd<'_>, cpus: u32) -> std::io::Result<Self> {
        use std::os::fd::AsRawFd;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = (std::mem::size_of::<RawWatch>() * cpus as usize).div_ceil(page) * page;
        // SAFETY: a fresh shared mapping of a map descriptor that stays open (the caller keeps
        // the map); checked for failure below.
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
        Ok(WatchMapping {
            base: base.cast(),
            len,
            cpus,
        })
    }

    /// The slot of `cpu`, if the mapping covers it.
    pub(crate) fn slot(&self, cpu: u32) -> Option<&RawWatch> {
        // SAFETY: in bounds (checked), the mapping lives as long as self, atomics only.
        (cpu < self.cpus).then(|| unsafe { &*self.base.add(cpu as usize) })
    }
}

impl Drop for WatchMapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new, no references outlive self.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The measuring thread's handle on its CPU's slot.
pub struct Watch<'a> {
    pub(crate) slot: &'a RawWatch,
}

impl Watch<'_> {
    /// Watches `tid`: a switch to it more than `threshold_ns` after its programmed wake-up is
    /// a spike.
    pub fn start(&self, tid: u32, threshold_ns: u64) {
        self.slot.programmed.store(0, Ordering::Relaxed);
        self.slot.late.store(0, Ordering::Relaxed);
        self.slot.threshold.store(threshold_ns, Ordering::Relaxed);
        self.slot.tid.store(tid, Ordering::Release);
    }

    /// The next wake-up the thread asks for (CLOCK_MONOTONIC ns): one store, for the hot loop.
    #[inline]
    pub fn programmed(&self, ns: u64) {
        self.slot.programmed.store(ns, Ordering::Release);
    }

    /// A new threshold for the thread already watched (its floor moved: a new maximum).
    #[inline]
    pub fn threshold(&self, threshold_ns: u64) {
        self.slot.threshold.store(threshold_ns, Ordering::Relaxed);
    }

    /// Stops watching.
    pub fn stop(&self) {
        self.slot.tid.store(0, Ordering::Release);
    }
}

/// A late wake-up as the kernel saw it, with its CPU's last events.
pub struct Spike {
    pub cpu: u32,
    pub tid: u32,
    /// The wake-up asked for (CLOCK_MONOTONIC ns).
    pub programmed_ns: u64,
    /// When the thread was switched in.
    pub woke_ns: u64,
    /// The CPU's ring when the thread left the CPU again.
    pub ring: Box<RawRing>,
}

const SPIKE_HEADER: usize = 24;

impl Spike {
    /// Reads a spike from a ring-buffer item (header then ring, as the program writes it).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Spike> {
        if bytes.len() < SPIKE_HEADER + std::mem::size_of::<RawRing>() {
            return None;
        }
        let u32_at = |i: usize| u32::from_ne_bytes(bytes[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_ne_bytes(bytes[i..i + 8].try_into().unwrap());
        // SAFETY: the length is checked above; RawRing is plain data valid for any bits;
        // read_unaligned makes no alignment assumption.
        let ring =
            unsafe { std::ptr::read_unaligned(bytes[SPIKE_HEADER..].as_ptr().cast::<RawRing>()) };
        Some(Spike {
            cpu: u32_at(0),
            tid: u32_at(4),
            programmed_ns: u64_at(8),
            woke_ns: u64_at(16),
            ring: Box::new(ring),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_layout_matches_the_program() {
        assert_eq!(std::mem::size_of::<RawWatch>(), 40);
    }

    #[test]
    fn a_short_item_is_no_spike() {
        assert!(Spike::from_bytes(&[0; 100]).is_none());
    }
}
