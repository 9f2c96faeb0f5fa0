//! Command-line definitions: the single source of `--help`, the man page and validation.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use rtgauge_core::plan::{self, ModeName};
use rtgauge_core::probe::MIN_PERIOD_NS;
use rtgauge_core::rt::Policy;
use rtgauge_core::units;
use std::path::PathBuf;

mod reading;
pub use reading::*;

const AFTER_HELP: &str = "\
Exit status: 0 success, 1 error (bad input, a setting that cannot be applied, I/O), 2 a \
threshold was exceeded (--max-latency, check --spec, a regression check --baseline declared), \
check was given an incomplete result, or doctor found a failing check; 3 check --baseline could \
not decide a statistic from these runs (see check --inconclusive); 130/143 a run interrupted by SIGINT/SIGTERM (its result is saved).

Documentation: `man rtgauge` and one page per command (`man rtgauge-run`). The guides (method, \
result format, suites) are installed in /usr/share/doc/rtgauge by the Debian package and are in \
the doc/ directory of the release tarball.";

/// rtgauge measures the real-time capabilities of a Linux machine: how late periodic tasks
/// wake, how much periods jitter, and how all of it degrades under load; then it shows,
/// compares and checks the results.
#[derive(Debug, Parser)]
#[command(name = "rtgauge", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// When to colour verdicts (doctor's OK/WARN/FAIL, the not-real-time notice): `auto` on a
    /// terminal unless NO_COLOR is set.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless the NO_COLOR environment variable is set.
    Auto,
    Always,
    Never,
}

/// Options of the listing commands (probes, loads).
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the list as JSON, for scripts.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure: run probes (default: the quick suite) and write a result document.
    Run(Box<RunArgs>),
    /// Collect the instrumentation points of a running application linked with rtgauge-app,
    /// as `rtgauge run app -- APPLICATION` does for one it starts; takes the options of run.
    Attach(Box<AttachArgs>),
    /// List the probes, what each measures and whether it can run here.
    Probes(ListArgs),
    /// Audit this machine's real-time readiness: every setting that spoils a measurement.
    Doctor(DoctorArgs),
    /// List the background loads and what each stresses.
    Loads(ListArgs),
    /// List the built-in suites and what each runs; print one (to start your own), or check
    /// a suite file without running it.
    Suites {
        /// A built-in suite (its text is printed) or a suite file (checked and listed).
        #[arg(value_name = "SUITE")]
        suite: Option<String>,
        /// Print the suites (or the one named) as JSON, for scripts: each entry as it would run.
        #[arg(long)]
        json: bool,
    },
    /// Print a stored result's full tables (or its summary) again, as text, Markdown, CSV or JSON.
    Show(ShowArgs),
    /// Write a self-contained HTML report (plots, tables, configuration audit) of results, or
    /// of the trials of `rtgauge tune -o`.
    Report(ReportArgs),
    /// Compare results side by side: differences, a statistical test and a verdict per row;
    /// or two tunes' trials, setting by setting.
    Compare(CompareArgs),
    /// Check a result against a spec of limits; exit 2 when a limit is exceeded or the result
    /// is incomplete (interrupted, a probe never ran) without --allow-incomplete.
    Check(CheckArgs),
    /// Convert a raw-sample recording (--record) to CSV or Parquet.
    Export(ExportArgs),
    /// List the stored runs (every `rtgauge run` is kept in the run history), newest first,
    /// then the stored tunes.
    History(HistoryArgs),
    /// Name a stored run as a baseline for `compare --baseline` and `check --baseline`.
    Baseline(BaselineArgs),
    /// Measure two configurations in alternating rounds (A B B A …) and compare them run by
    /// run: the way to tell a small change from run-to-run variation.
    Ab(AbArgs),
    /// Read results of rt-tests (cyclictest, oslat, ptsematest…), rtla, hwlatdetect,
    /// jitterdebugger or rtgauge into the run history (and optionally write them as rtgauge
    /// result files).
    Import(ImportArgs),
    /// Show one series (e.g. `cyclic latency cpu=1`) over the stored runs: median, p99 and
    /// max as a terminal sparkline table or an HTML chart, kernel and machine changes marked.
    Trend(TrendArgs),
    /// Watch this machine in production: the cyclic probe measures forever at a low duty, its
    /// latency histograms and interval maxima exposed to Prometheus (--listen) or
    /// node_exporter's textfile collector (--textfile), kept in the run history across restarts.
    Monitor(Box<MonitorArgs>),
    /// Make it fit: try each runtime fix doctor's findings call for, one at a time against the
    /// unchanged machine in interleaved rounds; keep what helps, restore the rest (root; a dry
    /// run without --apply).
    Tune(Box<crate::commands::TuneArgs>),
    /// Send results to a results server of a board farm: `submit squad URL …` posts every
    /// headline statistic as a SQUAD metric and every judged limit as a test.
    #[command(subcommand)]
    Submit(SubmitTarget),
    /// Print the JSON Schema of the result document.
    Schema {
        /// The schema of the trials document `rtgauge tune --output` writes instead.
        #[arg(long)]
        tune: bool,
    },
    /// Write the man pages (roff), generated from these definitions, into DIR.
    #[command(hide = true)]
    Man {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Write shell completions for SHELL, generated from these definitions, into DIR.
    #[command(hide = true)]
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

pub(crate) fn duration(s: &str) -> Result<u64, String> {
    units::parse_duration_ns(s).map_err(|e| e.to_string())
}

/// `--duration forever`: measure until Ctrl-C (a soak run).
pub const FOREVER: u64 = u64::MAX;

fn run_duration(s: &str) -> Result<u64, String> {
    if s == "forever" {
        return Ok(FOREVER);
    }
    duration(s)
}

/// `--period`: parsed here once; the probes' configuration receives this duration as it is.
pub(crate) fn period(s: &str) -> Result<u64, String> {
    let ns = duration(s)?;
    if ns < MIN_PERIOD_NS {
        return Err(format!(
            "'{s}' is shorter than the minimum period of {}",
            units::format_duration_exact(MIN_PERIOD_NS)
        ));
    }
    Ok(ns)
}

fn size(s: &str) -> Result<u64, String> {
    units::parse_size(s).map_err(|e| e.to_string())
}

fn priority(s: &str) -> Result<i32, String> {
    match s.parse::<i32>() {
        Ok(p) if (1..=99).contains(&p) => Ok(p),
        _ => Err(format!(
            "'{s}' is not a priority between 1 and 99 (default {}; 99 belongs to kernel housekeeping)",
            plan::DEFAULT_PRIORITY
        )),
    }
}

/// `--mode` takes the core's mode names, with their descriptions in `--help`.
fn mode_parser() -> impl TypedValueParser<Value = ModeName> {
    PossibleValuesParser::new(ModeName::ALL.map(|m| PossibleValue::new(m.name()).help(m.help())))
        .try_map(|s| s.parse::<ModeName>())
}

/// `--policy` takes the core's policy names.
fn policy_parser() -> impl TypedValueParser<Value = Policy> {
    PossibleValuesParser::new(plan::RT_POLICIES.map(|(name, _)| name)).try_map(|s| {
        plan::RT_POLICIES
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, policy)| *policy)
            .ok_or_else(|| format!("'{s}' is not a policy; use fifo or rr"))
    })
}

/// `--timer` takes the cyclic probe's timer names, with their meanings in `--help`.
fn timer_parser() -> PossibleValuesParser {
    let cyclic = rtgauge_probes::cyclic::TIMERS.iter();
    PossibleValuesParser::new(
        cyclic
            .zip(rtgauge_probes::cyclic::TIMER_HELP)
            .map(|(name, help)| PossibleValue::new(*name).help(help)),
    )
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Probes to run (default: the probes of the suite). See `rtgauge probes`. `probe@variant`
    /// runs a probe more than once (`cyclic@1ms cyclic@100us`) or picks one entry of a suite.
    #[arg(value_name = "PROBE")]
    pub probes: Vec<String>,

    /// Suite to run: quick, standard, full, or the path of a suite file (TOML).
    #[arg(long, value_name = "SUITE")]
    pub suite: Option<String>,

    /// How long each probe measures, after warm-up (e.g. 10s, 2m; default 10s, suites set their
    /// own); response and switch, which measure their sources and placements one after another,
    /// share it among them, warm-ups included. Or `forever`: until Ctrl-C, in windows of
    /// --soak-window, the result saved as each probe's window ends.
    #[arg(short, long, value_name = "DURATION", value_parser = run_duration, allow_hyphen_values = true)]
    pub duration: Option<u64>,

    /// With --duration forever: each probe's measuring time per window; each window's runs are
    /// rows of their own (`cyclic@w1`, `cyclic@w2`, ...). [default: 5m]
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "duration")]
    pub soak_window: Option<u64>,

    /// Stop each series after this many samples (e.g. 1000000 cycles).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub loops: Option<u64>,

    /// Warm-up discarded before counting (default 1s; suites set their own).
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Option<u64>,

    /// Period of the cyclic probe, from 10us (e.g. 25us, 1ms, 997us).
    #[arg(short, long, value_name = "PERIOD", value_parser = period, allow_hyphen_values = true)]
    pub period: Option<u64>,

    /// Timer the cyclic probe sleeps on.
    #[arg(long, value_parser = timer_parser())]
    pub timer: Option<String>,

    /// Your task set, for the taskset probe: a TOML file of [[task]] entries (or rt-app
    /// JSON). `rtgauge run --tasks FILE` runs the taskset probe alone: it predicts each task's
    /// worst response from this machine's overheads, runs the tasks and exits 2 when one
    /// misses a deadline or does not fit.
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,

    /// CPUs to measure on: `all` or a list like 0-3,6.
    #[arg(short, long, value_name = "CPUS", default_value = "all")]
    pub cpus: String,

    /// Execution modes; several run one after the other and become rows of the tables.
    /// [default: the suite's `modes`, or rt; without this option, a machine that refuses
    /// real-time priority is measured best effort, and the run says which rows fell short]
    #[arg(short, long, value_delimiter = ',', value_parser = mode_parser())]
    pub mode: Vec<ModeName>,

    /// Real-time priority of the measuring threads in `rt` mode.
    #[arg(long, value_name = "PRIO", default_value_t = plan::DEFAULT_PRIORITY, value_parser = priority)]
    pub priority: i32,

    /// Real-time policy in `rt` mode.
    #[arg(long, default_value = plan::RT_POLICIES[0].0, value_parser = policy_parser())]
    pub policy: Policy,

    /// SCHED_DEADLINE runtime per period in `deadline` mode. [default: 100us]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub dl_runtime: Option<u64>,

    /// Background loads, comma-separated; the probes run once per load (`none` is idle), e.g.
    /// `none,cpu,io,net`; `a+b` runs two at once; `exec:CMD` must come last. `rtgauge loads`
    /// lists them. A suite's `loads` and `mixes` apply when this is not given. [default: none]
    #[arg(long, value_name = "LOADS")]
    pub load: Option<String>,

    /// CPUs the loads run on (default: every online CPU, the measured ones included).
    #[arg(long, value_name = "CPUS")]
    pub load_cpus: Option<String>,

    /// Most disk space the io and memory loads may use. [default: 256MiB]
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub load_disk_cap: Option<u64>,

    /// When a load cannot start (no compiler, no permission), report it and go on instead of failing.
    #[arg(long)]
    pub skip_failed_loads: bool,

    /// A probe parameter, `key=value` for every probe, `probe.key=value` or
    /// `probe@variant.key=value` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,

    /// Where to write the result document (default: ./rtgauge-results/HOST-TIME.json). The
    /// HTML report goes beside it (FILE with the extension .html), recordings too.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Replace an existing result at --output (and its report and recordings); without it
    /// rtgauge refuses, before measuring, to overwrite a result.
    #[arg(long)]
    pub force: bool,

    /// Print nothing but errors and the result path.
    #[arg(short, long)]
    pub quiet: bool,

    /// Exit with status 2 when any wake-up latency exceeds this (e.g. 100us).
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub max_latency: Option<u64>,

    /// Explain late wake-ups from the kernel's trace (needs root): what ran on the CPU between
    /// the programmed and the actual wake-up. Recorded by rtgauge's flight recorder in the
    /// kernel (BPF, with the kernel's BTF; under 1 µs of median latency on an idle VM), else
    /// through tracefs, which costs more. On by default, with the flight recorder only, for
    /// runs of a minute or more and soaks.
    #[arg(long)]
    pub trace: bool,

    /// Do not explain late wake-ups, not even in a run of a minute or more.
    #[arg(long, conflicts_with_all = ["trace", "trace_above", "trace_max"])]
    pub no_trace: bool,

    /// With --trace: explain wake-ups later than this (e.g. 100us) [default: every new
    /// maximum after the warm-up].
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "trace")]
    pub trace_above: Option<u64>,

    /// With --trace: explain at most this many spikes per probe run, the first and the largest.
    #[arg(long, value_name = "N", requires = "trace")]
    pub trace_max: Option<u32>,

    /// Stop the run at the first wake-up later than this (e.g. 500us), keep the kernel's trace
    /// of it (with --trace), write the result as broken and exit with status 2.
    #[arg(long = "break", value_name = "DURATION", value_parser = duration)]
    pub break_at: Option<u64>,

    /// Continue when a real-time setting cannot be applied; the result records what was obtained.
    #[arg(long)]
    pub best_effort: bool,

    /// Record every raw sample of these probes (e.g. cyclic) to a binary file beside the result.
    #[arg(long, value_delimiter = ',', value_name = "PROBE")]
    pub record: Vec<String>,

    /// Check the result against this spec file at the end (see `rtgauge check`).
    #[arg(long, value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Also report the result as LAVA test cases at the end (as `show --format lava`):
    /// through `lava-test-case` inside a LAVA job, printed otherwise; judged by --spec.
    #[arg(long)]
    pub lava: bool,

    /// Do not write the HTML report next to the result.
    #[arg(long)]
    pub no_report: bool,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Do not keep this run in the run history (the result file is written as always).
    #[arg(long, env = "RTGAUGE_NO_STORE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_store: bool,

    /// Run the whole measurement N times, one result file each (`NAME-1.json`…): the runs
    /// are the unit `compare` needs to tell a change from run-to-run variation.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// What to print at the end: a one-screen summary, or every series' full table.
    #[arg(long, value_enum, value_name = "WHAT", default_value = "summary")]
    pub table: TableKind,

    /// The application the app probe starts and collects, after `--`: `rtgauge run app --
    /// ./my-loop args`. It must be linked with rtgauge-app (guide: app-instrumentation.md among the installed guides).
    #[arg(last = true, value_name = "APPLICATION")]
    pub application: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// Process id of the running application (linked with rtgauge-app).
    #[arg(value_name = "PID", value_parser = clap::value_parser!(u32).range(1..))]
    pub pid: u32,

    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableKind {
    /// The figures that answer each probe's question, on one screen.
    Summary,
    /// One row per series: every statistic and percentile.
    Full,
}

/// What an output is written as (`--format` of show, compare, check, ab and trend). Each
/// command offers its own names for some of these (below); [`OutputFormat::render`] is the one
/// mapping to what the renderers write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Aligned tables for the terminal.
    Table,
    Markdown,
    Csv,
    Json,
    Html,
    /// rt-tests JSON, as cyclictest --json writes it (written by the importer's exporter; the
    /// renderers' JSON otherwise).
    RtTests,
    /// LAVA test cases, one per headline statistic with its measurement, one test set per
    /// probe run; run through `lava-test-case` when it is on PATH (inside a LAVA job),
    /// printed otherwise. Pass/fail from --spec or --baseline, else pass.
    Lava,
}

impl OutputFormat {
    /// The renderers' format for this output.
    pub fn render(self) -> rtgauge_report::Format {
        use rtgauge_report::{Format, Style};
        match self {
            OutputFormat::Table => Format::Text(crate::display::text_style()),
            OutputFormat::Markdown => Format::Text(Style::Markdown),
            OutputFormat::Csv => Format::Csv,
            OutputFormat::Json | OutputFormat::RtTests | OutputFormat::Lava => Format::Json,
            OutputFormat::Html => Format::Html,
        }
    }
}

/// One name a command's `--format` takes: (name, hidden alias, meaning shown in `--help`,
/// format).
type FormatName = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    OutputFormat,
);

/// `rtgauge show --format`. Every command spells a format alike (`table`, `markdown`, `csv`,
/// `json`, `html`) and takes the other spellings it once had (`terminal`, `md`).
const SHOW_FORMATS: [FormatName; 6] = [
    (
        "table",
        Some("terminal"),
        Some("Aligned tables (box drawing on a UTF-8 terminal, ASCII otherwise)"),
        OutputFormat::Table,
    ),
    (
        "markdown",
        Some("md"),
        Some("Markdown tables"),
        OutputFormat::Markdown,
    ),
    (
        "csv",
        None,
        Some("One line per series, times in ns per operation"),
        OutputFormat::Csv,
    ),
    (
        "json",
        None,
        Some("One object per series, times in ns per operation"),
        OutputFormat::Json,
    ),
    (
        "rt-tests",
        None,
        Some("rt-tests JSON, as cyclictest --json writes it (for scripts that read cyclictest's)"),
        OutputFormat::RtTests,
    ),
    (
        "lava",
        None,
        Some("LAVA test cases, one per headline statistic with its measurement, one test set per probe run; run through `lava-test-case` when it is on PATH (inside a LAVA job), printed otherwise. Pass/fail from --spec or --baseline, else pass"),
        OutputFormat::Lava,
    ),
];

/// `rtgauge compare --format`.
const COMPARE_FORMATS: [FormatName; 5] = [
    ("table", Some("terminal"), None, OutputFormat::Table),
    ("markdown", Some("md"), None, OutputFormat::Markdown),
    ("csv", None, None, OutputFormat::Csv),
    ("json", None, None, OutputFormat::Json),
    ("html", None, None, OutputFormat::Html),
];

/// `--format` of check and ab: compare's but html.
const CHECK_FORMATS: &[FormatName] = COMPARE_FORMATS.split_at(4).0;

/// `rtgauge trend --format`.
const TREND_FORMATS: [FormatName; 2] = [
    ("table", Some("terminal"), None, OutputFormat::Table),
    ("html", None, None, OutputFormat::Html),
];

/// `--format` taking `names`, listed (with their meanings) in `--help`.
fn format_parser(names: &'static [FormatName]) -> impl TypedValueParser<Value = OutputFormat> {
    PossibleValuesParser::new(names.iter().map(|(name, alias, help, _)| {
        let value = PossibleValue::new(*name).aliases(*alias);
        match help {
            Some(help) => value.help(*help),
            None => value,
        }
    }))
    .map(move |typed| {
        names
            .iter()
            .find(|(name, alias, _, _)| *name == typed || *alias == Some(typed.as_str()))
            .map(|(_, _, _, format)| *format)
            .expect("the parser accepts only these names")
    })
}

/// Where the run history lives.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The run history database [default: $XDG_DATA_HOME/rtgauge/history.sqlite, i.e.
    /// ~/.local/share/rtgauge/history.sqlite].
    #[arg(long, value_name = "PATH", env = "RTGAUGE_STORE")]
    pub store: Option<PathBuf>,
}

/// The probes `rtgauge monitor` can keep measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MonitorProbe {
    Cyclic,
    Noise,
    Timerlat,
    Clocksync,
}

#[derive(Debug, Clone, Args)]
pub struct MonitorArgs {
    /// Serve the metrics at http://ADDR/metrics for Prometheus: an address or a host name,
    /// and a port (0.0.0.0:9808 or :9808 for every interface, 127.0.0.1:9808, localhost:9808); text
    /// format 0.0.4, or OpenMetrics, or protobuf with native histograms, as the scraper asks.
    /// A monitor needs --listen, --textfile or both.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Write the metrics to DIR/rtgauge.prom every 5 s (atomically: a temporary file
    /// renamed), for node_exporter's textfile collector; the file is removed when the monitor
    /// stops.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,

    /// Width of the intervals whose maximum latency (clocksync: largest |offset|) is kept over
    /// the whole uptime (OSADL's 5-minute maxima); short ones (e.g. 2s) are for trying it out.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = duration)]
    pub interval: u64,

    /// What is measured on each CPU: `cyclic`, the wake-up latency of a periodic thread (one
    /// wake-up per period); `noise`, the longest stall of each polling window (the CPU taken
    /// from a thread that polls the clock for --runtime of each period); `timerlat`, the
    /// latency of the kernel's timerlat tracer thread (a kernel with CONFIG_TIMERLAT_TRACER,
    /// root); `clocksync`, the offset of this clock from chrony, ptp4l and PTP hardware
    /// clocks, their lock and states (no CPU is measured).
    #[arg(long, value_enum, value_name = "PROBE", default_value_t = MonitorProbe::Cyclic)]
    pub probe: MonitorProbe,

    /// Period of the measuring thread on each CPU (the duty: one wake-up, or one polling
    /// window, per period); with --probe clocksync, the time between two polls of every
    /// reference [default: 1ms for cyclic and timerlat, 100ms for noise, 1s for clocksync].
    #[arg(short, long, value_name = "PERIOD", value_parser = period)]
    pub period: Option<u64>,

    /// With --probe clocksync: which references to poll, as `rtgauge run clocksync` takes them
    /// (clocksync.chrony=PATH|auto|off, clocksync.ptp4l=PATH, clocksync.ptp-domain=N,
    /// clocksync.phc=DEVICE, clocksync.timeout=2s; repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// With --probe noise: polling time in each period, a share (10%) or a duration (5ms);
    /// the rest of the period the CPU is left to its work [default: 10%].
    #[arg(long, value_name = "SHARE")]
    pub runtime: Option<String>,

    /// CPUs to measure on: `all` or a list like 2-3; with --probe clocksync, the CPUs its
    /// polls (and the clients they start) run on, e.g. the housekeeping CPUs.
    #[arg(short, long, value_name = "CPUS", default_value = "all")]
    pub cpus: String,

    /// Execution mode of the measuring threads [default: rt].
    #[arg(short, long, value_delimiter = ',', value_parser = mode_parser(), num_args = 1, value_name = "MODE")]
    pub mode: Vec<ModeName>,

    /// Real-time priority of the measuring threads in `rt` mode.
    #[arg(long, value_name = "PRIO", default_value_t = plan::DEFAULT_PRIORITY, value_parser = priority)]
    pub priority: i32,

    /// Warm-up discarded at start (default 1s).
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub warmup: Option<u64>,

    /// Continue when a real-time setting cannot be applied; the result records what was obtained.
    #[arg(long)]
    pub best_effort: bool,

    /// Do not explain the cyclic probe's late wake-ups. By default each interval's maximum
    /// gets its cause (in the history and as a `cause` label) where the kernel's flight
    /// recorder loads (root, a kernel with BTF); elsewhere the monitor says why it measures
    /// without.
    #[arg(long)]
    pub no_trace: bool,

    /// On SIGTERM or Ctrl-C, write the result document of this monitor's uptime to FILE
    /// (complete: a monitor ends by a stop).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Replace an existing file at --output.
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,

    /// CPUs that will be measured (for IRQ affinity and isolation checks).
    #[arg(short, long, value_name = "CPUS", default_value = "all")]
    pub cpus: String,

    /// Print only the fixes, as a shell script in which every line is commented out (nothing
    /// is run); with --json, the script is added to the document as `fix_script`.
    #[arg(long)]
    pub fix_hint: bool,

    /// Real-time priority the measurement will run at (as `run --priority`): judges the
    /// permission to use it and the tasks that would compete with it.
    #[arg(long, value_name = "PRIO", default_value_t = plan::DEFAULT_PRIORITY, value_parser = priority)]
    pub priority: i32,
}

#[derive(Debug, Subcommand)]
pub enum SubmitTarget {
    /// Post results to SQUAD (`POST URL/api/submit/GROUP/PROJECT/BUILD/ENVIRONMENT`): every
    /// headline statistic as a metric of the suite `rtgauge` (named as `show --format lava`
    /// names its cases), every judged limit (--spec, --baseline) as a test, the result document
    /// attached. The token is read from the environment variable SQUAD_TOKEN only. A submission
    /// that fails is kept in a spool beside the run history and sent again by the next
    /// `submit` (also one without RESULT); an entry leaves the spool only once SQUAD accepted it.
    Squad(SquadArgs),
}

#[derive(Debug, Args)]
pub struct SquadArgs {
    /// The SQUAD server, e.g. https://qa-reports.example.org.
    #[arg(value_name = "URL")]
    pub url: String,

    /// Results to submit: result files, stored run IDs, `latest` or `previous`. None: only the
    /// spooled submissions are sent again.
    #[arg(value_name = "RESULT")]
    pub results: Vec<PathBuf>,

    /// The SQUAD group (its slug).
    #[arg(long, value_name = "GROUP")]
    pub group: String,

    /// The SQUAD project (its slug) in the group.
    #[arg(long, value_name = "PROJECT")]
    pub project: String,

    /// The build the results belong to (e.g. the kernel release or a commit).
    #[arg(long, value_name = "BUILD")]
    pub build: String,

    /// The environment (e.g. the board or machine type).
    #[arg(long, value_name = "ENV")]
    pub environment: String,

    /// Seconds to wait for SQUAD (connection and answer together).
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub timeout: u64,

    /// Refused: a token on the command line is seen by every user of the machine (ps) and
    /// kept in shell history; export SQUAD_TOKEN instead.
    #[arg(long, value_name = "TOKEN", hide = true)]
    pub token: Option<String>,

    #[command(flatten)]
    pub judge: JudgeArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Let `latest` and `previous` name imported results too (of any host).
    #[arg(long)]
    pub imported: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format_of(line: &str) -> Result<OutputFormat, String> {
        let words = std::iter::once("rtgauge").chain(line.split(' '));
        let cli = Cli::try_parse_from(words).map_err(|e| e.to_string())?;
        Ok(match cli.command {
            Command::Show(a) => a.format,
            Command::Compare(a) => a.format,
            Command::Check(a) => a.format,
            Command::Trend(a) => a.format,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn every_format_name_maps_to_its_format_and_others_are_refused() {
        use OutputFormat::*;
        assert_eq!(format_of("show r.json"), Ok(Table));
        assert_eq!(format_of("show r.json -f md"), Ok(Markdown));
        assert_eq!(format_of("show r.json -f markdown"), Ok(Markdown));
        assert_eq!(format_of("show r.json -f rt-tests"), Ok(RtTests));
        assert_eq!(format_of("compare a b -f html"), Ok(Html));
        assert_eq!(format_of("compare a b -f markdown"), Ok(Markdown));
        assert_eq!(format_of("check r.json --spec s -f json"), Ok(Json));
        assert_eq!(format_of("trend cyclic latency -f html"), Ok(Html));
        // One set of names across commands, each with the other spelling it once had.
        for command in ["show r.json", "compare a b", "check r.json --spec s"] {
            for (name, format) in [
                ("table", Table),
                ("terminal", Table),
                ("markdown", Markdown),
                ("md", Markdown),
                ("csv", Csv),
                ("json", Json),
            ] {
                assert_eq!(
                    format_of(&format!("{command} -f {name}")),
                    Ok(format),
                    "{command} -f {name}"
                );
            }
        }
        assert_eq!(format_of("trend cyclic latency -f terminal"), Ok(Table));
        for refused in [
            "show r.json -f html",
            "check r.json --spec s -f html",
            "trend cyclic latency -f csv",
        ] {
            let e = format_of(refused).unwrap_err();
            assert!(e.contains("possible values"), "{refused}: {e}");
        }
        assert_eq!(
            OutputFormat::Markdown.render(),
            rtgauge_report::Format::Text(rtgauge_report::Style::Markdown)
        );
        assert_eq!(OutputFormat::RtTests.render(), rtgauge_report::Format::Json);
    }
}
