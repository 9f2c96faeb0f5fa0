//! `switch`: context-switch time between two threads handing control back and forth (Arm et al. 2016
//! tables 11–12, Moryc's thread switch).
//!
//! A *lead* thread timestamps, wakes the *follow* thread and blocks until the follow thread
//! wakes it back, then timestamps again: one round trip holds two switches, so every round
//! trip is recorded as one sample of round trip / 2 (a distribution, not only a mean).
//! Mechanisms (`via`): a POSIX semaphore pair as in Arm et al. 2016, a futex word, and a pipe pair.
//! Placement `same-cpu` pins both threads to one CPU (a true switch); `cross-cpu` puts them on
//! two CPUs, where the figure is the cross-CPU wake-up (IPI + wake) time instead.
//!
//! Mechanisms and placements run one after the other and share the duration, warm-ups
//! included: `--duration 2s` takes 2 s ([`WallTime`]).
//!
//! The pipe ping-pong on one CPU is also reported whole as `pipe_round_trip` (2 switches +
//! 4 syscalls, what `perf bench sched pipe` times), the yardstick the acceptance compares to.

use rtgauge_core::clock::{self, now_ns};
use rtgauge_core::probe::{empty_list, os_error};
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::rt::Policy;
use rtgauge_core::threads::{
    describe_places, describe_split, merge_obtained, run_pair, Place, Placements, Start,
    ThreadSpec, WallTime,
};
use rtgauge_os::io::{cvt, futex_wait_while, futex_wake, pipe, read_byte, retry, write_byte};
use rtgauge_result::{Obtained, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

const PROBE: &str = crate::names::SWITCH;
pub const MECHANISMS: [&str; 3] = ["sem", "futex", "pipe"];
pub use rtgauge_core::threads::PLACEMENTS;
const DESCRIPTION: &str =
    "context-switch time: two threads hand control back and forth (semaphore, futex, pipe), one CPU and across CPUs";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS).warmup_within_duration();
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

impl TypedProbe for Switch {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        if matches!(ctx.mode.policy, Policy::Deadline { .. }) {
            // A reservation of runtime per period throttles a back-to-back ping-pong, so the
            // numbers would be the throttling, not the switch.
            return Err(ProbeError::Unavailable(
                "switch times back-to-back hand-offs, which a SCHED_DEADLINE reservation throttles; use --mode normal or rt".into(),
            ));
        }
        let mut out = ProbeOutput::default();
        let places = cfg.placements.resolve(ctx, &mut out.warnings)?;
        let mut obtained = Vec::new();
        // --duration is the probe's wall time: every (mechanism, placement) gets its share.
        let mut wall = WallTime::new(ctx, cfg.via.len() * places.len(), 1_000_000);
        out.params
            .insert("each-measured".into(), describe_split(&wall.planned));
        for &via in &cfg.via {
            for place in &places {
                if ctx.stopped() {
                    break;
                }
                let cell_ctx = wall.next_cell().context(ctx);
                let link = Link::open(via)?;
                let with_round_trip = via == Via::Pipe && place.name == "same-cpu";
                let (o, lead) = measure(&cell_ctx, &link, place, with_round_trip, via)?;
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
        out.warnings
            .extend(wall.overrun_note("mechanism × placement pairs"));
        out.obtained = merge_obtained(&obtained);
        // Where each placement ran; "placement" itself stays the parameter as given.
        out.params
            .insert("placement-cpus".into(), describe_places(&places));
        Ok(out)
    }
}

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
    placements: Placements,
}

fn config(params: &Params) -> Result<Config, ProbeError> {
    let via = params.choices("via", "all", &MECHANISMS)?;
    if via.is_empty() {
        return Err(empty_list(PROBE, "via", &MECHANISMS));
    }
    let placements = Placements::parse(params)?;
    Ok(Config {
        via: via.iter().map(|v| Via::parse(v)).collect(),
        placements,
    })
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        config(params)
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let via: Vec<&str> = self.via.iter().map(|v| v.name()).collect();
        BTreeMap::from([
            ("via".into(), via.join(",")),
            ("placement".into(), self.placements.resolved()),
        ])
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

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
pub const SUMMARY_ROWS: rtgauge_report::summary::PlacementRows =
    rtgauge_report::summary::PlacementRows {
        probe: ABOUT.name,
        question: "context switch",
    };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_select_every_mechanism_and_placement() {
        let c = config(&Params::of(PROBE, &[])).unwrap();
        assert_eq!(c.via, vec![Via::Sem, Via::Futex, Via::Pipe]);
        assert_eq!(c.placements.names, vec!["same-cpu", "cross-cpu"]);
        assert!(!c.placements.explicit);
    }

    #[test]
    fn bad_mechanisms_and_placements_name_the_accepted_values() {
        let e = config(&Params::of(PROBE, &[("via", "carrier-pigeon")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("via") && e.contains("sem, futex, pipe"), "{e}");
        let e = config(&Params::of(PROBE, &[("placement", "sideways")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("placement") && e.contains("same-cpu, cross-cpu"),
            "{e}"
        );
        let e = config(&Params::of(PROBE, &[("via", ",")]))
            .unwrap_err()
            .to_string();
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
