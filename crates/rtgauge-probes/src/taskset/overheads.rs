//! The overheads the analysis is run with, measured on each CPU the set uses before the
//! tasks run: the wake-up latency of absolute sleeps and the cost of a context switch (a
//! futex hand-off between two threads), both at the highest priority of the CPU's tasks.

use super::analysis::Overheads;
use super::{calibrate_spin, PROBE};
use rtgauge_core::clock::{self, now_ns};
use rtgauge_core::probe::{ProbeContext, ProbeError};
use rtgauge_core::rt::Mode;
use rtgauge_os::io::{futex_wait_while, futex_wake};
use rtgauge_result::Obtained;
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

pub(super) struct MeasuredOverheads {
    pub wakeup: Recorder,
    pub switch: Recorder,
    /// The busy loop's cost per iteration on this CPU.
    pub ns_per_iteration: f64,
}

impl MeasuredOverheads {
    /// The overheads at figure `f` of [`FIGURES`].
    pub fn figure(&self, f: usize) -> Overheads {
        let at = |r: &Recorder| match f {
            0 => r.value_at_quantile(0.5),
            1 => r.value_at_quantile(0.999),
            _ => r.max(),
        };
        Overheads {
            wakeup_ns: at(&self.wakeup).unwrap_or(0),
            switch_ns: at(&self.switch).unwrap_or(0),
        }
    }
}

/// The wake-up period of the overhead measurement.
const WAKEUP_PERIOD_NS: u64 = 200_000;
/// Hand-offs of the context-switch measurement.
const SWITCH_ROUND_TRIPS: u64 = 2_000;

/// Wake-up latency and context-switch time on `cpu` in `mode`.
pub(super) fn measure_overheads(
    ctx: &ProbeContext,
    mode: &Mode,
    cpu: usize,
    window_ns: u64,
) -> Result<(Obtained, MeasuredOverheads), ProbeError> {
    let word = AtomicU32::new(0);
    let done = AtomicBool::new(false);
    let follow_gone = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let lead = std::thread::Builder::new()
            .name(format!("rtgauge-oh{cpu}"))
            .spawn_scoped(
                scope,
                || -> Result<(Obtained, MeasuredOverheads), ProbeError> {
                    let result = (|| {
                        let obtained =
                            rtgauge_core::rt::enter_thread(mode, Some(cpu), ctx.best_effort)?;
                        // The tasks' busy loop, timed on this CPU at the tasks' top priority.
                        let ns_per_iteration = calibrate_spin();
                        let mut wakeup = Recorder::new(DEFAULT_INTERVAL_NS);
                        let mut next = now_ns() + WAKEUP_PERIOD_NS;
                        let end = next + window_ns;
                        while next < end && !ctx.stopped() {
                            clock::sleep_until(next);
                            let woke = now_ns();
                            wakeup.record(
                                woke.saturating_sub(next),
                                woke.saturating_sub(end - window_ns),
                            );
                            next += WAKEUP_PERIOD_NS
                                * (1 + woke.saturating_sub(next) / WAKEUP_PERIOD_NS);
                        }
                        // Hand-offs: odd values are the partner's turn, even ones ours.
                        let mut switch = Recorder::new(DEFAULT_INTERVAL_NS);
                        let start = now_ns();
                        for k in 0..SWITCH_ROUND_TRIPS {
                            if ctx.stopped() {
                                break;
                            }
                            let before = now_ns();
                            let mine = 2 * k as u32;
                            word.store(mine + 1, Ordering::Release);
                            futex_wake(&word).map_err(|e| {
                                rtgauge_core::probe::os_error(PROBE, "futex wake", e)
                            })?;
                            futex_wait_while(&word, mine + 1).map_err(|e| {
                                rtgauge_core::probe::os_error(PROBE, "futex wait", e)
                            })?;
                            if follow_gone.load(Ordering::Acquire) {
                                break;
                            }
                            let after = now_ns();
                            switch.record((after - before) / 2, after - start);
                        }
                        Ok((
                            obtained,
                            MeasuredOverheads {
                                wakeup,
                                switch,
                                ns_per_iteration,
                            },
                        ))
                    })();
                    done.store(true, Ordering::Release);
                    word.store(u32::MAX, Ordering::Release);
                    let _ = futex_wake(&word);
                    result
                },
            )
            .expect("spawning a measuring thread");
        let follow = std::thread::Builder::new()
            .name(format!("rtgauge-oh{cpu}b"))
            .spawn_scoped(scope, || -> Result<(), ProbeError> {
                let entered = rtgauge_core::rt::enter_thread(mode, Some(cpu), ctx.best_effort);
                if entered.is_err() {
                    // Release the lead from its wait: it stops handing off and reports this.
                    follow_gone.store(true, Ordering::Release);
                    word.store(u32::MAX - 1, Ordering::Release);
                    let _ = futex_wake(&word);
                }
                entered?;
                let mut k = 0u32;
                loop {
                    // Wait for our turn (odd), then hand back (even).
                    let expect = 2 * k + 1;
                    while word.load(Ordering::Acquire) != expect {
                        if done.load(Ordering::Acquire) {
                            return Ok(());
                        }
                        let seen = word.load(Ordering::Acquire);
                        if seen != expect {
                            futex_wait_while(&word, seen).map_err(|e| {
                                rtgauge_core::probe::os_error(PROBE, "futex wait", e)
                            })?;
                        }
                    }
                    word.store(expect + 1, Ordering::Release);
                    futex_wake(&word)
                        .map_err(|e| rtgauge_core::probe::os_error(PROBE, "futex wake", e))?;
                    k += 1;
                }
            })
            .expect("spawning a measuring thread");
        let lead = lead.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let follow = follow
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        follow?;
        lead
    })
}
