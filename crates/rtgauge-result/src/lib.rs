//! The result document: everything needed to interpret and compare a run later.
//!
//! One JSON document per run. Every time is an integer number of nanoseconds in a field whose
//! name ends in `_ns`. The document carries [`SCHEMA_VERSION`]; readers refuse newer versions
//! with a clear error rather than misreading them. The JSON Schema in `docs/result.schema.json`
//! is generated from these types (`rtgauge schema`).

mod history;
mod io;
mod key;
mod load;
pub mod output;
pub mod read;
pub mod spike;
mod system;
pub mod tune;
pub mod units;

pub use history::TrendPoint;
pub use io::{document_bytes, write_atomically, write_bytes_atomically, ResultError};
pub use key::{file_safe, RunKey, SeriesKey};
pub use load::{LoadMetric, LoadReport};
pub use read::{parse_result, read_document, read_result, Document};
pub use rtgauge_stats::evt::WorstCase;
pub use rtgauge_stats::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
pub use spike::{Attribution, Contributor};
use std::collections::BTreeMap;
pub use system::{Check, Fingerprint, Status};

/// Version of the document layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of rtgauge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool: Tool,
    /// The command line as typed.
    pub command_line: Vec<String>,
    /// Wall-clock start and end (CLOCK_REALTIME, ns since the Unix epoch).
    pub started_unix_ns: u64,
    pub finished_unix_ns: u64,
    /// complete, interrupted (SIGINT/SIGTERM: what was measured is kept) or failed.
    pub status: RunStatus,
    pub fingerprint: Fingerprint,
    /// Doctor verdicts at the time of the run (absent when not collected).
    #[serde(default)]
    pub checks: Vec<Check>,
    pub config: RunConfig,
    pub calibration: Calibration,
    /// One entry per probe × mode × load, in the order they ran.
    pub runs: Vec<ProbeRun>,
    /// What each background load achieved.
    #[serde(default)]
    pub loads: Vec<LoadReport>,
    pub warnings: Vec<Warning>,
    /// Raw-sample files written beside this document (`--record`).
    #[serde(default)]
    pub recordings: Vec<RecordingInfo>,
    /// Whether late wake-ups were explained from the kernel's trace (`--trace`), and why not.
    /// Absent in documents written before tracing existed and in untraced runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracing: Option<Tracing>,
}

/// How a run explained its late wake-ups (`--trace`, `--break`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tracing {
    /// The trace session ran; when false, `reason` says why (one line with the fix).
    pub active: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `--trace-above`: samples above it were candidates. Absent: every new maximum of a
    /// measuring thread after its warm-up was a candidate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above_ns: Option<u64>,
    /// `--trace-max`: most spikes attributed per probe run.
    pub max_spikes: u32,
    /// `--break`: the run stopped at the first sample above this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_ns: Option<u64>,
    /// Trace events the kernel lacked (their causes cannot be named).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_missing: Vec<String>,
    /// What recorded the kernel's events: `bpf` (the flight recorder in the kernel, which
    /// sends a CPU's last events only after a late wake-up) or `tracefs` (every event into
    /// the ftrace ring buffer). Absent in results of versions without the flight recorder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorder: Option<String>,
    /// Why the run records with tracefs although the flight recorder was wanted (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Attribution was on because the run was long (a minute or more, or a soak), not
    /// because `--trace` asked; such a run uses only the flight recorder.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_default: bool,
}

/// One raw-sample recording (`.rtgr`, format in docs/recording.md) of one probe run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecordingInfo {
    /// Relative to the directory of the result document.
    pub path: String,
    /// The probe run's title: the probe, or `probe@variant`.
    pub probe: String,
    pub mode: String,
    pub load: String,
    /// Version of the recording file format.
    pub format_version: u32,
    pub samples_written: u64,
    /// Samples a measuring thread could not hand to the writer (its ring was full); never
    /// hidden: a complete recording has 0.
    pub samples_dropped: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Complete,
    Interrupted,
    Failed,
    /// Stopped by `--break` at the first sample above its latency; the spike's trace window
    /// is kept in the run's `spikes`.
    Broken,
}

impl RunStatus {
    /// The status as the document spells it (and the history stores and reports print it).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Broken => "broken",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The configuration the run was asked for (what was obtained is in each [`ProbeRun`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunConfig {
    /// Suite name when the plan came from a suite.
    pub suite: Option<String>,
    pub probes: Vec<String>,
    pub modes: Vec<String>,
    pub loads: Vec<String>,
    pub cpus: Vec<usize>,
    pub duration_ns: Option<u64>,
    pub loops: Option<u64>,
    pub warmup_ns: u64,
    pub priority: i32,
    pub best_effort: bool,
    /// Probe parameters as given (period, timer, sources, sizes…).
    pub params: BTreeMap<String, String>,
}

/// Cost and resolution of the clock every probe reads, measured before the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calibration {
    pub clock: String,
    pub clocksource: String,
    /// Back-to-back CLOCK_MONOTONIC reads.
    pub reads: u64,
    pub read_cost_min_ns: u64,
    pub read_cost_median_ns: u64,
    pub read_cost_max_ns: u64,
    /// clock_getres.
    pub resolution_ns: u64,
}

/// The execution context a probe actually ran in (not merely what was asked).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Obtained {
    /// other, fifo, rr or deadline.
    pub policy: String,
    pub priority: i32,
    pub memory_locked: bool,
    /// /dev/cpu_dma_latency held at 0 µs for the run.
    pub cpu_dma_latency_held: bool,
    pub pinned: bool,
    pub timer_slack_ns: Option<u64>,
    /// What could not be applied and why (only with --best-effort).
    pub shortfalls: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", tag = "state")]
pub enum ProbeStatus {
    Ok,
    /// The probe cannot run here (no GPIO chip, no port access…).
    Skipped {
        reason: String,
    },
    Failed {
        error: String,
    },
}

/// One probe in one mode under one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeRun {
    pub probe: String,
    /// Tells apart two entries of one probe in a suite (e.g. `cyclic` at 1 ms and at 100 µs):
    /// the suite entry's `variant`. Absent for a probe's only entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    pub mode: String,
    pub load: String,
    pub status: ProbeStatus,
    pub obtained: Obtained,
    /// Parameters the probe used, resolved (defaults filled in).
    pub params: BTreeMap<String, String>,
    pub warmup_ns: u64,
    pub measured_ns: u64,
    pub series: Vec<Series>,
    /// Late wake-ups explained from the kernel's trace (`--trace`), largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spikes: Vec<Attribution>,
    /// Spike candidates the trace did not explain: beyond `--trace-max`, or lost because
    /// the candidate queue was full.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spikes_unexplained: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ProbeRun {
    /// What tables, charts, comparisons and check specs call this probe run: the probe's name,
    /// or `probe@variant`.
    pub fn title(&self) -> String {
        probe_title(&self.probe, self.variant.as_deref())
    }

    /// The mode as a table should name it: the mode asked for, and when `--best-effort` fell
    /// short of it, what was really measured (`rt asked, normal obtained`), so numbers
    /// measured as an ordinary process are never shown as the real-time mode's. `mode` itself
    /// stays the name asked for, for machines.
    pub fn mode_label(&self) -> String {
        if self.obtained.shortfalls.is_empty() {
            return self.mode.clone();
        }
        // SCHED_OTHER is what rtgauge calls the normal mode.
        match self.obtained.policy.as_str() {
            "other" if self.mode != "normal" => format!("{} asked, normal obtained", self.mode),
            _ => format!("{} asked, partly obtained", self.mode),
        }
    }
}

/// The titles of these probe runs, each once, in the order they first appear.
pub fn distinct_titles<'a>(runs: impl IntoIterator<Item = &'a ProbeRun>) -> Vec<String> {
    let mut titles: Vec<String> = Vec::new();
    for run in runs {
        let title = run.title();
        if !titles.contains(&title) {
            titles.push(title);
        }
    }
    titles
}

/// `probe` or `probe@variant`.
pub fn probe_title(probe: &str, variant: Option<&str>) -> String {
    match variant {
        Some(v) => format!("{probe}@{v}"),
        None => probe.to_string(),
    }
}

/// One distribution measured by a probe: e.g. wake-up latency on CPU 1, or `sem_post` time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Series {
    /// What was measured: latency, period, jitter, switch, sem_post, malloc…
    pub name: String,
    /// What tells this series apart from its siblings (cpu, source, size, allocator…).
    pub labels: BTreeMap<String, String>,
    /// Samples timed several operations at once: per-operation time is value / batch.
    pub batch: u64,
    /// Events counted beside the distribution (overruns, cycles, dropped, backward_steps…).
    pub counters: BTreeMap<String, u64>,
    /// Derived figures that are not times (bandwidth in bytes/s, drift in ppb…).
    pub metrics: BTreeMap<String, f64>,
    pub stats: Summary,
    /// The extreme-value estimate made from `stats.intervals` (or why there is none): what
    /// the maximum of an hour, or a rare cycle, will probably not exceed. Absent for a series
    /// without interval maxima and in documents written before rtgauge made estimates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_case: Option<WorstCase>,
    /// What the kernel ran during this series' events, summed per cause over the run, largest
    /// first (the noise probe with `--trace`: who took the CPU from the polling thread): the
    /// [`MAX_SERIES_CAUSES`] largest, then every other real-time thread, interrupt, softirq or
    /// NMI, [`MAX_SERIES_CAUSES_ALL`] in all. `duration_ns` is the cause's total time in the
    /// events, `count` the stretches it ran, `longest_ns` its longest one. Absent without a
    /// trace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<Contributor>,
}

/// How many of the largest causes a series keeps whatever they are: small enough for a
/// document of many CPUs.
pub const MAX_SERIES_CAUSES: usize = 10;
/// At most this many causes in all, the real-time ones beyond the largest included.
pub const MAX_SERIES_CAUSES_ALL: usize = 32;

impl Series {
    /// A time of this series per operation: samples that timed a batch of operations are
    /// divided by the batch (the one place renderers should do it).
    ///
    /// ```
    /// # use rtgauge_result::Series;
    /// let mut s = Series::new("sem_post", Default::default());
    /// s.batch = 100;
    /// assert_eq!(s.per_op_ns(Some(2_500)), Some(25.0));
    /// assert_eq!(s.per_op_ns(None), None);
    /// ```
    pub fn per_op_ns(&self, ns: Option<u64>) -> Option<f64> {
        ns.map(|v| v as f64 / self.batch.max(1) as f64)
    }

    pub fn new(name: impl Into<String>, stats: Summary) -> Self {
        Series {
            name: name.into(),
            labels: BTreeMap::new(),
            batch: 1,
            counters: BTreeMap::new(),
            metrics: BTreeMap::new(),
            stats,
            worst_case: None,
            causes: Vec::new(),
        }
    }

    pub fn label(mut self, key: &str, value: impl ToString) -> Self {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }

    pub fn counter(mut self, key: &str, value: u64) -> Self {
        self.counters.insert(key.to_string(), value);
        self
    }

    /// A short name for tables: `latency cpu=1`.
    pub fn display_name(&self) -> String {
        key::labelled_name(&self.name, &self.labels)
    }
}

/// Something that weakens the result, with a stable code for machines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Warning {
    pub code: String,
    pub message: String,
}

impl Warning {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Warning {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// The JSON Schema of [`RunResult`], pretty-printed (the content of docs/result.schema.json).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(RunResult);
    serde_json::to_string_pretty(&schema).expect("a schema always serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::RunStatus;

    /// The document is a leaf: producers (sysinfo, load, trace, core…) depend on it, never the
    /// reverse, or every reader of a result file would pull in measurement code. Only the
    /// statistics crate, whose summary the document stores, may be a dependency.
    #[test]
    fn result_crate_depends_on_no_producer() {
        let manifest: toml::Table =
            toml::from_str(include_str!("../Cargo.toml")).expect("Cargo.toml parses");
        let dependencies = manifest["dependencies"]
            .as_table()
            .expect("[dependencies] is a table");
        let producers: Vec<&String> = dependencies
            .keys()
            .filter(|name| name.starts_with("rtgauge") && name.as_str() != "rtgauge-stats")
            .collect();
        assert!(
            producers.is_empty(),
            "rtgauge-result must not depend on {producers:?}: move the types the document \
             holds into this crate and let the producer depend on it"
        );
    }

    #[test]
    fn run_status_name_is_its_json_spelling() {
        for status in [
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::Failed,
            RunStatus::Broken,
        ] {
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            assert_eq!(status.to_string(), status.as_str());
        }
    }
}
