//! `response`: latency from an event to the real-time handler waiting for it (seed 000 table
//! 10, seed 004 tables 1–2, seed 002).
//!
//! A trigger thread wakes once per `period` (absolute deadlines), takes a timestamp and fires
//! an event; a handler thread, blocked on that event at a higher priority (rt mode: the mode's
//! priority; the trigger one below), takes a timestamp as soon as it runs. One sample is
//! handler timestamp − trigger timestamp. The trigger fires only once the handler has
//! acknowledged the previous event, so every event finds the handler blocked; a period in
//! which the handler was still busy is counted (`deferred`), not hidden.
//!
//! Event sources: a real-time signal (sigwaitinfo), a pipe, an eventfd, a futex word, a POSIX
//! message queue, a UDP datagram over 127.0.0.1, and a GPIO output line wired to a GPIO input
//! line (Linux GPIO character device, v2 uAPI, edge events with kernel timestamps) — the
//! seeds' parallel-port loopback on today's hardware; or, with no wire, an input line of the
//! kernel's simulated chip (gpio-sim) driven through its sysfs `pull` attribute, which takes
//! the whole interrupt path of an edge but the wire. For GPIO the kernel-timestamp-to-handler
//! part is reported too. A source this machine lacks is skipped with the reason.
//!
//! `handler-busy` inserts a busy-wait between the handler's wake-up and its timestamp: the
//! latency must grow by exactly that section, which is how the tests check the probe.
//!
//! Sources and placements run one after the other and share the duration, warm-ups included:
//! `--duration 5s` takes 5 s whatever the number of sources and placements
//! ([`WallTime`]); `each-measured` in the result says what each one got.

use rtgauge_core::clock::{self, now_ns};
use rtgauge_core::live::LiveCell;
use rtgauge_core::probe::{empty_list, os_error};
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::sys::gpio::{self, LineName, Lines, Open};
use rtgauge_core::threads::{
    describe_places, describe_split, merge_obtained, one_below, run_pair, Place, Placements, Start,
    ThreadSpec, WallTime,
};
use rtgauge_core::units::{format_duration_exact, format_duration_ns};
use rtgauge_os::io::{cvt, futex_wait_while, futex_wake, pipe, read_byte, retry, write_byte};
use rtgauge_os::mqueue;
use rtgauge_result::Series;
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

const PROBE: &str = crate::names::RESPONSE;
pub const SOURCES: [&str; 7] = [
    "signal", "pipe", "eventfd", "futex", "mqueue", "udp", "gpio",
];
pub use rtgauge_core::threads::PLACEMENTS;
const DESCRIPTION: &str =
    "event to waiting handler latency: signal, pipe, eventfd, futex, message queue, UDP, GPIO loopback; same and cross CPU";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS).warmup_within_duration();
const PARAMS: [ParamSpec; 6] = [
    ParamSpec::new("sources", "all", "event sources: signal, pipe, eventfd, futex, mqueue, udp, gpio; a comma-separated list or all"),
    ParamSpec::new("placement", "all", "same-cpu (trigger and handler on one CPU) or cross-cpu; a list or all"),
    ParamSpec::new("period", "1ms (--period)", "time between two events, 10us to 10s"),
    ParamSpec::new("handler-busy", "0", "a busy section the handler runs before it answers (tests that latency grows by it); a duration"),
    ParamSpec::new("gpio-out", "none", "the output line the trigger toggles, as CHIP:LINE, e.g. /dev/gpiochip0:17; needs gpio-in wired to it"),
    ParamSpec::new("gpio-in", "none", "the input line wired to gpio-out, as CHIP:LINE; its edge events carry kernel timestamps; alone, a line of a simulated chip (gpio-sim) driven through sysfs"),
];
pub use rtgauge_core::probe::DEFAULT_PERIOD_NS;
/// How long the trigger waits for an acknowledgement beyond the handler's own busy section
/// before it declares the event lost.
const ANSWER_TIMEOUT_NS: u64 = 1_000_000_000;

pub struct Response;

impl TypedProbe for Response {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        rtgauge_core::probe::check_period_fits(ctx, cfg.period_ns)?;
        let mut out = ProbeOutput::default();
        let places = cfg.placements.resolve(ctx, &mut out.warnings)?;
        // Every source is opened once before anything is measured, so a missing one is known
        // (skipped) and a misnamed one fails (error) before minutes of measurement.
        let mut available = Vec::new();
        let mut skipped = Vec::new();
        for &source in &cfg.sources {
            match Channel::open(source, cfg) {
                Ok(_) => available.push(source),
                Err(Open::Skip(reason)) => {
                    out.warnings
                        .push(format!("source {} skipped: {reason}", source.name()));
                    skipped.push(format!("{}: {reason}", source.name()));
                }
                Err(Open::Fail(e)) => return Err(e),
            }
        }
        if available.is_empty() {
            return Err(ProbeError::Unavailable(format!(
                "no requested event source is available here ({})",
                skipped.join("; ")
            )));
        }
        let mut obtained = Vec::new();
        // --duration is the probe's wall time: every (source, placement) gets its share.
        let mut wall = WallTime::new(
            ctx,
            available.len() * places.len(),
            cfg.period_ns.saturating_mul(10),
        );
        out.params
            .insert("each-measured".into(), describe_split(&wall.planned));
        for &source in &available {
            for place in &places {
                if ctx.stopped() {
                    break;
                }
                let cell_ctx = wall.next_cell().context(ctx);
                let channel = Channel::open(source, cfg).map_err(Open::into_error)?;
                let (o, m) = measure(&cell_ctx, cfg, &channel, source, place)?;
                obtained.extend(o);
                out.measured_ns += m.measured_ns;
                if m.deferred > 0 {
                    out.warnings.push(format!(
                        "source {} {}: {} periods found the handler still busy with the previous event; those events were fired one period later",
                        source.name(),
                        place.name,
                        m.deferred
                    ));
                }
                out.series.push(
                    Series::new("response", m.latency.summary())
                        .label("source", source.name())
                        .label("placement", place.name)
                        .counter("events", m.latency.count())
                        .counter("deferred", m.deferred)
                        .counter("spurious", m.spurious),
                );
                if let Some(k) = m.kernel_to_handler {
                    out.series.push(
                        Series::new("kernel_to_handler", k.summary())
                            .label("source", source.name())
                            .label("placement", place.name),
                    );
                }
            }
        }
        out.warnings
            .extend(wall.overrun_note("source × placement pairs"));
        out.obtained = merge_obtained(&obtained);
        let names: Vec<&str> = available.iter().map(|s| s.name()).collect();
        out.params.insert("sources".into(), names.join(","));
        // Where each placement ran; "placement" itself stays the parameter as given.
        out.params
            .insert("placement-cpus".into(), describe_places(&places));
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Signal,
    Pipe,
    Eventfd,
    Futex,
    Mqueue,
    Udp,
    Gpio,
}

impl Source {
    fn parse(s: &str) -> Option<Source> {
        Some(match s {
            "signal" => Source::Signal,
            "pipe" => Source::Pipe,
            "eventfd" => Source::Eventfd,
            "futex" => Source::Futex,
            "mqueue" => Source::Mqueue,
            "udp" => Source::Udp,
            "gpio" => Source::Gpio,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Source::Signal => "signal",
            Source::Pipe => "pipe",
            Source::Eventfd => "eventfd",
            Source::Futex => "futex",
            Source::Mqueue => "mqueue",
            Source::Udp => "udp",
            Source::Gpio => "gpio",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    sources: Vec<Source>,
    placements: Placements,
    period_ns: u64,
    handler_busy_ns: u64,
    gpio: Option<Lines>,
}

fn invalid(message: String) -> ProbeError {
    ProbeError::Invalid {
        probe: PROBE,
        message,
    }
}

fn line_name(params: &Params, key: &str) -> Result<Option<LineName>, ProbeError> {
    let Some(text) = params.raw().get(key) else {
        return Ok(None);
    };
    let parsed = text.rsplit_once(':').and_then(|(chip, line)| {
        let offset = line.trim().parse::<u32>().ok()?;
        (!chip.trim().is_empty()).then(|| LineName {
            chip: chip.trim().to_string(),
            offset,
        })
    });
    parsed.map(Some).ok_or_else(|| {
        invalid(format!(
            "parameter {key}: '{}' is not CHIP:LINE; give e.g. {key}=/dev/gpiochip0:17",
            rtgauge_core::units::quote(text)
        ))
    })
}

fn config(params: &Params) -> Result<Config, ProbeError> {
    let names = params.choices("sources", "all", &SOURCES)?;
    if names.is_empty() {
        return Err(empty_list(PROBE, "sources", &SOURCES));
    }
    let mut sources: Vec<Source> = Vec::new();
    for s in names.iter().filter_map(|n| Source::parse(n)) {
        if !sources.contains(&s) {
            sources.push(s);
        }
    }
    let placements = Placements::parse(params)?;
    let period_ns = rtgauge_core::probe::period_param(params)?;
    // 0 (the default) means no busy section; parse_duration_ns refuses 0, so take it here.
    let handler_busy_ns = match params.raw().get("handler-busy").map(|s| s.trim()) {
        Some("0") | None => 0,
        Some(_) => params.duration_ns("handler-busy", 0)?,
    };
    // gpio-in alone is a line of a simulated chip, driven through sysfs (checked on opening).
    let gpio = match (
        line_name(params, "gpio-out")?,
        line_name(params, "gpio-in")?,
    ) {
        (output, Some(input)) => Some(Lines { output, input }),
        (None, None) => None,
        (Some(_), None) => {
            return Err(invalid(
                "gpio-out needs gpio-in: name the input line the output line is wired to".into(),
            ))
        }
    };
    Ok(Config {
        sources,
        placements,
        period_ns,
        handler_busy_ns,
        gpio,
    })
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        config(params)
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let mut p = BTreeMap::from([
            (
                "sources".into(),
                self.sources
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            ("placement".into(), self.placements.resolved()),
            ("period".into(), format_duration_exact(self.period_ns)),
            (
                "handler-busy".into(),
                match self.handler_busy_ns {
                    0 => "0".into(),
                    ns => format_duration_exact(ns),
                },
            ),
        ]);
        if let Some(lines) = &self.gpio {
            if let Some(o) = &lines.output {
                p.insert("gpio-out".into(), o.to_string());
            }
            p.insert("gpio-in".into(), lines.input.to_string());
        }
        p
    }
}

/// The trigger → handler handshake: fixed atomics, written without allocation.
#[derive(Default)]
struct Handshake {
    /// Number of the event last fired (published after `fired_ns`).
    seq: AtomicU64,
    /// Trigger timestamp of event `seq`.
    fired_ns: AtomicU64,
    /// Number of the event the handler finished with.
    ack: AtomicU64,
    /// Start of measurement (end of warm-up); events fired before it are not counted.
    measure_start: AtomicU64,
    quit: AtomicBool,
    /// The handler failed; the trigger stops.
    abort: AtomicBool,
}

struct Measured {
    latency: Recorder,
    kernel_to_handler: Option<Recorder>,
    spurious: u64,
    deferred: u64,
    measured_ns: u64,
}

struct HandlerOut {
    latency: Recorder,
    kernel_to_handler: Option<Recorder>,
    spurious: u64,
}

struct TriggerOut {
    deferred: u64,
    measured_ns: u64,
}

fn measure(
    ctx: &ProbeContext,
    cfg: &Config,
    channel: &Channel,
    source: Source,
    place: &Place,
) -> Result<(Vec<rtgauge_result::Obtained>, Measured), ProbeError> {
    let hs = Handshake::default();
    let live = ctx
        .live
        .register(format!("response {} {}", source.name(), place.name));
    let trigger = ThreadSpec {
        name: "rtgauge-trigger",
        cpu: place.lead_cpu,
        mode: one_below(ctx.mode),
    };
    let handler = ThreadSpec {
        name: "rtgauge-handler",
        cpu: place.follow_cpu,
        mode: ctx.mode.clone(),
    };
    let (obtained, t, h) = run_pair(
        ctx,
        PROBE,
        &trigger,
        &handler,
        |start| run_trigger(ctx, cfg, channel, &hs, start),
        |start| run_handler(ctx, cfg, channel, &hs, start, &live, place.follow_cpu),
    )?;
    Ok((
        obtained,
        Measured {
            latency: h.latency,
            kernel_to_handler: h.kernel_to_handler,
            spurious: h.spurious,
            deferred: t.deferred,
            measured_ns: t.measured_ns,
        },
    ))
}

fn run_trigger(
    ctx: &ProbeContext,
    cfg: &Config,
    channel: &Channel,
    hs: &Handshake,
    start: &Start,
) -> Result<TriggerOut, ProbeError> {
    start.go(0, Ok(()))?;
    let period = cfg.period_ns;
    let timeout = ANSWER_TIMEOUT_NS + cfg.handler_busy_ns + period;
    // One period of grace lets the handler reach its blocking call before the first event.
    let first = now_ns() + period;
    let measure_start = first + ctx.warmup_ns;
    hs.measure_start.store(measure_start, Ordering::Relaxed);
    let (mut next, mut seq, mut fired_at, mut last) = (first, 0u64, first, measure_start);
    let (mut counted, mut deferred) = (0u64, 0u64);
    let result = loop {
        clock::sleep_until(next);
        let now = now_ns();
        if ctx.stopped() || hs.abort.load(Ordering::Acquire) {
            break Ok(());
        }
        if seq > 0 && hs.ack.load(Ordering::Acquire) != seq {
            if now.saturating_sub(fired_at) > timeout {
                break Err(no_answer(channel, now - fired_at));
            }
            if fired_at >= measure_start {
                deferred += 1;
            }
            next += period;
            continue;
        }
        // Every fired event is acknowledged here, so `counted` equals the handler's samples.
        if now >= measure_start && ctx.budget.done(measure_start, now, counted) {
            break Ok(());
        }
        seq += 1;
        let t0 = now_ns();
        hs.fired_ns.store(t0, Ordering::Relaxed);
        hs.seq.store(seq, Ordering::Release);
        if let Err(e) = channel.fire() {
            break Err(os_error(PROBE, "firing the event", e));
        }
        fired_at = t0;
        if t0 >= measure_start {
            counted += 1;
            last = t0;
        }
        next += period;
        if next <= t0 {
            // Overslept (e.g. preempted): give the handler a whole period again.
            next = t0 + period;
        }
    };
    stop_handler(channel, hs);
    if result.is_err() {
        start.fail(0);
    }
    result.map(|()| TriggerOut {
        deferred,
        measured_ns: last.saturating_sub(measure_start),
    })
}

fn no_answer(channel: &Channel, waited_ns: u64) -> ProbeError {
    let hint = match channel {
        Channel::Gpio(w) => format!(": {}", w.check_hint()),
        _ => String::new(),
    };
    invalid(format!(
        "the handler did not answer an event within {}{hint}",
        format_duration_ns(waited_ns)
    ))
}

/// Wakes the handler for the last time; it sees `quit` and leaves. A handler that failed has
/// left already, and a signal must not be sent to its (possibly reused) thread id.
fn stop_handler(channel: &Channel, hs: &Handshake) {
    hs.quit.store(true, Ordering::Release);
    if !hs.abort.load(Ordering::Acquire) {
        channel.wake_for_quit();
    }
}

fn run_handler(
    ctx: &ProbeContext,
    cfg: &Config,
    channel: &Channel,
    hs: &Handshake,
    start: &Start,
    live: &LiveCell,
    cpu: Option<usize>,
) -> Result<HandlerOut, ProbeError> {
    let mut latency = Recorder::new(DEFAULT_INTERVAL_NS);
    let mut kernel_to_handler = channel
        .has_kernel_timestamps()
        .then(|| Recorder::new(DEFAULT_INTERVAL_NS));
    let mut waiter = Waiter::default();
    let prepared = channel
        .prepare_handler()
        .map_err(|e| os_error(PROBE, "preparing the handler thread", e));
    start.go(1, prepared)?;
    // --trace / --break (rtgauge_core::spikes): a late answer is offered with the event's firing
    // as the programmed time and the handler's wake-up as the actual one, so the trace
    // shows what ran on the handler's CPU in between. One handler runs at a time, so each
    // placement takes ring 0. An unpinned handler has no CPU whose trace to read.
    let mut spikes = cpu.and_then(|cpu| {
        ctx.spikes
            .and_then(|tap| tap.producer_woken_by_event(0, cpu))
    });
    let mut spike_floor = spikes.as_ref().map_or(u64::MAX, |s| s.floor());
    let busy = cfg.handler_busy_ns;
    let (mut last_seq, mut spurious) = (0u64, 0u64);
    loop {
        let kernel_ts = match channel.wait(&mut waiter) {
            Ok(k) => k,
            Err(e) => {
                start.fail(1);
                hs.abort.store(true, Ordering::Release);
                return Err(os_error(PROBE, "waiting for the event", e));
            }
        };
        let woke = now_ns();
        let t = if busy > 0 {
            spin_until(woke + busy)
        } else {
            woke
        };
        if hs.quit.load(Ordering::Acquire) {
            break;
        }
        let seq = hs.seq.load(Ordering::Acquire);
        if seq == last_seq {
            // A wake-up without a new event (e.g. a glitch on a GPIO wire): not a sample.
            spurious += 1;
            continue;
        }
        last_seq = seq;
        let fired = hs.fired_ns.load(Ordering::Relaxed);
        let measure_start = hs.measure_start.load(Ordering::Relaxed);
        if fired >= measure_start {
            let at = fired - measure_start;
            let lat = t.saturating_sub(fired);
            latency.record(lat, at);
            if let (Some(rec), Some(k)) = (kernel_to_handler.as_mut(), kernel_ts) {
                rec.record(t.saturating_sub(k), at);
            }
            live.publish(lat, 0);
            // The injected busy section is the handler's own work, not lateness.
            if woke.saturating_sub(fired) > spike_floor {
                if let Some(s) = spikes.as_mut() {
                    // Crossing --break stops the run: the trigger sees the stop request,
                    // fires no more events and tells this thread to quit (it must not
                    // leave first, see stop_handler).
                    spike_floor = if s.offer(fired, woke) {
                        u64::MAX
                    } else {
                        s.floor()
                    };
                }
            }
        } else if let Some(s) = spikes.as_mut() {
            // Warm-up: candidates start above its largest latency (rtgauge_core::spikes).
            s.warm_up(woke.saturating_sub(fired));
            spike_floor = s.floor();
        }
        hs.ack.store(seq, Ordering::Release);
    }
    Ok(HandlerOut {
        latency,
        kernel_to_handler,
        spurious,
    })
}

/// The injected busy section: spins on the clock (never sleeps) until `deadline`.
#[inline]
fn spin_until(deadline: u64) -> u64 {
    loop {
        let now = now_ns();
        if now >= deadline {
            return now;
        }
        std::hint::spin_loop();
    }
}

/// State only the handler thread touches while waiting.
#[derive(Default)]
struct Waiter {
    futex_seen: u32,
}

/// One event path, opened fresh for each (source, placement) so no stale event carries over.
enum Channel {
    Signal {
        signo: i32,
        set: libc::sigset_t,
        /// The handler's thread id (the signal is thread-directed, so only it receives it).
        tid: AtomicI32,
    },
    Pipe {
        read: OwnedFd,
        write: OwnedFd,
    },
    Eventfd(OwnedFd),
    Futex(AtomicU32),
    Mqueue(MessageQueue),
    Udp {
        rx: UdpSocket,
        tx: UdpSocket,
    },
    Gpio(gpio::Wire),
}

impl Channel {
    fn open(source: Source, cfg: &Config) -> Result<Channel, Open> {
        let fail = |what: &str, e: io::Error| Open::Fail(os_error(PROBE, what, e));
        Ok(match source {
            Source::Signal => {
                // Real-time signals queue (one per event) and carry no default handler
                // concerns here: the signal is blocked in the handler and sent only to it.
                let signo = libc::SIGRTMIN() + 4;
                // SAFETY: sigset_t is plain data initialised by sigemptyset.
                let set = unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, signo);
                    set
                };
                Channel::Signal {
                    signo,
                    set,
                    tid: AtomicI32::new(0),
                }
            }
            Source::Pipe => {
                let (read, write) = pipe().map_err(|e| fail("pipe2", e))?;
                Channel::Pipe { read, write }
            }
            Source::Eventfd => {
                // SAFETY: plain syscall; the returned descriptor is owned below.
                let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) } as isize)
                    .map_err(|e| fail("eventfd", e))?;
                // SAFETY: a fresh descriptor owned by nobody else.
                Channel::Eventfd(unsafe { OwnedFd::from_raw_fd(fd as i32) })
            }
            Source::Futex => Channel::Futex(AtomicU32::new(0)),
            Source::Mqueue => Channel::Mqueue(MessageQueue::open()?),
            Source::Udp => {
                let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
                let skip = |e: io::Error| {
                    Open::Skip(format!("no usable loopback interface (127.0.0.1: {e})"))
                };
                let rx = UdpSocket::bind(loopback).map_err(skip)?;
                let tx = UdpSocket::bind(loopback).map_err(skip)?;
                let to = rx.local_addr().map_err(|e| fail("getsockname", e))?;
                tx.connect(to)
                    .map_err(|e| fail("connecting the UDP socket", e))?;
                Channel::Udp { rx, tx }
            }
            Source::Gpio => Channel::Gpio(gpio::Wire::open(PROBE, cfg.gpio.as_ref())?),
        })
    }

    fn has_kernel_timestamps(&self) -> bool {
        matches!(self, Channel::Gpio(_))
    }

    /// Runs on the handler thread before the start gate.
    fn prepare_handler(&self) -> io::Result<()> {
        if let Channel::Signal { set, tid, .. } = self {
            // SAFETY: a valid set; blocking the signal in this thread only, so it stays
            // pending for sigwaitinfo instead of running the default action.
            let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, set, std::ptr::null_mut()) };
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            // SAFETY: gettid cannot fail.
            tid.store(unsafe { libc::gettid() }, Ordering::Release);
        }
        Ok(())
    }

    /// Fires one event (trigger thread).
    #[inline]
    fn fire(&self) -> io::Result<()> {
        match self {
            Channel::Signal { signo, tid, .. } => {
                // SAFETY: tgkill with this process's id and the handler's live thread id.
                let rc = unsafe {
                    libc::syscall(
                        libc::SYS_tgkill,
                        libc::getpid(),
                        tid.load(Ordering::Acquire),
                        *signo,
                    )
                };
                cvt(rc as isize).map(drop)
            }
            Channel::Pipe { write, .. } => write_byte(write),
            Channel::Eventfd(fd) => {
                let one = 1u64;
                // SAFETY: writes the 8-byte counter increment the eventfd ABI defines.
                retry(|| {
                    cvt(unsafe { libc::write(fd.as_raw_fd(), (&one as *const u64).cast(), 8) })
                })
                .map(drop)
            }
            Channel::Futex(word) => {
                word.fetch_add(1, Ordering::Release);
                futex_wake(word)
            }
            Channel::Mqueue(q) => q.send(),
            Channel::Udp { tx, .. } => retry(|| tx.send(&[1u8])).map(drop),
            Channel::Gpio(w) => w.toggle(),
        }
    }

    /// Blocks until an event arrives (handler thread); for GPIO returns the kernel's
    /// CLOCK_MONOTONIC timestamp of the edge.
    #[inline]
    fn wait(&self, waiter: &mut Waiter) -> io::Result<Option<u64>> {
        match self {
            Channel::Signal { set, .. } => {
                // SAFETY: set holds the signal blocked in this thread.
                retry(|| cvt(unsafe { libc::sigwaitinfo(set, std::ptr::null_mut()) } as isize))
                    .map(|_| None)
            }
            Channel::Pipe { read, .. } => read_byte(read).map(|()| None),
            Channel::Eventfd(fd) => {
                let mut count = 0u64;
                // SAFETY: reads the 8-byte counter into a valid u64.
                retry(|| {
                    cvt(unsafe { libc::read(fd.as_raw_fd(), (&mut count as *mut u64).cast(), 8) })
                })
                .map(|_| None)
            }
            Channel::Futex(word) => {
                futex_wait_while(word, waiter.futex_seen)?;
                waiter.futex_seen = word.load(Ordering::Acquire);
                Ok(None)
            }
            Channel::Mqueue(q) => q.receive().map(|()| None),
            Channel::Udp { rx, .. } => {
                let mut buf = [0u8; 8];
                retry(|| rx.recv(&mut buf)).map(|_| None)
            }
            Channel::Gpio(w) => w.wait_edge(),
        }
    }

    /// The last wake-up of the handler. A failure cannot be reported anywhere useful, and a
    /// full queue (message queue) already holds a wake-up, so errors are ignored.
    fn wake_for_quit(&self) {
        match self {
            Channel::Gpio(w) => w.wake_for_quit(),
            _ => {
                let _ = self.fire();
            }
        }
    }
}

/// A POSIX message queue of 8-byte messages, unlinked at once (only the descriptors keep it):
/// one blocking descriptor for the handler, one non-blocking for the trigger so a full queue
/// can never block it.
struct MessageQueue {
    receive: libc::mqd_t,
    send: libc::mqd_t,
}

impl MessageQueue {
    const MESSAGE: usize = 8;

    fn open() -> Result<MessageQueue, Open> {
        let skip = |e: io::Error| {
            Open::Skip(match e.raw_os_error() {
                Some(libc::ENOSYS) => {
                    "POSIX message queues are not in this kernel (CONFIG_POSIX_MQUEUE)".into()
                }
                _ => format!("mq_open failed: {e} (limits: /proc/sys/fs/mqueue, ulimit -q)"),
            })
        };
        let name = mqueue::unique_name("response");
        let receive = mqueue::create(&name, 4, Self::MESSAGE, 0).map_err(skip)?;
        let send = mqueue::open(&name, libc::O_WRONLY | libc::O_NONBLOCK);
        mqueue::unlink(&name);
        match send {
            Ok(send) => Ok(MessageQueue { receive, send }),
            Err(e) => {
                mqueue::close(receive);
                Err(skip(e))
            }
        }
    }

    #[inline]
    fn send(&self) -> io::Result<()> {
        let msg = [1u8; Self::MESSAGE];
        // SAFETY: sends a valid buffer of the queue's message size.
        retry(|| {
            cvt(unsafe { libc::mq_send(self.send, msg.as_ptr().cast(), msg.len(), 0) } as isize)
        })
        .map(drop)
    }

    #[inline]
    fn receive(&self) -> io::Result<()> {
        let mut msg = [0u8; Self::MESSAGE];
        // SAFETY: receives into a buffer of the queue's message size.
        retry(|| {
            cvt(unsafe {
                libc::mq_receive(
                    self.receive,
                    msg.as_mut_ptr().cast(),
                    msg.len(),
                    std::ptr::null_mut(),
                )
            })
        })
        .map(drop)
    }
}

impl Drop for MessageQueue {
    fn drop(&mut self) {
        // SAFETY: closing descriptors this struct owns.
        unsafe {
            libc::mq_close(self.send);
            libc::mq_close(self.receive);
        }
    }
}

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
pub const SUMMARY_ROWS: rtgauge_report::summary::PlacementRows =
    rtgauge_report::summary::PlacementRows {
        probe: ABOUT.name,
        question: "event response",
    };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let c = config(&Params::of(PROBE, &[])).unwrap();
        assert_eq!(c.sources.len(), SOURCES.len());
        assert_eq!(c.period_ns, DEFAULT_PERIOD_NS);
        assert_eq!(c.handler_busy_ns, 0);
        assert!(c.gpio.is_none());
    }

    #[test]
    fn bad_input_names_the_parameter_and_the_accepted_values() {
        let e = config(&Params::of(PROBE, &[("sources", "pipe,bogus")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sources 'bogus'"), "{e}");
        assert!(e.contains(&SOURCES.join(", ")), "{e}");
        let e = config(&Params::of(PROBE, &[("placement", "sideways")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("placement 'sideways'") && e.contains("same-cpu, cross-cpu"),
            "{e}"
        );
        let e = config(&Params::of(PROBE, &[("gpio-out", "/dev/gpiochip0")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gpio-out") && e.contains("CHIP:LINE"), "{e}");
        let e = config(&Params::of(PROBE, &[("gpio-out", "/dev/gpiochip0:1")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gpio-out needs gpio-in"), "{e}");
        let e = config(&Params::of(PROBE, &[("period", "5us")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside 10us..10s"), "{e}");
    }

    #[test]
    fn handler_busy_accepts_zero_and_durations() {
        assert_eq!(
            config(&Params::of(PROBE, &[("handler-busy", "0")]))
                .unwrap()
                .handler_busy_ns,
            0
        );
        assert_eq!(
            config(&Params::of(PROBE, &[("handler-busy", "200us")]))
                .unwrap()
                .handler_busy_ns,
            200_000
        );
        assert!(config(&Params::of(PROBE, &[("handler-busy", "soon")])).is_err());
    }

    #[test]
    fn gpio_lines_parse() {
        let c = config(&Params::of(
            PROBE,
            &[
                ("gpio-out", "/dev/gpiochip0:17"),
                ("gpio-in", "/dev/gpiochip1:4"),
            ],
        ))
        .unwrap();
        let lines = c.gpio.unwrap();
        let (o, i) = (lines.output.unwrap(), lines.input);
        assert_eq!((o.chip.as_str(), o.offset), ("/dev/gpiochip0", 17));
        assert_eq!((i.chip.as_str(), i.offset), ("/dev/gpiochip1", 4));
        // An input line alone: a simulated chip's line, driven through its pull attribute.
        let c = config(&Params::of(PROBE, &[("gpio-in", "/dev/gpiochip1:4")])).unwrap();
        assert_eq!(c.gpio.unwrap().output, None);
    }

    #[test]
    fn an_input_line_alone_on_a_chip_that_does_not_exist_lists_the_chips_here() {
        let c = config(&Params::of(PROBE, &[("gpio-in", "/dev/gpiochip-none:4")])).unwrap();
        match Channel::open(Source::Gpio, &c) {
            Err(Open::Fail(e)) => {
                let e = e.to_string();
                assert!(
                    e.contains("gpiochip-none:4") && e.contains("GPIO chips here"),
                    "{e}"
                );
            }
            _ => panic!("expected a failure"),
        }
    }

    #[test]
    fn without_named_lines_gpio_is_skipped_with_a_reason() {
        match Channel::open(Source::Gpio, &config(&Params::of(PROBE, &[])).unwrap()) {
            Err(Open::Skip(reason)) => assert!(reason.contains("GPIO"), "{reason}"),
            _ => panic!("expected a skip"),
        }
    }

    /// Every in-process channel delivers exactly one wake-up per event.
    #[test]
    fn every_channel_delivers_events_to_a_waiting_thread() {
        let cfg = config(&Params::of(PROBE, &[])).unwrap();
        for source in [
            Source::Signal,
            Source::Pipe,
            Source::Eventfd,
            Source::Futex,
            Source::Mqueue,
            Source::Udp,
        ] {
            let ch = match Channel::open(source, &cfg) {
                Ok(c) => c,
                Err(Open::Skip(_)) => continue,
                Err(Open::Fail(e)) => panic!("{e}"),
            };
            let ready = std::sync::Barrier::new(2);
            let got = AtomicU64::new(0);
            std::thread::scope(|s| {
                s.spawn(|| {
                    ch.prepare_handler().unwrap();
                    ready.wait();
                    let mut w = Waiter::default();
                    for _ in 0..50 {
                        ch.wait(&mut w).unwrap();
                        got.fetch_add(1, Ordering::SeqCst);
                    }
                });
                ready.wait();
                for i in 0..50u64 {
                    ch.fire().unwrap();
                    // Wait for the handler so the futex counter is seen once per event.
                    while got.load(Ordering::SeqCst) <= i {
                        std::thread::yield_now();
                    }
                }
            });
            assert_eq!(got.load(Ordering::SeqCst), 50, "{}", source.name());
        }
    }
}
