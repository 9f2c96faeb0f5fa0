//! Helper processes for the tests of rtgauge-trace (and its cost measurement):
//!
//! - `culprit CPU SPIN_US MEAN_GAP_US DURATION_MS`: a process named `rtg-culprit` at
//!   SCHED_FIFO 99 pinned on CPU, spinning SPIN_US at random times (gaps uniform in
//!   [0, 2 × MEAN_GAP_US)) for DURATION_MS, then printing each spin as
//!   "spin START_NS END_NS CPU_NS" (CLOCK_MONOTONIC; CPU_NS the thread's CPU time at the
//!   spin's end), the truth the attribution is checked against: a spin, plus the kernel's
//!   paths into and out of its sleep, which the trace sees as the culprit's time as well.
//! - `hold-session CPU`: starts a trace session, prints its instance directory, and waits to
//!   be killed (for the test of stale-instance removal after SIGKILL).
//! - `start-unmounted CPU`: in a private mount namespace with tracefs unmounted, starts a
//!   session (which must mount tracefs) and prints where tracefs is and how many events were
//!   enabled; the machine's own mounts are not touched.

use std::io::Write;

use rtgauge_trace::testing::{now_ns, pin_fifo, set_thread_name, sleep_until, Random};
use rtgauge_trace::{TraceConfig, TraceSession};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| -> u64 {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| usage())
    };
    match args.first().map(String::as_str) {
        Some("culprit") => culprit(number(1) as usize, number(2), number(3), number(4)),
        Some("hold-session") => hold_session(number(1) as usize),
        Some("start-unmounted") => start_unmounted(number(1) as usize),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: rtgauge-trace-helper culprit CPU SPIN_US MEAN_GAP_US DURATION_MS | hold-session CPU | start-unmounted CPU");
    std::process::exit(2)
}

fn culprit(cpu: usize, spin_us: u64, mean_gap_us: u64, duration_ms: u64) {
    set_thread_name("rtg-culprit");
    if let Err(e) = pin_fifo(cpu, 99) {
        eprintln!("cannot run at SCHED_FIFO 99 on CPU {cpu}: {e}; run as root");
        std::process::exit(1);
    }
    let mut random = Random::new(now_ns());
    let end = now_ns() + duration_ms * 1_000_000;
    let mut spins = Vec::with_capacity((duration_ms * 1000 / mean_gap_us.max(1)) as usize * 2 + 16);
    loop {
        sleep_until(now_ns() + random.below(2 * mean_gap_us * 1000));
        let start = now_ns();
        if start >= end {
            break;
        }
        let stop = start + spin_us * 1000;
        let mut last = start;
        while last < stop {
            last = now_ns();
        }
        spins.push((start, last, rtgauge_os::clock::thread_cpu_ns()));
    }
    let mut out = std::io::stdout().lock();
    for (start, stop, cpu) in spins {
        let _ = writeln!(out, "spin {start} {stop} {cpu}");
    }
}

fn hold_session(cpu: usize) {
    match TraceSession::start(&TraceConfig::new(vec![cpu])) {
        Ok(session) => {
            println!("{}", session.instance_dir().display());
            let _ = std::io::stdout().flush();
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

fn start_unmounted(cpu: usize) {
    // SAFETY: plain system calls with valid NUL-terminated strings.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            eprintln!(
                "cannot make a private mount namespace: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(1);
        }
        // Keep the unmounts below from propagating to the machine's namespace.
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            eprintln!(
                "cannot make the mounts private: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(1);
        }
        for path in [c"/sys/kernel/debug/tracing", c"/sys/kernel/tracing"] {
            libc::umount2(path.as_ptr(), libc::MNT_DETACH);
        }
    }
    match TraceSession::start(&TraceConfig::new(vec![cpu])) {
        Ok(session) => println!(
            "{} {}",
            session.tracefs().display(),
            session.events_enabled().len()
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
