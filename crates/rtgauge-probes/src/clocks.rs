//! `clock`: what reading a clock costs and how far it can be trusted (Arm et al. 2016 §4, where the
//! time read cost is subtracted; Gleixner and Niehaus §2.1, TSC timekeeping).
//!
//! For each clock — CLOCK_MONOTONIC, MONOTONIC_RAW, REALTIME, BOOTTIME, TAI and the CPU's own
//! counter (x86_64's TSC, `tsc`; aarch64's generic timer CNTVCT_EL0, `cntvct`) — two
//! back-to-back reads make one sample: their difference is the cost
//! of one read (series `read_cost`, label `clock`). Every read is compared with the one before
//! it, so `counters["backward_steps"]` counts every time the clock went backwards between
//! consecutive reads on the measuring thread. `metrics["resolution_ns"]` is clock_getres (for
//! the TSC: one cycle, from the measured rate); `metrics["observed_step_ns"]` is the smallest
//! non-zero step seen between two consecutive reads, the resolution a reader really gets (on
//! AMD Zen the TSC, and so every clock derived from it, advances in steps of about 10 ns).
//!
//! TSC rate: a (MONOTONIC_RAW, TSC) pair is taken at the start of the probe, at every
//! `window` (100 ms) of MONOTONIC_RAW while any clock is measured, and at the end. A pair is
//! the best of three `raw, tsc, raw` reads: the TSC value is matched with the midpoint of the
//! tightest bracket. `tsc_hz` is the rate over the whole probe; `tsc_stability_ppb` is the
//! sample standard deviation of the per-window rates relative to `tsc_hz`, in parts per
//! billion. A window's rate is uncertain by about bracket / window (`tsc_window_error_ppb`),
//! which is the floor this stability figure can show.
//!
//! The counter's metrics are named after it (`tsc_hz`, `cntvct_hz`, …). On aarch64 the rate the
//! firmware declares (CNTFRQ_EL0) is recorded beside the measured one (`cntvct_declared_hz`,
//! `cntvct_declared_offset_ppm`). On both, a median read above 500 ns means the kernel (or a
//! hypervisor) traps and emulates the read (`…_read_trapped` = 1, with a warning).
//!
//! With the `tsc` clocksource, MONOTONIC_RAW is itself the TSC scaled by the kernel's boot-time
//! calibration (on aarch64, the generic timer scaled by CNTFRQ_EL0), so the rate is that
//! calibration and the stability only the read noise; an independent reference (another
//! clocksource, PTP) is needed to see true drift.
//!
//! Budget: `loops` is samples per clock; a duration (and the warm-up) is split evenly over the
//! clocks. The duration is checked every 64 samples, so the loop itself stays two reads and a
//! record.

use rtgauge_core::clock::{now_ns, read_ns, resolution_ns};
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::threads::{describe_split, on_first_cpu, split, warm_up, Cell};
use rtgauge_core::units::{format_duration_exact, format_duration_ns};
use rtgauge_result::Series;
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;

const PROBE: &str = crate::names::CLOCK;
pub const CLOCKS: [&str; 6] = [
    "monotonic",
    "monotonic-raw",
    "realtime",
    "boottime",
    "tai",
    counter::NAME,
];
const DESCRIPTION: &str =
    "clock read cost, resolution and backward steps per clock; the CPU counter's rate (TSC, or the ARM generic timer) and stability against MONOTONIC_RAW";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS);
const PARAMS: [ParamSpec; 2] = [
    ParamSpec::new("clocks", "all", "monotonic, monotonic-raw, realtime, boottime, tai, and the CPU's counter (tsc on x86_64, cntvct on aarch64); a list or all"),
    ParamSpec::new("window", "100ms", "span of each counter rate estimate against MONOTONIC_RAW, 1ms or more; the spread of the windows is the stability"),
];
pub const DEFAULT_WINDOW_NS: u64 = 100_000_000;
const MIN_WINDOW_NS: u64 = 1_000_000;
/// The shortest span the TSC rate is estimated over before TSC read costs are converted.
const MIN_RATE_SPAN_NS: u64 = 50_000_000;
/// How many samples pass between two looks at the time budget and the rate windows.
const CHECK_EVERY: u64 = 64;

pub struct ClockProbe;

impl TypedProbe for ClockProbe {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let cell = split(ctx, cfg.clocks.len());
        let (obtained, (series, warnings, measured_ns)) =
            on_first_cpu(PROBE, ctx, |_, _| Ok(measure(ctx, cfg, cell)))?;
        let mut out = ProbeOutput::measured(obtained, series, warnings, measured_ns);
        out.params
            .insert("budget-per-cell".into(), describe_split(&cell));
        Ok(out)
    }
}

/// The CPU's own counter, where user space may read it: x86_64's TSC, aarch64's generic timer
/// (CNTVCT_EL0, the virtual count the vDSO itself reads).
mod counter {
    /// The counter's name as a clock of this probe (the `clock` label, the metrics' prefix).
    pub const NAME: &str = if cfg!(target_arch = "aarch64") {
        "cntvct"
    } else {
        "tsc"
    };

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn read() -> u64 {
        // SAFETY: rdtsc has no preconditions; availability() checked it is not disabled.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    pub fn read() -> u64 {
        let ticks: u64;
        // The ISB keeps the read from being speculated ahead of the code before it, as the
        // kernel's own counter reader does; without it two back-to-back reads can come out of
        // order. SAFETY: Linux lets EL0 read CNTVCT_EL0 (or traps and emulates the read).
        unsafe { core::arch::asm!("isb", "mrs {}, cntvct_el0", out(reg) ticks) };
        ticks
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn read() -> u64 {
        0
    }

    /// The rate the firmware declares for the generic timer (CNTFRQ_EL0), in Hz: what the
    /// measured rate is checked against. None where the counter has no declared rate.
    #[cfg(target_arch = "aarch64")]
    pub fn declared_hz() -> Option<f64> {
        let hz: u64;
        // SAFETY: CNTFRQ_EL0 is readable at EL0 whenever CNTVCT_EL0 is.
        unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) hz) };
        (hz > 0).then_some(hz as f64)
    }

    #[cfg(not(target_arch = "aarch64"))]
    pub fn declared_hz() -> Option<f64> {
        None
    }

    /// Why the counter cannot be read here, if it cannot.
    pub fn unavailable() -> Option<String> {
        if cfg!(target_arch = "aarch64") {
            return None;
        }
        if !cfg!(target_arch = "x86_64") {
            return Some(format!(
                "{NAME}: no cycle counter reader for {} in this build (x86_64's TSC and aarch64's generic timer only); skipped",
                std::env::consts::ARCH
            ));
        }
        rtgauge_os::clock::tsc_forbidden().then(|| {
            "tsc: this process may not execute rdtsc (prctl PR_SET_TSC is PR_TSC_SIGSEGV); skipped"
                .to_string()
        })
    }

    /// A read this slow was not done by the CPU: the kernel trapped it and emulated it (a
    /// timer erratum workaround), so a loop that reads the counter pays a trap each time.
    pub const TRAPPED_READ_NS: u64 = 500;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    Posix(libc::clockid_t),
    Tsc,
}

fn clock_of(name: &str) -> Clock {
    match name {
        "monotonic" => Clock::Posix(libc::CLOCK_MONOTONIC),
        "monotonic-raw" => Clock::Posix(libc::CLOCK_MONOTONIC_RAW),
        "realtime" => Clock::Posix(libc::CLOCK_REALTIME),
        "boottime" => Clock::Posix(libc::CLOCK_BOOTTIME),
        "tai" => Clock::Posix(libc::CLOCK_TAI),
        _ => Clock::Tsc,
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    /// In the canonical order, so the TSC (which needs a rate estimate) comes last.
    clocks: Vec<&'static str>,
    window_ns: u64,
}

fn config(params: &Params) -> Result<Config, ProbeError> {
    let chosen = params.choices("clocks", "all", &CLOCKS)?;
    let window_ns = params.duration_ns("window", DEFAULT_WINDOW_NS)?;
    if window_ns < MIN_WINDOW_NS {
        return Err(ProbeError::Invalid {
            probe: PROBE,
            message: format!(
                "window {} is shorter than 1ms: the rate of each window would be read noise; use e.g. window=100ms",
                format_duration_ns(window_ns)
            ),
        });
    }
    Ok(Config {
        clocks: CLOCKS
            .iter()
            .copied()
            .filter(|c| chosen.iter().any(|x| x == c))
            .collect(),
        window_ns,
    })
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        config(params)
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("clocks".into(), self.clocks.join(",")),
            ("window".into(), format_duration_exact(self.window_ns)),
        ])
    }
}

/// One (MONOTONIC_RAW, TSC) observation.
#[derive(Debug, Clone, Copy)]
struct Pair {
    raw_ns: u64,
    tsc: u64,
    /// Width of the raw-clock bracket around the TSC read: the pair's uncertainty.
    bracket_ns: u64,
}

impl Pair {
    fn take() -> Pair {
        let mut best: Option<Pair> = None;
        for _ in 0..3 {
            let r1 = read_ns(libc::CLOCK_MONOTONIC_RAW);
            let tsc = counter::read();
            let r2 = read_ns(libc::CLOCK_MONOTONIC_RAW);
            let p = Pair {
                raw_ns: r1 + (r2.saturating_sub(r1)) / 2,
                tsc,
                bracket_ns: r2.saturating_sub(r1),
            };
            if best.is_none_or(|b| p.bracket_ns < b.bracket_ns) {
                best = Some(p);
            }
        }
        best.unwrap_or(Pair {
            raw_ns: 0,
            tsc: 0,
            bracket_ns: 0,
        })
    }

    /// Counts per second from `earlier` to `self`.
    fn rate_since(&self, earlier: &Pair) -> Option<f64> {
        let dt = self.raw_ns.checked_sub(earlier.raw_ns).filter(|&d| d > 0)?;
        let dc = self.tsc.checked_sub(earlier.tsc)?;
        Some(dc as f64 * 1e9 / dt as f64)
    }
}

/// The TSC rate against MONOTONIC_RAW: over the whole probe, and per window (running mean
/// and variance, Welford's method, so no storage grows).
struct RateTracker {
    first: Pair,
    last: Pair,
    window_ns: u64,
    next_raw_ns: u64,
    windows: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    bracket_sum_ns: u64,
    pairs: u64,
}

impl RateTracker {
    fn start(window_ns: u64) -> RateTracker {
        let first = Pair::take();
        RateTracker {
            first,
            last: first,
            window_ns,
            next_raw_ns: first.raw_ns + window_ns,
            windows: 0,
            mean: 0.0,
            m2: 0.0,
            min: f64::MAX,
            max: 0.0,
            bracket_sum_ns: first.bracket_ns,
            pairs: 1,
        }
    }

    /// Closes a window when one has passed; cheap otherwise (one MONOTONIC_RAW read).
    #[inline]
    fn poll(&mut self) {
        if read_ns(libc::CLOCK_MONOTONIC_RAW) >= self.next_raw_ns {
            self.close_window();
        }
    }

    fn close_window(&mut self) {
        let p = Pair::take();
        if let Some(rate) = p.rate_since(&self.last) {
            self.windows += 1;
            let delta = rate - self.mean;
            self.mean += delta / self.windows as f64;
            self.m2 += delta * (rate - self.mean);
            self.min = self.min.min(rate);
            self.max = self.max.max(rate);
        }
        self.bracket_sum_ns += p.bracket_ns;
        self.pairs += 1;
        self.last = p;
        self.next_raw_ns = p.raw_ns + self.window_ns;
    }

    /// The rate from the first pair to a fresh one.
    fn rate_now(&self) -> Option<f64> {
        Pair::take().rate_since(&self.first)
    }

    /// Metrics of the whole run: the rate from the first to a final pair, and the spread of
    /// the per-window rates.
    fn finish(mut self) -> (Option<f64>, Vec<(String, f64)>) {
        let end = Pair::take();
        let overall = end.rate_since(&self.first);
        let mut m = Vec::new();
        let Some(hz) = overall else {
            return (None, m);
        };
        m.push((key("hz"), hz));
        m.push(("resolution_ns".into(), 1e9 / hz));
        let span = end.raw_ns.saturating_sub(self.first.raw_ns);
        m.push((key("span_ns"), span as f64));
        m.push((
            key("error_ppb"),
            (self.first.bracket_ns + end.bracket_ns) as f64 / span.max(1) as f64 * 1e9,
        ));
        m.push((key("window_ns"), self.window_ns as f64));
        m.push((key("windows"), self.windows as f64));
        self.bracket_sum_ns += end.bracket_ns;
        self.pairs += 1;
        let mean_bracket = self.bracket_sum_ns as f64 / self.pairs as f64;
        m.push((
            key("window_error_ppb"),
            mean_bracket / self.window_ns as f64 * 1e9,
        ));
        if self.windows >= 2 {
            let sd = (self.m2 / (self.windows - 1) as f64).sqrt();
            m.push((key("stability_ppb"), sd / hz * 1e9));
            m.push((key("rate_min_hz"), self.min));
            m.push((key("rate_max_hz"), self.max));
        }
        (Some(hz), m)
    }
}

/// A metric of the CPU counter: `tsc_hz` on x86_64, `cntvct_hz` on aarch64.
fn key(what: &str) -> String {
    format!("{}_{what}", counter::NAME)
}

struct ClockResult {
    read_cost: Recorder,
    backward: u64,
    /// Smallest non-zero step between two consecutive reads, in the clock's own units: the
    /// resolution a reader really sees (clock_getres promises 1 ns for every hrtimer clock).
    min_step: Option<u64>,
    measured_ns: u64,
}

/// Measures one clock: two reads per sample, every read checked against the previous one.
#[inline(always)]
fn measure_clock(
    ctx: &ProbeContext,
    cell: Cell,
    read: impl Fn() -> u64,
    to_ns: impl Fn(u64) -> u64,
    tracker: &mut Option<RateTracker>,
    live: &rtgauge_core::live::LiveCell,
) -> ClockResult {
    let mut rec = Recorder::new(DEFAULT_INTERVAL_NS);
    warm_up(ctx, cell.warmup_ns, CHECK_EVERY, || {
        std::hint::black_box((read(), read()));
        if let Some(t) = tracker.as_mut() {
            t.poll();
        }
    });
    let mut backward = 0u64;
    let mut min_step = u64::MAX;
    let mut prev = read();
    let start = now_ns();
    let mut now = start;
    let mut i = 0u64;
    loop {
        let a = read();
        let b = read();
        backward += u64::from(a < prev) + u64::from(b < a);
        let step = b.saturating_sub(a);
        if step != 0 && step < min_step {
            min_step = step;
        }
        prev = b;
        rec.record(to_ns(step), now - start);
        i += 1;
        if i.is_multiple_of(CHECK_EVERY) {
            now = now_ns();
            if let Some(t) = tracker.as_mut() {
                t.poll();
            }
            live.publish(to_ns(b.saturating_sub(a)), backward);
            if ctx.stopped() {
                break;
            }
        }
        if cell.budget.done(start, now, rec.count()) {
            break;
        }
    }
    ClockResult {
        read_cost: rec,
        backward,
        min_step: (min_step != u64::MAX).then_some(min_step),
        measured_ns: now_ns() - start,
    }
}

/// Whether /proc/cpuinfo promises a TSC that ticks at a constant rate through frequency
/// changes and idle states; None when it does not say (not x86).
fn tsc_flags_missing() -> Vec<&'static str> {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return Vec::new();
    };
    let Some(flags) = info.lines().find(|l| l.starts_with("flags")) else {
        return Vec::new();
    };
    let words: Vec<&str> = flags.split_whitespace().collect();
    ["constant_tsc", "nonstop_tsc"]
        .into_iter()
        .filter(|f| !words.contains(f))
        .collect()
}

/// What the counter's row says beyond its read cost: the rate its hardware declares against the
/// one measured (aarch64's CNTFRQ_EL0), and whether its reads were trapped by the kernel.
fn counter_checks(s: &mut Series, warnings: &mut Vec<String>) {
    let name = counter::NAME;
    let measured = s.metrics.get(&key("hz")).copied();
    if let (Some(declared), Some(measured)) = (counter::declared_hz(), measured) {
        let ppm = (measured - declared) / declared * 1e6;
        s.metrics.insert(key("declared_hz"), declared);
        s.metrics.insert(key("declared_offset_ppm"), ppm);
        if ppm.abs() > 100.0 {
            warnings.push(format!(
                "{name}: counts at {measured:.0} Hz against CLOCK_MONOTONIC_RAW but declares {declared:.0} Hz (CNTFRQ_EL0), {ppm:+.0} ppm apart: the clocksource is not this counter, or the firmware set CNTFRQ_EL0 wrong"
            ));
        }
    }
    let Some(median) = s.stats.median_ns else {
        return;
    };
    let trapped = median > counter::TRAPPED_READ_NS;
    s.metrics
        .insert(key("read_trapped"), f64::from(u8::from(trapped)));
    if trapped {
        warnings.push(format!(
            "{name}: one read takes {median} ns at the median: the kernel traps and emulates it (a timer erratum workaround or a hypervisor), so a loop reading the counter pays a trap each time"
        ));
    }
}

fn measure(ctx: &ProbeContext, cfg: &Config, cell: Cell) -> (Vec<Series>, Vec<String>, u64) {
    let mut series = Vec::new();
    let mut warnings = Vec::new();
    let mut measured = 0u64;
    let live = ctx.live.register("clock".into());
    let want_tsc = cfg.clocks.contains(&counter::NAME);
    let tsc_reason = want_tsc.then(counter::unavailable).flatten();
    if let Some(reason) = &tsc_reason {
        warnings.push(reason.clone());
    }
    let mut tracker = (want_tsc && tsc_reason.is_none()).then(|| RateTracker::start(cfg.window_ns));

    for &name in &cfg.clocks {
        if ctx.stopped() {
            break;
        }
        match clock_of(name) {
            Clock::Posix(id) => {
                let Some(res) = resolution_ns(id) else {
                    warnings.push(format!(
                        "{name}: clock_getres refused this clock ({}); skipped: the kernel is too old for it",
                        std::io::Error::last_os_error()
                    ));
                    continue;
                };
                let r = measure_clock(ctx, cell, || read_ns(id), |d| d, &mut tracker, &live);
                measured += r.measured_ns;
                let mut s = Series::new("read_cost", r.read_cost.summary())
                    .label("clock", name)
                    .counter("backward_steps", r.backward)
                    .counter("reads", 2 * r.read_cost.count());
                s.metrics.insert("resolution_ns".into(), res as f64);
                if let Some(step) = r.min_step {
                    s.metrics.insert("observed_step_ns".into(), step as f64);
                }
                series.push(s);
            }
            Clock::Tsc => {
                let Some(t) = tracker.as_mut() else {
                    continue;
                };
                // Read costs are converted to ns with the rate so far; give it a span long
                // enough that its error is far below one ns per read.
                let elapsed = read_ns(libc::CLOCK_MONOTONIC_RAW).saturating_sub(t.first.raw_ns);
                if elapsed < MIN_RATE_SPAN_NS {
                    rtgauge_core::clock::sleep_for(MIN_RATE_SPAN_NS - elapsed);
                }
                let Some(hz) = t.rate_now().filter(|&hz| hz > 0.0) else {
                    warnings.push(format!(
                        "{}: the counter did not advance; skipped",
                        counter::NAME
                    ));
                    continue;
                };
                // ns = cycles × 1e9 / hz, as a 32.32 fixed-point multiply in the loop, rounded
                // to the nearest ns.
                let mult = ((1e9 / hz) * 4_294_967_296.0) as u128;
                let to_ns = move |cycles: u64| ((cycles as u128 * mult + (1 << 31)) >> 32) as u64;
                let r = measure_clock(ctx, cell, counter::read, to_ns, &mut tracker, &live);
                measured += r.measured_ns;
                let mut s = Series::new("read_cost", r.read_cost.summary())
                    .label("clock", name)
                    .counter("backward_steps", r.backward)
                    .counter("reads", 2 * r.read_cost.count());
                if let Some(step) = r.min_step {
                    // Some TSCs advance in coarse steps (AMD Zen: every 10 ns by ~freq/100 MHz).
                    s.metrics.insert(key("step_cycles"), step as f64);
                    s.metrics
                        .insert("observed_step_ns".into(), step as f64 * 1e9 / hz);
                }
                series.push(s);
            }
        }
    }
    if let Some(t) = tracker.take() {
        let (_, metrics) = t.finish();
        if let Some(s) = series
            .iter_mut()
            .find(|s| s.labels.get("clock").is_some_and(|c| c == counter::NAME))
        {
            for (k, v) in metrics {
                s.metrics.insert(k, v);
            }
            counter_checks(s, &mut warnings);
        }
        let missing = tsc_flags_missing();
        if !missing.is_empty() && cfg!(target_arch = "x86_64") {
            warnings.push(format!(
                "tsc: the CPU does not report {}: its rate may change with frequency or idle states, so TSC times are not comparable",
                missing.join(" and ")
            ));
        }
    }
    (series, warnings, measured)
}

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
mod summary_rows {
    use rtgauge_report::format::TimeUnit;
    use rtgauge_report::summary::{fmt, Cells, SummaryRows};

    use rtgauge_result::{ProbeRun, RunResult};

    impl SummaryRows for super::ClockProbe {
        fn probe(&self) -> &'static str {
            super::ABOUT.name
        }

        fn question(&self) -> &'static str {
            "clock read cost"
        }

        fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
            vec!["median".into(), "max".into(), "backward".into()]
        }

        fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
            clock_rows(run, unit)
        }

        fn notes(&self, run: &ProbeRun, result: &RunResult) -> Vec<String> {
            vec![counter_verdict(run, result)]
        }
    }

    fn clock_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
        run.series
            .iter()
            .map(|s| {
                (
                    s.labels
                        .get("clock")
                        .cloned()
                        .unwrap_or_else(|| s.display_name()),
                    vec![
                        fmt(unit, s, s.stats.median_ns),
                        fmt(unit, s, s.stats.max_ns),
                        s.counters
                            .get("backward_steps")
                            .map(|n| n.to_string())
                            .unwrap_or_else(|| "–".into()),
                    ],
                )
            })
            .collect()
    }

    /// Whether the counter's rate held: its spread over the measuring windows against what one
    /// window can resolve.
    fn counter_verdict(run: &ProbeRun, result: &RunResult) -> String {
        let source = format!("clocksource {}", result.calibration.clocksource);
        let tsc = run
            .series
            .iter()
            .find(|s| s.labels.get("clock").map(String::as_str) == Some(super::counter::NAME));
        let title = match super::counter::NAME {
            "cntvct" => "generic timer",
            _ => "TSC",
        };
        let Some(tsc) = tsc else {
            return format!("{title} not measured · {source}");
        };
        let m = |k: &str| tsc.metrics.get(&super::key(k)).copied();
        let backward = tsc.counters.get("backward_steps").copied().unwrap_or(0);
        let rate = m("hz")
            .map(|hz| format!("{:.3} GHz", hz / 1e9))
            .unwrap_or_else(|| "rate unknown".into());
        let verdict = match (m("stability_ppb"), m("window_error_ppb")) {
            _ if backward > 0 => format!("went backwards {backward} times: do not trust it"),
            (Some(spread), Some(error)) if spread <= error.max(1.0) => {
                format!("stable (spread {spread:.0} ppb ≤ {error:.0} ppb resolved)")
            }
            (Some(spread), Some(error)) => {
                format!("UNSTABLE (spread {spread:.0} ppb > {error:.0} ppb resolved)")
            }
            _ => "stability not measured (one window; measure longer)".into(),
        };
        format!("{title} {rate} {verdict} · {source}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_come_in_canonical_order_with_tsc_last() {
        let asked = format!("{},monotonic", counter::NAME);
        let cfg = config(&Params::of(PROBE, &[("clocks", &asked)])).unwrap();
        assert_eq!(cfg.clocks, ["monotonic", counter::NAME]);
        assert_eq!(config(&Params::of(PROBE, &[])).unwrap().clocks.len(), 6);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let e = config(&Params::of(PROBE, &[("clocks", "sundial")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown clocks 'sundial'"), "{e}");
        let e = config(&Params::of(PROBE, &[("window", "10us")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("shorter than 1ms"), "{e}");
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn counter_rate_is_positive_and_windows_accumulate() {
        if counter::unavailable().is_some() {
            return;
        }
        let mut t = RateTracker::start(MIN_WINDOW_NS);
        let end = now_ns() + 20_000_000;
        while now_ns() < end {
            t.poll();
        }
        assert!(t.windows >= 2, "{}", t.windows);
        let (hz, metrics) = t.finish();
        assert!(hz.unwrap() > 1e6);
        assert!(metrics.iter().any(|(k, _)| *k == key("stability_ppb")));
    }
}
