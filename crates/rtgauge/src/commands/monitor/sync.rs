//! `rtgauge monitor --probe clocksync`: the clocksync probe's references (chronyd, ptp4l, PTP
//! hardware clocks) polled every `--period` forever, their figures exported like the latency
//! monitors' (`--listen`, `--textfile`), the maximum |offset| of each interval and the counters
//! kept in the run history so they survive a restart.
//!
//! Threads: the poller (rtgauge_probes::clocksync::Poller, the probe's own clients and
//! parsers, each poll bounded by its timeout) asks every reference once a period and keeps the
//! answers; this thread closes intervals and rewrites the textfile; the HTTP thread renders on
//! each scrape. No CPU is measured: they all run on `--cpus` (default: wherever the process
//! may run), which keeps them, and the clients the polls start, off the CPUs a latency monitor
//! measures.
//!
//! The history: each reference is one monitor of the history, its probe named
//! `clocksync REFERENCE SOURCE`, with two rows per interval (the book's "CPUs"):
//! [`SLOT_POLLS`] holds the polls, the lock losses and the maximum |offset|;
//! [`SLOT_FAILURES`] the failed polls and the state changes.

use super::book::{Book, Reading};
use super::exposition::Info;
use super::sync_exposition::{format_for, render, RefFigures};
use super::{signal_name, uptime, write_text, TEXTFILE, TEXTFILE_EVERY_NS};
use crate::cli::MonitorArgs;
use anyhow::{bail, Result};
use rtgauge_core::clock::{now_ns, unix_ns};
use rtgauge_core::signals;
use rtgauge_probes::clocksync::{Poller, Status};
use rtgauge_store::Store;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PROBE: &str = rtgauge_probes::names::CLOCKSYNC;
/// The time between two polls when `--period` does not say.
const DEFAULT_PERIOD_NS: u64 = 1_000_000_000;
/// The shortest time between two polls (each runs the daemons' clients).
const MIN_PERIOD_NS: u64 = 100_000_000;
/// The history's row of a reference's polls, lock losses and interval maximum |offset|.
pub(super) const SLOT_POLLS: usize = 0;
/// The history's row of a reference's failed polls and state changes.
pub(super) const SLOT_FAILURES: usize = 1;
/// The clocksync probe's parameters a monitor takes with `--set`.
const TAKEN: [&str; 5] = ["chrony", "ptp4l", "ptp-domain", "phc", "timeout"];
/// Parameters the monitor sets itself, or that are `rtgauge run clocksync`'s only.
const NOT_FOR_MONITOR: [(&str, &str); 5] = [
    ("interval", "the time between polls is --period"),
    (
        "series-interval",
        "the intervals of the maxima are --interval",
    ),
    (
        "limit",
        "a monitor's limit is its alert rule's (contrib/monitor/alerts.yml)",
    ),
    (
        "profile",
        "a monitor's limit is its alert rule's (contrib/monitor/alerts.yml)",
    ),
    (
        "tsc",
        "the TSC's rate is measured by `rtgauge run clocksync`",
    ),
];

/// One reference: its book in the history and what its polls gave.
struct Tracked {
    reference: &'static str,
    source: String,
    book: Book,
    last: Option<Status>,
    /// Highest |offset| since the open interval began.
    open_max_ns: Option<u64>,
    /// Highest |offset| of the last finished interval.
    interval_max_ns: Option<u64>,
}

impl Tracked {
    /// This process's counts for the book, the open interval's maximum in the polls' row.
    fn readings(&self) -> Vec<Reading> {
        let Some(s) = &self.last else {
            return Vec::new();
        };
        vec![
            Reading {
                cpu: SLOT_POLLS,
                samples: s.polls,
                overruns: s.lock_losses,
                max_ns: self.open_max_ns,
                cause: None,
            },
            Reading {
                cpu: SLOT_FAILURES,
                samples: s.failed_polls,
                overruns: s.state_changes,
                // Always a row, so state changes are kept in an interval without failures.
                max_ns: Some(0),
                cause: None,
            },
        ]
    }

    /// What an export shows, after the open interval's rows are written (nothing shown can
    /// be lost by a crash).
    fn figures(&mut self) -> RefFigures {
        let readings = self.readings();
        if !readings.is_empty() {
            self.book.checkpoint(&readings, unix_ns());
        }
        let (polls, lock_losses) = self.book.totals(SLOT_POLLS);
        let (failed, state_changes) = self.book.totals(SLOT_FAILURES);
        RefFigures {
            reference: self.reference,
            source: self.source.clone(),
            last: self.last.clone(),
            interval_max_ns: self.interval_max_ns,
            alltime_max_ns: self
                .book
                .state()
                .get(&SLOT_POLLS)
                .and_then(|s| s.alltime_interval_max_ns),
            polls_total: polls,
            failed_polls_total: failed,
            lock_losses_total: lock_losses,
            state_changes_total: state_changes,
        }
    }

    fn close(&mut self, whole: bool) {
        let readings = self.readings();
        self.book.close(&readings, whole, unix_ns());
        if whole {
            self.interval_max_ns = self.open_max_ns;
        }
        self.open_max_ns = None;
    }
}

struct Shared {
    info: Info,
    refs: Mutex<Vec<Tracked>>,
}

impl Shared {
    fn figures(&self) -> Vec<RefFigures> {
        self.refs
            .lock()
            .map(|mut refs| refs.iter_mut().map(Tracked::figures).collect())
            .unwrap_or_default()
    }

    fn body(&self, accept: &str) -> (Vec<u8>, &'static str) {
        let format = format_for(accept);
        (
            render(&self.info, &self.figures(), format).into_bytes(),
            format.content_type(),
        )
    }
}

/// The flags of the latency monitors that mean nothing here, refused in one line.
fn refuse_latency_flags(args: &MonitorArgs) -> Result<()> {
    let given = [
        (args.runtime.is_some(), "--runtime"),
        (!args.mode.is_empty(), "--mode"),
        (args.warmup.is_some(), "--warmup"),
        (args.best_effort, "--best-effort"),
    ];
    if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
        bail!("{flag} is for the latency monitors; --probe clocksync measures no CPU (its polls run on --cpus)");
    }
    if let Some(path) = &args.output {
        bail!(
            "--output {}: the clocksync monitor writes no final document (its figures are in Prometheus and the history); for one result use `rtgauge run clocksync -d DURATION -o FILE`",
            path.display()
        );
    }
    Ok(())
}

/// `--set clocksync.KEY=VALUE` as the poller's parameters, and the period as its interval.
fn settings(args: &MonitorArgs, period: u64) -> Result<Vec<(String, String)>> {
    if period < MIN_PERIOD_NS {
        bail!(
            "--period {}: shorter than 100ms: each poll runs the daemons' clients; e.g. --period 1s",
            rtgauge_core::units::format_duration_exact(period)
        );
    }
    let mut out = Vec::new();
    for set in &args.set {
        let Some((key, value)) = set.split_once('=') else {
            bail!(
                "--set {set}: give KEY=VALUE, e.g. --set {PROBE}.chrony=/run/chrony/chronyd.sock"
            );
        };
        let key = key.trim();
        let key = key
            .strip_prefix(&format!("{PROBE}."))
            .unwrap_or(key)
            .to_string();
        if let Some((_, why)) = NOT_FOR_MONITOR.iter().find(|(k, _)| *k == key) {
            bail!("--set {set}: not for a monitor: {why}");
        }
        if !TAKEN.contains(&key.as_str()) {
            let taken: Vec<String> = TAKEN.iter().map(|k| format!("{PROBE}.{k}")).collect();
            bail!(
                "--set {set}: not a parameter of the clocksync monitor; it takes {}",
                taken.join(", ")
            );
        }
        out.push((key, value.trim().to_string()));
    }
    out.push((
        "interval".into(),
        rtgauge_core::units::format_duration_exact(period),
    ));
    Ok(out)
}

/// The CPUs the monitor's threads run on: `--cpus`, or None (wherever the process may run).
fn cpus(args: &MonitorArgs) -> Result<Option<Vec<usize>>> {
    if args.cpus.trim() == "all" {
        return Ok(None);
    }
    rtgauge_core::cpus::parse_cpus(&args.cpus, &rtgauge_sysinfo::online_cpus())
        .map(Some)
        .map_err(|e| anyhow::anyhow!("--cpus {}: {e}", args.cpus))
}

pub(super) fn monitor(args: &MonitorArgs) -> Result<u8> {
    // Everything a user can get wrong fails here, in one line, before the first poll.
    refuse_latency_flags(args)?;
    let period = args.period.unwrap_or(DEFAULT_PERIOD_NS);
    let settings = settings(args, period)?;
    let exporters = super::args::exporters(args)?;
    let cpus = cpus(args)?;
    let pairs: Vec<(&str, &str)> = settings
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let poller = Poller::new(&pairs).map_err(|e| anyhow::anyhow!("--probe {PROBE}: {e}"))?;
    for reason in poller.left_out() {
        eprintln!("rtgauge monitor: {reason}");
    }
    let fingerprint = rtgauge_sysinfo::collect();
    let store_path = super::super::history::store_path(&args.store)?;
    let mut refs = Vec::new();
    for (reference, source) in poller.references() {
        let book = Book::open(
            Store::open(&store_path)?,
            &fingerprint.hostname,
            &format!("{PROBE} {reference} {source}"),
            args.interval,
            &[SLOT_POLLS, SLOT_FAILURES],
            now_ns(),
            unix_ns(),
        )?;
        refs.push(Tracked {
            reference,
            source,
            book,
            last: None,
            open_max_ns: None,
            interval_max_ns: None,
        });
    }
    let shared = Arc::new(Shared {
        info: Info {
            host: fingerprint.hostname.clone(),
            kernel: fingerprint.kernel_release.clone(),
            preemption: fingerprint.preemption_model.clone(),
            mode: "normal".into(),
            probe: PROBE.into(),
            period_seconds: period as f64 / 1e9,
            interval_seconds: args.interval as f64 / 1e9,
            version: env!("CARGO_PKG_VERSION").into(),
            started_unix_s: unix_ns() as f64 / 1e9,
            ..Info::default()
        },
        refs: Mutex::new(refs),
    });
    signals::install();
    if let Some(set) = &cpus {
        rtgauge_core::rt::pin_thread_to_set(set);
    }
    println!(
        "{}",
        start_line(args, &poller, &exporters, &store_path, cpus.as_deref())
    );
    let _http = exporters.server.map(|(server, _)| {
        let shared = shared.clone();
        let set = cpus.clone().unwrap_or_default();
        std::thread::Builder::new()
            .name("rtgauge-http".into())
            .spawn(move || super::serve_with(server, &set, |accept| shared.body(accept)))
            .expect("a thread can be started")
    });
    // A poll in progress at the stop ends within its timeouts (the clients it started are
    // stopped then, never left behind); the monitor waits for it that long at most.
    let poll_bound = Duration::from_nanos(
        poller.timeout_ns() * poller.references().len() as u64 + 1_000_000_000,
    );
    let polling = {
        let shared = shared.clone();
        let set = cpus.clone().unwrap_or_default();
        std::thread::Builder::new()
            .name("rtgauge-poll".into())
            .spawn(move || poll_forever(poller, &shared, &set))
            .expect("a thread can be started")
    };
    let started = now_ns();
    watch(&shared, args);
    let waited = std::time::Instant::now();
    while !polling.is_finished() && waited.elapsed() < poll_bound {
        std::thread::sleep(Duration::from_millis(20));
    }
    finish(&shared, args, now_ns() - started);
    Ok(crate::EXIT_OK)
}

fn start_line(
    args: &MonitorArgs,
    poller: &Poller,
    exporters: &super::args::Exporters,
    store: &std::path::Path,
    cpus: Option<&[usize]>,
) -> String {
    let d = rtgauge_result::units::format_duration_ns;
    let refs: Vec<String> = poller
        .references()
        .iter()
        .map(|(r, s)| format!("{r} {s}"))
        .collect();
    let mut to = Vec::new();
    if let Some((_, at)) = &exporters.server {
        to.push(format!("http://{at}/metrics"));
    }
    if let Some(dir) = &args.textfile {
        to.push(dir.join(TEXTFILE).display().to_string());
    }
    let on = cpus.map_or(String::new(), |c| {
        format!(" on CPU {}", rtgauge_sysinfo::format_cpu_list(c))
    });
    format!(
        "rtgauge monitor: polling {} every {} (each at most {}){on}, maxima of |offset| per {} interval; exporting to {}; history {}; stop with SIGTERM or Ctrl-C",
        refs.join(", "),
        d(poller.interval_ns()),
        d(poller.timeout_ns()),
        d(args.interval),
        to.join(" and "),
        store.display()
    )
}

/// Polls every reference once a period until a stop; a poll that takes longer than the period
/// delays the next one, never stacks up.
fn poll_forever(mut poller: Poller, shared: &Shared, cpus: &[usize]) {
    rtgauge_core::rt::pin_thread_to_set(cpus);
    let period = poller.interval_ns();
    let mut next = now_ns();
    let mut said: Vec<Option<String>> = vec![None; poller.references().len()];
    while !signals::stop_requested() {
        let now = now_ns();
        if now < next {
            std::thread::sleep(Duration::from_nanos((next - now).min(100_000_000)));
            continue;
        }
        let statuses = poller.poll();
        for (s, last) in statuses.iter().zip(said.iter_mut()) {
            if let Some(line) = failure_line(s, last) {
                eprintln!("{line}");
            }
        }
        if let Ok(mut refs) = shared.refs.lock() {
            for (t, s) in refs.iter_mut().zip(statuses) {
                if let Some(o) = s.offset_ns {
                    t.open_max_ns = t.open_max_ns.max(Some(o.unsigned_abs()));
                }
                t.last = Some(s);
            }
        }
        next = (next + period).max(now_ns());
    }
}

/// What stderr (the journal under systemd) says of a poll: why a reference failed, once until
/// the reason changes, and that it answers again. `last` is the reason said last.
fn failure_line(s: &Status, last: &mut Option<String>) -> Option<String> {
    let who = format!("rtgauge monitor: {} {}", s.reference, s.source);
    match (&s.failure, last.as_ref()) {
        (Some(reason), said) if said != Some(reason) => {
            *last = Some(reason.clone());
            Some(format!(
                "{who}: no reading: {reason} (said again only when the reason changes)"
            ))
        }
        (None, Some(_)) => {
            *last = None;
            Some(format!("{who}: answers again"))
        }
        _ => None,
    }
}

/// Until a stop: closes each interval when it ends, and rewrites the textfile.
fn watch(shared: &Shared, args: &MonitorArgs) {
    let interval = args.interval;
    let mut next_textfile = 0;
    while !signals::stop_requested() {
        std::thread::sleep(Duration::from_millis(100));
        let now = now_ns();
        if let Ok(mut refs) = shared.refs.lock() {
            for t in refs.iter_mut() {
                while (t.book.open + 1) * interval <= now {
                    t.close(true);
                }
            }
        }
        if let Some(dir) = &args.textfile {
            if now >= next_textfile {
                let text = render(&shared.info, &shared.figures(), super::Format::Text);
                // A full disk must not stop the monitor: say so and try again later.
                if let Err(e) = write_text(dir, &text) {
                    eprintln!("rtgauge monitor: {e}");
                }
                next_textfile = now + TEXTFILE_EVERY_NS;
            }
        }
    }
}

/// After the stop: the unfinished interval kept, the textfile removed, one line saying so.
fn finish(shared: &Shared, args: &MonitorArgs, up: u64) {
    let mut rows = 0;
    let mut store = String::new();
    if let Ok(mut refs) = shared.refs.lock() {
        for t in refs.iter_mut() {
            t.close(false);
            rows += t.book.closed_rows;
            store = t.book.store_path().display().to_string();
        }
    }
    let mut said = vec![format!(
        "{rows} interval row{} kept in {store}",
        if rows == 1 { "" } else { "s" }
    )];
    if let Some(dir) = &args.textfile {
        let path = dir.join(TEXTFILE);
        match std::fs::remove_file(&path) {
            Ok(()) => said.push(format!("{} removed", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => eprintln!("rtgauge monitor: cannot remove {}: {e}", path.display()),
        }
    }
    println!(
        "rtgauge monitor: stopped after {}{}: {}",
        uptime(up),
        signals::stop_signal()
            .map(|s| format!(" ({})", signal_name(s)))
            .unwrap_or_default(),
        said.join("; ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> MonitorArgs {
        let mut argv = vec![
            "rtgauge",
            "monitor",
            "--probe",
            "clocksync",
            "--listen",
            "127.0.0.1:9808",
        ];
        argv.extend(extra);
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Monitor(a) => *a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_failing_reference_is_said_once_per_reason_and_when_it_answers_again() {
        let failing = |why: &str| Status {
            reference: "chrony",
            source: "default".into(),
            failure: Some(why.into()),
            ..Status::default()
        };
        let mut last = None;
        let first = failure_line(&failing("chronyc got no answer"), &mut last).unwrap();
        assert!(
            first.starts_with("rtgauge monitor: chrony default: no reading: chronyc got no answer"),
            "{first}"
        );
        assert_eq!(
            failure_line(&failing("chronyc got no answer"), &mut last),
            None
        );
        assert!(failure_line(&failing("garbage"), &mut last).is_some());
        let ok = Status {
            answered: true,
            ..failing("")
        };
        let ok = Status {
            failure: None,
            ..ok
        };
        assert_eq!(
            failure_line(&ok, &mut last).as_deref(),
            Some("rtgauge monitor: chrony default: answers again")
        );
        assert_eq!(failure_line(&ok, &mut last), None);
    }

    #[test]
    fn settings_are_the_probes_and_the_monitors_own_are_refused() {
        let a = args(&[
            "--set",
            "clocksync.chrony=/tmp/c.sock",
            "--set",
            "timeout=300ms",
        ]);
        let s = settings(&a, 500_000_000).unwrap();
        assert_eq!(
            s,
            [
                ("chrony".to_string(), "/tmp/c.sock".to_string()),
                ("timeout".into(), "300ms".into()),
                ("interval".into(), "500ms".into())
            ]
        );
        let e = settings(&args(&["--set", "clocksync.limit=1us"]), 1_000_000_000).unwrap_err();
        assert!(e.to_string().contains("alert rule"), "{e}");
        let e = settings(&args(&[]), 10_000_000).unwrap_err();
        assert!(e.to_string().contains("e.g. --period 1s"), "{e}");
        let e = settings(&args(&["--set", "cyclic.period=1ms"]), 1_000_000_000).unwrap_err();
        assert!(
            e.to_string().ends_with("it takes clocksync.chrony, clocksync.ptp4l, clocksync.ptp-domain, clocksync.phc, clocksync.timeout"),
            "{e}"
        );
        let e = settings(&args(&["--set", "chrony"]), 1_000_000_000).unwrap_err();
        assert!(e.to_string().contains("give KEY=VALUE"), "{e}");
        let e = refuse_latency_flags(&args(&["--runtime", "10%"])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--runtime is for the latency monitors"),
            "{e}"
        );
        let e = refuse_latency_flags(&args(&["-o", "/tmp/x.json"])).unwrap_err();
        assert!(e.to_string().contains("rtgauge run clocksync"), "{e}");
    }
}
