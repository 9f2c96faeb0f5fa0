//! The clock every probe reads, and its calibration.
//!
//! All measurement uses CLOCK_MONOTONIC through the vDSO (`clock_gettime`), which on x86 with
//! the TSC clocksource costs tens of nanoseconds and never enters the kernel.

use rtgauge_result::Calibration;

/// The clock reads and sleeps of the system layer, re-exported: the probes' clock is defined
/// once, in `rtgauge_os::clock`.
pub use rtgauge_os::clock::{
    now_ns, read_ns, resolution_ns, sleep_for, to_timespec, unix_ns, NS_PER_SEC,
};

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns`, resuming after signals
/// unless the run is being stopped (then it returns early; the caller's loop sees the stop
/// flag). See [`crate::signals::wake_on_stop`].
#[inline]
pub fn sleep_until(deadline_ns: u64) {
    while rtgauge_os::clock::sleep_until_once(deadline_ns) == libc::EINTR
        && !crate::signals::stop_requested()
    {}
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

/// The CPU's free-running counter (x86_64 TSC, aarch64 CNTVCT), read from user space without
/// entering the kernel: cheaper than even the vDSO clock, for loops that read time back to
/// back. Its rate must be measured against CLOCK_MONOTONIC by the caller.
pub mod counter {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn read() -> u64 {
        // SAFETY: rdtsc has no preconditions; `unavailable` checks it is not disabled.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    pub fn read() -> u64 {
        let ticks: u64;
        // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux (the vDSO itself reads it).
        unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) ticks) };
        ticks
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn read() -> u64 {
        0
    }

    /// Why the counter cannot serve as a clock here, if it cannot: no reader for this
    /// architecture, rdtsc forbidden to this process, or a TSC whose rate changes with the
    /// CPU's frequency or stops in idle states (no `constant_tsc`/`nonstop_tsc`).
    pub fn unavailable() -> Option<String> {
        if cfg!(target_arch = "aarch64") {
            return None;
        }
        if !cfg!(target_arch = "x86_64") {
            return Some(format!(
                "no cycle counter reader for {} in this build",
                std::env::consts::ARCH
            ));
        }
        if rtgauge_os::clock::tsc_forbidden() {
            return Some("this process may not execute rdtsc (prctl PR_SET_TSC)".into());
        }
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = cpuinfo
            .lines()
            .find(|l| l.starts_with("flags"))
            .unwrap_or_default();
        let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
        (!has("constant_tsc") || !has("nonstop_tsc"))
            .then(|| "the TSC lacks constant_tsc or nonstop_tsc (its rate is not steady)".into())
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
