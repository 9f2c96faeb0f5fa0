//! `cyclic`: wake-up latency and period jitter of a periodic task (seed 000 tables 1–9,
//! seed 001's cyclictest, seed 002's task start times, seed 003 table 2).
//!
//! One measuring thread per CPU sleeps on a timer; per cycle it records
//! - latency: actual wake-up − programmed wake-up,
//! - period: actual wake-up − previous actual wake-up,
//! - jitter: |period − nominal period|.
//!
//! A wake-up later than a whole period counts every missed period as an overrun, and the
//! schedule continues at the next future period; nothing is skipped silently.

use rtgauge_core::clock::{self, now_ns};
use rtgauge_core::probe::{About, ParamSpec, SampleSink, SeriesDef, TypedProbe};
use rtgauge_core::probe::{Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput};
use rtgauge_core::threads::{merge_obtained, per_cpu_threads};
use rtgauge_core::units::format_duration_exact;
use rtgauge_result::Series;
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;

pub use rtgauge_core::probe::{DEFAULT_PERIOD_NS, MAX_PERIOD_NS, MIN_PERIOD_NS};
pub const TIMERS: [&str; 4] = ["abs", "rel", "timerfd", "posix-timer"];
/// What each of [`TIMERS`] is, in the same order (`--timer`'s help).
pub const TIMER_HELP: [&str; 4] = [
    "clock_nanosleep to absolute deadlines (periodic timer)",
    "Relative sleep re-armed each cycle (one-shot timer, drifts)",
    "A periodic timerfd",
    "A periodic POSIX timer signalling the thread",
];
pub const DEFAULT_TIMER: &str = "abs";
const DESCRIPTION: &str =
    "periodic task wake-up latency, period and jitter, with every missed period counted";
const ABOUT: About = About::new(crate::names::CYCLIC, DESCRIPTION, &PARAMS);
const PARAMS: [ParamSpec; 5] = [
    ParamSpec::new("period", "1ms (--period)", "wake-up period from 10us to 10s, with a unit: 25us, 997us, 1ms; at most the run's duration"),
    ParamSpec::new("timer", "abs (--timer)", "how the thread sleeps: abs (clock_nanosleep to an absolute deadline), rel (relative sleep re-armed each cycle, drifts), timerfd, posix-timer"),
    ParamSpec::new("interval", "1s", "width of the intervals whose maximum latency is kept (the maxima-over-time series)"),
    ParamSpec::new("phase", "from the clock at start, recorded in the result", "offset of the deadlines from whole multiples of the period; 0 puts them on whole multiples"),
    ParamSpec::new("stagger", "0", "the n-th measured CPU wakes n x stagger later, so threads do not all wake at once (cyclictest's -d)"),
];

pub struct Cyclic;

impl TypedProbe for Cyclic {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        rtgauge_core::probe::check_period_fits(ctx, cfg.period_ns)?;
        // Unless asked for, the deadlines are not put on whole multiples of the period: like
        // cyclictest, the grid's phase is wherever the clock is when the probe starts. On the
        // machine this was built on, deadlines on whole milliseconds woke 1-2 us later at p1
        // and at the median than free-phase ones (docs/validation.md), a coincidence with
        // other periodic timers that a user should have to ask for (`phase=0`), not get.
        cfg.phase_ns.get_or_insert(now_ns() % cfg.period_ns);
        let cfg = *cfg;
        // --record: series i is the latency of the thread on ctx.cpus[i]; period and jitter
        // follow from consecutive timestamps, so only latency is recorded.
        let sinks = ctx.recording_sinks(
            ctx.cpus
                .iter()
                .map(|cpu| SeriesDef::new("latency").label("cpu", cpu))
                .collect(),
            ctx.cpus.len(),
            "ns since the measuring thread's measurement start (the end of its warm-up); threads start on the same grid point (k x period + phase, the phase in the result's params) plus index x stagger, so series share a time base up to that offset",
        )?;
        let threads = per_cpu_threads(ctx, |cpu, _| {
            let index = ctx.cpus.iter().position(|&c| c == cpu).unwrap_or(0);
            let sink = sinks.take(index).map(|s| (s, index as u16));
            measure(ctx, cfg, cpu, sink)
        })?;
        let obtained: Vec<_> = threads.iter().map(|(o, _)| o.clone()).collect();
        let mut out = ProbeOutput {
            obtained: merge_obtained(&obtained),
            ..ProbeOutput::default()
        };
        for (_, t) in threads {
            out.measured_ns = out.measured_ns.max(t.measured_ns);
            let cpu = t.cpu;
            out.series.push(
                Series::new("latency", t.latency.summary())
                    .label("cpu", cpu)
                    .counter("overruns", t.overruns)
                    .counter("cycles", t.cycles),
            );
            out.series
                .push(Series::new("period", t.period.summary()).label("cpu", cpu));
            out.series
                .push(Series::new("jitter", t.jitter.summary()).label("cpu", cpu));
            if t.overruns > 0 {
                out.warnings.push(format!(
                    "cpu {cpu}: {} of {} periods overran (woke more than one period late)",
                    t.overruns, t.cycles
                ));
            }
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerMethod {
    /// clock_nanosleep to an absolute deadline: the periodic timer.
    Absolute,
    /// Relative sleep re-armed each cycle: the one-shot timer, which drifts.
    Relative,
    /// A periodic timerfd; expirations beyond one are missed periods.
    Timerfd,
    /// A periodic POSIX timer delivering a signal to this thread; overruns from the kernel.
    PosixTimer,
}

impl TimerMethod {
    fn parse(s: &str) -> Option<TimerMethod> {
        Some(match s {
            "abs" => TimerMethod::Absolute,
            "rel" => TimerMethod::Relative,
            "timerfd" => TimerMethod::Timerfd,
            "posix-timer" => TimerMethod::PosixTimer,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            TimerMethod::Absolute => "abs",
            TimerMethod::Relative => "rel",
            TimerMethod::Timerfd => "timerfd",
            TimerMethod::PosixTimer => "posix-timer",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    period_ns: u64,
    /// Offset of the deadlines from whole multiples of the period on CLOCK_MONOTONIC; None
    /// takes it from the clock when the probe starts (see `run`).
    phase_ns: Option<u64>,
    /// Extra offset per thread (the n-th measured CPU wakes n × stagger later), so threads
    /// do not all wake at the same instant (cyclictest's -d).
    stagger_ns: u64,
    timer: TimerMethod,
    interval_ns: u64,
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        let period_ns = rtgauge_core::probe::period_param(params)?;
        let timer_name = params.text("timer", DEFAULT_TIMER);
        let timer = TimerMethod::parse(&timer_name).ok_or_else(|| ProbeError::Invalid {
            probe: "cyclic",
            message: format!(
                "unknown timer '{}'; accepted: {}",
                rtgauge_core::units::quote(&timer_name),
                TIMERS.join(", ")
            ),
        })?;
        Ok(Config {
            period_ns,
            timer,
            interval_ns: params.duration_ns("interval", DEFAULT_INTERVAL_NS)?,
            stagger_ns: match params.raw().get("stagger").map(String::as_str) {
                None | Some("0") => 0,
                Some(_) => params.duration_ns("stagger", 0)?,
            },
            phase_ns: match params.raw().get("phase").map(String::as_str) {
                None => None,
                Some("0") => Some(0),
                Some(_) => Some(params.duration_ns("phase", 0)? % period_ns),
            },
        })
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        // Zero is written `0`: durations are otherwise positive, and `0ns` would not re-parse.
        let exact_or_zero = |ns: u64| match ns {
            0 => "0".to_string(),
            ns => format_duration_exact(ns),
        };
        let mut p = BTreeMap::new();
        p.insert("period".into(), format_duration_exact(self.period_ns));
        p.insert("timer".into(), self.timer.name().into());
        p.insert("interval".into(), format_duration_exact(self.interval_ns));
        // Exact, so a run can be repeated on the same grid with `--set cyclic.phase=…`.
        if let Some(phase) = self.phase_ns {
            p.insert("phase".into(), exact_or_zero(phase));
        }
        p.insert("stagger".into(), exact_or_zero(self.stagger_ns));
        p
    }
}

struct ThreadResult {
    cpu: usize,
    latency: Recorder,
    period: Recorder,
    jitter: Recorder,
    overruns: u64,
    cycles: u64,
    measured_ns: u64,
}

/// A timer armed for one thread. `wait` returns (programmed wake-up, actual wake-up,
/// periods missed before that wake-up).
enum Timer {
    Absolute {
        next: u64,
        period: u64,
    },
    Relative {
        period: u64,
    },
    Timerfd {
        fd: i32,
        first: u64,
        period: u64,
        expired: u64,
    },
    Posix {
        timer: libc::timer_t,
        set: libc::sigset_t,
        first: u64,
        period: u64,
        expired: u64,
    },
}

fn timer_signal() -> i32 {
    libc::SIGRTMIN() + 3
}

impl Timer {
    fn arm(method: TimerMethod, period: u64, first: u64) -> Result<Timer, ProbeError> {
        let spec = libc::itimerspec {
            it_interval: clock::to_timespec(period),
            it_value: clock::to_timespec(first),
        };
        Ok(match method {
            TimerMethod::Absolute => Timer::Absolute {
                next: first,
                period,
            },
            TimerMethod::Relative => Timer::Relative { period },
            TimerMethod::Timerfd => {
                // SAFETY: plain syscalls with valid pointers.
                let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
                if fd < 0 {
                    return Err(ProbeError::os("cyclic", "timerfd_create"));
                }
                if unsafe {
                    libc::timerfd_settime(fd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
                } != 0
                {
                    let e = ProbeError::os("cyclic", "timerfd_settime");
                    unsafe { libc::close(fd) };
                    return Err(e);
                }
                Timer::Timerfd {
                    fd,
                    first,
                    period,
                    expired: 0,
                }
            }
            TimerMethod::PosixTimer => {
                // SAFETY: the signal is blocked in this thread before the timer exists, so it is
                // only ever consumed by sigwaitinfo below; sigevent is zero-initialised plain data.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, timer_signal());
                    libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                    let mut sev: libc::sigevent = std::mem::zeroed();
                    sev.sigev_notify = libc::SIGEV_THREAD_ID;
                    sev.sigev_signo = timer_signal();
                    sev.sigev_notify_thread_id = libc::gettid();
                    let mut timer: libc::timer_t = std::mem::zeroed();
                    if libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut timer) != 0 {
                        return Err(ProbeError::os("cyclic", "timer_create"));
                    }
                    if libc::timer_settime(timer, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut())
                        != 0
                    {
                        let e = ProbeError::os("cyclic", "timer_settime");
                        libc::timer_delete(timer);
                        return Err(e);
                    }
                    Timer::Posix {
                        timer,
                        set,
                        first,
                        period,
                        expired: 0,
                    }
                }
            }
        })
    }

    /// The wake-up the next [`Timer::wait`] is programmed for (CLOCK_MONOTONIC ns); 0 for a
    /// relative sleep, whose wake-up is only known when it starts.
    #[inline(always)]
    fn upcoming(&self) -> u64 {
        match self {
            Timer::Absolute { next, .. } => *next,
            Timer::Relative { .. } => 0,
            Timer::Timerfd {
                first,
                period,
                expired,
                ..
            }
            | Timer::Posix {
                first,
                period,
                expired,
                ..
            } => *first + *expired * *period,
        }
    }

    #[inline(always)]
    fn wait(&mut self) -> (u64, u64, u64) {
        match self {
            Timer::Absolute { next, period } => {
                let programmed = *next;
                clock::sleep_until(programmed);
                let now = now_ns();
                let missed = now.saturating_sub(programmed) / *period;
                *next = programmed + (missed + 1) * *period;
                (programmed, now, missed)
            }
            Timer::Relative { period } => {
                let armed = now_ns();
                clock::sleep_for(*period);
                let now = now_ns();
                let programmed = armed + *period;
                (programmed, now, now.saturating_sub(programmed) / *period)
            }
            Timer::Timerfd {
                fd,
                first,
                period,
                expired,
            } => {
                let mut expirations: u64 = 0;
                // SAFETY: reading 8 bytes into a u64, as the timerfd ABI defines.
                let n = unsafe { libc::read(*fd, &mut expirations as *mut u64 as *mut _, 8) };
                let now = now_ns();
                let expirations = if n == 8 { expirations.max(1) } else { 1 };
                *expired += expirations;
                (*first + (*expired - 1) * *period, now, expirations - 1)
            }
            Timer::Posix {
                timer,
                set,
                first,
                period,
                expired,
            } => {
                // SAFETY: set holds the blocked timer signal; timer is live.
                let (now, overrun) = unsafe {
                    while libc::sigwaitinfo(set, std::ptr::null_mut()) < 0
                        && !rtgauge_core::signals::stop_requested()
                    {}
                    (now_ns(), libc::timer_getoverrun(*timer).max(0) as u64)
                };
                *expired += 1 + overrun;
                (*first + (*expired - 1) * *period, now, overrun)
            }
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: releasing the kernel objects created in arm().
        match self {
            Timer::Timerfd { fd, .. } => unsafe {
                libc::close(*fd);
            },
            Timer::Posix { timer, .. } => unsafe {
                libc::timer_delete(*timer);
            },
            _ => {}
        }
    }
}

/// The first deadline of a thread: on the grid `k × period + offset`, at least one whole period
/// ahead of `now`. Threads that start within the same period get the same grid point, so they
/// begin in step whatever their start-up took.
fn first_deadline(now: u64, period: u64, offset: u64) -> u64 {
    (now / period + 2) * period + offset
}

/// The measuring thread. Everything is allocated before the loop; the loop only sleeps, reads
/// the clock and records.
fn measure(
    ctx: &ProbeContext,
    cfg: Config,
    cpu: usize,
    mut sink: Option<(SampleSink, u16)>,
) -> Result<ThreadResult, ProbeError> {
    let mut latency = Recorder::new(cfg.interval_ns);
    let mut period = Recorder::new(cfg.interval_ns);
    let mut jitter = Recorder::new(cfg.interval_ns);
    let live = ctx.live.register(format!("cpu{cpu}"));
    let period_ns = cfg.period_ns;

    let index = ctx.cpus.iter().position(|&c| c == cpu).unwrap_or(0) as u64;
    let offset = (cfg.phase_ns.unwrap_or(0) + index * cfg.stagger_ns) % period_ns;
    let start = first_deadline(now_ns(), period_ns, offset);
    let measure_start = start + ctx.warmup_ns;
    let mut timer = Timer::arm(cfg.timer, period_ns, start)?;
    let mut previous_wake: Option<u64> = None;
    let (mut overruns, mut cycles) = (0u64, 0u64);
    // --trace / --break: one compare per sample against a local floor (rtgauge_core::spikes).
    let mut spikes = ctx.spikes.and_then(|tap| tap.producer(index as usize, cpu));
    let mut spike_floor = spikes.as_ref().map_or(u64::MAX, |s| s.floor());
    if let Some(s) = spikes.as_ref() {
        s.next_wakeup(timer.upcoming());
    }

    loop {
        let (programmed, woke, missed) = timer.wait();
        // The flight recorder learns the next wake-up at once: a preemption while this one
        // is measured is then not taken for a late wake-up.
        if let Some(s) = spikes.as_ref() {
            s.next_wakeup(timer.upcoming());
        }
        if woke >= measure_start {
            if ctx.budget.done(measure_start, woke, latency.count()) || ctx.stopped() {
                break;
            }
            let at = woke - measure_start;
            let lat = woke.saturating_sub(programmed);
            latency.record(lat, at);
            if let Some((sink, series)) = sink.as_mut() {
                sink.push(*series, at, lat);
            }
            if let Some(prev) = previous_wake {
                let p = woke - prev;
                period.record(p, at);
                jitter.record(p.abs_diff(period_ns), at);
            }
            overruns += missed;
            cycles += 1 + missed;
            live.publish_at(lat, overruns, woke);
            previous_wake = Some(woke);
            if let Some(s) = spikes.as_mut() {
                // A monitor's intervals each start their running maximum again.
                spike_floor = s.floor_at(woke);
            }
            if lat > spike_floor {
                if let Some(s) = spikes.as_mut() {
                    if s.offer(programmed, woke) {
                        break;
                    }
                    spike_floor = s.floor();
                }
            }
        } else {
            // Warm-up: caches, TLB and the timer path settle; nothing is counted.
            if ctx.stopped() {
                break;
            }
            if let Some(s) = spikes.as_mut() {
                s.warm_up(woke.saturating_sub(programmed));
                spike_floor = s.floor();
            }
            previous_wake = Some(woke);
        }
    }
    drop(timer);
    Ok(ThreadResult {
        cpu,
        latency,
        period,
        jitter,
        overruns,
        cycles,
        measured_ns: previous_wake.map_or(0, |w| w.saturating_sub(measure_start)),
    })
}

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
mod summary_rows {
    use rtgauge_report::format::TimeUnit;
    use rtgauge_report::summary::{fmt, fmt_q, Cells, SummaryRows, MAX_ROWS};

    use rtgauge_result::{ProbeRun, Series};

    impl SummaryRows for super::Cyclic {
        fn probe(&self) -> &'static str {
            super::ABOUT.name
        }

        fn question(&self) -> &'static str {
            "wake-up latency"
        }

        fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
            vec![
                "median".into(),
                "p99".into(),
                "max".into(),
                "overruns".into(),
            ]
        }

        fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
            cyclic_rows(run, unit)
        }
    }

    fn cyclic_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
        let mut rows: Vec<(&Series, Cells)> = run
            .series
            .iter()
            .filter(|s| s.name == "latency")
            .map(|s| {
                let label = match s.labels.get("cpu") {
                    Some(cpu) => format!("cpu {cpu}"),
                    None => s.display_name(),
                };
                let cells = vec![
                    fmt_q(unit, s, s.stats.median_ns, 0.5),
                    fmt_q(unit, s, s.stats.percentiles.p99_ns, 0.99),
                    fmt(unit, s, s.stats.max_ns),
                    s.counters
                        .get("overruns")
                        .map(|o| o.to_string())
                        .unwrap_or_else(|| "–".into()),
                ];
                (s, (label, cells))
            })
            .collect();
        // On a large machine the worst CPUs come first; the rest are in the full tables.
        if rows.len() > MAX_ROWS {
            rows.sort_by_key(|(s, _)| std::cmp::Reverse(s.stats.max_ns));
        }
        rows.into_iter().map(|(_, c)| c).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_deadline_is_on_the_phase_grid_and_a_period_ahead() {
        let period = 1_000_000;
        for now in [0, 1, 999_999, 1_000_000, 123_456_789_012] {
            for offset in [0, 1, 317_000, 999_999] {
                let d = first_deadline(now, period, offset);
                assert_eq!(d % period, offset, "now {now} offset {offset}");
                assert!(d >= now + period, "now {now} offset {offset}: {d}");
                assert!(d < now + 3 * period, "now {now} offset {offset}: {d}");
            }
        }
        // Two threads starting at different moments of one period share their first deadline.
        assert_eq!(
            first_deadline(5_000_100, period, 250_000),
            first_deadline(5_999_900, period, 250_000)
        );
    }

    #[test]
    fn phase_is_free_unless_given_and_zero_means_whole_periods() {
        let params = |kv: &[(&str, &str)]| Params::of("cyclic", kv);
        let config = |p: &Params| Config::parse(p);
        assert_eq!(config(&params(&[])).unwrap().phase_ns, None);
        assert_eq!(
            config(&params(&[("phase", "0")])).unwrap().phase_ns,
            Some(0)
        );
        // Reduced modulo the period.
        let cfg = config(&params(&[("phase", "1250us"), ("period", "1ms")])).unwrap();
        assert_eq!(cfg.phase_ns, Some(250_000));
    }

    #[test]
    fn periods_are_bounded_and_recorded_exactly() {
        let period = |v: &str| Config::parse(&Params::of("cyclic", &[("period", v)]));
        assert!(period("9999ns").is_err());
        assert!(period("10001ms").is_err());
        let e = period("1000000000s").unwrap_err().to_string();
        assert!(e.contains("outside 10us..10s"), "{e}");
        let cfg = period("1234567ns").unwrap();
        assert_eq!(cfg.period_ns, 1_234_567);
        assert_eq!(cfg.resolved()["period"], "1234567ns");
        assert_eq!(period("10s").unwrap().resolved()["period"], "10s");
    }
}
