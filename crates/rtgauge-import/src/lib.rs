//! Results of other tools as rtgauge result documents, so `report`, `compare`, `check` and
//! the run history treat them like measured runs.
//!
//! What a source cannot give stays absent, never invented: a cyclictest run without `-h`
//! has min, average and maximum only (no median, no percentiles, no histogram), and the
//! import says so in the document's warnings. Histograms of 1 µs buckets are recorded at the
//! bucket's value, the resolution the tool measured with. Samples beyond a tool's histogram
//! range (its overflow) are counted at the reported maximum, an upper bound, and said so.
//!
//! Mapping: cyclictest and jitterdebugger measure what rtgauge's `cyclic` probe does
//! (wake-up latency of a periodic thread), so they become `cyclic` / `latency` rows per CPU
//! and pair with rtgauge runs in `compare`; rtla timerlat becomes a `timerlat` probe with
//! `irq`, `thread` and `user` latency rows per CPU.

mod cyclictest;
mod jitterdebugger;
mod timerlat;

use rtgauge_result::{
    Calibration, Obtained, ProbeRun, ProbeStatus, RunConfig, RunResult, RunStatus, Series, Tool,
    Warning,
};
use rtgauge_stats::Recorder;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cyclictest,
    Timerlat,
    Jitterdebugger,
    /// jitterdebugger's samples, as `jittersamples --format csv` writes them.
    JitterdebuggerSamples,
    Rtgauge,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Cyclictest => "cyclictest",
            Source::Timerlat => "rtla timerlat",
            Source::Jitterdebugger => "jitterdebugger",
            Source::JitterdebuggerSamples => "jitterdebugger samples",
            Source::Rtgauge => "rtgauge",
        }
    }
}

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
    #[error("{path}: not a format rtgauge imports (cyclictest --json, rtla timerlat hist, jitterdebugger JSON or samples CSV, rtgauge result); name it with --format")]
    Unknown { path: PathBuf },
    #[error(transparent)]
    Result(#[from] rtgauge_result::ResultError),
}

/// A file read into a result document.
#[derive(Debug, Clone)]
pub struct Imported {
    pub source: Source,
    pub result: RunResult,
}

/// Reads `path` as `source`, or as what its content looks like when `None`.
pub fn import_file(path: &Path, source: Option<Source>) -> Result<Imported, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let source = match source {
        Some(s) => s,
        None => detect(&text).ok_or_else(|| ImportError::Unknown {
            path: path.to_path_buf(),
        })?,
    };
    let result = match source {
        Source::Cyclictest => cyclictest::parse(path, &text)?,
        Source::Timerlat => timerlat::parse(path, &text)?,
        Source::Jitterdebugger => jitterdebugger::parse_results(path, &text)?,
        Source::JitterdebuggerSamples => jitterdebugger::parse_samples(path, &text)?,
        Source::Rtgauge => rtgauge_result::read_result(path)?,
    };
    Ok(Imported { source, result })
}

/// The format `text` looks like.
pub fn detect(text: &str) -> Option<Source> {
    let head = text.trim_start();
    if head.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        return if value.get("schema_version").is_some() {
            Some(Source::Rtgauge)
        } else if value.get("thread").is_some() {
            Some(Source::Cyclictest)
        } else if value.get("cpu").is_some() {
            Some(Source::Jitterdebugger)
        } else {
            None
        };
    }
    if head.starts_with("# RTLA timerlat") || head.lines().any(|l| l.starts_with("Index")) {
        return Some(Source::Timerlat);
    }
    let first = head.lines().next()?;
    let fields: Vec<&str> = first.split(';').collect();
    (fields.len() == 3 && fields.iter().all(|f| f.trim().parse::<f64>().is_ok()))
        .then_some(Source::JitterdebuggerSamples)
}

pub(crate) fn malformed(path: &Path, line: usize, message: impl Into<String>) -> ImportError {
    ImportError::Malformed {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// What a tool reported for one series.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reported {
    /// (value in ns, count) per histogram bucket; empty when the tool kept none.
    pub buckets: Vec<(u64, u64)>,
    /// Samples the tool counted in all (the histogram may hold fewer: its overflow).
    pub count: u64,
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub mean_ns: Option<u64>,
}

/// A series from what a tool reported. With a histogram every statistic is computed as for a
/// measured series; without one only count, min, max and mean are set.
pub(crate) fn series_of(
    name: &str,
    labels: &[(&str, String)],
    r: &Reported,
    warnings: &mut Vec<Warning>,
    what: &str,
) -> Series {
    let in_histogram: u64 = r.buckets.iter().map(|b| b.1).sum();
    let stats = if in_histogram == 0 {
        warnings.push(Warning::new(
            "imported_without_histogram",
            format!("{what}: the source has min, average and max only (no histogram): median and percentiles are absent"),
        ));
        rtgauge_stats::Summary {
            count: r.count,
            min_ns: r.min_ns,
            max_ns: r.max_ns,
            mean_ns: r.mean_ns,
            ..Default::default()
        }
    } else {
        // No time information: every sample falls in the first interval.
        let mut rec = Recorder::new(u64::MAX / 2);
        for &(value, count) in &r.buckets {
            for _ in 0..count {
                rec.record(value, 0);
            }
        }
        let overflow = r.count.saturating_sub(in_histogram);
        if overflow > 0 {
            let at = r.max_ns.unwrap_or(0);
            warnings.push(Warning::new(
                "imported_histogram_overflow",
                format!("{what}: {overflow} samples beyond the source's histogram range are counted at its maximum ({at} ns), an upper bound"),
            ));
            for _ in 0..overflow {
                rec.record(at, 0);
            }
        }
        let mut s = rec.summary();
        // The tool's own extremes are exact where its buckets are not.
        if let (Some(min), Some(max)) = (r.min_ns, r.max_ns) {
            s.min_ns = Some(min.min(s.min_ns.unwrap_or(min)));
            s.max_ns = Some(max.max(s.max_ns.unwrap_or(max)));
        }
        s
    };
    let mut series = Series::new(name, stats);
    for (k, v) in labels {
        series = series.label(k, v);
    }
    series
}

/// What a result document built from another tool's output needs to say.
pub(crate) struct Shell<'a> {
    pub tool: &'a str,
    pub version: String,
    pub command_line: Vec<String>,
    pub hostname: String,
    pub kernel_release: String,
    pub started_unix_ns: u64,
    pub finished_unix_ns: u64,
    pub priority: i32,
    pub params: BTreeMap<String, String>,
}

/// One probe run in a result document of its own.
pub(crate) fn document(
    shell: Shell<'_>,
    probe: &str,
    series: Vec<Series>,
    mut warnings: Vec<Warning>,
) -> RunResult {
    let mode = if shell.priority > 0 { "rt" } else { "normal" };
    let mut cpus: Vec<usize> = series
        .iter()
        .filter_map(|s| s.labels.get("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    warnings.insert(
        0,
        Warning::new(
            "imported",
            format!(
                "imported from {} {}: the machine description holds only what it recorded",
                shell.tool, shell.version
            ),
        ),
    );
    let fingerprint = rtgauge_result::Fingerprint {
        hostname: shell.hostname,
        kernel_release: shell.kernel_release,
        ..Default::default()
    };
    RunResult {
        schema_version: rtgauge_result::SCHEMA_VERSION,
        tool: Tool {
            name: shell.tool.to_string(),
            version: shell.version,
        },
        command_line: shell.command_line,
        started_unix_ns: shell.started_unix_ns,
        finished_unix_ns: shell.finished_unix_ns,
        status: RunStatus::Complete,
        fingerprint,
        checks: Vec::new(),
        config: RunConfig {
            suite: None,
            probes: vec![probe.to_string()],
            modes: vec![mode.to_string()],
            loads: vec!["none".to_string()],
            cpus,
            duration_ns: None,
            loops: None,
            warmup_ns: 0,
            priority: shell.priority,
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
            obtained: Obtained {
                policy: if shell.priority > 0 { "fifo" } else { "other" }.to_string(),
                priority: shell.priority,
                ..Default::default()
            },
            params: shell.params,
            warmup_ns: 0,
            measured_ns: shell.finished_unix_ns.saturating_sub(shell.started_unix_ns),
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

/// A JSON histogram of 1 µs buckets (`{"12": 40, "13": 7}`, as cyclictest and jitterdebugger
/// write it) as (ns, count); `what` names the series in an error at `line`.
pub(crate) fn us_histogram(
    path: &Path,
    line: usize,
    what: &str,
    histogram: Option<&serde_json::Value>,
) -> Result<Vec<(u64, u64)>, ImportError> {
    let Some(h) = histogram.and_then(serde_json::Value::as_object) else {
        return Ok(Vec::new());
    };
    h.iter()
        .map(|(us, count)| match (us.parse::<u64>(), count.as_u64()) {
            (Ok(us), Some(count)) => Ok((us * 1000, count)),
            _ => Err(malformed(
                path,
                line,
                format!("{what}: histogram entry \"{us}\" is not µs: count"),
            )),
        })
        .collect()
}

/// One thread as cyclictest and jitterdebugger both write it (`min`, `avg`, `max` in µs and a
/// µs histogram); `count` is its number of samples, which the two tools name differently.
pub(crate) fn us_thread_report(
    path: &Path,
    line: usize,
    index: &str,
    thread: &serde_json::Value,
    count: f64,
) -> Result<Reported, ImportError> {
    let field = |name: &str| {
        thread
            .get(name)
            .and_then(serde_json::Value::as_f64)
            .and_then(us_to_ns)
    };
    Ok(Reported {
        buckets: us_histogram(
            path,
            line,
            &format!("thread {index}"),
            thread.get("histogram"),
        )?,
        count: count as u64,
        min_ns: field("min"),
        max_ns: field("max"),
        mean_ns: field("avg"),
    })
}

/// `12.5` µs → ns, refusing what is not a non-negative number.
pub(crate) fn us_to_ns(value: f64) -> Option<u64> {
    (value.is_finite() && value >= 0.0).then(|| (value * 1000.0).round() as u64)
}

/// Unix nanoseconds of an RFC 2822 date (`Tue, 24 Nov 2026 14:59:48 +0000`, as cyclictest
/// writes it).
pub(crate) fn rfc2822_ns(text: &str) -> Option<u64> {
    let t = chrono::DateTime::parse_from_rfc2822(text.trim()).ok()?;
    u64::try_from(t.timestamp_nanos_opt()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_format_from_its_content() {
        assert_eq!(detect("{\"schema_version\": 1}"), Some(Source::Rtgauge));
        assert_eq!(detect("{\"thread\": {}}"), Some(Source::Cyclictest));
        assert_eq!(
            detect("{\"version\": 1, \"cpu\": {}}"),
            Some(Source::Jitterdebugger)
        );
        assert_eq!(
            detect("# RTLA timerlat histogram\n"),
            Some(Source::Timerlat)
        );
        assert_eq!(
            detect("0;1551275469.580364690;19\n"),
            Some(Source::JitterdebuggerSamples)
        );
        assert_eq!(detect("hello"), None);
    }

    #[test]
    fn cyclictest_dates_read_as_utc() {
        assert_eq!(
            rfc2822_ns("Tue, 24 Nov 2026 14:59:48 +0000"),
            Some(1_795_532_388_000_000_000)
        );
        assert_eq!(rfc2822_ns("yesterday"), None);
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
        assert_eq!(s.stats.max_ns, Some(9000));
        assert_eq!(w[0].code, "imported_without_histogram");
    }
}
