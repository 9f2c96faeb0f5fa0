//! The process's own settings and privileges: memory locking, timer slack, the effective
//! user and resource limits.

/// Locks every present and future page of the process in RAM (mlockall(2) with
/// `MCL_CURRENT | MCL_FUTURE`), so the measuring loop never takes a page fault.
pub fn lock_memory() -> std::io::Result<()> {
    // SAFETY: mlockall takes flags, no pointers.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Undoes [`lock_memory`] (munlockall(2)); unlocking memory that is not locked is no error.
pub fn unlock_memory() {
    // SAFETY: no arguments.
    unsafe { libc::munlockall() };
}

/// The calling thread's timer slack: how late the kernel may fire its timers to group them.
pub fn timer_slack_ns() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
    unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) as u64 }
}

/// Sets the calling thread's timer slack (0 restores the thread's default); read it back with
/// [`timer_slack_ns`] to know what was obtained.
pub fn set_timer_slack_ns(slack_ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes a value, no pointers.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, slack_ns as libc::c_ulong, 0, 0, 0) };
}

/// The effective user ID (0: root).
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// A resource limit that decides whether a real-time setting is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// RLIMIT_RTPRIO: the highest real-time priority an unprivileged thread may take.
    RtPrio,
    /// RLIMIT_MEMLOCK: how many bytes an unprivileged process may lock.
    MemLock,
    /// RLIMIT_NICE: 20 minus the lowest nice value an unprivileged thread may take.
    Nice,
}

/// The soft value of `limit` (`u64::MAX`: unlimited); None when it cannot be read.
pub fn soft_limit(limit: Limit) -> Option<u64> {
    let resource = match limit {
        Limit::RtPrio => libc::RLIMIT_RTPRIO,
        Limit::MemLock => libc::RLIMIT_MEMLOCK,
        Limit::Nice => libc::RLIMIT_NICE,
    };
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer.
    (unsafe { libc::getrlimit(resource, &mut lim) } == 0).then_some(lim.rlim_cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_slack_is_read_back_as_set() {
        std::thread::spawn(|| {
            set_timer_slack_ns(1);
            assert_eq!(timer_slack_ns(), 1);
            set_timer_slack_ns(123_000);
            assert_eq!(timer_slack_ns(), 123_000);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn limits_are_readable() {
        assert!(soft_limit(Limit::RtPrio).is_some());
        assert!(soft_limit(Limit::MemLock).is_some());
        assert!(soft_limit(Limit::Nice).is_some());
    }
}
