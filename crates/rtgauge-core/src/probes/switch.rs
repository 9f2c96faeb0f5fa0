//! `switch`: context-switch time between two threads handing control back and forth (seed 000
//! tables 11–12, seed 002's thread switch).
//!
//! A *lead* thread timestamps, wakes the *follow* thread and blocks until the follow thread
//! wakes it back, then timestamps again: one round trip holds two switches, so every round
//! trip is recorded as one sample of round trip / 2 (a distribution, not only a mean).
//! Mechanisms (`via`): a POSIX semaphore pair as in seed 000, a futex word, and a pipe pair.
//! Placement `same-cpu` pins both threads to one CPU (a true switch); `cross-cpu` puts them on
//! two CPUs, where the figure is the cross-CPU wake-up (IPI + wake) time instead.
//!
//! The pipe ping-pong on one CPU is also reported whole as `pipe_round_trip` (2 switches +
//! 4 syscalls, what `perf bench sched pipe` times), the yardstick the acceptance compares to.
//!
//! This file also holds what `response` shares with it: placements, the start gate of a
//! thread pair, and the futex and EINTR helpers.

use crate::clock::{self, now_ns};
use crate::probe::{
    merge_obtained, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput,
    TypedProbe,
};
use crate::rt::{self, Mode, Policy};
use rtgauge_result::{Obtained, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

const PROBE: &str = "switch";
pub const MECHANISMS: [&str; 3] = ["sem", "futex", "pipe"];
pub const PLACEMENTS: [&str; 2] = ["same-cpu", "cross-cpu"];
const PARAMS: [ParamSpec; 2] = [
    ParamSpec::new("via", "all", "what hands control over: sem (POSIX semaphore), futex, pipe; a comma-separated list or all"),
    ParamSpec::new("placement", "all", "same-cpu (both threads on the first measured CPU: true switches) or cross-cpu (two CPUs: wake-up across CPUs); a list or all"),
];

/// In real-time modes a back-to-back ping-pong keeps its CPU 100 % busy at RT priority: RT
/// throttling would stop it inside a sample and kernel threads on that CPU would starve. So
/// the pair rests `REST_NS` after every `BUSY_NS` of ping-pong, outside any timed interval.
const BUSY_NS: u64 = 5_000_000;
const REST_NS: u64 = 500_000;

pub struct Switch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Sem,
    Futex,
    Pipe,
}

impl Via {
    fn parse(s: &str) -> Via {
        match s {
            "sem" => Via::Sem,
            "futex" => Via::Futex,
            _ => Via::Pipe,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Via::Sem => "sem",
            Via::Futex => "futex",
            Via::Pipe => "pipe",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    via: Vec<Via>,
    placements: Vec<String>,
    /// Whether the user named placements (otherwise an impossible one is skipped quietly).
    placements_explicit: bool,
}

fn config(params: &Params) -> Result<Config, ProbeError> {
    let via = params.choices("via", "all", &MECHANISMS)?;
    if via.is_empty() {
        return Err(empty_list(PROBE, "via", &MECHANISMS));
    }
    let placements = params.choices("placement", "all", &PLACEMENTS)?;
    if placements.is_empty() {
        return Err(empty_list(PROBE, "placement", &PLACEMENTS));
    }
    Ok(Config {
        via: via.iter().map(|v| Via::parse(v)).collect(),
        placements,
        placements_explicit: params.raw().contains_key("placement"),
    })
}

pub(crate) fn empty_list(probe: &'static str, key: &str, accepted: &[&str]) -> ProbeError {
    ProbeError::Invalid {
        probe,
        message: format!("{key} is empty; accepted: {}, or all", accepted.join(", ")),
    }
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        config(params)
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let via: Vec<&str> = self.via.iter().map(|v| v.name()).collect();
        BTreeMap::from([
            ("via".into(), via.join(",")),
            ("placement".into(), self.placements.join(",")),
        ])
    }
}

impl TypedProbe for Switch {
    const NAME: &'static str = PROBE;
    const DESCRIPTION: &'static str =
        "context-switch time: two threads hand control back and forth (semaphore, futex, pipe), one CPU and across CPUs";
    const PARAMS: &'static [ParamSpec] = &PARAMS;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let cfg = &*cfg;
        if matches!(ctx.mode.policy, Policy::Deadline { .. }) {
            // A reservation of runtime per period throttles a back-to-back ping-pong, so the
            // numbers would be the throttling, not the switch.
            return Err(ProbeError::Unavailable(
                "switch times back-to-back hand-offs, which a SCHED_DEADLINE reservation throttles; use --mode normal or rt".into(),
            ));
        }
        let mut out = ProbeOutput::default();
        let places = resolve_placements(
            ctx,
            &cfg.placements,
            cfg.placements_explicit,
            &mut out.warnings,
        );
        if places.is_empty() {
            return Err(ProbeError::Unavailable(out.warnings.join("; ")));
        }
        let mut obtained = Vec::new();
        for &via in &cfg.via {
            for place in &places {
                if ctx.stopped() {
                    break;
                }
                let link = Link::open(via)?;
                let with_round_trip = via == Via::Pipe && place.name == "same-cpu";
                let (o, lead) = measure(ctx, &link, place, with_round_trip, via)?;
                obtained.extend(o);
                out.measured_ns += lead.measured_ns;
                out.series.push(
                    Series::new("switch", lead.switch.summary())
                        .label("via", via.name())
                        .label("placement", place.name)
                        .counter("round_trips", lead.switch.count())
                        .counter("rests", lead.rests),
                );
                if let Some(rt) = lead.round_trip {
                    out.series.push(
                        Series::new("pipe_round_trip", rt.summary())
                            .label("placement", place.name)
                            .counter("round_trips", rt.count()),
                    );
                }
            }
        }
        out.obtained = merge_obtained(&obtained);
        // Where each placement ran; "placement" itself stays the parameter as given.
        out.params.insert(
            "placement-cpus".into(),
            places
                .iter()
                .map(|p| p.describe())
                .collect::<Vec<_>>()
                .join(", "),
        );
        Ok(out)
    }
}

struct LeadResult {
    switch: Recorder,
    round_trip: Option<Recorder>,
    rests: u64,
    measured_ns: u64,
}

/// What both threads share: the stop request of the lead, the failure of the follow.
#[derive(Default)]
struct Flags {
    quit: AtomicBool,
    abort: AtomicBool,
}

fn measure(
    ctx: &ProbeContext,
    link: &Link,
    place: &Place,
    with_round_trip: bool,
    via: Via,
) -> Result<(Vec<Obtained>, LeadResult), ProbeError> {
    let flags = Flags::default();
    let live = ctx
        .live
        .register(format!("switch {} {}", via.name(), place.name));
    let rest = ctx.mode.policy.is_realtime();
    let lead = ThreadSpec {
        name: "rtgauge-ping",
        cpu: place.lead_cpu,
        mode: ctx.mode.clone(),
    };
    let follow = ThreadSpec {
        name: "rtgauge-pong",
        cpu: place.follow_cpu,
        mode: ctx.mode.clone(),
    };
    let (obtained, lead, ()) = run_pair(
        ctx,
        PROBE,
        &lead,
        &follow,
        |start| {
            let mut switch = Recorder::new(DEFAULT_INTERVAL_NS);
            let mut round_trip = with_round_trip.then(|| Recorder::new(DEFAULT_INTERVAL_NS));
            start.go(0, Ok(()))?;
            let measure_start = now_ns() + ctx.warmup_ns;
            let mut rest_at = now_ns() + BUSY_NS;
            let (mut rests, mut last) = (0u64, measure_start);
            let result = loop {
                let t0 = now_ns();
                if let Err(e) = link.ping().and_then(|()| link.wait_pong()) {
                    break Err(os_error(PROBE, "handing over to the partner thread", e));
                }
                let t1 = now_ns();
                if flags.abort.load(Ordering::Acquire) {
                    break Ok(());
                }
                if t0 >= measure_start {
                    let at = t0 - measure_start;
                    let rt = t1 - t0;
                    switch.record(rt / 2, at);
                    if let Some(r) = round_trip.as_mut() {
                        r.record(rt, at);
                    }
                    live.publish(rt / 2, 0);
                    last = t1;
                    if ctx.budget.done(measure_start, t1, switch.count()) {
                        break Ok(());
                    }
                }
                if ctx.stopped() {
                    break Ok(());
                }
                if rest && t1 >= rest_at {
                    clock::sleep_for(REST_NS);
                    rest_at = now_ns() + BUSY_NS;
                    rests += 1;
                }
            };
            if !flags.abort.load(Ordering::Acquire) {
                // Release the follow thread; it sees `quit` when it wakes.
                flags.quit.store(true, Ordering::Release);
                if let Err(e) = link.ping() {
                    start.fail(0);
                    return Err(os_error(PROBE, "stopping the partner thread", e));
                }
            }
            if result.is_err() {
                start.fail(0);
            }
            result.map(|()| LeadResult {
                switch,
                round_trip,
                rests,
                measured_ns: last.saturating_sub(measure_start),
            })
        },
        |start| {
            start.go(1, Ok(()))?;
            loop {
                if let Err(e) = link.wait_ping() {
                    return Err(follow_failed(start, &flags, link, e));
                }
                if flags.quit.load(Ordering::Acquire) {
                    return Ok(());
                }
                if let Err(e) = link.pong() {
                    return Err(follow_failed(start, &flags, link, e));
                }
            }
        },
    )?;
    Ok((obtained, lead))
}

/// The follow thread failed: tell the lead and wake it so it does not block forever.
fn follow_failed(start: &Start, flags: &Flags, link: &Link, e: io::Error) -> ProbeError {
    start.fail(1);
    flags.abort.store(true, Ordering::Release);
    let _ = link.pong();
    os_error(PROBE, "waiting for the partner thread", e)
}

pub(crate) fn os_error(probe: &'static str, what: &str, source: io::Error) -> ProbeError {
    ProbeError::Os {
        probe,
        what: what.into(),
        source,
    }
}

/// Two POSIX semaphores, initialised in place (a `sem_t` must not move once initialised).
struct SemPair {
    to_follow: UnsafeCell<libc::sem_t>,
    to_lead: UnsafeCell<libc::sem_t>,
}

// SAFETY: POSIX semaphores are made to be posted and waited on from several threads; the
// cells are only ever handed to sem_* functions.
unsafe impl Sync for SemPair {}

impl SemPair {
    fn new() -> io::Result<Box<SemPair>> {
        // SAFETY: zeroed sem_t is plain data that sem_init then initialises in place.
        let pair = Box::new(unsafe { std::mem::zeroed::<SemPair>() });
        for sem in [&pair.to_follow, &pair.to_lead] {
            // SAFETY: the semaphore lives in the box, which never moves; pshared = 0.
            if unsafe { libc::sem_init(sem.get(), 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(pair)
    }

    fn post(sem: &UnsafeCell<libc::sem_t>) -> io::Result<()> {
        // SAFETY: an initialised semaphore.
        if unsafe { libc::sem_post(sem.get()) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn wait(sem: &UnsafeCell<libc::sem_t>) -> io::Result<()> {
        // SAFETY: an initialised semaphore; EINTR (a SIGINT to stop the run) retries.
        retry(|| cvt(unsafe { libc::sem_wait(sem.get()) } as isize).map(drop))
    }
}

impl Drop for SemPair {
    fn drop(&mut self) {
        for sem in [&self.to_follow, &self.to_lead] {
            // SAFETY: both were initialised and no thread waits on them any more.
            unsafe { libc::sem_destroy(sem.get()) };
        }
    }
}

/// How the two threads wake each other.
enum Link {
    Sem(Box<SemPair>),
    /// 1: the follow thread's turn, 0: the lead's.
    Futex(AtomicU32),
    Pipe {
        to_follow: (OwnedFd, OwnedFd),
        to_lead: (OwnedFd, OwnedFd),
    },
}

impl Link {
    fn open(via: Via) -> Result<Link, ProbeError> {
        Ok(match via {
            Via::Sem => Link::Sem(SemPair::new().map_err(|e| os_error(PROBE, "sem_init", e))?),
            Via::Futex => Link::Futex(AtomicU32::new(0)),
            Via::Pipe => Link::Pipe {
                to_follow: pipe().map_err(|e| os_error(PROBE, "pipe2", e))?,
                to_lead: pipe().map_err(|e| os_error(PROBE, "pipe2", e))?,
            },
        })
    }

    #[inline]
    fn ping(&self) -> io::Result<()> {
        match self {
            Link::Sem(s) => SemPair::post(&s.to_follow),
            Link::Futex(turn) => {
                turn.store(1, Ordering::Release);
                futex_wake(turn)
            }
            Link::Pipe { to_follow, .. } => write_byte(&to_follow.1),
        }
    }

    #[inline]
    fn wait_ping(&self) -> io::Result<()> {
        match self {
            Link::Sem(s) => SemPair::wait(&s.to_follow),
            Link::Futex(turn) => futex_wait_while(turn, 0),
            Link::Pipe { to_follow, .. } => read_byte(&to_follow.0),
        }
    }

    #[inline]
    fn pong(&self) -> io::Result<()> {
        match self {
            Link::Sem(s) => SemPair::post(&s.to_lead),
            Link::Futex(turn) => {
                turn.store(0, Ordering::Release);
                futex_wake(turn)
            }
            Link::Pipe { to_lead, .. } => write_byte(&to_lead.1),
        }
    }

    #[inline]
    fn wait_pong(&self) -> io::Result<()> {
        match self {
            Link::Sem(s) => SemPair::wait(&s.to_lead),
            Link::Futex(turn) => futex_wait_while(turn, 1),
            Link::Pipe { to_lead, .. } => read_byte(&to_lead.0),
        }
    }
}

// ---- shared with `response` ------------------------------------------------------------

/// Retries a system call interrupted by a signal (SIGINT/SIGTERM handlers are installed
/// without SA_RESTART so that sleeps end promptly; the stop flag is checked by the loops).
#[inline]
pub(crate) fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// A libc return value: negative means errno.
#[inline]
pub(crate) fn cvt(rc: isize) -> io::Result<isize> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A close-on-exec pipe: (read end, write end).
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid array of two ints.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } as isize)?;
    // SAFETY: pipe2 just returned these two descriptors, owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[inline]
pub(crate) fn write_byte(fd: &OwnedFd) -> io::Result<()> {
    let b = 1u8;
    // SAFETY: writes one byte from a valid buffer.
    retry(|| cvt(unsafe { libc::write(fd.as_raw_fd(), (&b as *const u8).cast(), 1) })).map(drop)
}

#[inline]
pub(crate) fn read_byte(fd: &OwnedFd) -> io::Result<()> {
    let mut b = 0u8;
    // SAFETY: reads at most one byte into a valid buffer.
    match retry(|| cvt(unsafe { libc::read(fd.as_raw_fd(), (&mut b as *mut u8).cast(), 1) }))? {
        1 => Ok(()),
        _ => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the other end of the pipe was closed",
        )),
    }
}

/// Wakes one waiter of a process-private futex word.
#[inline]
pub(crate) fn futex_wake(word: &AtomicU32) -> io::Result<()> {
    // SAFETY: the word is a live, aligned u32 for the duration of the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        )
    };
    cvt(rc as isize).map(drop)
}

/// Blocks while the word holds `value`.
#[inline]
pub(crate) fn futex_wait_while(word: &AtomicU32, value: u32) -> io::Result<()> {
    while word.load(Ordering::Acquire) == value {
        // SAFETY: as in futex_wake; a null timeout waits without limit.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                value,
                std::ptr::null::<libc::timespec>(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            // EAGAIN: the word changed before we slept; EINTR: a signal. Both re-check.
            if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Where the two threads of a pair run.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// same-cpu, cross-cpu or unpinned.
    pub name: &'static str,
    pub lead_cpu: Option<usize>,
    pub follow_cpu: Option<usize>,
}

impl Place {
    pub fn describe(&self) -> String {
        match (self.lead_cpu, self.follow_cpu) {
            (Some(a), Some(b)) if a == b => format!("{} (cpu {a})", self.name),
            (Some(a), Some(b)) => format!("{} (cpus {a} and {b})", self.name),
            _ => self.name.to_string(),
        }
    }
}

/// Turns requested placements into CPUs: same-cpu → both on the first measured CPU;
/// cross-cpu → the follow (handler) thread on the first measured CPU, the lead on the second.
/// A placement that cannot be honoured here is left out with a warning saying why.
pub(crate) fn resolve_placements(
    ctx: &ProbeContext,
    requested: &[String],
    explicit: bool,
    warnings: &mut Vec<String>,
) -> Vec<Place> {
    if !ctx.mode.pin {
        if explicit {
            warnings.push(format!(
                "mode {} does not pin threads (the kernel refuses pinned SCHED_DEADLINE tasks): measured unpinned, placement ignored",
                ctx.mode.name
            ));
        }
        return vec![Place {
            name: "unpinned",
            lead_cpu: None,
            follow_cpu: None,
        }];
    }
    let mut places = Vec::new();
    for p in requested {
        match (p.as_str(), ctx.cpus) {
            ("same-cpu", [first, ..]) => places.push(Place {
                name: "same-cpu",
                lead_cpu: Some(*first),
                follow_cpu: Some(*first),
            }),
            ("cross-cpu", [first, second, ..]) => places.push(Place {
                name: "cross-cpu",
                lead_cpu: Some(*second),
                follow_cpu: Some(*first),
            }),
            ("cross-cpu", _) => warnings.push(format!(
                "placement cross-cpu skipped: it needs two measured CPUs and --cpus gave {}",
                crate::cpus::format_cpu_list(ctx.cpus)
            )),
            _ => {}
        }
    }
    places
}

/// One thread of a pair: its name, CPU and execution mode.
pub(crate) struct ThreadSpec {
    pub name: &'static str,
    pub cpu: Option<usize>,
    pub mode: Mode,
}

/// The same mode one priority step lower (for a thread that must not preempt its partner).
pub(crate) fn one_below(mode: &Mode) -> Mode {
    let mut m = mode.clone();
    if matches!(m.policy, Policy::Fifo | Policy::Rr) && m.priority > 1 {
        m.priority -= 1;
    }
    m
}

/// The start gate of a thread pair: both threads prepare (enter their mode, allocate), then
/// meet here; if either failed, neither starts measuring and the failure is reported.
pub(crate) struct Start {
    probe: &'static str,
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: u8,
    cancelled: bool,
    failed: [bool; 2],
}

impl Start {
    fn new(probe: &'static str) -> Start {
        Start {
            probe,
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Called once by each side (0 lead, 1 follow) when prepared; returns when both are,
    /// with an error when the partner could not start.
    pub fn go(&self, side: usize, prepared: Result<(), ProbeError>) -> Result<(), ProbeError> {
        let partner_failed = self.arrive(side, prepared.is_err());
        prepared?;
        if partner_failed {
            return Err(ProbeError::Invalid {
                probe: self.probe,
                message: "the partner thread could not start".into(),
            });
        }
        Ok(())
    }

    /// A side that could not prepare: releases the partner and hands back the error.
    fn refuse(&self, side: usize, error: ProbeError) -> ProbeError {
        self.arrive(side, true);
        error
    }

    /// Waits for both sides; returns whether the partner failed (or was never started).
    fn arrive(&self, side: usize, failed: bool) -> bool {
        let mut g = self.lock();
        g.failed[side] |= failed;
        g.arrived += 1;
        self.cv.notify_all();
        while g.arrived < 2 && !g.cancelled {
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        g.failed[1 - side] || g.cancelled
    }

    /// Marks a side as the origin of a failure (so its error, not the partner's, is shown).
    pub fn fail(&self, side: usize) {
        self.lock().failed[side] = true;
    }

    fn cancel(&self) {
        self.lock().cancelled = true;
        self.cv.notify_all();
    }

    fn failed(&self, side: usize) -> bool {
        self.lock().failed[side]
    }
}

/// Runs a pair of threads, each entered into its own mode and CPU, then `lead` and
/// `follow` on them. Each body must call `start.go(side, …)` once it is prepared.
/// Returns what each thread obtained (follow first: it carries the higher priority where the
/// two differ) and both results; on failure, the error of the side that failed first.
pub(crate) fn run_pair<RA: Send, RB: Send>(
    ctx: &ProbeContext,
    probe: &'static str,
    lead: &ThreadSpec,
    follow: &ThreadSpec,
    lead_body: impl FnOnce(&Start) -> Result<RA, ProbeError> + Send,
    follow_body: impl FnOnce(&Start) -> Result<RB, ProbeError> + Send,
) -> Result<(Vec<Obtained>, RA, RB), ProbeError> {
    let start = Start::new(probe);
    let best_effort = ctx.best_effort;
    let (a, b) = std::thread::scope(|scope| {
        let start = &start;
        let spawn_follow = std::thread::Builder::new()
            .name(follow.name.into())
            .spawn_scoped(scope, move || {
                let obtained = match rt::enter_thread(&follow.mode, follow.cpu, best_effort) {
                    Ok(o) => o,
                    Err(e) => return Err(start.refuse(1, e.into())),
                };
                follow_body(start).map(|r| (obtained, r))
            });
        let follow_handle = match spawn_follow {
            Ok(h) => h,
            Err(e) => return (Err(os_error(probe, "spawning a thread", e)), None),
        };
        let lead_result = std::thread::Builder::new()
            .name(lead.name.into())
            .spawn_scoped(scope, move || {
                let obtained = match rt::enter_thread(&lead.mode, lead.cpu, best_effort) {
                    Ok(o) => o,
                    Err(e) => return Err(start.refuse(0, e.into())),
                };
                lead_body(start).map(|r| (obtained, r))
            })
            .map_err(|e| {
                start.fail(0);
                start.cancel();
                os_error(probe, "spawning a thread", e)
            })
            .and_then(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        let follow_result = follow_handle
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (lead_result, Some(follow_result))
    });
    let b = match b {
        Some(b) => b,
        None => return Err(a.err().unwrap_or_else(|| unreachable_spawn(probe))),
    };
    match (a, b) {
        (Ok((oa, ra)), Ok((ob, rb))) => Ok((vec![ob, oa], ra, rb)),
        (Err(ea), Err(eb)) => Err(if !start.failed(0) && start.failed(1) {
            eb
        } else {
            ea
        }),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
    }
}

fn unreachable_spawn(probe: &'static str) -> ProbeError {
    ProbeError::Invalid {
        probe,
        message: "a measuring thread could not be spawned".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn params(pairs: &[(&str, &str)]) -> Params {
        Params::new(
            PROBE,
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    #[test]
    fn defaults_select_every_mechanism_and_placement() {
        let c = config(&params(&[])).unwrap();
        assert_eq!(c.via, vec![Via::Sem, Via::Futex, Via::Pipe]);
        assert_eq!(c.placements, vec!["same-cpu", "cross-cpu"]);
        assert!(!c.placements_explicit);
    }

    #[test]
    fn bad_mechanisms_and_placements_name_the_accepted_values() {
        let e = config(&params(&[("via", "carrier-pigeon")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("via") && e.contains("sem, futex, pipe"), "{e}");
        let e = config(&params(&[("placement", "sideways")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("placement") && e.contains("same-cpu, cross-cpu"),
            "{e}"
        );
        let e = config(&params(&[("via", ",")])).unwrap_err().to_string();
        assert!(e.contains("via is empty"), "{e}");
    }

    #[test]
    fn every_link_hands_control_back_and_forth() {
        for via in [Via::Sem, Via::Futex, Via::Pipe] {
            let link = Link::open(via).unwrap();
            std::thread::scope(|s| {
                s.spawn(|| {
                    for _ in 0..1000 {
                        link.wait_ping().unwrap();
                        link.pong().unwrap();
                    }
                });
                for _ in 0..1000 {
                    link.ping().unwrap();
                    link.wait_pong().unwrap();
                }
            });
        }
    }
}
