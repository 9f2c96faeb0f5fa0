//! `clocksync`: how far this machine's clock is from its reference, and whether the
//! synchronisation holds (Gleixner and Niehaus §2.1: the TSC calibrated to 40 ppb against NTP,
//! the clock within 10 µs of it).
//!
//! Every `interval` each reference is polled once, each poll bounded by `timeout`:
//! - chronyd through `chronyc` ([`chrony`]); ptp4l through `pmc` ([`ptp4l`]); a PTP hardware
//!   clock through the kernel's cross-timestamp ioctls ([`phc`]);
//! - the TSC's rate against the disciplined clock (CLOCK_MONOTONIC), in the same windows
//!   ([`tsc`]).
//!
//! Which references there are is [`discover`]'s; what each one's polls add up to, [`track`]'s.
//!
//! One `offset` series per reference (labels `reference`, `source`): the distribution of
//! |offset| (a series holds magnitudes), the signed figures in its metrics (`offset_mean_ns`,
//! `offset_min_ns`, `offset_max_ns`, `offset_last_ns`), the counters `polls`,
//! `failed_polls`, `lock_losses`, `state_changes`, `source_losses` and, with a limit,
//! `over_limit`; `path_delay` (one-way) and `width` (a PHC reading's bracket) beside it;
//! `frequency_ppb` and the daemon's own figures as metrics. A daemon that hangs or answers
//! garbage fails that poll with the reason (a warning) and the run goes on.
//!
//! The verdict (`limit`, or a `profile`) is in [`summary`]: [`failures`] is what makes the run
//! exit 2. With no reference here the probe is skipped, saying what it looked for.

mod chrony;
mod command;
mod discover;
mod phc;
mod poller;
mod ptp4l;
mod summary;
mod track;
mod tsc;

pub use poller::{Poller, Status, PORT_STATES};
pub use summary::{failures, limit_outcome};

use rtgauge_core::clock::now_ns;
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::units::{format_duration_exact, quote};
use rtgauge_result::Obtained;
use rtgauge_stats::DEFAULT_INTERVAL_NS;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use track::Track;
use tsc::TscRate;

const PROBE: &str = crate::names::CLOCKSYNC;
const DESCRIPTION: &str = "offset of this clock from chrony, ptp4l and PTP hardware clocks, lock losses, TSC rate; verdict against a limit";
// What it reads does not depend on the run's mode: once per load; the warm-up is not waited.
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS)
    .mode_independent()
    .warmup_within_duration();
const PARAMS: [ParamSpec; 10] = [
    ParamSpec::new("chrony", "auto", "chronyd to ask: auto (its socket, or a chronyd running), off, or the path of its command socket (bindcmdaddress)"),
    ParamSpec::new("ptp4l", "auto", "ptp4l to ask: auto (/var/run/ptp4l), off, or paths of its management sockets (uds_address), comma-separated"),
    ParamSpec::new("ptp-domain", "0", "the PTP domain number ptp4l runs in (pmc -d), 0 to 255"),
    ParamSpec::new("phc", "auto", "PTP hardware clocks to read against the system clock: auto (every /dev/ptpN), off, or device paths"),
    ParamSpec::new("tsc", "yes", "yes or no: the TSC's rate against the disciplined clock (CLOCK_MONOTONIC), in parts per billion"),
    ParamSpec::new("interval", "1s", "time between two polls of every reference, 100ms or more"),
    ParamSpec::new("timeout", "2s", "longest wait for one daemon's answer (a daemon that hangs fails that poll), 10ms or more"),
    ParamSpec::new("limit", "none", "largest |offset| allowed, a duration (1us); exceeded, lost or failing references make the run exit 2"),
    ParamSpec::new("profile", "none", "a named limit: telecom (30ns, ITU-T G.8273.2 class C), industrial (1us), robotics (100us)"),
    ParamSpec::new("series-interval", "1s", "width of the intervals whose maximum |offset| is kept (the maxima-over-time series)"),
];

/// The names `profile` accepts.
pub const PROFILE_NAMES: [&str; 3] = ["telecom", "industrial", "robotics"];
/// The named limits a `profile` selects, in ns.
const PROFILES: [(&str, u64); 3] = [
    ("telecom", 30),
    ("industrial", 1_000),
    ("robotics", 100_000),
];
const MIN_INTERVAL_NS: u64 = 100_000_000;
const MIN_TIMEOUT_NS: u64 = 10_000_000;
/// The longest sleep between two looks at the stop flag and the budget.
const LOOK_EVERY_NS: u64 = 100_000_000;

pub struct ClockSync;

/// Which daemons or devices of one kind to read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    Auto,
    Off,
    Paths(Vec<PathBuf>),
}

impl Choice {
    fn parse(params: &Params, key: &str) -> Result<Choice, ProbeError> {
        let text = params.text(key, "auto");
        match text.trim() {
            "auto" => Ok(Choice::Auto),
            "off" | "no" => Ok(Choice::Off),
            list => {
                let paths: Vec<PathBuf> = list
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
                    .collect();
                match paths.iter().find(|p| !p.is_absolute()) {
                    _ if paths.is_empty() => Err(invalid(format!("{key} is empty; give auto, off or a path"))),
                    Some(p) => Err(invalid(format!(
                        "{key} '{}' is not an absolute path; give auto, off or a path such as /run/{key}",
                        quote(&p.display().to_string())
                    ))),
                    None => Ok(Choice::Paths(paths)),
                }
            }
        }
    }

    fn text(&self) -> String {
        match self {
            Choice::Auto => "auto".into(),
            Choice::Off => "off".into(),
            Choice::Paths(p) => p
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// The limit on |offset| and the profile it came from, if named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub ns: u64,
    pub profile: Option<&'static str>,
}

fn invalid(message: String) -> ProbeError {
    ProbeError::Invalid {
        probe: PROBE,
        message,
    }
}

/// The `limit` or `profile` parameter (not both), refused in one line when malformed.
fn limit(params: &Params) -> Result<Option<Limit>, ProbeError> {
    let raw = params.raw();
    match (raw.get("limit"), raw.get("profile")) {
        (Some(_), Some(_)) => Err(invalid(
            "give either limit or profile, not both (a profile is a named limit)".into(),
        )),
        (Some(_), None) => {
            let ns = params.duration_ns("limit", 0)?;
            if ns == 0 {
                return Err(invalid("limit 0 cannot be met; give e.g. limit=1us".into()));
            }
            Ok(Some(Limit { ns, profile: None }))
        }
        (None, Some(name)) => {
            let (profile, ns) = PROFILES
                .iter()
                .find(|(p, _)| p == name)
                .copied()
                .ok_or_else(|| {
                    invalid(format!(
                        "unknown profile '{}'; accepted: telecom (30ns), industrial (1us), robotics (100us), or give limit=DURATION",
                        quote(name)
                    ))
                })?;
            Ok(Some(Limit {
                ns,
                profile: Some(profile),
            }))
        }
        (None, None) => Ok(None),
    }
}

/// The limit a probe run recorded (its resolved parameters).
pub fn recorded_limit(params: &BTreeMap<String, String>) -> Option<Limit> {
    let pairs: Vec<(&str, &str)> = params
        .iter()
        .filter(|(k, _)| *k == "limit" || *k == "profile")
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    limit(&Params::of(PROBE, &pairs)).ok().flatten()
}

#[derive(Debug, Clone)]
pub struct Config {
    chrony: Choice,
    ptp4l: Choice,
    ptp_domain: u8,
    phc: Choice,
    tsc: bool,
    interval_ns: u64,
    timeout_ns: u64,
    limit: Option<Limit>,
    series_interval_ns: u64,
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        let interval_ns = params.duration_ns("interval", 1_000_000_000)?;
        if interval_ns < MIN_INTERVAL_NS {
            return Err(invalid(format!(
                "interval {} is shorter than 100ms: each poll runs the daemons' clients; use e.g. interval=1s",
                format_duration_exact(interval_ns)
            )));
        }
        let timeout_ns = params.duration_ns("timeout", 2_000_000_000)?;
        if timeout_ns < MIN_TIMEOUT_NS {
            return Err(invalid(format!(
                "timeout {} is shorter than 10ms: no client starts that fast; use e.g. timeout=2s",
                format_duration_exact(timeout_ns)
            )));
        }
        let domain = params.text("ptp-domain", "0");
        let ptp_domain = domain.trim().parse::<u8>().map_err(|_| {
            invalid(format!(
                "ptp-domain '{}' is not a domain number from 0 to 255",
                quote(&domain)
            ))
        })?;
        Ok(Config {
            chrony: Choice::parse(params, "chrony")?,
            ptp4l: Choice::parse(params, "ptp4l")?,
            ptp_domain,
            phc: Choice::parse(params, "phc")?,
            tsc: rtgauge_core::probe::flag(PROBE, params, "tsc", true)?,
            interval_ns,
            timeout_ns,
            limit: limit(params)?,
            series_interval_ns: params.duration_ns("series-interval", DEFAULT_INTERVAL_NS)?,
        })
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let mut p = BTreeMap::from([
            ("chrony".to_string(), self.chrony.text()),
            ("ptp4l".into(), self.ptp4l.text()),
            ("ptp-domain".into(), self.ptp_domain.to_string()),
            ("phc".into(), self.phc.text()),
            ("tsc".into(), if self.tsc { "yes" } else { "no" }.into()),
            ("interval".into(), format_duration_exact(self.interval_ns)),
            ("timeout".into(), format_duration_exact(self.timeout_ns)),
            (
                "series-interval".into(),
                format_duration_exact(self.series_interval_ns),
            ),
        ]);
        match self.limit {
            Some(Limit {
                profile: Some(name),
                ..
            }) => p.insert("profile".into(), name.into()),
            Some(Limit { ns, .. }) => p.insert("limit".into(), format_duration_exact(ns)),
            None => None,
        };
        p
    }
}

/// What one poll of a reference answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// This clock minus the reference, ns.
    offset_ns: Option<i64>,
    /// One-way delay to the reference, ns.
    path_delay_ns: Option<i64>,
    /// How fast the local oscillator runs against the reference, uncorrected.
    frequency_ppb: Option<f64>,
    /// The uncertainty of the reading itself (a PHC's bracket).
    width_ns: Option<u64>,
    /// The daemon holds the clock to its reference (chrony: synchronised with a selected
    /// source; ptp4l: a port in SLAVE, its servo locked).
    locked: bool,
    /// The daemon's state in words (leap status and source; port and servo state).
    state: String,
    /// ptp4l's port state as IEEE 1588 names it (SLAVE, UNCALIBRATED, MASTER…).
    port_state: Option<String>,
    /// Each source's name and whether it answers (chrony).
    sources: Vec<(String, bool)>,
    /// The daemon's other figures, the last one kept.
    figures: Vec<(&'static str, f64)>,
}

enum Kind {
    Chrony(Option<PathBuf>),
    Ptp4l(PathBuf),
    Phc(Result<phc::PhcReference, String>),
}

/// A reference and everything its polls gave.
struct Reference {
    kind: Kind,
    name: &'static str,
    source: String,
    track: Track,
}

impl Reference {
    fn new(kind: Kind, name: &'static str, source: String, interval_ns: u64) -> Reference {
        Reference {
            kind,
            name,
            source,
            track: Track::new(interval_ns),
        }
    }

    fn poll(&mut self, cfg: &Config, client: &Path) -> Result<Reading, String> {
        let timeout = Duration::from_nanos(cfg.timeout_ns);
        match &mut self.kind {
            Kind::Chrony(socket) => {
                let args = chrony::args(socket.as_deref());
                let answer = command::run("chronyc", &args, timeout).map_err(|e| {
                    chrony::explain(e, socket.as_deref(), rtgauge_os::process::euid() == 0)
                });
                chrony::parse(&answer?)
            }
            Kind::Ptp4l(socket) => {
                let args = ptp4l::args(socket, client, cfg.ptp_domain);
                let answer = command::run("pmc", &args, timeout);
                // pmc leaves its client socket behind when it is stopped.
                let _ = std::fs::remove_file(client);
                ptp4l::parse(&answer?)
            }
            Kind::Phc(Ok(device)) => device.poll(),
            Kind::Phc(Err(reason)) => Err(reason.clone()),
        }
    }
}

impl TypedProbe for ClockSync {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let (mut refs, left_out) = discover::discover(cfg)?;
        let mut tsc = if cfg.tsc { TscRate::start() } else { None };
        let live: Vec<_> = refs
            .iter()
            .map(|r| ctx.live.register(format!("{} {}", r.name, r.source)))
            .collect();
        let client = std::env::temp_dir().join(format!("rtgauge-pmc.{}", std::process::id()));
        let start = now_ns();
        let mut next = start;
        let mut polls = 0u64;
        loop {
            let now = now_ns();
            if ctx.stopped() || ctx.budget.done(start, now, polls) {
                break;
            }
            if now < next {
                let left = ctx
                    .budget
                    .duration_ns
                    .map_or(u64::MAX, |d| (start + d).saturating_sub(now));
                rtgauge_core::clock::sleep_for((next - now).min(LOOK_EVERY_NS).min(left.max(1)));
                continue;
            }
            for (r, cell) in refs.iter_mut().zip(&live) {
                let answer = r.poll(cfg, &client);
                let offset = answer.as_ref().ok().and_then(|a| a.offset_ns);
                r.track.add(answer, now - start, cfg.limit);
                if let Some(o) = offset {
                    cell.publish(o.unsigned_abs(), r.track.lock_losses);
                }
            }
            if let Some(t) = tsc.as_mut() {
                t.poll();
            }
            polls += 1;
            // Polls that took longer than the interval delay the next one, never stack up.
            next = (next + cfg.interval_ns).max(now_ns());
        }
        let measured_ns = now_ns() - start;
        if let Some(e) = none_answered(&refs) {
            return Err(e);
        }
        let mut out = output(refs, tsc, measured_ns);
        out.warnings.extend(left_out);
        Ok(out)
    }
}

/// Every reference failed every poll: the run failed, with each one's reason (rather than the
/// frame's "no sample was taken", which would hide them).
fn none_answered(refs: &[Reference]) -> Option<ProbeError> {
    if refs.iter().any(|r| r.track.failed < r.track.polls) {
        return None;
    }
    let reasons: Vec<String> = refs
        .iter()
        .map(|r| {
            let why = r.track.first_failure.as_deref().unwrap_or("not polled");
            format!("{} {}: {why}", r.name, r.source)
        })
        .collect();
    Some(invalid(format!(
        "no reference answered: {}",
        reasons.join("; ")
    )))
}

/// The series, the states and failures in words (parameters of the run: figures found while
/// measuring), and one warning per reference that failed a poll.
fn output(refs: Vec<Reference>, tsc: Option<TscRate>, measured_ns: u64) -> ProbeOutput {
    let mut series = Vec::new();
    let mut warnings = Vec::new();
    let mut found = BTreeMap::new();
    for r in refs {
        let label = format!("{} {}", r.name, r.source);
        if let Some(state) = &r.track.state {
            found.insert(format!("state of {label}"), state.clone());
        }
        if let Some(reason) = &r.track.first_failure {
            warnings.push(format!(
                "{label} failed {} of {} polls: {reason}",
                r.track.failed, r.track.polls
            ));
            found.insert(format!("failure of {label}"), reason.clone());
        }
        series.extend(r.track.series(r.name, &r.source));
    }
    series.extend(tsc.and_then(TscRate::series));
    if let Ok(k) = rtgauge_os::ptp::kernel_time() {
        found.insert(
            "kernel clock".into(),
            format!(
                "{}, frequency correction {:+.0} ppb, estimated error {} ns",
                if k.synchronised {
                    "synchronised"
                } else {
                    "not synchronised"
                },
                k.frequency_ppb,
                k.est_error_ns
            ),
        );
    }
    let mut out = ProbeOutput::measured(Obtained::default(), series, warnings, measured_ns);
    out.params = found;
    out
}

#[cfg(test)]
mod tests;
