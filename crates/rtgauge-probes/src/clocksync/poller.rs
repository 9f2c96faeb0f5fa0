//! The probe's polls for a caller that runs them itself, forever: `rtgauge monitor --probe
//! clocksync`. The same parameters, discovery, clients, parsers and counters as the probe
//! ([`discover`](super::discover), [`Reference::poll`], [`Track`](super::track::Track)); each
//! [`Poller::poll`] asks every reference once, each bounded by the `timeout` parameter, and says
//! what it answered with the counters of this process so far.

use super::{discover, Config, Reference, PROBE};
use rtgauge_core::clock::now_ns;
use rtgauge_core::probe::{Params, ProbeConfig, ProbeError};
use std::path::PathBuf;

/// IEEE 1588's port states (portState), as ptp4l names them, in the standard's order (1 to 9).
pub const PORT_STATES: [&str; 9] = [
    "INITIALIZING",
    "FAULTY",
    "DISABLED",
    "LISTENING",
    "PRE_MASTER",
    "MASTER",
    "PASSIVE",
    "UNCALIBRATED",
    "SLAVE",
];

/// One reference after a poll: what it answered, and its counters since the poller started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// `chrony`, `ptp4l` or `phc`.
    pub reference: &'static str,
    /// Which one: its socket or device, or `default` (chronyd found by `auto`).
    pub source: String,
    /// The poll gave a reading; else `failure` says why not.
    pub answered: bool,
    pub failure: Option<String>,
    /// This clock minus the reference, ns (signed).
    pub offset_ns: Option<i64>,
    /// One-way delay to the reference, ns.
    pub path_delay_ns: Option<i64>,
    /// chrony's frequency: how fast the local oscillator runs against the reference, ppb.
    pub frequency_ppb: Option<f64>,
    /// The daemon holds the clock to its reference (chrony: synchronised with a selected
    /// source; ptp4l: port in SLAVE with a grandmaster, its servo locked; a PHC that was read).
    pub locked: bool,
    /// The daemon's state in words.
    pub state: String,
    /// ptp4l's port state ([`PORT_STATES`]).
    pub port_state: Option<String>,
    /// ptp4l's grandmaster clock class (IEEE 1588 clockClass).
    pub clock_class: Option<f64>,
    /// chrony's stratum.
    pub stratum: Option<f64>,
    /// chrony's bound on the clock's error: |system time| + root dispersion + root delay / 2.
    pub error_bound_ns: Option<f64>,
    pub polls: u64,
    pub failed_polls: u64,
    pub lock_losses: u64,
    pub state_changes: u64,
    pub source_losses: u64,
}

/// The references this machine has, polled on demand.
pub struct Poller {
    cfg: Config,
    refs: Vec<Reference>,
    left_out: Vec<String>,
    client: PathBuf,
    start: u64,
}

impl Poller {
    /// The probe's parameters (`chrony`, `ptp4l`, `ptp-domain`, `phc`, `interval`, `timeout`…)
    /// read as `rtgauge run clocksync` reads them, and the references found; refused in the
    /// probe's one line when a parameter is wrong or there is no reference here.
    pub fn new(settings: &[(&str, &str)]) -> Result<Poller, ProbeError> {
        let cfg = Config::parse(&Params::of(PROBE, settings))?;
        let (refs, left_out) = discover::discover(&cfg)?;
        Ok(Poller {
            cfg,
            refs,
            left_out,
            client: std::env::temp_dir()
                .join(format!("rtgauge-pmc-monitor.{}", std::process::id())),
            start: now_ns(),
        })
    }

    /// The time between two polls (the `interval` parameter), ns.
    pub fn interval_ns(&self) -> u64 {
        self.cfg.interval_ns
    }

    /// The longest wait for one reference (the `timeout` parameter), ns.
    pub fn timeout_ns(&self) -> u64 {
        self.cfg.timeout_ns
    }

    /// Devices `auto` found but could not use, each with its reason.
    pub fn left_out(&self) -> &[String] {
        &self.left_out
    }

    /// Each reference as (`reference`, `source`), in the order [`Poller::poll`] answers.
    pub fn references(&self) -> Vec<(&'static str, String)> {
        self.refs
            .iter()
            .map(|r| (r.name, r.source.clone()))
            .collect()
    }

    /// Asks every reference once (each at most `timeout`) and says what each answered.
    pub fn poll(&mut self) -> Vec<Status> {
        let at = now_ns().saturating_sub(self.start);
        let mut out = Vec::with_capacity(self.refs.len());
        for r in &mut self.refs {
            let answer = r.poll(&self.cfg, &self.client);
            let mut s = Status {
                reference: r.name,
                source: r.source.clone(),
                answered: answer.is_ok(),
                ..Status::default()
            };
            match &answer {
                Ok(reading) => {
                    let figure = |name: &str| {
                        reading
                            .figures
                            .iter()
                            .find(|(k, _)| *k == name)
                            .map(|(_, v)| *v)
                    };
                    s.offset_ns = reading.offset_ns;
                    s.path_delay_ns = reading.path_delay_ns;
                    s.frequency_ppb = reading.frequency_ppb;
                    s.locked = reading.locked;
                    s.state = reading.state.clone();
                    s.port_state = reading.port_state.clone();
                    s.clock_class = figure("clock_class");
                    s.stratum = figure("stratum");
                    s.error_bound_ns = figure("error_bound_ns");
                }
                Err(reason) => {
                    s.failure = Some(reason.clone());
                    s.state = "no answer".into();
                }
            }
            r.track.add(answer, at, None);
            s.polls = r.track.polls;
            s.failed_polls = r.track.failed;
            s.lock_losses = r.track.lock_losses;
            s.state_changes = r.track.state_changes;
            s.source_losses = r.track.source_losses;
            out.push(s);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poller_is_refused_like_the_probe() {
        let e = Poller::new(&[("interval", "10ms")])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("shorter than 100ms"), "{e}");
        let e = Poller::new(&[("chrony", "off"), ("ptp4l", "off"), ("phc", "off")])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no synchronisation reference here"), "{e}");
    }

    #[test]
    fn a_socket_that_never_answers_fails_each_poll_within_the_timeout() {
        let dir = std::env::temp_dir().join(format!("rtgauge-poller-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("silent.sock");
        let _ = std::fs::remove_file(&socket);
        let _silent = std::os::unix::net::UnixDatagram::bind(&socket).unwrap();
        let chrony = format!("{}", socket.display());
        let mut p = Poller::new(&[
            ("chrony", &chrony),
            ("ptp4l", "off"),
            ("phc", "off"),
            ("timeout", "100ms"),
        ])
        .unwrap();
        assert_eq!(p.references(), [("chrony", chrony.clone())]);
        let t = std::time::Instant::now();
        let first = p.poll();
        let second = p.poll();
        assert!(t.elapsed() < std::time::Duration::from_secs(10));
        let s = &second[0];
        assert!(!first[0].answered && !s.answered, "{s:?}");
        assert!(s.failure.is_some(), "{s:?}");
        assert_eq!((s.polls, s.failed_polls), (2, 2));
        assert_eq!(s.state, "no answer");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
