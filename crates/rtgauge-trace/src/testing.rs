//! Real-time helpers shared by the tests, the test helper program and the cost measurement:
//! not part of the API the runner uses.

/// CLOCK_MONOTONIC in nanoseconds (the clock of the probes and of the `mono` trace clock).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns`.
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; EINTR only shortens the sleep, which the callers tolerate.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Pins the calling thread on `cpu` and makes it SCHED_FIFO `priority`.
pub fn pin_fifo(cpu: usize, priority: i32) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the calls get valid pointers.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let param = libc::sched_param {
            sched_priority: priority,
        };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Names the calling thread (the `comm` the kernel's events show, at most 15 bytes).
pub fn set_thread_name(name: &str) {
    let name = std::ffi::CString::new(name).expect("no NUL in a thread name");
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of up to 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr(), 0, 0, 0) };
}

/// The calling thread's id (what trace events call pid).
pub fn thread_id() -> u32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// A small deterministic generator (xorshift64*), enough for random spin times.
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// Uniform in [0, bound).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound.max(1)
    }
}

/// One wake-up of a periodic sleeper: programmed and actual time (CLOCK_MONOTONIC, ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wakeup {
    pub programmed_ns: u64,
    pub woke_ns: u64,
}

impl Wakeup {
    pub fn latency_ns(&self) -> u64 {
        self.woke_ns.saturating_sub(self.programmed_ns)
    }
}

/// Wakes every `period_ns` to absolute deadlines, `count` times, into preallocated storage;
/// `on_late` is called (outside the sleep, after recording) for wake-ups later than
/// `late_ns`, so a caller can hand them to a reader thread.
pub fn periodic_sleeper(
    period_ns: u64,
    count: usize,
    late_ns: u64,
    mut on_late: impl FnMut(Wakeup),
) -> Vec<Wakeup> {
    let mut wakeups = Vec::with_capacity(count);
    let mut next = now_ns() + period_ns;
    for _ in 0..count {
        sleep_until(next);
        let woke_ns = now_ns();
        let wakeup = Wakeup {
            programmed_ns: next,
            woke_ns,
        };
        wakeups.push(wakeup);
        if wakeup.latency_ns() > late_ns {
            on_late(wakeup);
        }
        next += period_ns;
        // A wake-up later than a whole period skips to the next future deadline.
        while next <= woke_ns {
            next += period_ns;
        }
    }
    wakeups
}

/// Median and 99th percentile (nearest rank) of latencies, ns.
pub fn median_p99(mut latencies: Vec<u64>) -> (u64, u64) {
    if latencies.is_empty() {
        return (0, 0);
    }
    latencies.sort_unstable();
    let rank = |q: f64| {
        latencies[((q * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len()) - 1]
    };
    (rank(0.5), rank(0.99))
}

/// The last CPU: the one the tests measure (CPU 0 keeps the machine's housekeeping).
pub fn last_cpu() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
}

/// A session on `cpus`, or `None` with the reason printed where this machine cannot trace
/// (not root, no tracefs, lockdown): the tests that need one then have nothing to test.
/// Any other error is a failure.
pub fn session_or_skip(cpus: Vec<usize>) -> Option<crate::TraceSession> {
    use crate::TraceError;
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: tracing needs root");
        return None;
    }
    match crate::TraceSession::start(&crate::TraceConfig::new(cpus)) {
        Ok(session) => Some(session),
        Err(
            e @ (TraceError::NoTracefs | TraceError::Lockdown | TraceError::NotPermitted { .. }),
        ) => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}
