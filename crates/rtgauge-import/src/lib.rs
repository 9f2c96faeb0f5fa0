//! Results of other tools as rtgauge result documents, so `report`, `compare`, `check` and
//! the run history treat them like measured runs; and rtgauge results as rt-tests JSON
//! ([`rt_tests::export`]), so scripts written for cyclictest read them unchanged.
//!
//! The source's own figures are the truth. Count, minimum, average and maximum are the ones
//! the tool printed; percentiles come from its histogram only where the histogram holds them
//! (above its range they are only known to be at least its limit, kept in the series'
//! `histogram_limit_ns` and `beyond_histogram` counters); a standard deviation exists only
//! where the histogram holds every sample at the tool's resolution. A bucket wider than the
//! tool's resolution stands for its upper edge, never outside the source's minimum and
//! maximum. What a file does not say (priority, memory locking, the date) stays unknown.
//!
//! Mapping: cyclictest, cyclicdeadline, oslat and jitterdebugger measure what rtgauge's
//! `cyclic` probe does (latency of a periodic or polling thread), so they become `cyclic` /
//! `latency` rows per CPU and pair with rtgauge runs in `compare`; ptsematest, pmqtest,
//! sigwaittest and svsematest (a sender wakes a receiver) become `response` / `latency`
//! rows; rtla timerlat becomes a `timerlat` probe with `irq`, `thread` and `user` rows per
//! CPU; rtla osnoise an `osnoise` probe; hwlatdetect an `hwlat` probe.

mod cyclictest;
mod cyclictest_status;
mod cyclictest_text;
mod hwlat;
mod jitterdebugger;
mod oslat;
mod periods;
pub mod rt_tests;
mod rtla;

pub(crate) use periods::count_lost_periods;

use rtgauge_result::{
    Calibration, Obtained, ProbeRun, ProbeStatus, RunConfig, RunResult, RunStatus, Series, Tool,
    Warning,
};
use rtgauge_stats::{percentile_supported, Percentiles, SparseHistogram};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--json` of cyclictest, cyclicdeadline, oslat, ptsematest, pmqtest, sigwaittest,
    /// svsematest (rt-tests).
    RtTests,
    /// cyclictest's histogram text (`-h`/`-H` on stdout, with or without its status lines,
    /// or `--histfile`).
    CyclictestText,
    /// cyclictest's status lines alone (`T: 0 (1234) P:95 I:1000 C: 100000 Min: 3 Act: 5
    /// Avg: 4 Max: 30`), as its live display leaves them: per thread figures, no distribution.
    CyclictestStatus,
    /// cyclictest `-v`: one line per sample (`thread:cycle:latency`), a full distribution.
    CyclictestVerbose,
    /// oslat's text output (1.x labels its frequency `CPU Freq:`, 2.x `Counter Freq:`).
    OslatText,
    /// rtla timerlat/osnoise hist and top text output.
    Rtla,
    /// hwlatdetect's text output.
    Hwlatdetect,
    Jitterdebugger,
    /// jitterdebugger's samples, as `jittersamples --format csv` writes them.
    JitterdebuggerSamples,
    Rtgauge,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::RtTests => "rt-tests JSON",
            Source::CyclictestText => "cyclictest histogram",
            Source::CyclictestStatus => "cyclictest status lines",
            Source::CyclictestVerbose => "cyclictest -v samples",
            Source::OslatText => "oslat text",
            Source::Rtla => "rtla",
            Source::Hwlatdetect => "hwlatdetect",
            Source::Jitterdebugger => "jitterdebugger",
            Source::JitterdebuggerSamples => "jitterdebugger samples",
            Source::Rtgauge => "rtgauge",
        }
    }
}

/// What `import` reads, for messages.
pub const SUPPORTED: &str = "rt-tests --json (cyclictest, cyclicdeadline, oslat, ptsematest, pmqtest, sigwaittest, svsematest), cyclictest text (-h/-H/--histfile histograms, status lines, -v samples), oslat text (1.x and 2.x), hwlatdetect output, rtla timerlat/osnoise hist and top text, jitterdebugger JSON or samples CSV, rtgauge results";

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {looks}; rtgauge imports {SUPPORTED} (not rt-migrate-test output or rtla's saved traces)")]
    Unknown { path: PathBuf, looks: String },
    #[error("{path}: {series}: {field} {problem}; the file's figures contradict each other (was it edited?)")]
    Impossible {
        path: PathBuf,
        series: String,
        field: String,
        problem: String,
    },
    #[error(transparent)]
    Result(#[from] rtgauge_result::ResultError),
}

/// A file read into a result document.
#[derive(Debug, Clone)]
pub struct Imported {
    pub source: Source,
    pub result: RunResult,
    /// What identifies the file's content ([`content_hash`]): the run history keeps one row
    /// per source file, whatever its name.
    pub content_hash: String,
}

/// A fingerprint of a file's content: 128-bit XXH3 in hex, prefixed with its algorithm so a
/// later change of algorithm never matches old rows by accident.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("xxh3-128:{:032x}", twox_hash::XxHash3_128::oneshot(bytes))
}

/// Reads `path` as `source`, or as what its content looks like when `None`. A named source
/// of the same tool family (`RtTests` for cyclictest text, `Rtla` for any rtla output) is
/// refined by content.
pub fn import_file(path: &Path, source: Option<Source>) -> Result<Imported, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    import_text(path, &text, source)
}

/// [`import_file`] on text already read; `path` names it in messages (an rtgauge result is
/// read from `path` itself).
pub fn import_text(
    path: &Path,
    text: &str,
    source: Option<Source>,
) -> Result<Imported, ImportError> {
    let text = text.to_string();
    let detected = detect(&text);
    let source = match (source, detected) {
        (Some(Source::RtTests), Some(Source::CyclictestText)) => Source::CyclictestText,
        (Some(Source::RtTests), Some(Source::OslatText)) => Source::OslatText,
        (Some(Source::RtTests), Some(Source::CyclictestStatus)) => Source::CyclictestStatus,
        (Some(Source::RtTests), Some(Source::CyclictestVerbose)) => Source::CyclictestVerbose,
        (Some(s), _) => s,
        (None, Some(s)) => s,
        (None, None) => {
            return Err(ImportError::Unknown {
                path: path.to_path_buf(),
                looks: looks_like(&text),
            })
        }
    };
    let result = match source {
        Source::RtTests => cyclictest::parse_json(path, &text)?,
        Source::CyclictestText => cyclictest_text::parse_text(path, &text)?,
        Source::CyclictestStatus => cyclictest_status::parse_status(path, &text)?,
        Source::CyclictestVerbose => cyclictest_status::parse_verbose(path, &text)?,
        Source::OslatText => oslat::parse_text(path, &text)?,
        Source::Rtla => rtla::parse(path, &text)?,
        Source::Hwlatdetect => hwlat::parse(path, &text)?,
        Source::Jitterdebugger => jitterdebugger::parse_results(path, &text)?,
        Source::JitterdebuggerSamples => jitterdebugger::parse_samples(path, &text)?,
        Source::Rtgauge => {
            return Ok(Imported {
                source,
                result: rtgauge_result::read_result(path)?,
                content_hash: content_hash(text.as_bytes()),
            })
        }
    };
    // What rtgauge would refuse to read back is refused now, before anything is written.
    if let Err(rtgauge_result::read::Problem::Invalid { field, problem }) =
        rtgauge_result::read::validate(&result)
    {
        let series = field
            .strip_prefix("runs[0].series[")
            .and_then(|rest| rest.split(']').next()?.parse::<usize>().ok())
            .and_then(|i| result.runs.first()?.series.get(i))
            .map(|s| {
                let labels: Vec<String> =
                    s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{} {}", s.name, labels.join(" "))
                    .trim_end()
                    .to_string()
            })
            .unwrap_or_else(|| "the result".into());
        let field = field.rsplit('.').next().unwrap_or(&field).to_string();
        return Err(ImportError::Impossible {
            path: path.to_path_buf(),
            series,
            field,
            problem,
        });
    }
    Ok(Imported {
        source,
        result,
        content_hash: content_hash(text.as_bytes()),
    })
}

/// The format `text` looks like.
pub fn detect(text: &str) -> Option<Source> {
    let head = text.trim_start();
    if head.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        return if value.get("schema_version").is_some() {
            Some(Source::Rtgauge)
        } else if value.get("thread").is_some() {
            Some(Source::RtTests)
        } else if value.get("cpu").is_some() {
            Some(Source::Jitterdebugger)
        } else {
            None
        };
    }
    let lines = || head.lines().map(str::trim);
    if lines().any(|l| l.starts_with("# RTLA ") || l.starts_with("Index "))
        || lines().any(|l| l.contains("Timer Latency") || l.starts_with("CPU Period"))
    {
        return Some(Source::Rtla);
    }
    if lines().any(|l| l == "# Histogram" || l.starts_with("# Max Latencies:")) {
        return Some(Source::CyclictestText);
    }
    if lines().any(|l| cyclictest_text::Status::parse(l, 0).is_some()) {
        return Some(Source::CyclictestStatus);
    }
    // oslat 1.x labels the frequency `CPU Freq:`, 2.x `Counter Freq:`.
    if lines().any(|l| l.starts_with("Counter Freq:") || l.starts_with("CPU Freq:"))
        && lines().any(|l| l.contains("(us):"))
    {
        return Some(Source::OslatText);
    }
    if lines()
        .any(|l| l.starts_with("hwlatdetect:") || l.starts_with("Samples exceeding threshold:"))
    {
        return Some(Source::Hwlatdetect);
    }
    // cyclictest -v: `thread:cycle:latency` lines (two at least, or one after `Thread N
    // Interval:`, so a lone `00:10:01` is not taken for one).
    let samples = lines()
        .filter(|l| cyclictest_status::sample_line(l).is_some())
        .take(2)
        .count();
    if samples == 2
        || samples == 1 && lines().any(|l| l.starts_with("Thread ") && l.contains("Interval:"))
    {
        return Some(Source::CyclictestVerbose);
    }
    let first = head.lines().next()?;
    let fields: Vec<&str> = first.split(';').collect();
    (fields.len() == 3 && fields.iter().all(|f| f.trim().parse::<f64>().is_ok()))
        .then_some(Source::JitterdebuggerSamples)
}

/// What an unrecognised file looks like, for the refusal.
fn looks_like(text: &str) -> String {
    let head = text.trim_start();
    if head.is_empty() {
        return "the file is empty".into();
    }
    if head.starts_with('{') {
        return match serde_json::from_str::<serde_json::Value>(text) {
            Err(e) => format!("looks like JSON but does not parse ({e})"),
            Ok(v) => {
                let keys: Vec<String> = v
                    .as_object()
                    .map(|o| o.keys().take(6).cloned().collect())
                    .unwrap_or_default();
                format!(
                    "a JSON document with keys {} (no \"thread\", \"cpu\" or \"schema_version\")",
                    keys.join(", ")
                )
            }
        };
    }
    let first = head.lines().next().unwrap_or("").trim();
    let first: String = first.chars().take(60).collect();
    format!("a text file starting `{first}`, of no format rtgauge knows")
}

pub(crate) fn malformed(path: &Path, line: usize, message: impl Into<String>) -> ImportError {
    ImportError::Malformed {
        path: path.to_path_buf(),
        line,
        message: clip_quoted(&message.into()),
    }
}

/// Longest text quoted from the file in a message (between backquotes): a longer one is cut
/// with `…`, so a refusal stays one readable line whatever the file holds.
const QUOTED_LIMIT: usize = 60;

/// Text of the file as a message quotes it: its backquotes made plain quotes (so the
/// quoting stays whole) and cut at [`QUOTED_LIMIT`] characters.
pub(crate) fn shown(text: &str) -> String {
    let text = text.replace('`', "'");
    if text.chars().count() > QUOTED_LIMIT {
        let mut cut: String = text.chars().take(QUOTED_LIMIT - 1).collect();
        cut.push('…');
        cut
    } else {
        text
    }
}

/// `message` with every backquoted part longer than [`QUOTED_LIMIT`] characters cut.
fn clip_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    for (i, part) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        // Odd parts are the quoted ones.
        if i % 2 == 1 && part.chars().count() > QUOTED_LIMIT {
            out.extend(part.chars().take(QUOTED_LIMIT - 1));
            out.push('…');
        } else {
            out.push_str(part);
        }
    }
    out
}

/// What a tool reported for one series.
#[derive(Debug, Clone)]
pub(crate) struct Reported {
    /// (lower edge in ns, count) per histogram bucket; empty when the tool kept none.
    pub buckets: Vec<(u64, u64)>,
    /// Width of a bucket, ns.
    pub bucket_ns: u64,
    /// The tool's resolution, ns (1000 for tools printing whole µs).
    pub unit_ns: u64,
    /// Samples the tool counted in all (the histogram may hold fewer: its overflow); 0 when
    /// the tool did not say.
    pub count: u64,
    /// Samples beyond the histogram's range, when the tool states them.
    pub overflow: Option<u64>,
    /// The histogram's upper limit: a sample beyond the histogram is at least this.
    pub limit_ns: Option<u64>,
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub mean_ns: Option<u64>,
}

impl Default for Reported {
    fn default() -> Self {
        Reported {
            buckets: Vec::new(),
            bucket_ns: 1000,
            unit_ns: 1000,
            count: 0,
            overflow: None,
            limit_ns: None,
            min_ns: None,
            max_ns: None,
            mean_ns: None,
        }
    }
}

/// A series from what a tool reported: the tool's count, min, mean and max; percentiles from
/// its histogram where it holds them.
pub(crate) fn series_of(
    name: &str,
    labels: &[(&str, String)],
    r: &Reported,
    warnings: &mut Vec<Warning>,
    what: &str,
) -> Series {
    let mut buckets: Vec<(u64, u64)> = r.buckets.iter().copied().filter(|b| b.1 > 0).collect();
    buckets.sort_unstable();
    let in_histogram: u64 = buckets.iter().fold(0u64, |a, b| a.saturating_add(b.1));
    let total = r
        .count
        .max(in_histogram.saturating_add(r.overflow.unwrap_or(0)));
    let overflow = total - in_histogram;
    let mut counters = BTreeMap::new();
    let stats = if in_histogram == 0 {
        if total > 0 {
            warnings.push(Warning::new(
                "imported_without_histogram",
                format!("{what}: the source has min, average and max only (no histogram): median and percentiles are absent"),
            ));
        }
        rtgauge_stats::Summary {
            count: total,
            min_ns: r.min_ns,
            max_ns: r.max_ns,
            mean_ns: r.mean_ns,
            ..Default::default()
        }
    } else {
        // A bucket stands for its upper edge at the tool's resolution (a 1-unit bucket for
        // its own value), never outside the extremes the tool measured.
        let width = r.bucket_ns.max(r.unit_ns);
        let value = |lower: u64| {
            let mut v = lower.saturating_add(width).saturating_sub(r.unit_ns);
            if let Some(max) = r.max_ns {
                v = v.min(max);
            }
            if let Some(min) = r.min_ns {
                v = v.max(min);
            }
            v
        };
        let mut values: Vec<(u64, u64)> = Vec::with_capacity(buckets.len());
        for &(lower, count) in &buckets {
            let v = value(lower);
            match values.last_mut() {
                Some(last) if last.0 == v => last.1 = last.1.saturating_add(count),
                _ => values.push((v, count)),
            }
        }
        // The value at rank ⌈q·total⌉, when the histogram holds that rank.
        let quantile = |q: f64| -> Option<u64> {
            let rank = ((q * total as f64).ceil() as u64).max(1);
            let mut seen = 0u64;
            for &(v, c) in &values {
                seen = seen.saturating_add(c);
                if seen >= rank {
                    return Some(v);
                }
            }
            None
        };
        let supported = |q: f64| {
            if percentile_supported(q, total) {
                quantile(q)
            } else {
                None
            }
        };
        // Every sample is in the histogram at the tool's resolution: mean and deviation
        // can be computed from it where the tool gave none.
        // A maximum beyond the histogram with no overflow count stated (older cyclictest):
        // samples are missing from it, how many the file does not say.
        let missing = r.overflow.is_none()
            && overflow == 0
            && matches!((r.max_ns, r.limit_ns), (Some(max), Some(limit)) if max >= limit);
        if missing {
            warnings.push(Warning::new(
                "imported_histogram_incomplete",
                format!("{what}: the maximum lies beyond the histogram and the file does not say how many samples do: count and percentiles cover the histogram only"),
            ));
        }
        let exact = overflow == 0 && width == r.unit_ns && !missing;
        let n = in_histogram as f64;
        let hist_mean = values
            .iter()
            .map(|&(v, c)| v as f64 * c as f64)
            .sum::<f64>()
            / n;
        let stddev = (exact && in_histogram > 1).then(|| {
            let ss: f64 = values
                .iter()
                .map(|&(v, c)| c as f64 * (v as f64 - hist_mean).powi(2))
                .sum();
            (ss / (n - 1.0)).sqrt()
        });
        if overflow > 0 {
            let limit = r
                .limit_ns
                .map(|l| format!("{} µs", l as f64 / 1000.0))
                .unwrap_or_else(|| "its range".into());
            warnings.push(Warning::new(
                "imported_histogram_overflow",
                format!("{what}: {overflow} of {total} samples lie beyond the histogram ({limit}); percentiles there are only known to be at least {limit}, count, mean and max are the source's"),
            ));
        }
        if overflow > 0 || r.limit_ns.is_some() {
            counters.insert("beyond_histogram".to_string(), overflow);
            if let Some(limit) = r.limit_ns {
                counters.insert("histogram_limit_ns".to_string(), limit);
            }
        }
        let (p25, p75) = (quantile(0.25), quantile(0.75));
        // The stored histogram holds every sample, as a measured one does: the overflow at
        // the limit, the least it can be (the percentiles above say they are unknown).
        // Each bucket is stored at its lower edge (the lowest value it holds), as a
        // measured histogram is, inside the source's extremes.
        let mut histogram: Vec<(u64, u64)> = Vec::with_capacity(buckets.len());
        for &(lower, count) in &buckets {
            let mut v = lower;
            if let Some(min) = r.min_ns {
                v = v.max(min);
            }
            if let Some(max) = r.max_ns {
                v = v.min(max);
            }
            match histogram.last_mut() {
                Some(last) if last.0 == v => last.1 = last.1.saturating_add(count),
                _ => histogram.push((v, count)),
            }
        }
        if overflow > 0 {
            let at = r
                .limit_ns
                .or(r.max_ns)
                .unwrap_or_else(|| values.last().map_or(0, |v| v.0));
            let at = r.max_ns.map_or(at, |m| at.min(m));
            match histogram.iter_mut().find(|b| b.0 == at) {
                Some(b) => b.1 = b.1.saturating_add(overflow),
                None => histogram.push((at, overflow)),
            }
            histogram.sort_unstable();
        }
        rtgauge_stats::Summary {
            count: total,
            min_ns: r.min_ns.or(values.first().map(|v| v.0)),
            max_ns: r.max_ns.or_else(|| {
                (overflow == 0)
                    .then(|| values.last().map(|v| v.0))
                    .flatten()
            }),
            max_at_ns: 0,
            mean_ns: r
                .mean_ns
                .or_else(|| exact.then(|| hist_mean.round() as u64)),
            stddev_ns: stddev.map(|s| s.round() as u64),
            sem_ns: stddev.map(|s| (s / n.sqrt()).round() as u64),
            median_ns: quantile(0.5),
            p25_ns: p25,
            p75_ns: p75,
            iqr_ns: p25.zip(p75).map(|(a, b)| b.saturating_sub(a)),
            percentiles: Percentiles {
                p90_ns: supported(0.90),
                p99_ns: supported(0.99),
                p99_9_ns: supported(0.999),
                p99_99_ns: supported(0.9999),
                p99_999_ns: supported(0.99999),
            },
            histogram: SparseHistogram {
                significant_digits: rtgauge_stats::HISTOGRAM_SIGNIFICANT_DIGITS,
                buckets: histogram,
            },
            // The source keeps no time: there are no interval maxima, nor blocks.
            intervals: Default::default(),
            blocks: None,
        }
    };
    let mut series = Series::new(name, stats);
    series.counters = counters;
    for (k, v) in labels {
        series = series.label(k, v);
    }
    series
}

/// What a result document built from another tool's output says; `None` is "the file does
/// not say".
#[derive(Debug, Clone, Default)]
pub(crate) struct Shell {
    pub tool: String,
    pub version: String,
    pub command_line: Vec<String>,
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    pub machine: String,
    /// PREEMPT_RT as the file states it (rt-tests' `sysinfo.realtime`).
    pub preempt_rt: Option<bool>,
    pub started_unix_ns: Option<u64>,
    pub finished_unix_ns: Option<u64>,
    /// How long the tool measured, when the file says.
    pub duration_ns: Option<u64>,
    /// other, fifo, rr or deadline.
    pub policy: Option<String>,
    pub priority: Option<i32>,
    pub memory_locked: Option<bool>,
    pub pinned: Option<bool>,
    pub params: BTreeMap<String, String>,
    /// What the file says beside its figures (rtla's auto-analysis).
    pub notes: Vec<String>,
    /// What the file lacks that changes how its figures read (no distribution, a line cut
    /// off): said with where the result came from, wherever it is shown.
    pub lacks: Vec<String>,
}

/// The preemption model a `uname -v` string names, or `unknown`.
fn preemption_of(version: &str, rt: Option<bool>) -> String {
    if rt == Some(true) || version.contains("PREEMPT_RT") {
        "rt"
    } else if version.contains("PREEMPT_DYNAMIC") {
        "dynamic"
    } else if version.contains("PREEMPT_LAZY") {
        "lazy"
    } else if version.split_whitespace().any(|w| w == "PREEMPT") {
        "full"
    } else {
        "unknown"
    }
    .to_string()
}

/// One probe run in a result document of its own.
pub(crate) fn document(
    path: &Path,
    shell: Shell,
    probe: &str,
    series: Vec<Series>,
    mut warnings: Vec<Warning>,
) -> RunResult {
    let policy = shell.policy.clone().or_else(|| match shell.priority {
        Some(p) if p > 0 => Some("fifo".to_string()),
        Some(_) => Some("other".to_string()),
        None => None,
    });
    let mode = match policy.as_deref() {
        Some("fifo" | "rr") => "rt",
        Some("deadline") => "deadline",
        Some(_) => "normal",
        None => "unknown",
    };
    let mut cpus: Vec<usize> = series
        .iter()
        .filter_map(|s| s.labels.get("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let version = if shell.version.is_empty() {
        String::new()
    } else {
        format!(" {}", shell.version)
    };
    let mut origin = format!(
        "imported from {}{version} output ({file}): the machine description holds only what the file recorded",
        shell.tool
    );
    for lack in &shell.lacks {
        origin.push_str("; ");
        origin.push_str(lack);
    }
    warnings.insert(0, Warning::new("imported", origin));
    let mut unknown = Vec::new();
    if shell.started_unix_ns.is_none() {
        unknown.push("the date");
    }
    if shell.duration_ns.is_none() && shell.finished_unix_ns.is_none() {
        unknown.push("the duration");
    }
    if policy.is_none() {
        unknown.push("the scheduling policy");
    }
    if shell.priority.is_none() {
        unknown.push("the priority");
    }
    if shell.memory_locked.is_none() {
        unknown.push("memory locking");
    }
    if shell.pinned.is_none() {
        unknown.push("CPU pinning");
    }
    if shell.preempt_rt.is_none() && shell.kernel_version.is_empty() {
        unknown.push("the kernel");
    }
    if !unknown.is_empty() {
        warnings.insert(
            1,
            Warning::new(
                "imported_unknown",
                format!("the file does not say {}", unknown.join(", ")),
            ),
        );
    }
    for note in &shell.notes {
        warnings.push(Warning::new("imported_note", note.clone()));
    }
    let fingerprint = rtgauge_result::Fingerprint {
        hostname: shell.hostname,
        kernel_release: shell.kernel_release,
        preemption_model: preemption_of(&shell.kernel_version, shell.preempt_rt),
        preempt_rt: shell.preempt_rt == Some(true),
        kernel_version: shell.kernel_version,
        architecture: shell.machine,
        ..Default::default()
    };
    let started = shell.started_unix_ns.unwrap_or(0);
    let measured = shell.duration_ns.unwrap_or_else(|| {
        match (shell.started_unix_ns, shell.finished_unix_ns) {
            (Some(s), Some(f)) => f.saturating_sub(s),
            _ => 0,
        }
    });
    let finished =
        shell
            .finished_unix_ns
            .unwrap_or(if started > 0 { started + measured } else { 0 });
    let obtained = Obtained {
        policy: policy.unwrap_or_else(|| "unknown".into()),
        priority: shell.priority.unwrap_or(0),
        memory_locked: shell.memory_locked.unwrap_or(false),
        pinned: shell.pinned.unwrap_or(false),
        ..Default::default()
    };
    RunResult {
        schema_version: rtgauge_result::SCHEMA_VERSION,
        tool: Tool {
            name: shell.tool,
            version: shell.version,
        },
        command_line: shell.command_line,
        started_unix_ns: started,
        finished_unix_ns: finished,
        status: RunStatus::Complete,
        fingerprint,
        checks: Vec::new(),
        config: RunConfig {
            suite: None,
            probes: vec![probe.to_string()],
            modes: vec![mode.to_string()],
            loads: vec!["none".to_string()],
            cpus,
            duration_ns: shell.duration_ns,
            loops: None,
            warmup_ns: 0,
            priority: shell.priority.unwrap_or(0),
            best_effort: false,
            params: shell.params.clone(),
        },
        calibration: Calibration::default(),
        runs: vec![ProbeRun {
            probe: probe.to_string(),
            variant: None,
            mode: mode.to_string(),
            load: "none".to_string(),
            status: ProbeStatus::Ok,
            obtained,
            params: shell.params,
            warmup_ns: 0,
            measured_ns: measured,
            series,
            spikes: Vec::new(),
            spikes_unexplained: 0,
        }],
        loads: Vec::new(),
        warnings,
        recordings: Vec::new(),
        tracing: None,
    }
}

/// Whether a result was read from another tool's output (`import`), not measured by rtgauge.
pub fn is_imported(result: &RunResult) -> bool {
    result.warnings.iter().any(|w| w.code == "imported")
}

/// A JSON histogram of buckets in `scale` ns (`{"12": 40, "13": 7}`, as rt-tests and
/// jitterdebugger write it) as (ns, count); `what` names the series in an error at `line`.
pub(crate) fn json_histogram(
    path: &Path,
    line: usize,
    what: &str,
    histogram: Option<&serde_json::Value>,
    scale: u64,
) -> Result<Vec<(u64, u64)>, ImportError> {
    let Some(h) = histogram.and_then(serde_json::Value::as_object) else {
        return Ok(Vec::new());
    };
    h.iter()
        .map(|(us, count)| match (us.parse::<u64>(), count.as_u64()) {
            (Ok(us), Some(count)) if us.checked_mul(scale).is_some() => Ok((us * scale, count)),
            _ => Err(malformed(
                path,
                line,
                format!(
                    "{what}: histogram entry \"{us}\" is not a whole number of µs with a count"
                ),
            )),
        })
        .collect()
}

/// `text` without terminal escape sequences (`ESC [ 3 A`).
pub(crate) fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        if chars.clone().next() == Some('[') {
            chars.next();
            for e in chars.by_ref() {
                if e.is_ascii_alphabetic() {
                    break;
                }
            }
        }
    }
    out
}

/// `12.5` in units of `scale` ns → ns, refusing what is not a non-negative number.
pub(crate) fn to_ns(value: f64, scale: u64) -> Option<u64> {
    (value.is_finite() && value >= 0.0).then(|| (value * scale as f64).round() as u64)
}

/// Unix nanoseconds of an RFC 2822 date (`Tue, 24 Nov 2026 14:59:48 +0000`, as rt-tests
/// writes it).
pub(crate) fn rfc2822_ns(text: &str) -> Option<u64> {
    let t = chrono::DateTime::parse_from_rfc2822(text.trim()).ok()?;
    u64::try_from(t.timestamp_nanos_opt()?).ok()
}

/// rtla's `D HH:MM:SS` duration in ns.
pub(crate) fn dhms_ns(text: &str) -> Option<u64> {
    let mut parts = text.split_whitespace();
    let (days, hms) = match (parts.next()?, parts.next()) {
        (d, Some(hms)) => (d.parse::<u64>().ok()?, hms),
        (hms, None) => (0, hms),
    };
    let f: Vec<u64> = hms
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = f[..] else { return None };
    days.checked_mul(24)?
        .checked_add(h)?
        .checked_mul(60)?
        .checked_add(m)?
        .checked_mul(60)?
        .checked_add(s)?
        .checked_mul(1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_format_from_its_content() {
        assert_eq!(detect("{\"schema_version\": 1}"), Some(Source::Rtgauge));
        assert_eq!(detect("{\"thread\": {}}"), Some(Source::RtTests));
        assert_eq!(
            detect("{\"version\": 1, \"cpu\": {}}"),
            Some(Source::Jitterdebugger)
        );
        assert_eq!(detect("# RTLA timerlat histogram\n"), Some(Source::Rtla));
        assert_eq!(
            detect("# Histogram\n000000 000000\n"),
            Some(Source::CyclictestText)
        );
        assert_eq!(
            detect("0;1551275469.580364690;19\n"),
            Some(Source::JitterdebuggerSamples)
        );
        assert_eq!(detect("hello"), None);
    }

    #[test]
    fn detects_pasted_console_outputs() {
        let status =
            "T: 0 (104507) P:95 I:1000 C:  69385 Min:      4 Act:   10 Avg:    8 Max:      34\n";
        assert_eq!(detect(status), Some(Source::CyclictestStatus));
        let verbose = "Thread 0 Interval: 1000\n       0:       0:      64\n";
        assert_eq!(detect(verbose), Some(Source::CyclictestVerbose));
        assert_eq!(detect("0:0:64\n0:1:66\n"), Some(Source::CyclictestVerbose));
        // A lone time of day is not a sample.
        assert_eq!(detect("00:10:01\n"), None);
        let oslat1 = "    CPU Freq:\t 2493 (Mhz)\n    001 (us):\t 12\n";
        assert_eq!(detect(oslat1), Some(Source::OslatText));
    }

    #[test]
    fn text_quoted_from_the_file_is_cut_in_messages() {
        let long = "7".repeat(10_000);
        let e = malformed(Path::new("f.txt"), 3, format!("`{long}` is not a number"));
        let text = e.to_string();
        assert!(text.len() < 120, "{text}");
        assert!(text.ends_with("…` is not a number"), "{text}");
        assert_eq!(clip_quoted("`ab` and `cd`"), "`ab` and `cd`");
    }

    #[test]
    fn rt_tests_dates_read_as_utc() {
        assert_eq!(
            rfc2822_ns("Tue, 24 Nov 2026 14:59:48 +0000"),
            Some(1_795_532_388_000_000_000)
        );
        assert_eq!(rfc2822_ns("yesterday"), None);
        assert_eq!(dhms_ns("0 00:10:00"), Some(600_000_000_000));
        assert_eq!(dhms_ns("1 01:00:01"), Some(90_001_000_000_000));
    }

    #[test]
    fn a_series_without_histogram_has_no_invented_median() {
        let mut w = Vec::new();
        let r = Reported {
            count: 10,
            min_ns: Some(1000),
            max_ns: Some(9000),
            mean_ns: Some(3000),
            ..Default::default()
        };
        let s = series_of("latency", &[("cpu", "0".into())], &r, &mut w, "cpu 0");
        assert_eq!(s.stats.median_ns, None);
        assert_eq!(s.stats.percentiles.p99_ns, None);
        assert_eq!(s.stats.stddev_ns, None);
        assert_eq!(s.stats.max_ns, Some(9000));
        assert_eq!(w[0].code, "imported_without_histogram");
    }

    #[test]
    fn overflow_keeps_the_sources_mean_and_leaves_high_percentiles_unknown() {
        let mut w = Vec::new();
        // 90 samples at 5 µs, 10 beyond a 20 µs histogram, the maximum 130 µs.
        let r = Reported {
            buckets: vec![(5000, 90)],
            count: 100,
            limit_ns: Some(20_000),
            min_ns: Some(5000),
            max_ns: Some(130_000),
            mean_ns: Some(13_460),
            ..Default::default()
        };
        let s = series_of("latency", &[], &r, &mut w, "cpu 0");
        assert_eq!(s.stats.count, 100);
        assert_eq!(s.stats.mean_ns, Some(13_460));
        assert_eq!(s.stats.max_ns, Some(130_000));
        assert_eq!(s.stats.median_ns, Some(5000));
        assert_eq!(s.stats.percentiles.p90_ns, Some(5000));
        assert_eq!(s.stats.percentiles.p99_ns, None);
        assert_eq!(s.stats.stddev_ns, None);
        assert_eq!(s.counters["beyond_histogram"], 10);
        assert_eq!(s.counters["histogram_limit_ns"], 20_000);
        assert_eq!(w[0].code, "imported_histogram_overflow");
    }

    #[test]
    fn wide_buckets_stay_inside_the_sources_extremes() {
        let mut w = Vec::new();
        // rtla -b 10: bucket 0 holds 0–9 µs; the source says min 3, max 14.
        let r = Reported {
            buckets: vec![(0, 50), (10_000, 50)],
            bucket_ns: 10_000,
            count: 100,
            min_ns: Some(3000),
            max_ns: Some(14_000),
            mean_ns: Some(8000),
            ..Default::default()
        };
        let s = series_of("thread", &[], &r, &mut w, "cpu 0");
        assert_eq!(s.stats.min_ns, Some(3000));
        assert_eq!(s.stats.mean_ns, Some(8000));
        assert_eq!(s.stats.median_ns, Some(9000));
        assert_eq!(s.stats.percentiles.p99_ns, Some(14_000));
        assert_eq!(s.stats.stddev_ns, None, "10 µs buckets give no deviation");
    }
}
