//! Clocks: reading CLOCK_MONOTONIC (through the vDSO: no system call on common hardware) and
//! the other clocks, their resolution, and sleeps on CLOCK_MONOTONIC.

pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Reads a clock in nanoseconds.
#[inline(always)]
pub fn read_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; the clock ids used are always supported on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * NS_PER_SEC + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC now, in nanoseconds: the clock of every probe, of the trace's `mono`
/// clock and of instrumented applications' records.
#[inline(always)]
pub fn now_ns() -> u64 {
    read_ns(libc::CLOCK_MONOTONIC)
}

/// Whether this process is forbidden to read the CPU's time-stamp counter (x86's rdtsc
/// faults: prctl PR_SET_TSC was set to PR_TSC_SIGSEGV). False where the question does not
/// apply (other architectures, older kernels).
pub fn tsc_forbidden() -> bool {
    let mut mode: libc::c_int = 0;
    // SAFETY: PR_GET_TSC writes one int through the pointer.
    let rc = unsafe { libc::prctl(libc::PR_GET_TSC, &mut mode as *mut libc::c_int) };
    rc == 0 && mode == libc::PR_TSC_SIGSEGV
}

/// CPU time the calling thread has consumed (CLOCK_THREAD_CPUTIME_ID), in nanoseconds: what
/// a busy loop has really had of the CPU, whatever preempted it or the CPU's clock rate.
#[inline(always)]
pub fn thread_cpu_ns() -> u64 {
    read_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CLOCK_REALTIME now (ns since the Unix epoch), for wall-clock stamps in documents.
pub fn unix_ns() -> u64 {
    read_ns(libc::CLOCK_REALTIME)
}

pub fn to_timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / NS_PER_SEC) as libc::time_t,
        tv_nsec: (ns % NS_PER_SEC) as libc::c_long,
    }
}

/// One absolute sleep until the CLOCK_MONOTONIC time `deadline_ns`; returns 0, or the error
/// number (`EINTR` when a signal ended it early: the caller decides whether to sleep again).
#[inline]
pub fn sleep_until_once(deadline_ns: u64) -> i32 {
    let ts = to_timespec(deadline_ns);
    // SAFETY: ts is valid; a null remainder is allowed with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    }
}

/// Sleeps for `ns` relative to now (one-shot; an interrupted sleep is not resumed).
#[inline]
pub fn sleep_for(ns: u64) {
    let ts = to_timespec(ns);
    // SAFETY: ts is valid; the remainder may be null.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}

/// Resolution of a clock (clock_getres), in ns.
pub fn resolution_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer.
    (unsafe { libc::clock_getres(clock, &mut ts) } == 0)
        .then(|| ts.tv_sec as u64 * NS_PER_SEC + ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_time_does_not_go_back_and_sleeps_reach_their_deadline() {
        let a = now_ns();
        assert_eq!(sleep_until_once(a + 1_000_000), 0);
        let b = now_ns();
        assert!(b >= a + 1_000_000, "woke {} ns after the start", b - a);
        assert!(resolution_ns(libc::CLOCK_MONOTONIC).is_some_and(|r| r > 0));
        // A sleeping thread consumes (almost) no CPU time; a spinning one does.
        let cpu = thread_cpu_ns();
        assert_eq!(sleep_until_once(now_ns() + 20_000_000), 0);
        assert!(thread_cpu_ns() - cpu < 10_000_000);
        let cpu = thread_cpu_ns();
        while thread_cpu_ns() - cpu < 2_000_000 {}
        assert!(thread_cpu_ns() - cpu >= 2_000_000);
    }
}
