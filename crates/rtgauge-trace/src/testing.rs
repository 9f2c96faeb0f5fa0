//! Real-time helpers shared by the tests, the test helper program and the cost measurement:
//! not part of the API the runner uses.

/// CLOCK_MONOTONIC in nanoseconds (the clock of the probes and of the `mono` trace clock).
pub use rtgauge_os::clock::now_ns;

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns` (EINTR only shortens the
/// sleep, which the callers tolerate).
pub fn sleep_until(deadline_ns: u64) {
    rtgauge_os::clock::sleep_until_once(deadline_ns);
}

/// Pins the calling thread on `cpu` and makes it SCHED_FIFO `priority`.
pub fn pin_fifo(cpu: usize, priority: i32) -> std::io::Result<()> {
    rtgauge_os::sched::set_affinity(&[cpu])?;
    rtgauge_os::sched::set_fifo(priority)
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
/// (not root, no tracefs or not mounted, lockdown): the tests that need one then have nothing
/// to test.
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
            e @ (TraceError::NoTracefs
            | TraceError::NotMounted
            | TraceError::Lockdown
            | TraceError::NotPermitted { .. }),
        ) => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// What the culprit helper reported of its spins ("spin START END CPU" lines), the truth the
/// attribution tests check against.
pub struct CulpritSpins {
    /// (start, end, CPU time of the kernel's paths into its sleep before the spin and out of
    /// it) per spin; the paths are 0 for the first spin, which has no previous one to measure
    /// from.
    spins: Vec<(u64, u64, u64)>,
}

impl CulpritSpins {
    /// Reads the helper's output; lines that are not spins are ignored.
    pub fn parse(output: &str) -> CulpritSpins {
        let rows: Vec<[u64; 3]> = output
            .lines()
            .filter_map(|l| {
                let mut words = l.strip_prefix("spin ")?.split(' ').map(|w| w.parse().ok());
                Some([words.next()??, words.next()??, words.next()??])
            })
            .collect();
        let mut previous_cpu = None;
        let spins = rows
            .iter()
            .map(|&[start, end, cpu]| {
                // Between the ends of two spins the thread ran one spin and the kernel's paths
                // into and out of one sleep (tens of µs on a virtual machine, where programming
                // a timer exits to the host): the trace sees both as the culprit running.
                let paths = previous_cpu.map_or(0, |p: u64| (cpu - p).saturating_sub(end - start));
                previous_cpu = Some(cpu);
                (start, end, paths)
            })
            .collect();
        CulpritSpins { spins }
    }

    pub fn len(&self) -> usize {
        self.spins.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spins.is_empty()
    }

    /// How long the culprit spun within [from, to], by its own clock.
    pub fn spun_within(&self, from: u64, to: u64) -> u64 {
        self.spins
            .iter()
            .map(|&(start, end, _)| end.min(to).saturating_sub(start.max(from)))
            .sum()
    }

    /// Whether `attributed` ns of the culprit in [from, to] is its time there: within 10 % of
    /// what it spun, plus at most the kernel paths of the spins that overlap (the spin's clock
    /// reads start after its wake-up and end before its sleep).
    pub fn attributed_right(&self, from: u64, to: u64, attributed: u64) -> bool {
        let spun = self.spun_within(from, to);
        let paths: u64 = self
            .spins
            .iter()
            .filter(|&&(start, end, _)| start < to && end > from)
            .map(|&(_, _, paths)| paths)
            .sum();
        attributed * 10 >= spun * 9 && attributed * 10 <= (spun + paths) * 11
    }
}
