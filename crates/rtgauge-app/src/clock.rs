//! The clock of the records. Reading CLOCK_MONOTONIC through the vDSO costs about 33 ns on
//! the development VM, and an interval reads it twice; the CPU's own counter (x86 TSC, arm64
//! virtual counter) costs about 10 ns. Where the kernel itself keeps CLOCK_MONOTONIC on that
//! counter (its clocksource is `tsc` or `arch_sys_counter`, so the counter is synchronised
//! across CPUs and never stops), records carry counter stamps and the collector converts
//! them to CLOCK_MONOTONIC: from pairs of both clocks it reads itself, anchored on the latest
//! pair, so the kernel's NTP slewing of CLOCK_MONOTONIC is followed. Elsewhere records carry
//! CLOCK_MONOTONIC directly. `RTGAUGE_APP_CLOCK=monotonic` forces the latter.

use crate::AppError;

/// Records are stamped with CLOCK_MONOTONIC in ns. Also the `enabled` value of a point that
/// records with it (0 is a disabled point), so the hot path needs no other load.
pub const MONOTONIC: u32 = 1;
/// Records are stamped with the CPU's counter.
pub const COUNTER: u32 = 2;
/// Environment variable: `monotonic` or `counter` (unset: the counter where the kernel's
/// clocksource is that counter).
pub const CLOCK_ENV: &str = "RTGAUGE_APP_CLOCK";

/// CLOCK_MONOTONIC in ns (glibc reads it through the vDSO: no system call), from the system
/// layer, the clock every probe reads.
pub use rtgauge_os::clock::now_ns;

/// The CPU's counter (CLOCK_MONOTONIC in ns where there is none this crate reads). An
/// unordered read: the CPU may move it by the few instructions around it, nanoseconds.
#[inline(always)]
pub fn counter() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86_64 CPU and has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let ticks: u64;
        // SAFETY: Linux lets user space read the virtual counter (the vDSO does the same).
        unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) ticks, options(nomem, nostack)) };
        ticks
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        now_ns()
    }
}

/// A stamp of `clock` ([`MONOTONIC`] or [`COUNTER`]).
#[inline(always)]
pub fn stamp(clock: u32) -> u64 {
    if clock == COUNTER {
        counter()
    } else {
        now_ns()
    }
}

/// The kernel's clocksource that is this CPU's counter.
const COUNTER_CLOCKSOURCE: Option<&str> = if cfg!(target_arch = "x86_64") {
    Some("tsc")
} else if cfg!(target_arch = "aarch64") {
    Some("arch_sys_counter")
} else {
    None
};

/// The clock this process records with: `RTGAUGE_APP_CLOCK`, else the counter where the
/// kernel keeps CLOCK_MONOTONIC on it.
pub(crate) fn choose() -> Result<u32, AppError> {
    let refused = |value: String| AppError::InvalidClock { value };
    match std::env::var(CLOCK_ENV) {
        Ok(v) if v == "monotonic" => Ok(MONOTONIC),
        Ok(v) if v == "counter" => match COUNTER_CLOCKSOURCE {
            Some(_) => Ok(COUNTER),
            None => Err(refused(v)),
        },
        Ok(v) if !v.is_empty() => Err(refused(v)),
        _ => {
            let source = std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .unwrap_or_default();
            Ok(match COUNTER_CLOCKSOURCE {
                Some(name) if source.trim() == name => COUNTER,
                _ => MONOTONIC,
            })
        }
    }
}

/// One reading of both clocks, as close together as this process could take them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub counter: u64,
    pub ns: u64,
}

/// Reads CLOCK_MONOTONIC between two counter reads, five times, and keeps the tightest
/// bracket (a preemption inside one inflates only that one).
pub fn pair() -> Pair {
    let mut best = (u64::MAX, Pair { counter: 0, ns: 0 });
    for _ in 0..5 {
        let before = counter();
        let ns = now_ns();
        let after = counter();
        let width = after.wrapping_sub(before);
        if width < best.0 {
            best = (
                width,
                Pair {
                    counter: before + width / 2,
                    ns,
                },
            );
        }
    }
    best.1
}

/// A pair taken no earlier than `ns` (CLOCK_MONOTONIC), sleeping until then: the first rate
/// is measured over at least the time from the application's pair to `ns`.
pub fn pair_after(ns: u64) -> Pair {
    let now = now_ns();
    if now < ns {
        std::thread::sleep(std::time::Duration::from_nanos(ns - now));
    }
    pair()
}

/// The collector's conversion of counter stamps to CLOCK_MONOTONIC ns. The rate comes from a
/// pair 1–2 s older than the latest (the application's own pair at first), stamps are placed
/// from the latest: a record is converted within a drain or two of being written, so the
/// rate's error (pair jitter over a second) and the kernel's slewing move it by nanoseconds.
#[derive(Debug, Clone)]
pub struct Calibration {
    base: Pair,
    next_base: Pair,
    anchor: Pair,
    ns_per_tick: f64,
}

/// How far back the rate's pair lies, at least.
const RATE_SPAN_NS: u64 = 1_000_000_000;
/// The shortest span of the first rate: a collector that opens a file just created waits
/// this long after its creation (pair jitter of tens of ns over 10 ms: a few ppm).
pub const FIRST_RATE_SPAN_NS: u64 = 10_000_000;

impl Calibration {
    /// Starts from the application's pair, taken when it created its file, and `now`.
    pub fn new(created: Pair, now: Pair) -> Calibration {
        let mut calibration = Calibration {
            base: created,
            next_base: created,
            anchor: created,
            ns_per_tick: 0.0,
        };
        calibration.update(now);
        calibration
    }

    /// Takes a new pair (before each drain).
    pub fn update(&mut self, now: Pair) {
        if now.ns.saturating_sub(self.next_base.ns) >= RATE_SPAN_NS {
            self.base = self.next_base;
            self.next_base = now;
        }
        let ticks = now.counter.wrapping_sub(self.base.counter);
        if ticks > 0 && now.ns > self.base.ns {
            self.ns_per_tick = (now.ns - self.base.ns) as f64 / ticks as f64;
        }
        self.anchor = now;
    }

    /// CLOCK_MONOTONIC of counter stamp `ticks`.
    pub fn ns(&self, ticks: u64) -> u64 {
        let offset = ticks.wrapping_sub(self.anchor.counter) as i64;
        (self.anchor.ns as i64 + (offset as f64 * self.ns_per_tick).round() as i64).max(0) as u64
    }

    /// Nanoseconds of a duration of `ticks`.
    pub fn duration_ns(&self, ticks: u64) -> u64 {
        (ticks as f64 * self.ns_per_tick).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linear_counter_converts_exactly() {
        // A 3 GHz counter that started 1000 s before CLOCK_MONOTONIC's zero.
        let at = |ns: u64| Pair {
            counter: 3_000_000_000_000 + ns * 3,
            ns,
        };
        let mut c = Calibration::new(at(5_000_000_000), at(5_500_000_000));
        assert_eq!(c.ns(at(5_499_000_000).counter), 5_499_000_000);
        assert_eq!(c.duration_ns(300_000), 100_000);
        // Past the rate span the base moves up; conversion stays exact.
        c.update(at(7_000_000_000));
        c.update(at(8_500_000_000));
        assert_eq!(c.base, at(7_000_000_000));
        assert_eq!(c.ns(at(8_499_999_999).counter), 8_499_999_999);
    }

    #[test]
    fn a_slewed_clock_is_followed_from_the_latest_pair() {
        // CLOCK_MONOTONIC runs 500 ppm fast against the counter from 10 s on (the kernel's
        // largest NTP slew); stamps a millisecond before the latest pair stay within 1 ns.
        let at = |ns: u64| {
            let counter = if ns <= 10_000_000_000 {
                ns
            } else {
                10_000_000_000 + ((ns - 10_000_000_000) as f64 / 1.0005) as u64
            };
            Pair { counter, ns }
        };
        let mut c = Calibration::new(at(0), at(1_000_000_000));
        for s in 2..=20u64 {
            c.update(at(s * 1_000_000_000));
        }
        let stamp = at(19_999_000_000).counter;
        assert!(c.ns(stamp).abs_diff(19_999_000_000) <= 1, "{}", c.ns(stamp));
    }

    #[test]
    fn the_pair_and_stamps_of_this_machine_agree() {
        let clock = choose().unwrap();
        let before = now_ns();
        let calibration = Calibration::new(pair(), pair());
        let stamped = stamp(clock);
        let after = now_ns();
        let ns = if clock == COUNTER {
            calibration.ns(stamped)
        } else {
            stamped
        };
        // Converted stamps land between the clock reads around them (1 ms of slack: the
        // first rate spans microseconds and this machine may be preempted in between).
        assert!(
            ns + 1_000_000 >= before && ns <= after + 1_000_000,
            "{before} <= {ns} <= {after}"
        );
    }
}
