//! The clock every probe reads, and its calibration.
//!
//! All measurement uses CLOCK_MONOTONIC through the vDSO (`clock_gettime`), which on x86 with
//! the TSC clocksource costs tens of nanoseconds and never enters the kernel.

use rtgauge_result::Calibration;

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

/// CLOCK_MONOTONIC now, in nanoseconds.
#[inline(always)]
pub fn now_ns() -> u64 {
    read_ns(libc::CLOCK_MONOTONIC)
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

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns`, resuming after signals
/// unless the run is being stopped (then it returns early; the caller's loop sees the stop
/// flag). See [`crate::signals::wake_on_stop`].
#[inline]
pub fn sleep_until(deadline_ns: u64) {
    let ts = to_timespec(deadline_ns);
    // SAFETY: ts is valid; a null remainder is allowed with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
        && !crate::signals::stop_requested()
    {}
}

/// Sleeps for `ns` relative to now (one-shot; an interrupted sleep is not resumed).
#[inline]
pub fn sleep_for(ns: u64) {
    let ts = to_timespec(ns);
    // SAFETY: as above.
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

/// Measures the cost of one CLOCK_MONOTONIC read: `reads` back-to-back pairs, each difference
/// is the cost of one read (plus loop overhead, which is part of any probe's bookkeeping too).
pub fn calibrate(reads: usize) -> Calibration {
    let reads = reads.max(3);
    let mut costs = vec![0u64; reads];
    // Warm the vDSO page and the caches first.
    for _ in 0..1000 {
        std::hint::black_box(now_ns());
    }
    for cost in costs.iter_mut() {
        let a = now_ns();
        let b = now_ns();
        *cost = b.saturating_sub(a);
    }
    costs.sort_unstable();
    Calibration {
        clock: "CLOCK_MONOTONIC".into(),
        clocksource: rtgauge_sysinfo::collect().clocksource,
        reads: reads as u64,
        read_cost_min_ns: costs[0],
        read_cost_median_ns: costs[reads / 2],
        read_cost_max_ns: costs[reads - 1],
        resolution_ns: resolution_ns(libc::CLOCK_MONOTONIC).unwrap_or(0),
    }
}

/// The counter this architecture's kernels prefer as clocksource.
pub fn preferred_clocksource() -> &'static str {
    if cfg!(target_arch = "x86_64") || cfg!(target_arch = "x86") {
        "tsc"
    } else if cfg!(target_arch = "aarch64") || cfg!(target_arch = "arm") {
        "arch_sys_counter"
    } else if cfg!(target_arch = "riscv64") {
        "riscv_clocksource"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances_and_sleep_until_waits() {
        let a = now_ns();
        sleep_until(a + 2_000_000);
        let b = now_ns();
        assert!(b >= a + 2_000_000);
    }

    #[test]
    fn calibration_orders_its_statistics() {
        let c = calibrate(10_000);
        assert!(c.read_cost_min_ns <= c.read_cost_median_ns);
        assert!(c.read_cost_median_ns <= c.read_cost_max_ns);
        assert!(c.resolution_ns >= 1);
        assert_eq!(c.reads, 10_000);
    }
}
