//! `rtgauge monitor`: a probe (cyclic, noise or timerlat) measuring forever at a low duty, its figures exposed to
//! Prometheus (`--listen`) and node_exporter's textfile collector (`--textfile`), the maxima of
//! its intervals kept in the run history so they survive a restart.
//!
//! Threads: the runner's measuring threads (one per CPU, the cyclic probe's own loop) publish
//! into their live cells without locks (rtgauge_core::live::ExportCell); this thread reads the
//! cells after each interval ends and keeps the interval in the store; the HTTP thread renders
//! the cells and this state on each scrape. Neither touches a measuring thread.

use crate::cli::{MonitorArgs, MonitorProbe};
use anyhow::{Context, Result};
use rtgauge_core::clock::{now_ns, unix_ns};
use rtgauge_core::live::{LiveBoard, LiveCell, EXPORT_BOUNDS_NS};
use rtgauge_core::plan::{self, PlanOptions};
use rtgauge_core::runner::{self, RunInputs, RunObserver};
use rtgauge_core::signals;
use rtgauge_result::output::{self, Existing};
use rtgauge_store::{MonitorInterval, Store};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod protobuf;

/// What a monitor's metric families are called and say, per probe: one meaning per name,
/// so a fleet mixing cyclic and noise monitors never adds one to the other.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Families {
    probe: &'static str,
    histogram: (&'static str, &'static str),
    interval_max: (&'static str, &'static str),
    alltime_max: (&'static str, &'static str),
    samples: (&'static str, &'static str),
    overruns: (&'static str, &'static str),
}

const CYCLIC: Families = Families {
    probe: rtgauge_probes::names::CYCLIC,
    histogram: (
        "rtgauge_latency_seconds",
        "Wake-up latency of the periodic measuring thread, since this monitor started.",
    ),
    interval_max: (
        "rtgauge_interval_max_seconds",
        "Highest wake-up latency of the last finished interval (rtgauge_info's interval_seconds).",
    ),
    alltime_max: (
        "rtgauge_interval_max_alltime_seconds",
        "Highest interval maximum over the whole uptime, across restarts (kept in the run history).",
    ),
    samples: ("rtgauge_samples_total", "Wake-ups measured, across restarts."),
    overruns: (
        "rtgauge_overruns_total",
        "Periods missed (a wake-up later than a whole period), across restarts.",
    ),
};

const NOISE: Families = Families {
    probe: rtgauge_probes::names::NOISE,
    histogram: (
        "rtgauge_noise_window_max_seconds",
        "Longest stall of each polling window (the CPU taken from the polling thread), since this monitor started.",
    ),
    interval_max: (
        "rtgauge_noise_interval_max_seconds",
        "Longest stall of the last finished interval (rtgauge_info's interval_seconds).",
    ),
    alltime_max: (
        "rtgauge_noise_interval_max_alltime_seconds",
        "Longest interval stall over the whole uptime, across restarts (kept in the run history).",
    ),
    samples: (
        "rtgauge_noise_windows_total",
        "Polling windows measured, across restarts.",
    ),
    overruns: (
        "rtgauge_noise_stalls_total",
        "Stalls above the noise threshold, across restarts.",
    ),
};

const TIMERLAT: Families = Families {
    probe: rtgauge_probes::names::TIMERLAT,
    histogram: (
        "rtgauge_timerlat_latency_seconds",
        "Wake-up latency of the kernel's timerlat thread (its IRQ context is in the final document), since this monitor started.",
    ),
    interval_max: (
        "rtgauge_timerlat_interval_max_seconds",
        "Highest timerlat thread latency of the last finished interval (rtgauge_info's interval_seconds).",
    ),
    alltime_max: (
        "rtgauge_timerlat_interval_max_alltime_seconds",
        "Highest timerlat interval maximum over the whole uptime, across restarts (kept in the run history).",
    ),
    samples: (
        "rtgauge_timerlat_samples_total",
        "Timerlat thread wake-ups measured, across restarts.",
    ),
    overruns: (
        "rtgauge_timerlat_overruns_total",
        "Timerlat thread wake-ups a whole period or more late, across restarts.",
    ),
};

impl Families {
    fn of(probe: MonitorProbe) -> Families {
        match probe {
            MonitorProbe::Cyclic => CYCLIC,
            MonitorProbe::Noise => NOISE,
            MonitorProbe::Timerlat => TIMERLAT,
        }
    }
}
/// How often the textfile is rewritten (node_exporter reads it at its own scrape).
const TEXTFILE_EVERY_NS: u64 = 5_000_000_000;

/// What a scrape shows besides the cells: per CPU, from the store and the finished intervals.
#[derive(Debug, Clone, Default, PartialEq)]
struct CpuState {
    /// Maximum of the last finished interval (None before the first one ends).
    last_interval_max_ns: Option<u64>,
    /// Highest interval maximum over the whole uptime, earlier processes included.
    alltime_interval_max_ns: Option<u64>,
    /// Samples and overruns of earlier processes (from the store).
    samples_before: u64,
    overruns_before: u64,
}

/// The `rtgauge_info` labels, and the families they describe.
#[derive(Debug, Clone)]
struct Info {
    families: Families,
    host: String,
    kernel: String,
    preemption: String,
    mode: String,
    probe: String,
    period_seconds: f64,
    interval_seconds: f64,
    version: String,
}

impl Default for Info {
    fn default() -> Info {
        Info {
            families: CYCLIC,
            host: String::new(),
            kernel: String::new(),
            preemption: String::new(),
            mode: String::new(),
            probe: String::new(),
            period_seconds: 0.0,
            interval_seconds: 0.0,
            version: String::new(),
        }
    }
}

/// One CPU's figures at the moment of a scrape.
#[derive(Debug, Clone, Default, PartialEq)]
struct CpuFigures {
    cpu: usize,
    /// Non-cumulative bucket counts of this process, [`EXPORT_BOUNDS_NS`] then `+Inf`.
    buckets: Vec<u64>,
    sum_ns: u64,
    /// The native histogram's counts (rtgauge_core::live::native_bucket_of) and zero bucket.
    native: Vec<u64>,
    native_zero: u64,
    overruns: u64,
    state: CpuState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// text/plain; version=0.0.4
    Text,
    /// application/openmetrics-text; version=1.0.0
    OpenMetrics,
    /// Prometheus's protobuf, asked for by a Prometheus that reads native histograms.
    Protobuf,
}

impl Format {
    fn from_accept(accept: &str) -> Format {
        if accept.contains("application/vnd.google.protobuf") {
            Format::Protobuf
        } else if accept.contains("application/openmetrics-text") {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Protobuf => protobuf::CONTENT_TYPE,
        }
    }

    fn body(self, info: &Info, figures: &[CpuFigures]) -> Vec<u8> {
        match self {
            Format::Protobuf => protobuf::encode(info, figures),
            text => render(info, figures, text).into_bytes(),
        }
    }
}

struct Shared {
    board: Arc<LiveBoard>,
    info: Info,
    state: Mutex<BTreeMap<usize, CpuState>>,
}

impl Shared {
    fn figures(&self) -> Vec<CpuFigures> {
        let state = self.state.lock().map(|s| s.clone()).unwrap_or_default();
        let mut figures: Vec<CpuFigures> = state
            .iter()
            .map(|(&cpu, s)| CpuFigures {
                cpu,
                buckets: vec![0; EXPORT_BOUNDS_NS.len() + 1],
                state: s.clone(),
                ..CpuFigures::default()
            })
            .collect();
        for cell in self.board.cells() {
            let (Some(cpu), Some(export)) = (cell_cpu(&cell), cell.export()) else {
                continue;
            };
            let snap = export.snapshot();
            if let Some(f) = figures.iter_mut().find(|f| f.cpu == cpu) {
                f.buckets = snap.buckets;
                f.sum_ns = snap.sum_ns;
                f.native = snap.native;
                f.native_zero = snap.native_zero;
                f.overruns = cell.snapshot().overruns;
            }
        }
        figures
    }
}

fn cell_cpu(cell: &LiveCell) -> Option<usize> {
    cell.label.strip_prefix("cpu")?.parse().ok()
}

fn seconds(ns: u64) -> String {
    format!("{}", ns as f64 / 1e9)
}

fn label_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The exposition of `figures` in `format`: the same families in both, OpenMetrics with its
/// own counter and info conventions and the closing `# EOF`.
fn render(info: &Info, figures: &[CpuFigures], format: Format) -> String {
    let om = format == Format::OpenMetrics;
    let mut out = String::new();
    let family = |out: &mut String, name: &str, kind: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
    };
    if om {
        family(
            &mut out,
            "rtgauge",
            "info",
            "What is measured, and on which system.",
        );
    } else {
        family(
            &mut out,
            "rtgauge_info",
            "gauge",
            "What is measured, and on which system (always 1).",
        );
    }
    let names = &info.families;
    let _ = writeln!(
        out,
        "rtgauge_info{{host=\"{}\",kernel=\"{}\",preemption=\"{}\",mode=\"{}\",probe=\"{}\",period_seconds=\"{}\",interval_seconds=\"{}\",version=\"{}\"}} 1",
        label_value(&info.host),
        label_value(&info.kernel),
        label_value(&info.preemption),
        label_value(&info.mode),
        label_value(&info.probe),
        info.period_seconds,
        info.interval_seconds,
        label_value(&info.version),
    );
    let (histogram, help) = names.histogram;
    family(&mut out, histogram, "histogram", help);
    for f in figures {
        let mut cumulative = 0;
        for (i, count) in f.buckets.iter().enumerate() {
            cumulative += count;
            let le = EXPORT_BOUNDS_NS
                .get(i)
                .map_or("+Inf".to_string(), |&b| seconds(b));
            let _ = writeln!(
                out,
                "{histogram}_bucket{{cpu=\"{}\",le=\"{le}\"}} {cumulative}",
                f.cpu
            );
        }
        let _ = writeln!(
            out,
            "{histogram}_sum{{cpu=\"{}\"}} {}",
            f.cpu,
            seconds(f.sum_ns)
        );
        let _ = writeln!(out, "{histogram}_count{{cpu=\"{}\"}} {cumulative}", f.cpu);
    }
    let gauge =
        |out: &mut String, name: &str, help: &str, value: &dyn Fn(&CpuState) -> Option<u64>| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for f in figures {
                if let Some(v) = value(&f.state) {
                    let _ = writeln!(out, "{name}{{cpu=\"{}\"}} {}", f.cpu, seconds(v));
                }
            }
        };
    let ((last, last_help), (alltime, alltime_help)) = (names.interval_max, names.alltime_max);
    gauge(&mut out, last, last_help, &|s| s.last_interval_max_ns);
    gauge(&mut out, alltime, alltime_help, &|s| {
        s.alltime_interval_max_ns
    });
    let counter = |out: &mut String, name: &str, help: &str, value: &dyn Fn(&CpuFigures) -> u64| {
        let family_name = if om {
            name.trim_end_matches("_total")
        } else {
            name
        };
        let _ = writeln!(out, "# HELP {family_name} {help}");
        let _ = writeln!(out, "# TYPE {family_name} counter");
        for f in figures {
            let _ = writeln!(out, "{name}{{cpu=\"{}\"}} {}", f.cpu, value(f));
        }
    };
    let ((samples, samples_help), (overruns, overruns_help)) = (names.samples, names.overruns);
    counter(&mut out, samples, samples_help, &|f| {
        f.state.samples_before + f.buckets.iter().sum::<u64>()
    });
    counter(&mut out, overruns, overruns_help, &|f| {
        f.state.overruns_before + f.overruns
    });
    if om {
        out.push_str("# EOF\n");
    }
    out
}

/// Stops the measurement when dropped, so an early return never leaves it running.
struct StopOnDrop;

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        signals::request_stop();
    }
}

struct Quiet;
impl RunObserver for Quiet {}

pub fn monitor(args: MonitorArgs, command_line: Vec<String>) -> Result<u8> {
    // Everything a user can get wrong fails here, in one line, before the first sample.
    let server = match &args.listen {
        Some(addr) => Some(tiny_http::Server::http(addr.as_str()).map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on {addr}: {e}; stop what holds it or choose another --listen ADDR"
            )
        })?),
        None => None,
    };
    if let Some(dir) = &args.textfile {
        if !dir.is_dir() {
            anyhow::bail!(
                "--textfile {}: not a directory; give node_exporter's --collector.textfile.directory",
                dir.display()
            );
        }
        output::check_directory(dir)
            .map_err(|e| anyhow::anyhow!("--textfile {}: {e}", dir.display()))?;
    }
    if let Some(path) = &args.output {
        output::check(
            path,
            if args.force {
                Existing::Replace
            } else {
                Existing::Refuse
            },
        )?;
    }
    let families = Families::of(args.probe);
    let probe = families.probe;
    let (period, mut settings) = match args.probe {
        MonitorProbe::Cyclic | MonitorProbe::Timerlat => {
            if args.runtime.is_some() {
                anyhow::bail!(
                    "--runtime is for --probe noise; {probe}'s duty is one wake-up per --period"
                );
            }
            if args.probe == MonitorProbe::Timerlat {
                if let Some(reason) = rtgauge_trace::timerlat_unavailable() {
                    anyhow::bail!("--probe {probe}: {reason}; monitor with --probe cyclic");
                }
            }
            (args.period.unwrap_or(1_000_000), Vec::new())
        }
        MonitorProbe::Noise => {
            let period = args.period.unwrap_or(100_000_000);
            let runtime = args.runtime.as_deref().unwrap_or("10%");
            (
                period,
                vec![
                    format!(
                        "{probe}.period={}",
                        rtgauge_core::units::format_duration_exact(period)
                    ),
                    format!("{probe}.runtime={runtime}"),
                ],
            )
        }
    };
    // The final document's maxima-over-time are the monitor's intervals.
    settings.push(format!(
        "{probe}.interval={}",
        rtgauge_core::units::format_duration_exact(args.interval)
    ));
    let store_path = super::history::store_path(&args.store)?;
    let mut store = Store::open(&store_path)?;
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
    let plan = plan::build(&options, &rtgauge_sysinfo::online_cpus())?;
    let fingerprint = rtgauge_sysinfo::collect();
    let host = fingerprint.hostname.clone();
    // Old intervals become day rows: the history stays small over months.
    let _ = store.monitor_fold(
        &host,
        unix_ns().saturating_sub(rtgauge_store::MONITOR_FOLD_AFTER_NS),
    );
    let mut states: BTreeMap<usize, CpuState> = plan
        .cpus
        .iter()
        .map(|&c| (c, CpuState::default()))
        .collect();
    for t in store.monitor_totals(&host, probe)? {
        if let Some(s) = states.get_mut(&t.cpu) {
            s.alltime_interval_max_ns = Some(t.max_ns);
            s.samples_before = t.samples;
            s.overruns_before = t.overruns;
        }
    }
    let board = Arc::new(LiveBoard::exporting(args.interval));
    let shared = Arc::new(Shared {
        board: board.clone(),
        info: Info {
            families,
            host: host.clone(),
            kernel: fingerprint.kernel_release.clone(),
            preemption: fingerprint.preemption_model.clone(),
            mode: plan
                .modes
                .first()
                .map(|m| m.name.to_string())
                .unwrap_or_default(),
            probe: probe.into(),
            period_seconds: period as f64 / 1e9,
            interval_seconds: args.interval as f64 / 1e9,
            version: env!("CARGO_PKG_VERSION").into(),
        },
        state: Mutex::new(states),
    });
    signals::install();
    // This thread and the HTTP thread stay off the measured CPUs where there is another one.
    let housekeeping = rtgauge_core::cpus::housekeeping_cpus(&plan.cpus);
    rtgauge_core::rt::pin_thread_to_set(&housekeeping);
    let http = server.map(|server| {
        let shared = shared.clone();
        let housekeeping = housekeeping.clone();
        std::thread::Builder::new()
            .name("rtgauge-http".into())
            .spawn(move || serve(server, &shared, &housekeeping))
            .expect("a thread can be started")
    });
    let inputs = RunInputs {
        command_line,
        live: board.clone(),
        scratch_dir: std::env::temp_dir(),
        exe: std::env::current_exe().context("cannot find the rtgauge binary")?,
        record_stem: None,
    };
    let guard = StopOnDrop;
    let measuring = std::thread::Builder::new()
        .name("rtgauge-run".into())
        .spawn(move || runner::execute(&plan, &inputs, &mut Quiet))
        .expect("a thread can be started");

    let interval = args.interval;
    // Read an interval once every thread has surely published its last wake-up in it
    // (timerlat's samples reach their cells when its reader takes them, every 50 ms).
    let grace = 2 * period + 200_000_000;
    let mut next = now_ns() / interval;
    let mut counted: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    // Interval `n` read at `now`: whole, or (the last) as far as it went.
    let mut close = |n: u64, now: u64, whole: bool| {
        let elapsed = now - n * interval;
        let partial = (!whole).then_some(elapsed);
        let start_unix = unix_ns() - elapsed;
        close_interval(
            &shared,
            &mut store,
            &host,
            n,
            start_unix,
            interval,
            &mut counted,
            partial,
        );
    };
    let mut next_textfile = 0;
    while !measuring.is_finished() {
        std::thread::sleep(Duration::from_millis(100));
        let now = now_ns();
        while (next + 1) * interval + grace <= now {
            close(next, now, true);
            next += 1;
        }
        if let Some(dir) = &args.textfile {
            if now >= next_textfile {
                // A full disk must not stop the measurement: say so and try again later.
                if let Err(e) = write_textfile(dir, &shared) {
                    eprintln!("rtgauge monitor: {e}");
                }
                next_textfile = now + TEXTFILE_EVERY_NS;
            }
        }
    }
    drop(guard);
    let result = measuring
        .join()
        .expect("the measurement thread does not panic")?;
    // The unfinished interval is kept too (its width is what was measured of it).
    close(next, now_ns(), false);
    if let Some(dir) = &args.textfile {
        if let Err(e) = write_textfile(dir, &shared) {
            eprintln!("rtgauge monitor: {e}");
        }
    }
    if let Some(path) = &args.output {
        rtgauge_result::write_atomically(path, &result)
            .with_context(|| format!("cannot write the final result to {}", path.display()))?;
    }
    if let Some(http) = http {
        drop(http); // The server thread ends with the process.
    }
    Ok(crate::EXIT_OK)
}

/// Reads interval `n`'s maximum from every cell, keeps it in the store, and updates what the
/// scrapes show. `partial` is the measured part of an unfinished interval.
#[allow(clippy::too_many_arguments)]
fn close_interval(
    shared: &Shared,
    store: &mut Store,
    host: &str,
    n: u64,
    start_unix_ns: u64,
    interval: u64,
    counted: &mut BTreeMap<usize, (u64, u64)>,
    partial: Option<u64>,
) {
    for cell in shared.board.cells() {
        let (Some(cpu), Some(export)) = (cell_cpu(&cell), cell.export()) else {
            continue;
        };
        // The slot of an unfinished interval may still be written; read it anyway at the end.
        let Some(max_ns) = export.interval_max(n) else {
            continue;
        };
        let live = cell.snapshot();
        let before = counted
            .insert(cpu, (live.count, live.overruns))
            .unwrap_or((0, 0));
        let row = MonitorInterval {
            cpu,
            start_unix_ns,
            width_ns: partial.unwrap_or(interval),
            max_ns,
            samples: live.count.saturating_sub(before.0),
            overruns: live.overruns.saturating_sub(before.1),
        };
        if let Err(e) = store.monitor_record(host, shared.info.families.probe, &row) {
            eprintln!("rtgauge monitor: interval not kept: {e}");
        }
        if let Ok(mut state) = shared.state.lock() {
            let s = state.entry(cpu).or_default();
            if partial.is_none() {
                s.last_interval_max_ns = Some(max_ns);
            }
            s.alltime_interval_max_ns = Some(s.alltime_interval_max_ns.unwrap_or(0).max(max_ns));
        }
    }
}

fn write_textfile(dir: &Path, shared: &Shared) -> Result<()> {
    let text = render(&shared.info, &shared.figures(), Format::Text);
    let path: PathBuf = dir.join("rtgauge.prom");
    output::write(&path, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("--textfile {}: {e}", dir.display()))
}

fn serve(server: tiny_http::Server, shared: &Shared, housekeeping: &[usize]) {
    rtgauge_core::rt::pin_thread_to_set(housekeeping);
    for request in server.incoming_requests() {
        let response = if request.url() == "/metrics" {
            let accept = request
                .headers()
                .iter()
                .find(|h| h.field.equiv("Accept"))
                .map(|h| h.value.as_str().to_string())
                .unwrap_or_default();
            let format = Format::from_accept(&accept);
            let body = format.body(&shared.info, &shared.figures());
            let header = tiny_http::Header::from_bytes("Content-Type", format.content_type())
                .expect("a valid header");
            tiny_http::Response::from_data(body).with_header(header)
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

    /// Samples of 900 ns, 1 µs (twice), 18 µs (twice) and 20 s, in both histograms.
    pub(super) fn figures() -> Vec<CpuFigures> {
        let mut buckets = vec![0; EXPORT_BOUNDS_NS.len() + 1];
        let mut native = vec![0; 240];
        let mut native_zero = 0;
        for value in [900, 1_000, 1_000, 18_000, 18_000, 20_000_000_000] {
            buckets[rtgauge_core::live::bucket_of(value)] += 1;
            match rtgauge_core::live::native_bucket_of(value) {
                Some(i) => native[i] += 1,
                None => native_zero += 1,
            }
        }
        vec![CpuFigures {
            cpu: 1,
            buckets,
            native,
            native_zero,
            sum_ns: 1_500_000,
            overruns: 1,
            state: CpuState {
                last_interval_max_ns: Some(20_000),
                alltime_interval_max_ns: Some(45_000),
                samples_before: 10,
                overruns_before: 2,
            },
        }]
    }

    #[test]
    fn both_formats_hold_the_same_figures_and_openmetrics_ends_with_eof() {
        let info = Info {
            host: "h\"x".into(),
            ..Info::default()
        };
        let text = render(&info, &figures(), Format::Text);
        let om = render(&info, &figures(), Format::OpenMetrics);
        for body in [&text, &om] {
            assert!(body.contains("rtgauge_latency_seconds_bucket{cpu=\"1\",le=\"0.000001\"} 3\n"));
            assert!(body.contains("rtgauge_latency_seconds_bucket{cpu=\"1\",le=\"+Inf\"} 6\n"));
            assert!(body.contains("rtgauge_latency_seconds_count{cpu=\"1\"} 6\n"));
            assert!(body.contains("rtgauge_samples_total{cpu=\"1\"} 16\n"));
            assert!(body.contains("rtgauge_overruns_total{cpu=\"1\"} 3\n"));
            assert!(body.contains("rtgauge_interval_max_alltime_seconds{cpu=\"1\"} 0.000045\n"));
            assert!(body.contains("host=\"h\\\"x\""));
        }
        assert!(om.ends_with("# EOF\n") && !text.contains("# EOF"));
        assert!(om.contains("# TYPE rtgauge_samples counter"));
        assert!(text.contains("# TYPE rtgauge_samples_total counter"));
        assert_eq!(
            Format::from_accept("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
            Format::OpenMetrics
        );
        assert_eq!(Format::from_accept("*/*"), Format::Text);
    }

    #[test]
    fn a_noise_monitor_exports_families_of_its_own() {
        let info = Info {
            families: NOISE,
            probe: "noise".into(),
            ..Info::default()
        };
        for format in [Format::Text, Format::OpenMetrics] {
            let body = render(&info, &figures(), format);
            assert!(
                body.contains("rtgauge_noise_window_max_seconds_bucket{cpu=\"1\",le=\"+Inf\"} 6\n")
            );
            assert!(body.contains("rtgauge_noise_windows_total{cpu=\"1\"} 16\n"));
            assert!(body.contains("rtgauge_noise_stalls_total{cpu=\"1\"} 3\n"));
            assert!(
                body.contains("rtgauge_noise_interval_max_alltime_seconds{cpu=\"1\"} 0.000045\n")
            );
            assert!(body.contains("probe=\"noise\""));
            // No family of the cyclic monitor: one meaning per metric name.
            assert!(!body.contains("rtgauge_latency_seconds"), "{body}");
            assert!(!body.contains("rtgauge_samples"), "{body}");
        }
    }

    #[test]
    fn expositions_are_stable() {
        let info = Info {
            families: CYCLIC,
            host: "rt-host-1".into(),
            kernel: "6.12.0-rt".into(),
            preemption: "PREEMPT_RT".into(),
            mode: "rt".into(),
            probe: "cyclic".into(),
            period_seconds: 0.001,
            interval_seconds: 300.0,
            version: "0.1.0".into(),
        };
        insta::assert_snapshot!("text_0_0_4", render(&info, &figures(), Format::Text));
        insta::assert_snapshot!(
            "openmetrics",
            render(&info, &figures(), Format::OpenMetrics)
        );
    }
}
