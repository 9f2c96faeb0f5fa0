//! A POSIX mutex with a chosen priority protocol (`PTHREAD_PRIO_INHERIT` or none): the
//! shared resources of the task-set probe, locked the way a real-time application would.

use std::cell::UnsafeCell;
use std::io;

/// A process-private pthread mutex, heap-allocated so it never moves once initialised.
pub struct PriorityMutex {
    inner: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be shared between threads; all access goes through
// pthread_mutex_lock/unlock.
unsafe impl Send for PriorityMutex {}
unsafe impl Sync for PriorityMutex {}

impl PriorityMutex {
    /// A mutex whose holder inherits the priority of its highest waiter when `inherit`.
    pub fn new(inherit: bool) -> io::Result<PriorityMutex> {
        // SAFETY: the attribute and the mutex are initialised before use and the attribute
        // destroyed after; the mutex lives in a Box that is never moved out of.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            let rc = libc::pthread_mutexattr_init(&mut attr);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            let protocol = if inherit {
                libc::PTHREAD_PRIO_INHERIT
            } else {
                libc::PTHREAD_PRIO_NONE
            };
            let rc = libc::pthread_mutexattr_setprotocol(&mut attr, protocol);
            if rc != 0 {
                libc::pthread_mutexattr_destroy(&mut attr);
                return Err(io::Error::from_raw_os_error(rc));
            }
            let inner = Box::new(UnsafeCell::new(std::mem::zeroed()));
            let rc = libc::pthread_mutex_init(inner.get(), &attr);
            libc::pthread_mutexattr_destroy(&mut attr);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(PriorityMutex { inner })
        }
    }

    /// Blocks until the calling thread holds the mutex.
    #[inline]
    pub fn lock(&self) {
        // SAFETY: initialised in new(); the calling thread unlocks it with unlock().
        unsafe { libc::pthread_mutex_lock(self.inner.get()) };
    }

    /// Releases the mutex the calling thread holds.
    #[inline]
    pub fn unlock(&self) {
        // SAFETY: as in lock(); only called by the holder.
        unsafe { libc::pthread_mutex_unlock(self.inner.get()) };
    }
}

impl Drop for PriorityMutex {
    fn drop(&mut self) {
        // SAFETY: no thread holds or waits for it any more (we own it exclusively).
        unsafe { libc::pthread_mutex_destroy(self.inner.get()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn both_protocols_exclude_each_other() {
        for inherit in [true, false] {
            let m = PriorityMutex::new(inherit).unwrap();
            let inside = AtomicU64::new(0);
            let most = AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for _ in 0..2000 {
                            m.lock();
                            let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(n, Ordering::SeqCst);
                            inside.fetch_sub(1, Ordering::SeqCst);
                            m.unlock();
                        }
                    });
                }
            });
            assert_eq!(most.load(Ordering::SeqCst), 1);
        }
    }
}
