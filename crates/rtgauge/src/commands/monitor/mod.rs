//! `rtgauge monitor`: a probe (cyclic, noise or timerlat) measuring forever at a low duty, its figures exposed to
//! Prometheus (`--listen`) and node_exporter's textfile collector (`--textfile`), the maxima
//! and counts of its intervals kept in the run history so they survive a restart, however the
//! process stopped.
//!
//! Threads: the runner's measuring threads (one per CPU, the cyclic probe's own loop) publish
//! into their live cells without locks (rtgauge_core::live::ExportCell); this thread reads the
//! cells after each interval ends and keeps the interval in the store; the HTTP thread renders
//! the cells and this state on each scrape. Neither touches a measuring thread.
//!
//! `--probe clocksync` measures no CPU: it polls the clock's synchronisation daemons, with
//! steps of its own ([`sync`]).
//!
//! The steps: [`args`] checks everything a user gives before anything is measured; the plan
//! and the [`book`] (the history's totals) are set up; the exporters and the measurement
//! start; [`watch`] closes intervals and rewrites the textfile until a stop; [`finish`] keeps
//! the last interval, removes the textfile and writes the final document.

mod args;
mod book;
mod exposition;
mod families;
pub mod listing;
mod protobuf;
mod sync;
mod sync_exposition;

use crate::cli::{MonitorArgs, MonitorProbe};
use anyhow::{Context, Result};
use book::{Book, Reading};
use exposition::{render, CpuFigures, Format, Info};
use families::Families;
use rtgauge_core::clock::{now_ns, unix_ns};
use rtgauge_core::live::{LiveBoard, LiveCell, EXPORT_BOUNDS_NS};
use rtgauge_core::plan::{self, Plan, PlanOptions};
use rtgauge_core::runner::{self, RunInputs, RunObserver};
use rtgauge_core::signals;
use rtgauge_result::{output, RunResult, RunStatus, Warning};
use rtgauge_store::Store;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the textfile is rewritten (node_exporter reads it at its own scrape).
const TEXTFILE_EVERY_NS: u64 = 5_000_000_000;
/// The textfile's name in `--textfile DIR`.
const TEXTFILE: &str = "rtgauge.prom";

struct Shared {
    board: Arc<LiveBoard>,
    info: Info,
    book: Mutex<Book>,
}

impl Shared {
    /// Each cell's live counts, and the maximum of interval `n`; with `and_next`, of `n` and
    /// `n + 1` (a row counts the samples of `n + 1` while `n` waits for its grace time to
    /// close); without it, of `n + 1` only when `n` had no sample (a row's maximum is always
    /// one of the samples it counts).
    fn readings(&self, n: u64, and_next: bool) -> Vec<(Reading, CpuFigures)> {
        let mut out = Vec::new();
        for cell in self.board.cells() {
            let (Some(cpu), Some(export)) = (cell_cpu(&cell), cell.export()) else {
                continue;
            };
            let snap = export.snapshot();
            let mut max_ns = export.interval_max(n);
            if and_next || max_ns.is_none() {
                max_ns = max_ns.max(export.interval_max(n + 1));
            }
            // The spike whose latency is the maximum: both are the same sample's numbers.
            let cause = max_ns.and_then(|max| self.board.cause_of(cpu, n, max));
            let reading = Reading {
                cpu,
                samples: snap.count,
                overruns: cell.snapshot().overruns,
                max_ns,
                cause,
            };
            let figures = CpuFigures {
                cpu,
                buckets: snap.buckets,
                sum_ns: snap.sum_ns,
                native: snap.native,
                native_zero: snap.native_zero,
                ..CpuFigures::default()
            };
            out.push((reading, figures));
        }
        out
    }

    /// What an export shows: the cells, and the counters as the history now holds them (the
    /// open interval's rows are written first, so nothing shown can be lost by a crash).
    fn figures(&self) -> Vec<CpuFigures> {
        let Ok(mut book) = self.book.lock() else {
            return Vec::new();
        };
        let cells = self.readings(book.open, true);
        let readings: Vec<Reading> = cells.iter().map(|(r, _)| r.clone()).collect();
        book.checkpoint(&readings, unix_ns());
        let mut figures: Vec<CpuFigures> = book
            .state()
            .into_iter()
            .map(|(cpu, state)| {
                let live = cells
                    .iter()
                    .find(|(r, _)| r.cpu == cpu)
                    .map(|(_, f)| f.clone());
                CpuFigures {
                    state,
                    ..live.unwrap_or(CpuFigures {
                        cpu,
                        buckets: vec![0; EXPORT_BOUNDS_NS.len() + 1],
                        ..CpuFigures::default()
                    })
                }
            })
            .collect();
        for f in &mut figures {
            (f.samples_total, f.overruns_total) = book.totals(f.cpu);
        }
        figures
    }

    /// Closes the open interval: whole, or as far as it went when the monitor stops.
    fn close(&self, whole: bool) {
        if let Ok(mut book) = self.book.lock() {
            let readings: Vec<Reading> = self
                .readings(book.open, false)
                .into_iter()
                .map(|(r, _)| r)
                .collect();
            book.close(&readings, whole, unix_ns());
        }
    }
}

fn cell_cpu(cell: &LiveCell) -> Option<usize> {
    cell.label.strip_prefix("cpu")?.parse().ok()
}

/// Stops the measurement when dropped, so an early return never leaves it running.
struct StopOnDrop;

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        signals::request_stop();
    }
}

/// Says at start whether the interval maxima get their causes, and why not.
struct Quiet;
impl RunObserver for Quiet {
    fn tracing(&mut self, tracing: &rtgauge_result::Tracing) {
        println!("rtgauge monitor: {}", tracing_note(tracing));
    }
}

/// One line: where the causes come from, or why the monitor measures without them.
fn tracing_note(tracing: &rtgauge_result::Tracing) -> String {
    match (&tracing.reason, tracing.active) {
        (_, true) => format!(
            "each interval's maximum gets its cause from the kernel's {} (--no-trace turns it off)",
            match tracing.recorder.as_deref() {
                Some("bpf") | None => "flight recorder".to_string(),
                Some(other) => format!("{other} trace"),
            }
        ),
        (Some(reason), false) => format!("measuring without causes: {reason}"),
        (None, false) => "measuring without causes".to_string(),
    }
}

pub fn monitor(args: MonitorArgs, command_line: Vec<String>) -> Result<u8> {
    if args.probe == MonitorProbe::Clocksync {
        return sync::monitor(&args);
    }
    // Everything a user can get wrong fails here, in one line, before the first sample.
    let exporters = args::exporters(&args)?;
    let families = Families::of(args.probe);
    let (period, settings) = args::probe_settings(&args, families.probe)?;
    let plan = build_plan(&args, families.probe, period, settings)?;
    let fingerprint = rtgauge_sysinfo::collect();
    let store = Store::open(&super::history::store_path(&args.store)?)?;
    let book = Book::open(
        store,
        &fingerprint.hostname,
        families.probe,
        args.interval,
        &plan.cpus,
        now_ns(),
        unix_ns(),
    )?;
    let board = Arc::new(LiveBoard::exporting(args.interval));
    let shared = Arc::new(Shared {
        board: board.clone(),
        info: Info {
            families,
            host: fingerprint.hostname.clone(),
            kernel: fingerprint.kernel_release.clone(),
            preemption: fingerprint.preemption_model.clone(),
            mode: plan
                .modes
                .first()
                .map(|m| m.name.to_string())
                .unwrap_or_default(),
            probe: families.probe.into(),
            period_seconds: period as f64 / 1e9,
            interval_seconds: args.interval as f64 / 1e9,
            version: env!("CARGO_PKG_VERSION").into(),
            started_unix_s: unix_ns() as f64 / 1e9,
        },
        book: Mutex::new(book),
    });
    signals::install();
    println!("{}", start_line(&args, &plan, period, &exporters, &shared));
    // This thread and the HTTP thread stay off the measured CPUs where there is another one.
    let housekeeping = rtgauge_core::cpus::housekeeping_cpus(&plan.cpus);
    rtgauge_core::rt::pin_thread_to_set(&housekeeping);
    let _http = exporters.server.map(|(server, _)| {
        let shared = shared.clone();
        let housekeeping = housekeeping.clone();
        std::thread::Builder::new()
            .name("rtgauge-http".into())
            .spawn(move || serve(server, &shared, &housekeeping))
            .expect("a thread can be started")
    });
    let inputs = RunInputs {
        command_line,
        live: board,
        scratch_dir: std::env::temp_dir(),
        exe: std::env::current_exe().context("cannot find the rtgauge binary")?,
        record_stem: None,
    };
    let guard = StopOnDrop;
    let measuring = std::thread::Builder::new()
        .name("rtgauge-run".into())
        .spawn(move || runner::execute(&plan, &inputs, &mut Quiet))
        .expect("a thread can be started");
    watch(&shared, &args, period, &measuring);
    drop(guard);
    let result = measuring
        .join()
        .expect("the measurement thread does not panic")?;
    finish(&shared, &args, result)?;
    // The server thread ends with the process.
    Ok(crate::EXIT_OK)
}

/// The run plan: the probe forever (until SIGTERM or SIGINT) on the chosen CPUs and mode.
fn build_plan(
    args: &MonitorArgs,
    probe: &str,
    period: u64,
    mut settings: Vec<String>,
) -> Result<Plan> {
    // The final document's maxima-over-time are the monitor's intervals.
    settings.push(format!(
        "{probe}.interval={}",
        rtgauge_core::units::format_duration_exact(args.interval)
    ));
    let options = PlanOptions {
        probes: vec![probe.into()],
        // Forever: the run ends on SIGTERM or SIGINT.
        duration_ns: Some(u64::MAX / 4),
        warmup_ns: args.warmup,
        period_ns: (args.probe != MonitorProbe::Noise).then_some(period),
        cpus: args.cpus.clone(),
        modes: args.mode.clone(),
        priority: args.priority,
        best_effort: args.best_effort,
        settings,
        ..PlanOptions::default()
    };
    let mut plan = plan::build(&options, &rtgauge_sysinfo::online_cpus())?;
    // The cyclic probe's interval maxima get their causes from the flight recorder, which
    // costs little; where it cannot load the monitor measures without (and says why).
    if args.probe == MonitorProbe::Cyclic && !args.no_trace {
        plan.spikes = rtgauge_core::spikes::SpikeSettings {
            trace: true,
            by_default: true,
            ..rtgauge_core::spikes::SpikeSettings::default()
        };
    }
    Ok(plan)
}

/// The line printed at start: what is measured, where it goes, how to stop it.
fn start_line(
    args: &MonitorArgs,
    plan: &Plan,
    period: u64,
    exporters: &args::Exporters,
    shared: &Shared,
) -> String {
    let d = rtgauge_result::units::format_duration_ns;
    let what = match args.probe {
        MonitorProbe::Cyclic => format!("wake-up latency, one wake-up every {}", d(period)),
        MonitorProbe::Timerlat => {
            format!(
                "the timerlat thread's latency, one wake-up every {}",
                d(period)
            )
        }
        MonitorProbe::Noise => format!(
            "the longest stall of polling {} of each {}",
            args.runtime.as_deref().unwrap_or("10%"),
            d(period)
        ),
        MonitorProbe::Clocksync => unreachable!("the clocksync monitor has its own start line"),
    };
    let mode = plan
        .modes
        .first()
        .map(|m| m.name.to_string())
        .unwrap_or_default();
    let mut to = Vec::new();
    if let Some((_, at)) = &exporters.server {
        to.push(format!("http://{at}/metrics"));
    }
    if let Some(dir) = &args.textfile {
        to.push(dir.join(TEXTFILE).display().to_string());
    }
    let store = shared
        .book
        .lock()
        .map(|b| b.store_path().display().to_string())
        .unwrap_or_default();
    format!(
        "rtgauge monitor: measuring {what} on CPU {} (mode {mode}), maxima per {} interval; exporting to {}; history {store}; stop with SIGTERM or Ctrl-C",
        rtgauge_sysinfo::format_cpu_list(&plan.cpus),
        d(args.interval),
        to.join(" and ")
    )
}

/// Until the measurement ends (a stop): closes each interval once every thread has surely
/// published its last sample in it, and rewrites the textfile.
fn watch(shared: &Shared, args: &MonitorArgs, period: u64, measuring: &JoinHandle<impl Sized>) {
    let interval = args.interval;
    // Timerlat's samples reach their cells when its reader takes them, every 50 ms.
    let grace = 2 * period + 200_000_000;
    let mut next_textfile = 0;
    while !measuring.is_finished() {
        std::thread::sleep(Duration::from_millis(100));
        let now = now_ns();
        loop {
            let open = shared.book.lock().map(|b| b.open).unwrap_or(u64::MAX - 1);
            if (open + 1) * interval + grace > now {
                break;
            }
            shared.close(true);
        }
        if let Some(dir) = &args.textfile {
            if now >= next_textfile {
                // A full disk must not stop the measurement: say so and try again later.
                if let Err(e) = write_textfile(dir, shared) {
                    eprintln!("rtgauge monitor: {e}");
                }
                next_textfile = now + TEXTFILE_EVERY_NS;
            }
        }
    }
}

/// After the stop: the unfinished interval kept (its width is what was measured of it), the
/// textfile removed, the final document completed and written, one line saying so.
fn finish(shared: &Shared, args: &MonitorArgs, mut result: RunResult) -> Result<()> {
    shared.close(false);
    let mut wrote = Vec::new();
    if let Some(dir) = &args.textfile {
        let path = dir.join(TEXTFILE);
        match std::fs::remove_file(&path) {
            Ok(()) => wrote.push(format!("{} removed", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => eprintln!("rtgauge monitor: cannot remove {}: {e}", path.display()),
        }
    }
    let uptime = complete(&mut result);
    if let Some(path) = &args.output {
        rtgauge_result::write_atomically(path, &result)
            .with_context(|| format!("cannot write the final result to {}", path.display()))?;
        wrote.insert(
            0,
            format!("final document {} ({})", path.display(), result.status),
        );
    }
    let (rows, store) = shared
        .book
        .lock()
        .map(|b| (b.closed_rows, b.store_path().display().to_string()))
        .unwrap_or_default();
    let plural = if rows == 1 { "" } else { "s" };
    wrote.insert(0, format!("{rows} interval row{plural} kept in {store}"));
    println!(
        "rtgauge monitor: stopped after {uptime}{}: {}",
        signals::stop_signal()
            .map(|s| format!(" ({})", signal_name(s)))
            .unwrap_or_default(),
        wrote.join("; ")
    );
    Ok(())
}

/// A monitor ends by a stop: that is its end, not an interruption. The document says how long
/// it ran (its configured duration was "forever") and is complete unless a probe failed.
/// Returns the uptime as said.
fn complete(result: &mut RunResult) -> String {
    let measured = result
        .finished_unix_ns
        .saturating_sub(result.started_unix_ns);
    let uptime = uptime(measured);
    let failed = result
        .runs
        .iter()
        .any(|r| matches!(r.status, rtgauge_result::ProbeStatus::Failed { .. }));
    let status = status_at_stop(result.status, signals::stop_requested(), failed);
    if status != result.status {
        result.status = status;
        result.config.duration_ns = Some(measured);
        result.warnings.push(Warning::new(
            "monitor",
            stop_note(signals::stop_signal(), &uptime),
        ));
    }
    uptime
}

/// The document's status when the monitor stops: the runner calls any run a stop ended
/// interrupted; a monitor's stop is its end, so complete unless a probe failed.
fn status_at_stop(status: RunStatus, stopped: bool, failed: bool) -> RunStatus {
    match status {
        RunStatus::Interrupted if stopped && failed => RunStatus::Failed,
        RunStatus::Interrupted if stopped => RunStatus::Complete,
        other => other,
    }
}

fn stop_note(signal: Option<i32>, uptime: &str) -> String {
    let how = signal
        .map(|s| format!("by {} ", signal_name(s)))
        .unwrap_or_default();
    format!(
        "monitor stopped {how}after {uptime}, as a monitor ends: this document covers that uptime; the history keeps every interval of every uptime (rtgauge history --monitor)"
    )
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "a signal",
    }
}

/// A monitor's uptime for people: `42 s`, `5 min 3 s`, `2 h 13 min`, `3 d 4 h`.
fn uptime(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    let (d, h, m) = (s / 86_400, s / 3_600 % 24, s / 60 % 60);
    match s {
        0..60 => format!("{s} s"),
        60..3_600 => format!("{m} min {} s", s % 60),
        3_600..86_400 => format!("{h} h {m} min"),
        _ => format!("{d} d {h} h"),
    }
}

fn write_textfile(dir: &Path, shared: &Shared) -> Result<()> {
    write_text(dir, &render(&shared.info, &shared.figures(), Format::Text))
}

/// `text` written to `DIR/rtgauge.prom` atomically (a temporary file renamed over it).
fn write_text(dir: &Path, text: &str) -> Result<()> {
    let path: PathBuf = dir.join(TEXTFILE);
    output::write(&path, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("--textfile {}: {e}", dir.display()))
}

fn serve(server: tiny_http::Server, shared: &Shared, housekeeping: &[usize]) {
    serve_with(server, housekeeping, |accept| {
        let format = Format::from_accept(accept);
        (
            format.body(&shared.info, &shared.figures()),
            format.content_type(),
        )
    });
}

/// Answers each scrape of `/metrics` with `body(Accept header)`: the bytes and their content
/// type; anything else with a 404 saying where the metrics are.
fn serve_with(
    server: tiny_http::Server,
    housekeeping: &[usize],
    body: impl Fn(&str) -> (Vec<u8>, &'static str),
) {
    rtgauge_core::rt::pin_thread_to_set(housekeeping);
    for request in server.incoming_requests() {
        let response = if request.url() == "/metrics" {
            let accept = request
                .headers()
                .iter()
                .find(|h| h.field.equiv("Accept"))
                .map(|h| h.value.as_str().to_string())
                .unwrap_or_default();
            let (bytes, content_type) = body(&accept);
            let header = tiny_http::Header::from_bytes("Content-Type", content_type)
                .expect("a valid header");
            tiny_http::Response::from_data(bytes).with_header(header)
        } else {
            tiny_http::Response::from_data(b"rtgauge monitor: metrics are at /metrics\n".to_vec())
                .with_status_code(404)
        };
        let _ = request.respond(response);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_completes_the_document_unless_a_probe_failed() {
        use RunStatus::*;
        assert_eq!(status_at_stop(Interrupted, true, false), Complete);
        assert_eq!(status_at_stop(Interrupted, true, true), Failed);
        // A run that ended by itself (it cannot, forever; or failed) keeps its status.
        assert_eq!(status_at_stop(Failed, false, true), Failed);
        assert_eq!(status_at_stop(Broken, true, false), Broken);
        assert_eq!(
            stop_note(Some(libc::SIGTERM), "2 h 13 min"),
            "monitor stopped by SIGTERM after 2 h 13 min, as a monitor ends: this document covers that uptime; the history keeps every interval of every uptime (rtgauge history --monitor)"
        );
        assert!(stop_note(None, "5 s").starts_with("monitor stopped after 5 s,"));
    }

    #[test]
    fn the_start_note_says_where_causes_come_from_or_why_there_are_none() {
        let mut tracing = rtgauge_result::Tracing {
            active: true,
            reason: None,
            above_ns: None,
            max_spikes: 20,
            break_ns: None,
            events_missing: Vec::new(),
            recorder: Some("bpf".into()),
            fallback: None,
            by_default: true,
        };
        assert!(tracing_note(&tracing).contains("from the kernel's flight recorder"));
        tracing.active = false;
        tracing.reason = Some("the flight recorder needs root".into());
        assert_eq!(
            tracing_note(&tracing),
            "measuring without causes: the flight recorder needs root"
        );
    }

    #[test]
    fn uptimes_read_in_the_two_largest_units() {
        let s = 1_000_000_000;
        assert_eq!(uptime(42 * s), "42 s");
        assert_eq!(uptime(303 * s), "5 min 3 s");
        assert_eq!(uptime((2 * 3600 + 13 * 60 + 5) * s), "2 h 13 min");
        assert_eq!(uptime((3 * 86_400 + 4 * 3600) * s), "3 d 4 h");
    }
}
