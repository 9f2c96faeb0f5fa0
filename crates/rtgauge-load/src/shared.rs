//! Counters shared between the parent and its workers: one anonymous memory file (memfd)
//! mapped by both, one cache-line-aligned slot per worker. A worker adds to its counters with
//! relaxed atomics as it goes, so the parent can read achieved work at any moment, and nothing
//! is lost when a worker is killed at stop.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use crate::sys::check;

pub(crate) const COUNTERS: usize = 8;
const MSG_LEN: usize = 440;

pub(crate) const STARTING: u32 = 0;
pub(crate) const RUNNING: u32 = 1;
pub(crate) const FAILED: u32 = 2;

/// One worker's counters, state and last message (an error, or a warning while running).
/// All fields are atomics because another process reads or writes them concurrently.
#[repr(C, align(64))]
pub(crate) struct Slot {
    state: AtomicU32,
    msg_len: AtomicU32,
    counters: [AtomicU64; COUNTERS],
    msg: [AtomicU8; MSG_LEN],
}

impl Slot {
    pub fn add(&self, counter: usize, n: u64) {
        self.counters[counter].fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self, counter: usize) -> u64 {
        self.counters[counter].load(Ordering::Relaxed)
    }

    pub fn snapshot(&self) -> [u64; COUNTERS] {
        std::array::from_fn(|i| self.get(i))
    }

    pub fn state(&self) -> u32 {
        self.state.load(Ordering::Acquire)
    }

    /// Records a message (truncated on a character boundary); published by the next state
    /// store, or by `msg_len` for a warning.
    pub fn set_message(&self, text: &str) {
        let mut len = text.len().min(MSG_LEN);
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        for (cell, byte) in self.msg.iter().zip(&text.as_bytes()[..len]) {
            cell.store(*byte, Ordering::Relaxed);
        }
        self.msg_len.store(len as u32, Ordering::Release);
    }

    pub fn message(&self) -> Option<String> {
        let len = (self.msg_len.load(Ordering::Acquire) as usize).min(MSG_LEN);
        if len == 0 {
            return None;
        }
        let bytes: Vec<u8> = self.msg[..len]
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The worker is set up and generating load.
    pub fn set_running(&self) {
        self.state.store(RUNNING, Ordering::Release);
    }

    pub fn fail(&self, text: &str) {
        self.set_message(text);
        self.state.store(FAILED, Ordering::Release);
    }
}

/// A shared mapping of `len` slots.
pub(crate) struct Region {
    ptr: *mut Slot,
    len: usize,
    /// Kept by the parent so it can hand the file to workers; workers close theirs.
    fd: Option<OwnedFd>,
}

// SAFETY: the mapping is only accessed through `&Slot`, whose fields are all atomics.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// Parent side: a fresh zeroed memory file (every slot STARTING) with `len` slots.
    pub fn create(len: usize) -> io::Result<Region> {
        let len = len.max(1);
        // SAFETY: the name is NUL-terminated; MFD_CLOEXEC keeps the file out of unrelated
        // children: a worker's pre-exec hook clears the flag in that child only.
        let fd = check(unsafe { libc::memfd_create(c"rtgauge-load".as_ptr(), libc::MFD_CLOEXEC) })?;
        // SAFETY: memfd_create returned a new descriptor we now own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // A process started with a closed stdin/stdout/stderr would get 0-2 here, which the
        // child's stdio set-up overwrites before exec: move it to 3 or above.
        let fd = if fd.as_raw_fd() <= 2 {
            // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor we own; the old one is dropped.
            let moved = check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) })?;
            // SAFETY: as above.
            unsafe { OwnedFd::from_raw_fd(moved) }
        } else {
            fd
        };
        let bytes = len * std::mem::size_of::<Slot>();
        // SAFETY: plain syscall on our descriptor.
        check(unsafe { libc::ftruncate(fd.as_raw_fd(), bytes as libc::off_t) })?;
        let ptr = map(fd.as_raw_fd(), bytes)?;
        Ok(Region {
            ptr,
            len,
            fd: Some(fd),
        })
    }

    /// Worker side: maps the file passed as `fd`, then closes the descriptor so that programs
    /// the worker starts (`exec:`, the compiler) do not inherit it.
    pub fn open(fd: RawFd) -> io::Result<Region> {
        // SAFETY: the parent passed us this descriptor to own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: fstat writes into `st`, plain data.
        let st = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            check(libc::fstat(fd.as_raw_fd(), &mut st))?;
            st
        };
        let bytes = st.st_size as usize;
        let len = bytes / std::mem::size_of::<Slot>();
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the counters file is empty",
            ));
        }
        let ptr = map(fd.as_raw_fd(), len * std::mem::size_of::<Slot>())?;
        Ok(Region { ptr, len, fd: None })
    }

    pub fn slot(&self, index: usize) -> Option<&Slot> {
        // SAFETY: index < len slots are inside the mapping, which lives as long as self; the
        // zero bit pattern and any other are valid for atomics.
        (index < self.len).then(|| unsafe { &*self.ptr.add(index) })
    }

    pub fn raw_fd(&self) -> Option<RawFd> {
        self.fd.as_ref().map(AsRawFd::as_raw_fd)
    }
}

fn map(fd: RawFd, bytes: usize) -> io::Result<*mut Slot> {
    // SAFETY: a new shared mapping of our file; the kernel picks the (page-aligned, hence
    // Slot-aligned) address.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(ptr.cast())
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: ptr/len describe the mapping made in create/open; no reference outlives self.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len * std::mem::size_of::<Slot>());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_start_zeroed_and_keep_messages() {
        let region = Region::create(3).unwrap();
        let slot = region.slot(2).unwrap();
        assert_eq!(slot.state(), STARTING);
        assert_eq!(slot.message(), None);
        slot.add(1, 5);
        assert_eq!(slot.snapshot()[1], 5);
        slot.fail(&"é".repeat(200));
        assert_eq!(slot.state(), FAILED);
        assert!(slot.message().unwrap().len() <= MSG_LEN);
        assert!(region.slot(3).is_none());
    }
}
