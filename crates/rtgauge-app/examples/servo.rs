//! A servo loop at a fixed period, instrumented with the Rust API (the C example's twin).
//!
//! ```text
//! cargo build -p rtgauge-app --example servo
//! rtgauge run app -- target/debug/examples/servo --busy-us 100
//! ```
//!
//! Options: `--period-us P` (1000), `--busy-us B` (100), `--cycles N` (0: until SIGTERM).

use rtgauge_app::clock::now_ns;
use rtgauge_app::Point;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn options() -> Result<(u64, u64, u64), String> {
    let (mut period_us, mut busy_us, mut cycles) = (1000, 100, 0);
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let target = match pair[0].as_str() {
            "--period-us" => &mut period_us,
            "--busy-us" => &mut busy_us,
            "--cycles" => &mut cycles,
            other => {
                return Err(format!(
                    "unknown option {other}; use --period-us, --busy-us, --cycles"
                ))
            }
        };
        *target = pair
            .get(1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{} needs a whole number", pair[0]))?;
    }
    Ok((period_us * 1000, busy_us * 1000, cycles))
}

/// Sleeps until the CLOCK_MONOTONIC time `deadline_ns` (the deadlines stay on their grid:
/// each is computed from the previous one, not from when the sleep ended).
fn sleep_until(deadline_ns: u64) {
    std::thread::sleep(Duration::from_nanos(deadline_ns.saturating_sub(now_ns())));
}

fn main() {
    if let Err(e) = run() {
        eprintln!("servo: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let (period_ns, busy_ns, cycles) = options()?;
    let points = || -> Result<_, rtgauge_app::AppError> {
        let p = (
            Point::periodic("servo.cycle", period_ns)?,
            Point::interval("servo.compute")?,
            Point::counter("servo.cycles")?,
        );
        rtgauge_app::thread_init()?;
        Ok(p)
    };
    let (cycle, compute, count) = points().map_err(|e| e.to_string())?;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
    }
    let mut next = now_ns() + period_ns;
    let mut n = 0;
    while !STOP.load(Ordering::Relaxed) && (cycles == 0 || n < cycles) {
        sleep_until(next);
        let _cycle = cycle.begin_at(next);
        {
            let _compute = compute.begin();
            let start = now_ns();
            while now_ns() - start < busy_ns {
                std::hint::spin_loop();
            }
        }
        count.count(1);
        n += 1;
        let now = now_ns();
        next += period_ns;
        while next <= now {
            next += period_ns;
        }
    }
    rtgauge_app::shutdown();
    Ok(())
}
