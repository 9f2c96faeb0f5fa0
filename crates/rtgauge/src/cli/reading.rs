//! The arguments of the commands that read results: show, judge, regress, report, compare,
//! check, history, ab, baseline, import, trend and export.

use super::*;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Results to print, one after the other: a result file, a stored run's ID (see
    /// `rtgauge history`), `latest` or `previous`.
    #[arg(value_name = "RESULT", required = true)]
    pub results: Vec<PathBuf>,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Let `latest` and `previous` name imported results too (of any host); without it they
    /// name the rtgauge runs of this host.
    #[arg(long)]
    pub imported: bool,

    /// Output format.
    #[arg(short, long, default_value = "table", value_parser = format_parser(&SHOW_FORMATS))]
    pub format: OutputFormat,

    /// The full tables, or the summary printed at the end of a run.
    #[arg(long, value_enum, value_name = "WHAT", default_value = "full")]
    pub table: TableKind,

    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// The verdict a lab's test cases carry (`show --format lava`, `submit squad`): limits from a
/// spec, a baseline, or none (every measurement passes).
#[derive(Debug, Clone, Args)]
pub struct JudgeArgs {
    /// Judge the statistics against this spec file of limits (as `rtgauge check --spec`).
    #[arg(long, value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Judge the statistics against an earlier run (as `rtgauge check --baseline`): a stored
    /// run's ID, `previous`, a baseline name or a result file.
    #[arg(long, value_name = "RUN")]
    pub baseline: Vec<String>,

    #[command(flatten)]
    pub regress: RegressArgs,

    /// Judge an interrupted or partial result on what it measured instead of failing it.
    #[arg(long)]
    pub allow_incomplete: bool,
}

/// What a regression against --baseline is (`check`, and the verdicts of `show --format
/// lava` and `submit squad`).
#[derive(Debug, Clone, Args)]
pub struct RegressArgs {
    /// How much worse a statistic may get against --baseline (e.g. 10%).
    #[arg(long = "regress", value_name = "PERCENT", default_value = "10%", value_parser = percent_arg)]
    pub percent: f64,

    /// Statistics judged against --baseline, comma-separated: median, mean, min, p90, p99,
    /// p99.9, p99.99, p99.999, max, and the lost periods overruns and deadline_misses (each a
    /// rate over the periods measured, with its own count test).
    #[arg(
        long = "regress-stats",
        value_name = "STATS",
        value_delimiter = ',',
        default_value = "p99,max,overruns,deadline_misses"
    )]
    pub stats: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result documents to include, or trials documents (`rtgauge tune -o`), which make a
    /// page of their own.
    #[arg(value_name = "RESULT", required = true)]
    pub results: Vec<PathBuf>,

    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,

    /// Also write every plot as SVG and PNG into this directory (for papers; not in the small
    /// build, whose HTML report still draws every chart).
    #[arg(long, value_name = "DIR")]
    pub images: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files, stored run IDs, `latest` or `previous`; the first is the baseline
    /// unless --baseline names one. With --vs: the baseline's repeated runs. Or two trials
    /// documents (`rtgauge tune -o`), compared setting by setting.
    #[arg(value_name = "RESULT", num_args = 1.., required = true)]
    pub results: Vec<PathBuf>,

    /// The baseline: `previous` (the stored run before the newest), a stored run's ID, a
    /// name given with `rtgauge baseline set`, or a result file.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,

    /// The candidate's repeated runs (`run --repeat`): each run is one value per statistic,
    /// and a row differs when the runs of the two sides do, not their samples.
    #[arg(long, value_name = "RESULT", num_args = 1..)]
    pub vs: Vec<PathBuf>,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Let `latest` and `previous` name imported results too (of any host); without it they
    /// name the rtgauge runs of this host.
    #[arg(long)]
    pub imported: bool,

    /// Output format.
    #[arg(short, long, default_value = "table", value_parser = format_parser(&COMPARE_FORMATS))]
    pub format: OutputFormat,

    /// Write to this file instead of standard output (required for html).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The exit status of an inconclusive baseline check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InconclusiveOutcome {
    /// Exit 3: the gate could not decide.
    Status,
    /// Exit 0, as if the statistic had passed.
    Pass,
    /// Exit 2, as if it had failed.
    Fail,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The result document to check; with --baseline, several results are repeated runs of
    /// one configuration, judged together (`run --repeat 3` writes them).
    #[arg(value_name = "RESULT", required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,

    /// The spec file of limits (TOML).
    #[arg(long, value_name = "SPEC", required_unless_present = "baseline")]
    pub spec: Option<PathBuf>,

    /// Check against an earlier run instead of (or beside) limits: a stored run's ID,
    /// `previous`, a baseline name (`rtgauge baseline set`) or a result file. A statistic
    /// fails (exit 2) when it is worse than the baseline's by more than --regress beyond the
    /// baseline's own variation; it is inconclusive (exit 3, see --inconclusive) when it is
    /// worse by more than that as measured but these runs cannot tell it from their variation.
    /// Every statistic says the smallest change the runs could have detected. Given more than
    /// once (or with several RESULTs), the runs of each side are judged as repeated runs: each
    /// run one value per statistic, the variation between runs measured from them.
    #[arg(long, value_name = "RUN")]
    pub baseline: Vec<String>,

    /// What a statistic that cannot be decided from these runs means for the exit status:
    /// `status` exits 3 (neither pass nor fail), `pass` exits 0, `fail` exits 2.
    #[arg(long, value_enum, default_value = "status", value_name = "OUTCOME")]
    pub inconclusive: InconclusiveOutcome,

    #[command(flatten)]
    pub regress: RegressArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Let `latest` and `previous` name imported results too (of any host); without it they
    /// name the rtgauge runs of this host.
    #[arg(long)]
    pub imported: bool,

    /// Also write a JUnit XML report for CI systems.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Output format of the check report on standard output.
    #[arg(short, long, default_value = "table", value_parser = format_parser(CHECK_FORMATS))]
    pub format: OutputFormat,

    /// Judge a result whose run was interrupted or did not finish; without this such a
    /// result fails the check (exit 2), since probes that never ran cannot exceed a limit.
    #[arg(long)]
    pub allow_incomplete: bool,
}

fn percent_arg(s: &str) -> Result<f64, String> {
    let number = s.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p / 100.0),
        _ => Err(format!("'{s}' is not a percentage; write e.g. 10%")),
    }
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only runs of this host.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,

    /// Only runs that measured this probe (or probe@variant).
    #[arg(long, value_name = "PROBE")]
    pub probe: Option<String>,

    /// Only runs on this kernel release (as `uname -r` prints it).
    #[arg(long, value_name = "RELEASE")]
    pub kernel: Option<String>,

    /// Only runs started on or after this UTC date or time (2026-11-24 or 2026-11-24T10:00).
    #[arg(long, value_name = "DATE", value_parser = date_arg)]
    pub since: Option<u64>,

    /// Only runs with this status.
    #[arg(long, value_name = "STATUS", value_parser = ["complete", "interrupted", "failed", "broken"])]
    pub status: Option<String>,

    /// At most this many runs.
    #[arg(short = 'n', long, value_name = "N")]
    pub limit: Option<usize>,

    /// The monitors' intervals instead of the runs (`rtgauge monitor`): each interval's
    /// maximum, samples and overruns per CPU, the newest 50 (or -n N), oldest first.
    #[arg(long, conflicts_with_all = ["probe", "kernel", "status"])]
    pub monitor: bool,

    #[command(flatten)]
    pub store: StoreArgs,
}

/// `2026-11-24` or `2026-11-24T10:00[:00]`, UTC, as Unix nanoseconds.
fn date_arg(s: &str) -> Result<u64, String> {
    use chrono::{NaiveDate, NaiveDateTime};
    let at = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M"))
        .or_else(|_| {
            NaiveDate::parse_from_str(s, "%Y-%m-%d").map(|d| d.and_time(Default::default()))
        })
        .map_err(|_| format!("'{s}' is not a date; write 2026-11-24 or 2026-11-24T10:00 (UTC)"))?;
    at.and_utc()
        .timestamp_nanos_opt()
        .and_then(|ns| u64::try_from(ns).ok())
        .ok_or_else(|| format!("'{s}' is out of range"))
}

#[derive(Debug, Args)]
pub struct AbArgs {
    /// The first configuration (the baseline): `rtgauge run` options in one argument, e.g.
    /// "cyclic -p 1ms -c 0-1".
    #[arg(value_name = "CONFIG-A")]
    pub a: String,

    /// The second configuration, e.g. "cyclic -p 100us -c 0-1".
    #[arg(value_name = "CONFIG-B")]
    pub b: String,

    /// How many times each configuration runs.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub rounds: u32,

    /// Directory for the result files (A-1.json, B-1.json, …).
    #[arg(long, value_name = "DIR", default_value = "rtgauge-ab")]
    pub output_dir: PathBuf,

    /// Output format of the comparison.
    #[arg(short, long, default_value = "table", value_parser = format_parser(CHECK_FORMATS))]
    pub format: OutputFormat,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub action: BaselineAction,
}

#[derive(Debug, Subcommand)]
pub enum BaselineAction {
    /// Name a stored run (ID, `latest` or `previous`) as a baseline.
    Set {
        /// The stored run.
        #[arg(value_name = "RUN")]
        run: String,
        /// The baseline's name (e.g. board-a).
        #[arg(long, value_name = "NAME")]
        name: String,
        /// Re-point a name that already names another run (the gates that use the name then
        /// judge against the new run).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List the baselines and the runs they name.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    /// Decide from the content.
    Auto,
    /// rt-tests `--json=FILE` (cyclictest, cyclicdeadline, oslat, ptsematest, pmqtest,
    /// sigwaittest, svsematest), cyclictest's text (`-h`/`-H`/`--histfile` histograms, status
    /// lines alone, `-v` samples), oslat's text (1.x and 2.x).
    #[value(alias = "rt-tests")]
    Cyclictest,
    /// rtla timerlat or osnoise, hist or top, text output.
    #[value(alias = "rtla")]
    Timerlat,
    /// hwlatdetect's output.
    Hwlatdetect,
    /// jitterdebugger's `results.json`, or its samples file.
    Jitterdebugger,
    /// An rtgauge result document.
    Rtgauge,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Their format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: ImportFormat,

    /// Also write each as an rtgauge result document into this directory (for `report`,
    /// `compare` and `check`): `NAME.rtgauge.json`, with the input's extension kept where two
    /// inputs share a name (`ct.txt.rtgauge.json`, `ct.json.rtgauge.json`).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Do not store them in the run history (only with --output-dir).
    #[arg(long, requires = "output_dir")]
    pub no_store: bool,

    /// Replace existing result files in --output-dir, and import a file the history already
    /// holds (it keeps its one row: a file's content is stored once).
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The series: probe, series name and labels, e.g. `cyclic latency cpu=1`.
    #[arg(value_name = "SERIES", num_args = 2.., required = true)]
    pub series: Vec<String>,

    /// Runs of this host (default: the host this runs on).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,

    /// Only this mode (rt, normal, deadline).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,

    /// Only this load (default: none, the idle rows).
    #[arg(long, value_name = "LOAD", default_value = "none")]
    pub load: String,

    /// Output format.
    #[arg(short, long, default_value = "table", value_parser = format_parser(&TREND_FORMATS))]
    pub format: OutputFormat,

    /// Write to this file (required for html).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub store: StoreArgs,
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
