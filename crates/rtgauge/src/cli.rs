//! Command-line definitions: the single source of `--help`, the man page and validation.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use rtgauge_core::plan::{self, ModeName};
use rtgauge_core::rt::Policy;
use rtgauge_core::units;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Exit status: 0 success, 1 error (bad input, a setting that cannot be applied, I/O), 2 a \
threshold was exceeded (--max-latency, check --spec), check was given an incomplete result, \
or doctor found a failing check; 130/143 a run interrupted by SIGINT/SIGTERM (its result is saved).

Documentation: README.md, docs/guarantees.md, docs/methodology.md, docs/result-schema.md.";

/// rtgauge measures the real-time capabilities of a Linux machine: how late periodic tasks
/// wake, how much periods jitter, and how all of it degrades under load; then it shows,
/// compares and checks the results.
#[derive(Debug, Parser)]
#[command(name = "rtgauge", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure: run probes (default: the quick suite) and write a result document.
    Run(Box<RunArgs>),
    /// List the probes, what each measures and whether it can run here.
    Probes,
    /// Audit this machine's real-time readiness: every setting that spoils a measurement.
    Doctor(DoctorArgs),
    /// List the background loads and what each stresses.
    Loads,
    /// List the built-in suites and what each runs; print one (to start your own), or check
    /// a suite file without running it.
    Suites {
        /// A built-in suite (its text is printed) or a suite file (checked and listed).
        #[arg(value_name = "SUITE")]
        suite: Option<String>,
    },
    /// Print a stored result's full tables (or its summary) again, as text, Markdown, CSV or JSON.
    Show(ShowArgs),
    /// Write a self-contained HTML report (plots, tables, configuration audit) of results.
    Report(ReportArgs),
    /// Compare results side by side: differences, a statistical test and a verdict per row.
    Compare(CompareArgs),
    /// Check a result against a spec of limits; exit 2 when a limit is exceeded or the result
    /// is incomplete (interrupted, a probe never ran) without --allow-incomplete.
    Check(CheckArgs),
    /// Convert a raw-sample recording (--record) to CSV or Parquet.
    Export(ExportArgs),
    /// Print the JSON Schema of the result document.
    Schema,
    /// Write the man pages (roff), generated from these definitions, into DIR.
    #[command(hide = true)]
    Man {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

fn duration(s: &str) -> Result<u64, String> {
    units::parse_duration_ns(s).map_err(|e| e.to_string())
}

fn period(s: &str) -> Result<u64, String> {
    let ns = duration(s)?;
    if ns < 10_000 {
        return Err(format!("'{s}' is shorter than the minimum period of 10us"));
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
            "'{s}' is not a priority between 1 and 99 (default 95; 99 belongs to kernel housekeeping)"
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimerName {
    /// clock_nanosleep to absolute deadlines (periodic timer).
    Abs,
    /// Relative sleep re-armed each cycle (one-shot timer, drifts).
    Rel,
    /// A periodic timerfd.
    Timerfd,
    /// A periodic POSIX timer signalling the thread.
    PosixTimer,
}

impl TimerName {
    pub fn as_param(self) -> &'static str {
        match self {
            TimerName::Abs => "abs",
            TimerName::Rel => "rel",
            TimerName::Timerfd => "timerfd",
            TimerName::PosixTimer => "posix-timer",
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Probes to run (default: the probes of the suite). See `rtgauge probes`. `probe@variant`
    /// runs a probe more than once (`cyclic@1ms cyclic@100us`) or picks one entry of a suite.
    #[arg(value_name = "PROBE")]
    pub probes: Vec<String>,

    /// Suite to run: quick, standard, full, or the path of a suite file (TOML).
    #[arg(long, value_name = "SUITE")]
    pub suite: Option<String>,

    /// How long each probe measures, after warm-up (e.g. 10s, 2m; default 10s, suites set their own).
    #[arg(short, long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub duration: Option<u64>,

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
    #[arg(long, value_enum)]
    pub timer: Option<TimerName>,

    /// CPUs to measure on: `all` or a list like 0-3,6.
    #[arg(short, long, value_name = "CPUS", default_value = "all")]
    pub cpus: String,

    /// Execution modes; several run one after the other and become rows of the tables.
    /// [default: the suite's `modes`, or rt]
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

    /// Explain late wake-ups from the kernel's trace (needs root and tracefs): what ran on the
    /// CPU between the programmed and the actual wake-up. Costs a few µs of median latency.
    #[arg(long)]
    pub trace: bool,

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

    /// Do not write the HTML report next to the result.
    #[arg(long)]
    pub no_report: bool,

    /// What to print at the end: a one-screen summary, or every series' full table.
    #[arg(long, value_enum, value_name = "WHAT", default_value = "summary")]
    pub table: TableKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableKind {
    /// The figures that answer each probe's question, on one screen.
    Summary,
    /// One row per series: every statistic and percentile.
    Full,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    /// Aligned tables (box drawing on a UTF-8 terminal, ASCII otherwise).
    Terminal,
    /// Markdown tables.
    #[value(alias = "markdown")]
    Md,
    /// One line per series, times in ns per operation.
    Csv,
    /// One object per series, times in ns per operation.
    Json,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Result documents to print, one after the other.
    #[arg(value_name = "RESULT", required = true)]
    pub results: Vec<PathBuf>,

    /// Output format.
    #[arg(short, long, value_enum, default_value = "terminal")]
    pub format: ShowFormat,

    /// The full tables, or the summary printed at the end of a run.
    #[arg(long, value_enum, value_name = "WHAT", default_value = "full")]
    pub table: TableKind,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result documents to include.
    #[arg(value_name = "RESULT", required = true)]
    pub results: Vec<PathBuf>,

    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,

    /// Also write every plot as SVG and PNG into this directory (for papers).
    #[arg(long, value_name = "DIR")]
    pub images: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Markdown,
    Csv,
    Json,
    Html,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more result documents; the first is the baseline.
    #[arg(value_name = "RESULT", num_args = 2.., required = true)]
    pub results: Vec<PathBuf>,

    /// Output format.
    #[arg(short, long, value_enum, default_value = "table")]
    pub format: CompareFormat,

    /// Write to this file instead of standard output (required for html).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The result document to check.
    #[arg(value_name = "RESULT")]
    pub result: PathBuf,

    /// The spec file of limits (TOML).
    #[arg(long, value_name = "SPEC")]
    pub spec: PathBuf,

    /// Also write a JUnit XML report for CI systems.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Output format of the check report on standard output.
    #[arg(short, long, value_enum, default_value = "table")]
    pub format: CheckFormat,

    /// Judge a result whose run was interrupted or did not finish; without this such a
    /// result fails the check (exit 2), since probes that never ran cannot exceed a limit.
    #[arg(long)]
    pub allow_incomplete: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Table,
    Markdown,
    Csv,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Csv,
    Parquet,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A raw-sample recording written by `rtgauge run --record`.
    #[arg(value_name = "RECORDING", required_unless_present = "trace")]
    pub recording: Option<PathBuf>,

    /// Instead of a recording: the explained spikes of a result (`run --trace`) as Chrome
    /// trace-event JSON, which ui.perfetto.dev and chrome://tracing open.
    #[arg(long, value_name = "RESULT", conflicts_with_all = ["recording", "salvage"])]
    pub trace: Option<PathBuf>,

    /// Output format.
    #[arg(short, long, value_enum, default_value = "csv")]
    pub format: ExportFormat,

    /// The file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    /// Export the complete records of a recording whose run never finished (killed, disk
    /// full): it has no trailer, so the number of dropped samples is unknown.
    #[arg(long)]
    pub salvage: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,

    /// CPUs that will be measured (for IRQ affinity and isolation checks).
    #[arg(short, long, value_name = "CPUS", default_value = "all")]
    pub cpus: String,

    /// Print only the fixes, as commented shell commands (never run).
    #[arg(long)]
    pub fix_hint: bool,

    /// Real-time priority the measurement will run at (as `run --priority`): judges the
    /// permission to use it and the tasks that would compete with it.
    #[arg(long, value_name = "PRIO", default_value = "95", value_parser = priority)]
    pub priority: i32,
}
