//! `clocksync`: how far this machine's clock is from its reference, and whether the
//! synchronisation holds (Gleixner and Niehaus §2.1: the TSC calibrated to 40 ppb against NTP,
//! the clock within 10 µs of it).
//!
//! Every `interval` each reference is polled once, each poll bounded by `timeout`:
//! - chronyd through `chronyc` ([`chrony`]); ptp4l through `pmc` ([`ptp4l`]); a PTP hardware
//!   clock through the kernel's cross-timestamp ioctls ([`phc`]);
//! - the TSC's rate against the disciplined clock (CLOCK_MONOTONIC), in the same windows.
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
mod phc;
mod ptp4l;
mod summary;

pub use summary::{failures, limit_outcome};

use rtgauge_core::clock::{counter, now_ns, read_ns};
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput, TypedProbe,
};
use rtgauge_core::units::{format_duration_exact, quote};
use rtgauge_result::{Obtained, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

const PROBE: &str = "clocksync";
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
/// Where distributions put chrony's command socket.
const CHRONY_SOCKETS: [&str; 2] = ["/run/chrony/chronyd.sock", "/var/run/chrony/chronyd.sock"];
/// ptp4l's default management socket (uds_address).
const PTP4L_SOCKETS: [&str; 2] = ["/var/run/ptp4l", "/run/ptp4l"];

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
            Kind::Chrony(socket) => chrony::parse(&command::run(
                "chronyc",
                &chrony::args(socket.as_deref()),
                timeout,
            )?),
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

/// Running signed figures (no storage grows with the run).
#[derive(Debug, Clone, Copy, Default)]
struct Signed {
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    last: f64,
}

impl Signed {
    fn add(&mut self, v: f64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        }
        self.n += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.last = v;
    }

    fn into_metrics(self, prefix: &str, unit: &str, m: &mut BTreeMap<String, f64>) {
        if self.n == 0 {
            return;
        }
        m.insert(format!("{prefix}_mean_{unit}"), self.sum / self.n as f64);
        m.insert(format!("{prefix}_min_{unit}"), self.min);
        m.insert(format!("{prefix}_max_{unit}"), self.max);
        m.insert(format!("{prefix}_last_{unit}"), self.last);
    }
}

/// What a reference's polls add up to.
struct Track {
    offset: Recorder,
    delay: Recorder,
    width: Recorder,
    signed: Signed,
    frequency: Signed,
    polls: u64,
    failed: u64,
    first_failure: Option<String>,
    lock_losses: u64,
    state_changes: u64,
    source_losses: u64,
    over_limit: u64,
    locked_polls: u64,
    was_locked: Option<bool>,
    state: Option<String>,
    sources: BTreeMap<String, bool>,
    figures: BTreeMap<&'static str, f64>,
}

impl Track {
    fn new(interval_ns: u64) -> Track {
        Track {
            offset: Recorder::new(interval_ns),
            delay: Recorder::new(interval_ns),
            width: Recorder::new(interval_ns),
            signed: Signed::default(),
            frequency: Signed::default(),
            polls: 0,
            failed: 0,
            first_failure: None,
            lock_losses: 0,
            state_changes: 0,
            source_losses: 0,
            over_limit: 0,
            locked_polls: 0,
            was_locked: None,
            state: None,
            sources: BTreeMap::new(),
            figures: BTreeMap::new(),
        }
    }

    /// One poll's answer (or why there was none) at `at_ns` into the run.
    fn add(&mut self, answer: Result<Reading, String>, at_ns: u64, limit: Option<Limit>) {
        self.polls += 1;
        let (locked, state) = match answer {
            Ok(r) => {
                self.record(&r, at_ns, limit);
                (r.locked, r.state)
            }
            Err(reason) => {
                self.failed += 1;
                self.first_failure.get_or_insert(reason);
                (false, "no answer".to_string())
            }
        };
        self.locked_polls += u64::from(locked);
        if self.was_locked == Some(true) && !locked {
            self.lock_losses += 1;
        }
        self.was_locked = Some(locked);
        if self.state.as_ref().is_some_and(|s| *s != state) {
            self.state_changes += 1;
        }
        self.state = Some(state);
    }

    fn record(&mut self, r: &Reading, at_ns: u64, limit: Option<Limit>) {
        if let Some(o) = r.offset_ns {
            self.offset.record(o.unsigned_abs(), at_ns);
            self.signed.add(o as f64);
            self.over_limit += u64::from(limit.is_some_and(|l| o.unsigned_abs() > l.ns));
        }
        if let Some(d) = r.path_delay_ns {
            self.delay.record(d.unsigned_abs(), at_ns);
        }
        if let Some(w) = r.width_ns {
            self.width.record(w, at_ns);
        }
        if let Some(f) = r.frequency_ppb {
            self.frequency.add(f);
        }
        for (name, answers) in &r.sources {
            if self.sources.insert(name.clone(), *answers) == Some(true) && !answers {
                self.source_losses += 1;
            }
        }
        self.figures.extend(r.figures.iter().copied());
    }

    /// The reference's series: `offset` always (with its counters), `path_delay` and `width`
    /// where the reference gives them.
    fn series(self, name: &str, source: &str) -> Vec<Series> {
        let labelled = |s: Series| s.label("reference", name).label("source", source);
        let mut offset = labelled(Series::new("offset", self.offset.summary()))
            .counter("polls", self.polls)
            .counter("failed_polls", self.failed)
            .counter("lock_losses", self.lock_losses)
            .counter("state_changes", self.state_changes)
            .counter("source_losses", self.source_losses)
            .counter("over_limit", self.over_limit)
            .counter("locked_polls", self.locked_polls);
        self.signed
            .into_metrics("offset", "ns", &mut offset.metrics);
        self.frequency
            .into_metrics("frequency", "ppb", &mut offset.metrics);
        for (k, v) in &self.figures {
            offset.metrics.insert(k.to_string(), *v);
        }
        let mut out = vec![offset];
        if self.delay.count() > 0 {
            out.push(labelled(Series::new("path_delay", self.delay.summary())));
        }
        if self.width.count() > 0 {
            out.push(labelled(Series::new("width", self.width.summary())));
        }
        out
    }
}

/// Whether a process of this name runs (its `comm`).
fn process_runs(name: &str) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten()
        .any(|e| std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == name))
}

fn existing(paths: &[&str]) -> Option<PathBuf> {
    paths.iter().map(PathBuf::from).find(|p| p.exists())
}

fn ptp_devices() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/dev")
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.strip_prefix("ptp")
                            .is_some_and(|i| i.parse::<u32>().is_ok())
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The references to poll and the devices `auto` found but left out (why), or why there is
/// no reference here.
fn discover(cfg: &Config) -> Result<(Vec<Reference>, Vec<String>), ProbeError> {
    let iv = cfg.series_interval_ns;
    let mut refs = Vec::new();
    match &cfg.chrony {
        Choice::Off => {}
        Choice::Auto => {
            if existing(&CHRONY_SOCKETS).is_some() || process_runs("chronyd") {
                refs.push(Reference::new(
                    Kind::Chrony(None),
                    "chrony",
                    "default".into(),
                    iv,
                ));
            }
        }
        Choice::Paths(paths) => refs.extend(paths.iter().map(|p| {
            Reference::new(
                Kind::Chrony(Some(p.clone())),
                "chrony",
                p.display().to_string(),
                iv,
            )
        })),
    }
    let ptp_sockets = match &cfg.ptp4l {
        Choice::Off => Vec::new(),
        Choice::Auto => existing(&PTP4L_SOCKETS).into_iter().collect(),
        Choice::Paths(paths) => paths.clone(),
    };
    refs.extend(ptp_sockets.into_iter().map(|p| {
        let source = p.display().to_string();
        Reference::new(Kind::Ptp4l(p), "ptp4l", source, iv)
    }));
    // A device named by the user that cannot be opened fails its polls (the verdict says
    // so); one found by `auto` is left out with the reason (e.g. /dev/ptp0 is root's).
    let mut left_out = Vec::new();
    let devices = match &cfg.phc {
        Choice::Off => Vec::new(),
        Choice::Auto => ptp_devices()
            .into_iter()
            .filter_map(|d| match phc::PhcReference::open(&d) {
                Ok(device) => Some((d, Ok(device))),
                Err(reason) => {
                    left_out.push(format!("phc {}: left out: {reason}", d.display()));
                    None
                }
            })
            .collect(),
        Choice::Paths(paths) => paths
            .iter()
            .map(|d| (d.clone(), phc::PhcReference::open(d)))
            .collect::<Vec<_>>(),
    };
    refs.extend(devices.into_iter().map(|(d, device)| {
        let source = d.display().to_string();
        Reference::new(Kind::Phc(device), "phc", source, iv)
    }));
    if refs.is_empty() {
        let found = match left_out.as_slice() {
            [] => "no PTP hardware clock (/dev/ptpN)".to_string(),
            reasons => reasons.join("; "),
        };
        return Err(ProbeError::Unavailable(format!(
            "{PROBE}: no synchronisation reference here: no chronyd ({} absent, none running), no ptp4l ({} absent), {found}; name one with --set {PROBE}.chrony=PATH or {PROBE}.ptp4l=PATH",
            CHRONY_SOCKETS[0], PTP4L_SOCKETS[0]
        )));
    }
    Ok((refs, left_out))
}

/// The TSC's rate against the disciplined clock (CLOCK_MONOTONIC) and against the kernel's
/// raw one (MONOTONIC_RAW), from pairs taken at each poll.
struct TscRate {
    first: (u64, u64, u64, u64),
    last: (u64, u64, u64, u64),
    /// Per-window rate against the disciplined clock, Welford's running mean and variance.
    windows: u64,
    mean: f64,
    m2: f64,
    brackets_ns: u64,
    pairs: u64,
}

/// (MONOTONIC, MONOTONIC_RAW, TSC, bracket): the best of three `mono, raw, tsc, mono` reads.
fn tsc_pair() -> (u64, u64, u64, u64) {
    (0..3)
        .map(|_| {
            let a = now_ns();
            let raw = read_ns(libc::CLOCK_MONOTONIC_RAW);
            let tsc = counter::read();
            let b = now_ns();
            (a + (b - a) / 2, raw, tsc, b - a)
        })
        .min_by_key(|p| p.3)
        .unwrap_or_default()
}

fn rate(from: (u64, u64, u64, u64), to: (u64, u64, u64, u64), raw: bool) -> Option<f64> {
    let dt = if raw {
        to.1.checked_sub(from.1)?
    } else {
        to.0.checked_sub(from.0)?
    };
    let dc = to.2.checked_sub(from.2)?;
    (dt > 0).then(|| dc as f64 * 1e9 / dt as f64)
}

impl TscRate {
    fn start() -> Option<TscRate> {
        if counter::unavailable().is_some() {
            return None;
        }
        let p = tsc_pair();
        Some(TscRate {
            first: p,
            last: p,
            windows: 0,
            mean: 0.0,
            m2: 0.0,
            brackets_ns: p.3,
            pairs: 1,
        })
    }

    fn poll(&mut self) {
        let p = tsc_pair();
        if let Some(r) = rate(self.last, p, false) {
            self.windows += 1;
            let d = r - self.mean;
            self.mean += d / self.windows as f64;
            self.m2 += d * (r - self.mean);
        }
        self.brackets_ns += p.3;
        self.pairs += 1;
        self.last = p;
    }

    /// A `tsc_rate` series without samples: its figures are its metrics.
    fn series(self) -> Option<Series> {
        let hz = rate(self.first, self.last, false)?;
        let raw_hz = rate(self.first, self.last, true)?;
        let span = self.last.0.saturating_sub(self.first.0).max(1) as f64;
        let mut s = Series::new("tsc_rate", Default::default())
            .label("reference", "tsc")
            .label("source", "CLOCK_MONOTONIC");
        let m = &mut s.metrics;
        m.insert("tsc_hz".into(), hz);
        m.insert("tsc_raw_hz".into(), raw_hz);
        // Positive: the TSC runs faster against the disciplined clock than the kernel's own
        // calibration says (the discipline slows the clock down).
        m.insert("frequency_ppb".into(), (hz / raw_hz - 1.0) * 1e9);
        m.insert(
            "tsc_error_ppb".into(),
            (self.first.3 + self.last.3) as f64 / span * 1e9,
        );
        m.insert("tsc_span_ns".into(), span);
        if self.windows >= 2 {
            let sd = (self.m2 / (self.windows - 1) as f64).sqrt();
            m.insert("tsc_stability_ppb".into(), sd / hz * 1e9);
            let window = span / self.windows as f64;
            m.insert(
                "tsc_window_error_ppb".into(),
                self.brackets_ns as f64 / self.pairs as f64 / window * 1e9,
            );
        }
        Some(s)
    }
}

impl TypedProbe for ClockSync {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let (mut refs, left_out) = discover(cfg)?;
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
