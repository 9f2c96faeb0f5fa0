//! `noise`: every stall of a CPU, not only those that hit a wake-up (like rt-tests' `oslat`
//! and rtla's `osnoise`).
//!
//! One thread per measured CPU reads the cheapest clock back to back: the CPU's counter (TSC,
//! CNTVCT) where it runs at a steady rate, its rate measured against CLOCK_MONOTONIC over the
//! run; CLOCK_MONOTONIC through the vDSO otherwise. Every gap between two consecutive reads
//! longer than the threshold is a **noise event**: something other than this thread ran on
//! the CPU (an interrupt, a kernel thread, an SMI, the hypervisor). Per CPU the result gives
//! the event durations (series `gap`, whose interval maxima are the longest stall of each
//! interval), events per second, noise in ns per second, the CPU's availability and the steal time the
//! kernel accounted over the run (`/proc/stat`, what a hypervisor admits to).
//!
//! The thread polls for `runtime` of each `period` and sleeps for the rest (osnoise's duty
//! cycle), its windows starting on whole multiples of the period on CLOCK_MONOTONIC. The
//! default (90 ms of every 100 ms) stays under the kernel's real-time throttling (950 ms of
//! each second by default) and leaves housekeeping threads of that CPU 10 ms in every 100 ms;
//! `runtime=100%` polls without a break, for an isolated CPU.
//!
//! The polling loop reads the clock, compares, and on an event writes two numbers into storage
//! allocated before it started (bounded: when full, events are counted as dropped). Statistics
//! are built after the polling ends.

use rtgauge_core::clock::{self, counter, now_ns};
use rtgauge_core::probe::{About, ParamSpec, Params, ProbeConfig};
use rtgauge_core::probe::{
    ProbeContext, ProbeError, ProbeOutput, SampleSink, SeriesDef, TypedProbe,
};
use rtgauge_core::threads::{merge_obtained, per_cpu_threads};
use rtgauge_core::units::{self, format_duration_exact, format_duration_ns};
use rtgauge_result::{Contributor, Series, MAX_SERIES_CAUSES, MAX_SERIES_CAUSES_ALL};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use rtgauge_trace::{
    attribute_each, cause_name, AttributionConfig, Cause, Spike, TraceConfig, TraceSession,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const PROBE: &str = crate::names::NOISE;
const DESCRIPTION: &str =
    "every stall of a CPU: a thread polls the clock and counts each gap between reads above a threshold";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS).reads_whole_trace();
const PARAMS: [ParamSpec; 7] = [
    ParamSpec::new("threshold", "auto: 5 x the median clock read measured on the CPU", "shortest gap between two reads counted as noise, e.g. 1us; never below twice the read cost (raised, with a warning)"),
    ParamSpec::new("period", "100ms", "length of one polling cycle, 1ms to 10s: the thread polls for runtime, then sleeps the rest"),
    ParamSpec::new("runtime", "90%", "polling time in each period, as a share (90%, 100% for an isolated CPU) or a duration (95ms)"),
    ParamSpec::new("interval", "1s", "width of the intervals whose longest gap is kept (the over-time series)"),
    ParamSpec::new("max-events", "1000000", "events kept per CPU for statistics and recording; more are counted as dropped"),
    ParamSpec::new("trace", "no", "yes: after the polling, split each CPU's noise by what the kernel ran in the stalls (IRQ, softirq, NMI, thread, or nothing: outside Linux), from a tracefs recording; no: durations only. A run with --trace always splits, from its own recording"),
    ParamSpec::new("clock", "auto", "auto (the CPU counter where steady, else monotonic), counter, or monotonic (the vDSO clock)"),
];
pub const CLOCKS: [&str; 3] = ["auto", "counter", "monotonic"];
const DEFAULT_PERIOD_NS: u64 = 100_000_000;
const MIN_PERIOD_NS: u64 = 1_000_000;
const MAX_PERIOD_NS: u64 = 10_000_000_000;
const DEFAULT_MAX_EVENTS: u64 = 1_000_000;
/// Bounds the storage a mistyped `max-events` could ask for (16 bytes an event per CPU).
const MAX_MAX_EVENTS: u64 = 100_000_000;
/// The automatic threshold, in read costs: far enough above a read that cache and branch
/// misses of the loop itself stay below it, close enough to see sub-microsecond interference.
const AUTO_THRESHOLD_READS: u64 = 5;
/// A threshold closer than this many read costs would count the loop's own reads.
const MIN_THRESHOLD_READS: u64 = 2;
/// Shortest span over which the counter's rate is measured before the polling starts.
const MIN_CALIBRATION_NS: u64 = 20_000_000;
/// Consecutive gaps sampled (during warm-up) to find the read cost.
const READ_SAMPLES: usize = 4096;
/// How long the kernel's event rate is measured to size the trace buffers for a run.
const TRACE_RATE_SAMPLE: Duration = Duration::from_millis(250);

pub struct Noise;

impl TypedProbe for Noise {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let source = cfg.clock.source()?;
        if let Some(d) = ctx.budget.duration_ns.filter(|&d| d < cfg.period_ns) {
            return Err(ProbeError::Invalid {
                probe: PROBE,
                message: format!(
                    "period {} is longer than the measuring duration {}; shorten the period or lengthen --duration",
                    format_duration_exact(cfg.period_ns),
                    format_duration_exact(d)
                ),
            });
        }
        let cfg = &*cfg;
        let mut out_warnings = Vec::new();
        let sinks = ctx.recording_sinks(
            ctx.cpus
                .iter()
                .map(|cpu| SeriesDef::new("gap").label("cpu", cpu))
                .collect(),
            ctx.cpus.len(),
            "ns since the measuring thread's measurement start (the end of its warm-up); the value is the gap's duration, the time its start",
        )?;
        // The kernel's view: the run's --trace session, else one of its own for trace=yes
        // (a run holds one session at a time, docs/trace.md).
        let own_session = match (ctx.trace, cfg.trace) {
            (None, true) => match TraceSession::start(&TraceConfig::new(ctx.cpus.to_vec())) {
                Ok(session) => Some(session),
                Err(e) => {
                    out_warnings.push(format!(
                        "trace=yes: the kernel's view is not available ({e}); the result has the durations only"
                    ));
                    None
                }
            },
            _ => None,
        };
        let session = ctx.trace.or(own_session.as_ref());
        // The trace is read once, after polling: its buffers must hold the whole run, or the
        // early stalls go unexplained.
        let fit = match (session, ctx.budget.duration_ns) {
            (Some(session), Some(duration)) => {
                let span = Duration::from_nanos(ctx.warmup_ns.max(MIN_CALIBRATION_NS) + duration);
                match fit_while_busy(session, ctx.cpus, span) {
                    Ok(fit) => Some(fit),
                    Err(e) => {
                        out_warnings.push(format!(
                            "the trace buffers could not be sized for the run ({e}); stalls before the buffer's oldest event are counted as not explained"
                        ));
                        None
                    }
                }
            }
            _ => None,
        };
        let steal_before = steal_ns_per_cpu();
        let threads = per_cpu_threads(ctx, |cpu, _| {
            let index = ctx.cpus.iter().position(|&c| c == cpu).unwrap_or(0);
            let sink = sinks.take(index).map(|s| (s, index as u16));
            Ok(poll_cpu(ctx, cfg, source, cpu, sink))
        })?;
        let steal_after = steal_ns_per_cpu();
        let obtained: Vec<_> = threads.iter().map(|(o, _)| o.clone()).collect();
        let mut out = ProbeOutput {
            obtained: merge_obtained(&obtained),
            warnings: out_warnings,
            ..ProbeOutput::default()
        };
        out.params.insert("clock-used".into(), source.name().into());
        if let Some(fit) = fit {
            out.params.insert(
                "trace-buffer-used".into(),
                format!("{} KiB per CPU", fit.kb_per_cpu),
            );
        }
        let mut thresholds = Vec::new();
        for (_, t) in threads {
            let steal = steal_after
                .get(&t.cpu)
                .zip(steal_before.get(&t.cpu))
                .map(|(a, b)| a.saturating_sub(*b));
            out.measured_ns = out.measured_ns.max(t.measured_ns);
            if let Some(w) = t.warning(cfg) {
                out.warnings.push(w);
            }
            thresholds.push(format!(
                "cpu {}: {}",
                t.cpu,
                format_duration_ns(t.threshold_ns)
            ));
            let causes = session.map(|session| t.attribute(session));
            let cpu = t.cpu;
            let mut series = t.series(steal);
            if let Some(causes) = causes {
                match causes {
                    Ok(c) => {
                        if let Some(w) = c.coverage_warning(cpu, fit) {
                            out.warnings.push(w);
                        }
                        c.annotate(&mut series)
                    }
                    Err(e) => out.warnings.push(format!(
                        "cpu {}: the kernel's view could not be read ({e}); durations only",
                        series.labels.get("cpu").map_or("?", String::as_str)
                    )),
                }
            }
            out.series.push(series);
        }
        out.params
            .insert("threshold-used".into(), thresholds.join(", "));
        Ok(out)
    }
}

/// Sizes the trace buffers for `span` while a thread spins on each measured CPU, as the
/// polling will. An idle CPU records almost nothing (no tick, no switches): sized from an idle
/// sample, the buffers of a run on an idle machine held the last third of it, and the first
/// two thirds of its stalls went unexplained.
fn fit_while_busy(
    session: &TraceSession,
    cpus: &[usize],
    span: Duration,
) -> Result<rtgauge_trace::BufferFit, rtgauge_trace::TraceError> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for &cpu in cpus {
            let stop = &stop;
            scope.spawn(move || {
                // Not pinned (a CPU outside this process's set): the sample reads low and the
                // coverage warning says so after the run.
                let _ = rtgauge_os::sched::set_affinity(&[cpu]);
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let fit = session.fit_buffer_to(span, TRACE_RATE_SAMPLE);
        stop.store(true, Ordering::Relaxed);
        fit
    })
}

/// Which clock the polling loop reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChoice {
    Auto,
    Counter,
    Monotonic,
}

/// The clock a run really reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Counter,
    Monotonic,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Counter if cfg!(target_arch = "aarch64") => "cntvct",
            Source::Counter => "tsc",
            Source::Monotonic => "CLOCK_MONOTONIC",
        }
    }
}

impl ClockChoice {
    fn name(self) -> &'static str {
        match self {
            ClockChoice::Auto => "auto",
            ClockChoice::Counter => "counter",
            ClockChoice::Monotonic => "monotonic",
        }
    }

    fn source(self) -> Result<Source, ProbeError> {
        match (self, counter::unavailable()) {
            (ClockChoice::Monotonic, _) | (ClockChoice::Auto, Some(_)) => Ok(Source::Monotonic),
            (_, None) => Ok(Source::Counter),
            (ClockChoice::Counter, Some(why)) => Err(ProbeError::Unavailable(format!(
                "noise: clock=counter: {why}; use clock=monotonic or clock=auto"
            ))),
        }
    }
}

/// How long each polling window lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// A share of the period, in percent (1..=100).
    Percent(u64),
    Duration(u64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// None: chosen from the read cost measured on each CPU.
    threshold_ns: Option<u64>,
    period_ns: u64,
    runtime: Runtime,
    interval_ns: u64,
    max_events: u64,
    clock: ClockChoice,
    trace: bool,
}

impl Config {
    fn runtime_ns(&self) -> u64 {
        match self.runtime {
            Runtime::Percent(p) => self.period_ns / 100 * p + self.period_ns % 100 * p / 100,
            Runtime::Duration(ns) => ns,
        }
    }
}

fn invalid(message: String) -> ProbeError {
    ProbeError::Invalid {
        probe: PROBE,
        message,
    }
}

fn parse_runtime(params: &Params, period_ns: u64) -> Result<Runtime, ProbeError> {
    let text = params.text("runtime", "90%");
    let runtime = match text.strip_suffix('%') {
        Some(p) => match p.trim().parse::<u64>() {
            Ok(p) if (1..=100).contains(&p) => Runtime::Percent(p),
            _ => {
                return Err(invalid(format!(
                    "runtime '{}' is not a whole percentage from 1% to 100%; use e.g. runtime=90%",
                    units::quote(&text)
                )))
            }
        },
        None => Runtime::Duration(params.duration_ns("runtime", 0)?),
    };
    if let Runtime::Duration(ns) = runtime {
        if ns > period_ns {
            return Err(invalid(format!(
                "runtime {} is longer than the period {}; use at most the period, or runtime=100%",
                format_duration_exact(ns),
                format_duration_exact(period_ns)
            )));
        }
    }
    Ok(runtime)
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        let period_ns = params.duration_ns("period", DEFAULT_PERIOD_NS)?;
        if !(MIN_PERIOD_NS..=MAX_PERIOD_NS).contains(&period_ns) {
            return Err(invalid(format!(
                "period {} is outside 1ms..10s; use e.g. period=100ms",
                format_duration_exact(period_ns)
            )));
        }
        let threshold_ns = match params.text("threshold", "auto").as_str() {
            "auto" => None,
            _ => Some(params.duration_ns("threshold", 0)?),
        };
        let max_events = params.count("max-events", DEFAULT_MAX_EVENTS)?;
        if max_events > MAX_MAX_EVENTS {
            return Err(invalid(format!(
                "max-events {max_events} is more than {MAX_MAX_EVENTS} (16 bytes each, per CPU); use e.g. max-events=1000000"
            )));
        }
        let clock = match params.text("clock", "auto").as_str() {
            "auto" => ClockChoice::Auto,
            "counter" => ClockChoice::Counter,
            "monotonic" => ClockChoice::Monotonic,
            other => {
                return Err(invalid(format!(
                    "unknown clock '{}'; accepted: {}",
                    units::quote(other),
                    CLOCKS.join(", ")
                )))
            }
        };
        Ok(Config {
            threshold_ns,
            period_ns,
            runtime: parse_runtime(params, period_ns)?,
            interval_ns: params.duration_ns("interval", DEFAULT_INTERVAL_NS)?,
            max_events,
            clock,
            trace: rtgauge_core::probe::flag(PROBE, params, "trace", false)?,
        })
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (
                "threshold".into(),
                self.threshold_ns
                    .map_or_else(|| "auto".into(), format_duration_exact),
            ),
            ("period".into(), format_duration_exact(self.period_ns)),
            (
                "runtime".into(),
                match self.runtime {
                    Runtime::Percent(p) => format!("{p}%"),
                    Runtime::Duration(ns) => format_duration_exact(ns),
                },
            ),
            ("interval".into(), format_duration_exact(self.interval_ns)),
            ("max-events".into(), self.max_events.to_string()),
            ("clock".into(), self.clock.name().into()),
            ("trace".into(), if self.trace { "yes" } else { "no" }.into()),
        ])
    }
}

/// Steal time per CPU so far (ns), from `/proc/stat` (the 8th figure of each `cpuN` line, in
/// clock ticks). Empty where the file cannot be read.
fn steal_ns_per_cpu() -> BTreeMap<usize, u64> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    std::fs::read_to_string("/proc/stat")
        .map(|text| parse_steal(&text, hz))
        .unwrap_or_default()
}

fn parse_steal(stat: &str, ticks_per_s: u64) -> BTreeMap<usize, u64> {
    stat.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let steal = fields.nth(7)?.parse::<u64>().ok()?;
            Some((cpu, steal * (clock::NS_PER_SEC / ticks_per_s.max(1))))
        })
        .collect()
}

/// A (CLOCK_MONOTONIC, counter) observation: the counter value matched with the midpoint of
/// the tightest of three monotonic brackets.
#[derive(Debug, Clone, Copy)]
struct Pair {
    mono_ns: u64,
    ticks: u64,
}

impl Pair {
    fn take(source: Source) -> Pair {
        if source == Source::Monotonic {
            let t = now_ns();
            return Pair {
                mono_ns: t,
                ticks: t,
            };
        }
        let mut best = (
            u64::MAX,
            Pair {
                mono_ns: 0,
                ticks: 0,
            },
        );
        for _ in 0..3 {
            let a = now_ns();
            let ticks = counter::read();
            let b = now_ns();
            if b - a < best.0 {
                best = (
                    b - a,
                    Pair {
                        mono_ns: a + (b - a) / 2,
                        ticks,
                    },
                );
            }
        }
        best.1
    }

    /// Counter ticks per nanosecond between `earlier` and this pair.
    fn rate_since(&self, earlier: &Pair) -> f64 {
        let ns = self.mono_ns.saturating_sub(earlier.mono_ns).max(1);
        self.ticks.saturating_sub(earlier.ticks).max(1) as f64 / ns as f64
    }
}

/// What the polling loop keeps: events in storage allocated before it starts.
struct Events {
    /// Start of each event, in ticks since the measurement origin.
    starts: Vec<u64>,
    /// Length of each event, in ticks.
    gaps: Vec<u64>,
    len: usize,
    dropped: u64,
    /// Every gap above the threshold, stored or not.
    noise_ticks: u64,
    longest: u64,
    longest_at: u64,
    /// The longest gap since the current polling window began (reset between windows).
    window_longest: u64,
    shortest_gap: u64,
    reads: u64,
    polled_ticks: u64,
}

impl Events {
    fn with_capacity(capacity: usize) -> Events {
        Events {
            // vec![0; n] writes nothing the kernel has not zeroed; filling with a non-zero
            // value faults every page in now rather than in the polling loop.
            starts: vec![u64::MAX; capacity],
            gaps: vec![u64::MAX; capacity],
            len: 0,
            dropped: 0,
            noise_ticks: 0,
            longest: 0,
            longest_at: 0,
            window_longest: 0,
            shortest_gap: u64::MAX,
            reads: 0,
            polled_ticks: 0,
        }
    }

    #[inline(always)]
    fn note(&mut self, start: u64, gap: u64) {
        if self.len < self.starts.len() {
            self.starts[self.len] = start;
            self.gaps[self.len] = gap;
            self.len += 1;
        } else {
            self.dropped += 1;
        }
        self.noise_ticks += gap;
        if gap > self.longest {
            self.longest = gap;
            self.longest_at = start;
        }
        self.window_longest = self.window_longest.max(gap);
    }

    fn count(&self) -> u64 {
        self.len as u64 + self.dropped
    }
}

/// Polls `read` until it reaches `until`, continuing from the read `prev`; returns the last
/// read. The loop: read, subtract, compare; an event costs two stores.
#[inline(always)]
fn poll(
    read: impl Fn() -> u64,
    prev: u64,
    until: u64,
    origin: u64,
    thr: u64,
    ev: &mut Events,
) -> u64 {
    let mut prev = prev;
    let mut reads = 0u64;
    let mut shortest = ev.shortest_gap;
    loop {
        let now = read();
        let gap = now.wrapping_sub(prev);
        shortest = shortest.min(gap);
        reads += 1;
        if gap > thr {
            ev.note(prev.wrapping_sub(origin), gap);
            // Noting an event is the loop's own work, not noise: the next gap starts after
            // it, or a slow note (a debug build, a cold cache) would make the next gap an
            // event too, and so on in a chain.
            prev = read();
        } else {
            prev = now;
        }
        if now >= until {
            break;
        }
    }
    ev.reads += reads;
    ev.shortest_gap = shortest;
    prev
}

/// The smallest and the median of `READ_SAMPLES` consecutive gaps between reads.
fn read_cost_ticks(read: &impl Fn() -> u64, samples: &mut [u64]) -> (u64, u64) {
    let mut prev = read();
    for s in samples.iter_mut() {
        let now = read();
        *s = now.wrapping_sub(prev);
        prev = now;
    }
    samples.sort_unstable();
    (samples[0], samples[samples.len() / 2])
}

/// What one CPU's thread measured.
struct CpuNoise {
    cpu: usize,
    events: Events,
    /// Counter ticks per ns over the run.
    rate: f64,
    threshold_ns: u64,
    threshold_raised: bool,
    read_cost_median_ns: u64,
    start_mono_ns: u64,
    measured_ns: u64,
    interval_ns: u64,
    /// The polling thread's id, to tell it apart in the kernel's recording.
    tid: u32,
    sink: Option<(SampleSink, u16)>,
}

fn poll_cpu(
    ctx: &ProbeContext,
    cfg: &Config,
    source: Source,
    cpu: usize,
    sink: Option<(SampleSink, u16)>,
) -> CpuNoise {
    let capacity = cfg.max_events.min(ctx.budget.loops.unwrap_or(u64::MAX)) as usize;
    let mut events = Events::with_capacity(capacity);
    let mut samples = vec![0u64; READ_SAMPLES];
    let live = ctx.live.register(format!("cpu{cpu}"));
    let counter_read = || counter::read();
    let mono_read = || now_ns();

    // Warm-up and calibration: the loop's code and the clock's page are hot, the read cost
    // is known, and the counter's rate is measured over at least MIN_CALIBRATION_NS.
    let first = Pair::take(source);
    let warm_end = first.mono_ns + ctx.warmup_ns.max(MIN_CALIBRATION_NS);
    let mut cost = (u64::MAX, u64::MAX);
    while now_ns() < warm_end && !ctx.stopped() {
        // The least disturbed round is the read cost.
        let round = match source {
            Source::Counter => read_cost_ticks(&counter_read, &mut samples),
            Source::Monotonic => read_cost_ticks(&mono_read, &mut samples),
        };
        cost = cost.min(round);
        clock::sleep_for(100_000);
    }
    let rate = Pair::take(source).rate_since(&first);
    let to_ticks = |ns: u64| (ns as f64 * rate).round() as u64;
    let median_cost = cost.1.max(1);
    let floor = median_cost * MIN_THRESHOLD_READS;
    let wanted = cfg
        .threshold_ns
        .map_or(median_cost * AUTO_THRESHOLD_READS, to_ticks);
    let threshold = wanted.max(floor);
    let threshold_raised = cfg.threshold_ns.is_some() && wanted < floor;

    let runtime_ns = cfg.runtime_ns();
    let continuous = runtime_ns >= cfg.period_ns;
    // Windows start on whole periods of CLOCK_MONOTONIC, so other tools (and the tests'
    // stall injector) know when the CPU is being polled.
    let mut window = (now_ns() / cfg.period_ns + 1) * cfg.period_ns;
    let first_window = window;
    clock::sleep_until(window);
    let origin = Pair::take(source);
    loop {
        let remaining_ns = (window + runtime_ns).saturating_sub(now_ns());
        let start = match source {
            Source::Counter => counter::read(),
            Source::Monotonic => now_ns(),
        };
        // Each window starts from its own first read, also back to back at runtime=100%: the
        // bookkeeping between windows (a few tens of ns, ten times a second) is then neither
        // polled time nor a self-made event.
        let until = start + to_ticks(remaining_ns);
        let last = match source {
            Source::Counter => poll(
                counter_read,
                start,
                until,
                origin.ticks,
                threshold,
                &mut events,
            ),
            Source::Monotonic => poll(
                mono_read,
                start,
                until,
                origin.ticks,
                threshold,
                &mut events,
            ),
        };
        events.polled_ticks += last.wrapping_sub(start);
        let now = now_ns();
        // One sample per window, its longest stall (0: none above the threshold): the live
        // display's maximum is the run's, a monitor's histogram counts windows.
        let window_longest = std::mem::take(&mut events.window_longest);
        live.publish_at((window_longest as f64 / rate) as u64, events.count(), now);
        window += cfg.period_ns;
        if ctx.stopped() || ctx.budget.done(first_window, now, events.count()) {
            break;
        }
        if !continuous {
            clock::sleep_until(window);
        }
    }
    let end = Pair::take(source);
    CpuNoise {
        cpu,
        rate: end.rate_since(&first),
        threshold_ns: (threshold as f64 / rate).round() as u64,
        threshold_raised,
        read_cost_median_ns: (median_cost as f64 / rate).round() as u64,
        start_mono_ns: origin.mono_ns,
        measured_ns: end.mono_ns.saturating_sub(origin.mono_ns),
        interval_ns: cfg.interval_ns,
        // SAFETY: gettid has no preconditions.
        tid: unsafe { libc::gettid() } as u32,
        events,
        sink,
    }
}

impl CpuNoise {
    fn ns(&self, ticks: u64) -> u64 {
        (ticks as f64 / self.rate).round() as u64
    }

    /// What the kernel ran in each stall the trace buffer still covers (its oldest part is
    /// overwritten on a long run), summed per kind of cause. Runs after the polling, off the
    /// measuring loop.
    fn attribute(&self, session: &TraceSession) -> Result<Causes, rtgauge_trace::TraceError> {
        let trace = session.read_cpu(self.cpu)?;
        let covered_from = trace.events.first().map_or(u64::MAX, |e| e.ts_ns);
        let config = AttributionConfig {
            rt_throttling: rtgauge_trace::rt_throttling_on(),
            ..AttributionConfig::default()
        };
        let mut causes = Causes {
            events_lost: trace.events_lost,
            ..Causes::default()
        };
        let stalls = (0..self.events.len)
            .map(|i| self.start_mono_ns + self.ns(self.events.starts[i]))
            .zip(&self.events.gaps[..self.events.len]);
        // A stall older than the buffer's oldest event has nothing to explain it: counted.
        for (_, &gap) in stalls.clone().filter(|&(start, _)| start < covered_from) {
            causes.untraced_events += 1;
            causes.untraced_ns += self.ns(gap);
        }
        let spikes: Vec<Spike> = stalls
            .filter(|&(start, _)| start >= covered_from)
            .map(|(start, &gap)| Spike {
                cpu: self.cpu as u32,
                programmed_ns: start,
                woke_ns: start + self.ns(gap),
                thread_pid: self.tid,
            })
            .collect();
        // One pass over the trace for all the stalls.
        attribute_each(
            &spikes,
            &trace.events,
            trace.events_lost,
            &config,
            |_, found| {
                causes.events += 1;
                causes.traced_ns += found.woke_ns.saturating_sub(found.programmed_ns);
                for c in &found.contributors {
                    let slot = match &c.cause {
                        Cause::Irq { .. } | Cause::Vector { .. } => &mut causes.irq_ns,
                        Cause::Softirq { .. } => &mut causes.softirq_ns,
                        Cause::Nmi { .. } => &mut causes.nmi_ns,
                        Cause::Thread { pid, .. } if *pid == self.tid => continue,
                        Cause::Thread { .. } | Cause::ThreadedIrq { .. } => &mut causes.thread_ns,
                        Cause::Gap { .. } => &mut causes.outside_linux_ns,
                        Cause::Throttled { .. } => &mut causes.throttled_ns,
                        Cause::Idle | Cause::Unknown => &mut causes.unknown_ns,
                    };
                    *slot += c.duration_ns;
                    let total =
                        causes
                            .by_cause
                            .entry(c.cause.clone())
                            .or_insert_with(|| Contributor {
                                cause: c.cause.clone(),
                                duration_ns: 0,
                                count: 0,
                                longest_ns: 0,
                            });
                    total.duration_ns += c.duration_ns;
                    total.count = total.count.saturating_add(c.count);
                    total.longest_ns = total.longest_ns.max(c.longest_ns);
                }
            },
        );
        Ok(causes)
    }

    fn warning(&self, cfg: &Config) -> Option<String> {
        let mut parts = Vec::new();
        if self.threshold_raised {
            parts.push(format!(
                "threshold {} is within twice the clock read cost ({}); raised to {} so the loop's own reads are not counted",
                format_duration_ns(cfg.threshold_ns.unwrap_or(0)),
                format_duration_ns(self.read_cost_median_ns),
                format_duration_ns(self.threshold_ns)
            ));
        }
        if self.events.dropped > 0 {
            parts.push(format!(
                "{} events beyond max-events={} were counted but not kept (raise max-events or the threshold)",
                self.events.dropped, cfg.max_events
            ));
        }
        (!parts.is_empty()).then(|| format!("cpu {}: {}", self.cpu, parts.join("; ")))
    }

    /// The series of this CPU (its interval maxima are the longest stall of each interval, the
    /// noise over time); recording the events (when asked) happens here, after the
    /// polling.
    fn series(mut self, steal_ns: Option<u64>) -> Series {
        let mut gaps = Recorder::new(self.interval_ns);
        for i in 0..self.events.len {
            let at = self.ns(self.events.starts[i]);
            let gap = self.ns(self.events.gaps[i]);
            gaps.record(gap, at);
            if let Some((sink, series)) = self.sink.as_mut() {
                sink.push(*series, at, gap);
                if i % 1024 == 1023 {
                    // Let the recording's writer drain its ring rather than drop.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
        let e = &self.events;
        let polled_ns = self.ns(e.polled_ticks).max(1);
        let noise_ns = self.ns(e.noise_ticks);
        let per_s = |x: f64| x * clock::NS_PER_SEC as f64 / polled_ns as f64;
        let mut gap = Series::new("gap", gaps.summary())
            .label("cpu", self.cpu)
            .counter("events", e.count())
            .counter("dropped", e.dropped)
            .counter("reads", e.reads)
            .counter("polled_ns", polled_ns)
            .counter("noise_ns", noise_ns);
        if let Some(steal) = steal_ns {
            gap = gap.counter("steal_ns", steal);
        }
        gap.metrics.extend([
            ("events_per_s".to_string(), per_s(e.count() as f64)),
            ("noise_ns_per_s".to_string(), per_s(noise_ns as f64)),
            (
                "availability_pct".to_string(),
                100.0 * (1.0 - noise_ns as f64 / polled_ns as f64).max(0.0),
            ),
            ("longest_ns".to_string(), self.ns(e.longest) as f64),
            ("longest_at_ns".to_string(), self.ns(e.longest_at) as f64),
            (
                "read_cost_min_ns".to_string(),
                e.shortest_gap as f64 / self.rate,
            ),
            (
                "read_cost_median_ns".to_string(),
                self.read_cost_median_ns as f64,
            ),
            ("threshold_ns".to_string(), self.threshold_ns as f64),
            ("counter_ticks_per_ns".to_string(), self.rate),
            ("start_monotonic_ns".to_string(), self.start_mono_ns as f64),
        ]);
        gap
    }
}

/// A CPU's noise split by what the kernel ran in the stalls (osnoise's IRQ / softirq /
/// thread / HW columns), over the stalls the trace covered.
#[derive(Debug, Default)]
struct Causes {
    events: u64,
    irq_ns: u64,
    softirq_ns: u64,
    nmi_ns: u64,
    thread_ns: u64,
    /// Nothing recorded where Linux would have: hardware, SMI, hypervisor.
    outside_linux_ns: u64,
    /// The thread ready to run, its CPU's real-time class held back (RT throttling, the
    /// fair server).
    throttled_ns: u64,
    unknown_ns: u64,
    events_lost: bool,
    /// The stalls the trace covered, and their time.
    traced_ns: u64,
    /// Stalls before the buffer's oldest event (overwritten), and their time.
    untraced_events: u64,
    untraced_ns: u64,
    /// The same time per cause (each thread, interrupt, softirq…), the polling thread's own
    /// time excluded.
    by_cause: HashMap<Cause, Contributor>,
}

impl Causes {
    fn annotate(&self, series: &mut Series) {
        for (key, value) in [
            ("traced_events", self.events),
            ("noise_irq_ns", self.irq_ns),
            ("noise_softirq_ns", self.softirq_ns),
            ("noise_nmi_ns", self.nmi_ns),
            ("noise_thread_ns", self.thread_ns),
            ("noise_outside_linux_ns", self.outside_linux_ns),
            ("noise_throttled_ns", self.throttled_ns),
            ("noise_unexplained_ns", self.unknown_ns),
            ("trace_events_lost", u64::from(self.events_lost)),
            ("untraced_events", self.untraced_events),
            ("noise_untraced_ns", self.untraced_ns),
        ] {
            series.counters.insert(key.into(), value);
        }
        let mut causes: Vec<Contributor> = self.by_cause.values().cloned().collect();
        // Ties in a stable order, so equal runs give equal documents.
        causes.sort_by_cached_key(|c| (std::cmp::Reverse(c.duration_ns), cause_name(&c.cause)));
        // The largest ones, and every real-time thread, interrupt or softirq beyond them: a
        // normal thread takes a real-time CPU only when throttling (or a normal-mode run) lets
        // it, and a build on the machine would otherwise push a real-time culprit off the list.
        let mut kept = 0;
        causes.retain(|c| {
            let normal_thread = matches!(c.cause, Cause::Thread { prio: Some(p), .. } if p >= 100);
            let keep = kept < MAX_SERIES_CAUSES || (!normal_thread && kept < MAX_SERIES_CAUSES_ALL);
            kept += usize::from(keep);
            keep
        });
        series.causes = causes;
    }

    /// The share of the stall time the trace covered, when it is below 99 %: what was not
    /// explained and why.
    fn coverage_warning(
        &self,
        cpu: usize,
        fit: Option<rtgauge_trace::BufferFit>,
    ) -> Option<String> {
        let total = self.traced_ns + self.untraced_ns;
        if total == 0 || self.untraced_ns * 100 <= total {
            return None;
        }
        let why = match fit {
            Some(f) if f.capped => format!(
                "the trace buffers were capped at {} KiB per CPU by the memory available; a shorter run is explained whole",
                f.kb_per_cpu
            ),
            Some(f) => format!(
                "the kernel recorded faster than the {:.0} KiB/s measured before the run, and the {} KiB buffer per CPU overflowed",
                f.bytes_per_second / 1024.0,
                f.kb_per_cpu
            ),
            None => "the trace buffers held only the end of the run".to_string(),
        };
        Some(format!(
            "cpu {cpu}: the trace covered {:.0} % of the noise time; {} stalls ({}) came before its oldest event and are not explained: {why}",
            100.0 * self.traced_ns as f64 / total as f64,
            self.untraced_events,
            format_duration_ns(self.untraced_ns)
        ))
    }
}

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
mod summary_rows {
    use rtgauge_report::format::TimeUnit;
    use rtgauge_report::summary::{fmt, Cells, SummaryRows};

    use rtgauge_result::ProbeRun;

    impl SummaryRows for super::Noise {
        fn probe(&self) -> &'static str {
            super::ABOUT.name
        }

        fn question(&self) -> &'static str {
            "CPU stalls, longest"
        }

        fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
            vec![
                "max".into(),
                "events/s".into(),
                "noise/s".into(),
                "available".into(),
            ]
        }

        fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
            noise_rows(run, unit)
        }
    }

    /// Per CPU: the longest stall, how often the CPU was taken, how much of each second, and
    /// the share left to the measuring thread.
    fn noise_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
        run.series
            .iter()
            .filter(|s| s.name == "gap")
            .map(|s| {
                let metric = |key: &str| s.metrics.get(key).copied();
                let label = match s.labels.get("cpu") {
                    Some(cpu) => format!("cpu {cpu}"),
                    None => s.display_name(),
                };
                let or_dash = |v: Option<String>| v.unwrap_or_else(|| "–".into());
                (
                    label,
                    vec![
                        fmt(unit, s, s.stats.max_ns),
                        or_dash(metric("events_per_s").map(|v| format!("{v:.0}"))),
                        or_dash(
                            metric("noise_ns_per_s").map(|v| {
                                rtgauge_result::units::format_duration_ns(v.round() as u64)
                            }),
                        ),
                        or_dash(metric("availability_pct").map(|v| format!("{v:.3}%"))),
                    ],
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<Config, ProbeError> {
        Config::parse(&Params::of(PROBE, pairs))
    }

    #[test]
    fn runtime_is_a_share_or_a_duration_within_the_period() {
        let c = config(&[]).unwrap();
        assert_eq!(c.runtime_ns(), 90_000_000);
        assert_eq!(
            config(&[("runtime", "100%")]).unwrap().runtime_ns(),
            100_000_000
        );
        let c = config(&[("period", "1ms"), ("runtime", "950us")]).unwrap();
        assert_eq!(c.runtime_ns(), 950_000);
        assert_eq!(c.resolved()["runtime"], "950us");
        for bad in ["0%", "101%", "half%", "200ms"] {
            let e = config(&[("runtime", bad)]).unwrap_err().to_string();
            assert!(e.contains("runtime"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_percentage_of_an_odd_period_does_not_overflow_or_round_up() {
        let c = config(&[("period", "10s"), ("runtime", "99%")]).unwrap();
        assert_eq!(c.runtime_ns(), 9_900_000_000);
        let c = config(&[("period", "1000001ns"), ("runtime", "50%")]).unwrap();
        assert_eq!(c.runtime_ns(), 500_000);
    }

    #[test]
    fn parameters_resolve_to_themselves() {
        let c = config(&[("threshold", "1500ns"), ("clock", "monotonic")]).unwrap();
        let again = Config::parse(&Params::new(PROBE, c.resolved())).unwrap();
        assert_eq!(c, again);
        assert_eq!(config(&[]).unwrap().resolved()["threshold"], "auto");
        assert!(config(&[("clock", "sundial")]).is_err());
        assert!(config(&[("max-events", "1000000000")]).is_err());
        assert!(config(&[("period", "500us")]).is_err());
    }

    #[test]
    fn steal_time_is_read_per_cpu_in_nanoseconds() {
        let stat = "cpu  10 0 5 100 0 0 0 7 0 0\ncpu0 5 0 2 50 0 0 0 3 0 0\ncpu1 5 0 3 50 0 0 0 4 0 0\nintr 1 2\n";
        let steal = parse_steal(stat, 100);
        assert_eq!(steal, BTreeMap::from([(0, 30_000_000), (1, 40_000_000)]));
        assert!(parse_steal("cpu0 1 2\n", 100).is_empty());
    }

    /// The loop's own reads never count: with the threshold at twice the read cost, a
    /// quiet stretch of polling records only real interruptions, and far fewer events than
    /// reads.
    #[test]
    fn polling_counts_only_gaps_above_the_threshold() {
        let read = || now_ns();
        let mut samples = vec![0u64; READ_SAMPLES];
        let (min, median) = read_cost_ticks(&read, &mut samples);
        assert!(min <= median);
        let mut ev = Events::with_capacity(1000);
        let start = now_ns();
        let thr = median.max(1) * MIN_THRESHOLD_READS;
        poll(read, start, start + 20_000_000, start, thr, &mut ev);
        assert!(ev.reads > 1000, "{} reads", ev.reads);
        assert!(
            ev.count() * 10 < ev.reads,
            "{} events of {} reads",
            ev.count(),
            ev.reads
        );
        assert!(ev.gaps[..ev.len].iter().all(|&g| g > thr));
        assert!(ev.shortest_gap <= median);
    }

    #[test]
    fn full_event_storage_counts_drops_instead_of_growing() {
        let mut ev = Events::with_capacity(2);
        for i in 0..5 {
            ev.note(i * 100, 10 + i);
        }
        assert_eq!((ev.len, ev.dropped, ev.count()), (2, 3, 5));
        assert_eq!(ev.starts.len(), 2);
        assert_eq!((ev.longest, ev.longest_at), (14, 400));
        assert_eq!(ev.noise_ticks, 10 + 11 + 12 + 13 + 14);
    }
}
