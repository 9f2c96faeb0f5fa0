//! `rtgauge check`: limits from a spec file (TOML) checked against a result, for CI gates.
//!
//! ```toml
//! [[limit]]
//! probe = "cyclic"     # probe (or probe@variant), mode, load, series, labels: each optional, absent = any
//! mode = "rt"
//! load = "net"
//! series = "latency"
//! labels = { cpu = "1" }
//! p99_99 = "50us"      # min, max, mean, median, any percentile p<N>: a duration with a unit
//! max = "100us"
//! pwcet_1h = "200us"   # the predicted 1-hour maximum (extreme-value estimate, 95 %)
//! overruns = 0         # a count
//! ```
//!
//! Times are per operation (sample ÷ batch), as in the tables. A limit is inclusive: the value
//! passes when it is at most the limit. A percentile the sample count cannot support fails with
//! "not enough samples": a gate that cannot be evaluated must not pass silently. For the same
//! reason a limit that matches no series fails, and so does a limit naming a probe whose run
//! was skipped or failed. A bound on a counter the series does not keep (overruns of a `period`
//! series) is not applicable and passes.

use crate::dist::Dist;
use crate::format::{csv_field, per_op};
use crate::units::{format_duration_ns, parse_duration_ns};
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, Series};
use rtgauge_stats::percentile_supported;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a spec line may say; part of every key error.
const ACCEPTED_KEYS: &str = "probe, mode, load, series, labels, name, cause (selectors, optional); \
     min, max, mean, median, p<N> such as p99, p99_9 or \"p99.99\", pwcet_1h (the predicted 1-hour maximum) \
     (a duration with a unit, e.g. \"50us\"); \
     overruns (a count, e.g. 0); for noise: noise_share (a share of the CPU, e.g. \"0.5%\"), \
     events_per_s_above_<duration> (stalls per second longer than it, e.g. events_per_s_above_10us = 2)";

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read spec file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// A parsed spec file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spec {
    pub path: PathBuf,
    pub limits: Vec<Limit>,
}

/// One `[[limit]]` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    /// 1-based position in the file.
    pub index: usize,
    /// Line of its `[[limit]]` header.
    pub line: usize,
    pub name: Option<String>,
    pub probe: Option<String>,
    pub mode: Option<String>,
    pub load: Option<String>,
    pub series: Option<String>,
    /// Labels the series must carry (a subset match).
    pub labels: BTreeMap<String, String>,
    /// A cause of explained spikes (`run --trace`): a kind (`gap`, `irq`, `softirq`,
    /// `thread`, …) or a name (`softirq NET_RX`, `kworker/0:1`). `max` bounds the longest
    /// time it held the CPU in one spike.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    pub bounds: Vec<Bound>,
}

/// One bound: `p99_99 = "50us"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    /// The key as written.
    pub key: String,
    pub stat: Stat,
    /// The limit in ns (times) or as a count (overruns).
    pub limit: u64,
    /// The limit as written (`50us`).
    pub written: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Stat {
    Min,
    Max,
    Mean,
    Median,
    /// A percentile: `q` is the quantile (0.9999 for p99.99), `label` e.g. "p99.99".
    Percentile {
        q: f64,
        label: String,
    },
    Overruns,
    /// The predicted maximum of an hour (the series' extreme-value estimate, 95 %).
    PredictedMaxHour,
    /// The share of the CPU lost to stalls (`noise` probe); the limit in parts per million.
    NoiseShare,
    /// Stalls per second longer than `above_ns` (`noise` probe); the limit in thousandths.
    EventsPerSecond {
        above_ns: u64,
    },
}

/// The `noise_share` limit as written (`0.5%`), in parts per million.
fn parse_share_ppm(text: &str) -> Option<u64> {
    let pct: f64 = text.strip_suffix('%')?.trim().parse().ok()?;
    (0.0..=100.0)
        .contains(&pct)
        .then(|| (pct * 10_000.0).round() as u64)
}

impl Stat {
    pub fn label(&self) -> String {
        match self {
            Stat::Min => "min".into(),
            Stat::Max => "max".into(),
            Stat::Mean => "mean".into(),
            Stat::Median => "median".into(),
            Stat::Percentile { label, .. } => label.clone(),
            Stat::Overruns => "overruns".into(),
            Stat::PredictedMaxHour => "predicted 1-h max".into(),
            Stat::NoiseShare => "noise share".into(),
            Stat::EventsPerSecond { above_ns } => {
                format!("stalls/s above {}", format_duration_ns(*above_ns))
            }
        }
    }

    fn is_time(&self) -> bool {
        !matches!(
            self,
            Stat::Overruns | Stat::NoiseShare | Stat::EventsPerSecond { .. }
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default)]
    limit: Vec<toml::Spanned<BTreeMap<String, toml::Spanned<toml::Value>>>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses `p99`, `p99_9`, `p99.99`, `p50`: the quantile and the canonical label.
pub fn parse_percentile_key(key: &str) -> Option<(f64, String)> {
    let digits = key.strip_prefix('p')?;
    let normalised = digits.replacen('_', ".", 1);
    let valid = !normalised.is_empty()
        && normalised.chars().all(|c| c.is_ascii_digit() || c == '.')
        && normalised.matches('.').count() <= 1
        && !normalised.starts_with('.')
        && !normalised.ends_with('.');
    if !valid {
        return None;
    }
    let percent: f64 = normalised.parse().ok()?;
    if !(percent > 0.0 && percent < 100.0) {
        return None;
    }
    Some((percent / 100.0, format!("p{normalised}")))
}

/// `p101`, `p100`, `p0`: written as a percentile, but not one.
fn percentile_out_of_range(key: &str) -> bool {
    key.strip_prefix('p')
        .and_then(|d| d.replacen('_', ".", 1).parse::<f64>().ok())
        .is_some_and(|percent| !(percent > 0.0 && percent < 100.0))
}

impl Spec {
    /// Reads and validates a spec file.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Spec::parse(&text, path)
    }

    /// Validates spec text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Spec, SpecError> {
        let invalid = |line: usize, message: String| SpecError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        };
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            let mut message = e.message().trim().replace('\n', " ");
            if message.contains("unknown field") {
                message.push_str("; a spec holds only [[limit]] tables");
            }
            invalid(
                line,
                format!("{message} (spec files are TOML: [[limit]] tables of {ACCEPTED_KEYS})"),
            )
        })?;
        if raw.limit.is_empty() {
            return Err(invalid(
                1,
                "no [[limit]] table; write e.g. [[limit]] probe = \"cyclic\" series = \"latency\" max = \"100us\"".into(),
            ));
        }
        let mut limits = Vec::new();
        for (i, table) in raw.limit.iter().enumerate() {
            // The header line: the last `[[` before the table's first value.
            let first = table
                .get_ref()
                .values()
                .map(|v| v.span().start)
                .min()
                .unwrap_or(table.span().start);
            let header = text[..first.min(text.len())].rfind("[[").unwrap_or(first);
            let mut limit = Limit {
                index: i + 1,
                line: line_of(text, header),
                name: None,
                probe: None,
                mode: None,
                load: None,
                series: None,
                labels: BTreeMap::new(),
                cause: None,
                bounds: Vec::new(),
            };
            let mut entries: Vec<(&String, &toml::Spanned<toml::Value>)> =
                table.get_ref().iter().collect();
            entries.sort_by_key(|(_, v)| v.span().start);
            for (key, value) in entries {
                let line = line_of(text, value.span().start);
                let as_string = || -> Result<String, SpecError> {
                    match value.get_ref() {
                        toml::Value::String(s) => Ok(s.clone()),
                        other => Err(invalid(
                            line,
                            format!(
                                "`{key}` must be a string, e.g. {key} = \"{}\" (found {})",
                                example(key),
                                quote_value(other)
                            ),
                        )),
                    }
                };
                match key.as_str() {
                    "name" => limit.name = Some(as_string()?),
                    "probe" => limit.probe = Some(as_string()?),
                    "mode" => limit.mode = Some(as_string()?),
                    "load" => limit.load = Some(as_string()?),
                    "series" => limit.series = Some(as_string()?),
                    "cause" => limit.cause = Some(as_string()?),
                    "labels" => {
                        let toml::Value::Table(t) = value.get_ref() else {
                            return Err(invalid(
                                line,
                                "`labels` must be an inline table, e.g. labels = { cpu = \"1\" }"
                                    .into(),
                            ));
                        };
                        for (k, v) in t {
                            let v = match v {
                                toml::Value::String(s) => s.clone(),
                                toml::Value::Integer(n) => n.to_string(),
                                other => {
                                    return Err(invalid(
                                        line,
                                        format!("label `{k}` must be a string or integer, e.g. labels = {{ cpu = \"1\" }} (found {})", quote_value(other)),
                                    ))
                                }
                            };
                            limit.labels.insert(k.clone(), v);
                        }
                    }
                    "overruns" => {
                        let n = match value.get_ref() {
                            toml::Value::Integer(n) if *n >= 0 => *n as u64,
                            other => {
                                return Err(invalid(
                                    line,
                                    format!("`overruns` must be a count (an integer ≥ 0), e.g. overruns = 0 (found {})", quote_value(other)),
                                ))
                            }
                        };
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat: Stat::Overruns,
                            limit: n,
                            written: n.to_string(),
                        });
                    }
                    "noise_share" => {
                        let written = value.get_ref().as_str().unwrap_or_default().to_string();
                        let ppm = parse_share_ppm(&written).ok_or_else(|| {
                            invalid(
                                line,
                                format!("`noise_share` must be a percentage as a string, e.g. noise_share = \"0.5%\" (found {})", value.get_ref()),
                            )
                        })?;
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat: Stat::NoiseShare,
                            limit: ppm,
                            written,
                        });
                    }
                    other if other.starts_with("events_per_s_above_") => {
                        let duration = &other["events_per_s_above_".len()..];
                        let above_ns = parse_duration_ns(duration).map_err(|e| {
                            invalid(
                                line,
                                format!("`{other}`: {e}; write e.g. events_per_s_above_10us = 2"),
                            )
                        })?;
                        let rate = match value.get_ref() {
                            toml::Value::Integer(n) if *n >= 0 => *n as f64,
                            toml::Value::Float(f) if *f >= 0.0 => *f,
                            other_value => {
                                return Err(invalid(
                                    line,
                                    format!("`{other}` must be a number of stalls per second, e.g. {other} = 2 (found {other_value})"),
                                ))
                            }
                        };
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat: Stat::EventsPerSecond { above_ns },
                            limit: (rate * 1000.0).round() as u64,
                            written: format!("{rate}/s"),
                        });
                    }
                    other => {
                        let stat = match other {
                            "min" => Stat::Min,
                            "max" => Stat::Max,
                            "mean" => Stat::Mean,
                            "median" => Stat::Median,
                            "pwcet_1h" => Stat::PredictedMaxHour,
                            _ => match parse_percentile_key(other) {
                                Some((q, label)) => Stat::Percentile { q, label },
                                None if percentile_out_of_range(other) => {
                                    return Err(invalid(
                                        line,
                                        format!("`{other}`: a percentile must be above 0 and below 100, e.g. p99 or p99_99"),
                                    ))
                                }
                                None => {
                                    return Err(invalid(
                                        line,
                                        format!("unknown key `{other}`; accepted: {ACCEPTED_KEYS}"),
                                    ))
                                }
                            },
                        };
                        let written = match value.get_ref() {
                            toml::Value::String(s) => s.clone(),
                            // TOML reads `p99.99 = …` as a dotted key: table p99, key 99.
                            toml::Value::Table(t) if matches!(stat, Stat::Percentile { .. }) => {
                                let rest = t.keys().next().cloned().unwrap_or_default();
                                return Err(invalid(
                                    line,
                                    format!("`{key}.{rest}` is read by TOML as a dotted key; write the percentile as {key}_{rest} = \"50us\" or \"{key}.{rest}\" = \"50us\""),
                                ));
                            }
                            other => {
                                return Err(invalid(
                                    line,
                                    format!("`{key}` must be a duration with a unit as a string, e.g. {key} = \"50us\" (found {}; units ns, us, ms, s)", quote_value(other)),
                                ))
                            }
                        };
                        let ns = parse_duration_ns(&written)
                            .map_err(|e| invalid(line, format!("`{key}`: {e}")))?;
                        limit.bounds.push(Bound {
                            key: key.clone(),
                            stat,
                            limit: ns,
                            written,
                        });
                    }
                }
            }
            if limit.bounds.is_empty() {
                return Err(invalid(
                    limit.line,
                    format!(
                        "limit {} states no bound; add e.g. max = \"100us\" or p99_99 = \"50us\"",
                        i + 1
                    ),
                ));
            }
            limits.push(limit);
        }
        Ok(Spec {
            path: path.to_path_buf(),
            limits,
        })
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "probe" => "cyclic",
        "mode" => "rt",
        "load" => "cpu",
        "series" => "latency",
        _ => "…",
    }
}

impl Limit {
    /// `probe=cyclic mode=rt series=latency` — what the limit selects.
    pub fn selector(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in [
            ("probe", &self.probe),
            ("mode", &self.mode),
            ("load", &self.load),
            ("series", &self.series),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k}={v}"));
            }
        }
        for (k, v) in &self.labels {
            parts.push(format!("{k}={v}"));
        }
        if parts.is_empty() {
            "every series".into()
        } else {
            parts.join(" ")
        }
    }

    /// `p99.99 ≤ 50us, max ≤ 100us`.
    pub fn bounds_text(&self) -> String {
        self.bounds
            .iter()
            .map(|b| format!("{} ≤ {}", b.stat.label(), b.written))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn selects_run(&self, run: &ProbeRun) -> bool {
        // `cyclic` selects every variant of the probe, `cyclic@100us` one.
        self.probe
            .as_ref()
            .is_none_or(|p| *p == run.probe || *p == run.title())
            && self.mode.as_ref().is_none_or(|m| *m == run.mode)
            && self.load.as_ref().is_none_or(|l| *l == run.load)
    }

    fn selects_series(&self, s: &Series) -> bool {
        self.series.as_ref().is_none_or(|n| *n == s.name)
            && self.labels.iter().all(|(k, v)| s.labels.get(k) == Some(v))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    NotApplicable,
    /// Against a baseline: worse beyond the margin as measured, but these runs cannot tell it
    /// from their own variation. Neither a pass nor a failure: `check --inconclusive` decides.
    Inconclusive,
}

/// One bound evaluated on one series.
#[derive(Debug, Clone, Serialize)]
pub struct BoundResult {
    pub stat: String,
    pub limit: String,
    /// The measured value in ns per operation (times) or as a count; absent when it could
    /// not be evaluated.
    pub value: Option<f64>,
    pub verdict: Verdict,
    pub message: String,
}

/// One limit applied to one series (a JUnit test case).
#[derive(Debug, Clone, Serialize)]
pub struct CheckCase {
    pub limit: usize,
    pub line: usize,
    pub name: Option<String>,
    pub probe: String,
    pub mode: String,
    pub load: String,
    /// The series (`latency cpu=0`), or what was wrong when there is none.
    pub series: String,
    pub bounds: Vec<BoundResult>,
    pub passed: bool,
    /// Why the case failed without evaluating bounds (no match, probe skipped).
    pub problem: Option<String>,
}

impl CheckCase {
    /// The one-line message of a failing case.
    pub fn failure_message(&self) -> Option<String> {
        if self.passed {
            return None;
        }
        if let Some(p) = &self.problem {
            return Some(p.clone());
        }
        Some(
            self.bounds
                .iter()
                .filter(|b| matches!(b.verdict, Verdict::Fail | Verdict::Inconclusive))
                .map(|b| b.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
        )
    }
}

/// The outcome of checking one result against one spec.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub spec: String,
    pub passed: bool,
    /// Why the result cannot vouch for every limit (interrupted, a probe that never ran or
    /// failed); empty for a complete result.
    pub incomplete: Vec<String>,
    /// Whether an incomplete result was judged on what it measured (`--allow-incomplete`)
    /// rather than failed.
    pub incomplete_allowed: bool,
    pub cases: Vec<CheckCase>,
}

impl CheckReport {
    /// Counts every case that could not be decided as failed (`check --inconclusive fail`).
    pub fn fail_inconclusive(&mut self) {
        for c in &mut self.cases {
            if c.bounds.iter().any(|b| b.verdict == Verdict::Inconclusive) {
                c.passed = false;
                self.passed = false;
            }
        }
    }

    /// Bounds that could not be decided (against a baseline), in cases that did not fail.
    pub fn inconclusive(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| c.passed)
            .flat_map(|c| &c.bounds)
            .filter(|b| b.verdict == Verdict::Inconclusive)
            .count()
    }

    /// Failed cases, plus one for an incomplete result that was not allowed.
    pub fn failures(&self) -> usize {
        self.cases.iter().filter(|c| !c.passed).count() + usize::from(self.incomplete_fails())
    }

    /// Cases, plus the completeness check when the result is incomplete.
    pub fn total(&self) -> usize {
        self.cases.len() + usize::from(!self.incomplete.is_empty())
    }

    fn incomplete_fails(&self) -> bool {
        !self.incomplete.is_empty() && !self.incomplete_allowed
    }

    /// The line that says why an incomplete result failed (or was judged anyway).
    pub fn incomplete_message(&self) -> Option<String> {
        if self.incomplete.is_empty() {
            return None;
        }
        let what = self.incomplete.join("; ");
        Some(if self.incomplete_allowed {
            format!("incomplete result judged on what it measured: {what}")
        } else {
            format!("incomplete result: {what}; a limit on what never ran cannot be checked (--allow-incomplete judges what was measured)")
        })
    }
}

/// Why a result does not hold everything its run was asked for: the run was interrupted or
/// failed, or a planned probe has no run at all (the run stopped before it).
pub fn incompleteness(result: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    match result.status {
        rtgauge_result::RunStatus::Complete => {}
        rtgauge_result::RunStatus::Interrupted => out.push("the run was interrupted".to_string()),
        rtgauge_result::RunStatus::Failed => out.push("the run failed".to_string()),
        rtgauge_result::RunStatus::Broken => {
            out.push("the run was stopped by --break at its first spike".to_string())
        }
    }
    let never_ran: Vec<&str> = result
        .config
        .probes
        .iter()
        .filter(|p| !result.runs.iter().any(|r| r.title() == **p))
        .map(String::as_str)
        .collect();
    if !never_ran.is_empty() {
        out.push(format!("never ran: {}", never_ran.join(", ")));
    }
    let failed: Vec<String> = result
        .runs
        .iter()
        .filter(|r| matches!(r.status, ProbeStatus::Failed { .. }))
        .map(|r| r.key().to_string())
        .collect();
    if !failed.is_empty() {
        out.push(format!("failed: {}", failed.join(", ")));
    }
    out
}

fn fmt_value(stat: &Stat, v: f64) -> String {
    if stat.is_time() {
        format_duration_ns(v.round() as u64)
    } else {
        format!("{v}")
    }
}

/// A bound on a cause of explained spikes: `max` is the longest time the cause held the CPU
/// in one spike (0 when it dominated none).
fn evaluate_cause(bound: &Bound, cause: &str, run: &ProbeRun) -> BoundResult {
    let label = bound.stat.label();
    let mut result = BoundResult {
        stat: label.clone(),
        limit: bound.written.clone(),
        value: None,
        verdict: Verdict::NotApplicable,
        message: format!("{label}: a cause takes only max (the longest it held the CPU)"),
    };
    if bound.stat != Stat::Max {
        return result;
    }
    let groups = rtgauge_result::spike::dominant_causes(&run.spikes);
    let matching: Vec<_> = groups
        .iter()
        .filter(|g| g.kind == cause || g.label == cause)
        .collect();
    let longest = matching.iter().map(|g| g.longest_ns).max().unwrap_or(0);
    let count: usize = matching.iter().map(|g| g.count).sum();
    result.value = Some(longest as f64);
    let shown = format_duration_ns(longest);
    if longest <= bound.limit {
        result.verdict = Verdict::Pass;
        result.message = format!("{cause}: {count} spikes, up to {shown} ≤ {}", bound.written);
    } else {
        result.verdict = Verdict::Fail;
        result.message = format!("{cause}: {count} spikes, up to {shown} > {}", bound.written);
    }
    result
}

/// A noise limit: the value in its own unit and as the limit is stored (ppm, thousandths).
fn noise_value(stat: &Stat, s: &Series) -> Option<Option<(f64, f64)>> {
    match stat {
        Stat::NoiseShare => Some(s.metrics.get("availability_pct").map(|a| {
            let pct = 100.0 - a;
            (pct, pct * 10_000.0)
        })),
        Stat::EventsPerSecond { above_ns } => Some(s.counters.get("polled_ns").map(|&polled| {
            let above: u64 = s
                .stats
                .histogram
                .buckets
                .iter()
                .filter(|(v, _)| v > above_ns)
                .map(|(_, n)| n)
                .sum();
            let per_s = above as f64 * 1e9 / polled.max(1) as f64;
            (per_s, per_s * 1000.0)
        })),
        _ => None,
    }
}

fn evaluate(bound: &Bound, s: &Series) -> BoundResult {
    if let Some(found) = noise_value(&bound.stat, s) {
        let label = bound.stat.label();
        let Some((value, scaled)) = found else {
            return BoundResult {
                stat: label,
                limit: bound.written.clone(),
                value: None,
                verdict: Verdict::NotApplicable,
                message: "this series is not a noise probe's".into(),
            };
        };
        let pass = scaled <= bound.limit as f64;
        let shown = match bound.stat {
            Stat::NoiseShare => format!("{value:.4}%"),
            _ => format!("{value:.2}/s"),
        };
        return BoundResult {
            stat: label.clone(),
            limit: bound.written.clone(),
            value: Some(value),
            verdict: if pass { Verdict::Pass } else { Verdict::Fail },
            message: if pass {
                format!("{label} {shown} ≤ {}", bound.written)
            } else {
                format!("{label} {shown} exceeds {}", bound.written)
            },
        };
    }
    let per_op = |ns: Option<u64>| per_op(s, ns);
    let label = bound.stat.label();
    let mut result = BoundResult {
        stat: label.clone(),
        limit: bound.written.clone(),
        value: None,
        verdict: Verdict::Fail,
        message: String::new(),
    };
    let st = &s.stats;
    let value = match &bound.stat {
        Stat::Overruns => match s.counters.get("overruns") {
            Some(&n) => Some(n as f64),
            None => {
                result.verdict = Verdict::NotApplicable;
                result.message = "this series does not count overruns".into();
                return result;
            }
        },
        _ if st.count == 0 => {
            result.message = format!("{label}: the series has no samples");
            return result;
        }
        Stat::NoiseShare | Stat::EventsPerSecond { .. } => None,
        Stat::Min => per_op(st.min_ns),
        Stat::Max => per_op(st.max_ns),
        Stat::Mean => per_op(st.mean_ns),
        Stat::Median => per_op(st.median_ns),
        Stat::PredictedMaxHour => match predicted_max_hour(s) {
            Ok(ns) => per_op(Some(ns)),
            Err(why) => {
                result.message = format!("{label}: {why}");
                return result;
            }
        },
        Stat::Percentile { q, .. } => {
            if !percentile_supported(*q, st.count) {
                let needed = (1.0 / (1.0 - q)).round() as u64;
                result.message = format!(
                    "{label}: not enough samples ({} recorded, {label} needs at least {needed}); measure longer",
                    st.count
                );
                return result;
            }
            // The stored percentile when the summary has it, so check and table agree.
            let stored = st
                .percentiles
                .entries()
                .iter()
                .chain(
                    [
                        ("p25", 0.25, st.p25_ns),
                        ("p50", 0.5, st.median_ns),
                        ("p75", 0.75, st.p75_ns),
                    ]
                    .iter(),
                )
                .find(|e| (e.1 - q).abs() < 1e-12)
                .and_then(|e| e.2);
            match stored {
                Some(v) => per_op(Some(v)),
                None => Dist::of(s).map(|d| d.quantile(*q)),
            }
        }
    };
    let Some(value) = value else {
        result.message = format!("{label}: not recorded in this result");
        return result;
    };
    result.value = Some(value);
    if value <= bound.limit as f64 {
        result.verdict = Verdict::Pass;
        result.message = format!(
            "{label} {} ≤ {}",
            fmt_value(&bound.stat, value),
            bound.written
        );
    } else {
        result.message = format!(
            "{label} {} exceeds {}",
            fmt_value(&bound.stat, value),
            bound.written
        );
    }
    result
}

/// The predicted 1-hour maximum of a series, or why there is none (then the bound fails: a
/// gate that cannot be evaluated must not pass).
fn predicted_max_hour(s: &Series) -> Result<u64, String> {
    let Some(wc) = &s.worst_case else {
        return Err("no extreme-value estimate in this result (it needs interval maxima; measure again with this rtgauge)".into());
    };
    match wc.estimate() {
        Some(e) if e.horizon_ns == rtgauge_stats::evt::HOUR_NS => Ok(e.predicted_max_ns),
        Some(_) => Err("the estimate predicts another horizon than one hour".into()),
        None => Err(format!("no estimate: {}", wc.refusal().unwrap_or_default())),
    }
}

/// Checks every limit of `spec` against `result`; an incomplete result fails.
pub fn check_result(result: &RunResult, spec: &Spec) -> CheckReport {
    check_result_allowing(result, spec, false)
}

/// Checks every limit of `spec` against `result`; `allow_incomplete` judges an interrupted
/// or partial result on what it measured instead of failing it.
pub fn check_result_allowing(
    result: &RunResult,
    spec: &Spec,
    allow_incomplete: bool,
) -> CheckReport {
    let mut cases = Vec::new();
    for limit in &spec.limits {
        let before = cases.len();
        let case = |run: &ProbeRun, series: String| CheckCase {
            limit: limit.index,
            line: limit.line,
            name: limit.name.clone(),
            probe: run.title(),
            mode: run.mode.clone(),
            load: run.load.clone(),
            series,
            bounds: Vec::new(),
            passed: false,
            problem: None,
        };
        for run in result.runs.iter().filter(|r| limit.selects_run(r)) {
            match &run.status {
                ProbeStatus::Ok => {}
                // A run that measured nothing fails a limit that names its probe; a limit
                // about "any probe" cannot tell whether it was meant and ignores it.
                ProbeStatus::Skipped { reason } if limit.probe.is_some() => {
                    let mut c = case(run, "–".into());
                    c.problem = Some(format!("probe run skipped: {reason}"));
                    cases.push(c);
                    continue;
                }
                ProbeStatus::Failed { error } if limit.probe.is_some() => {
                    let mut c = case(run, "–".into());
                    c.problem = Some(format!("probe run failed: {error}"));
                    cases.push(c);
                    continue;
                }
                _ => continue,
            }
            if let Some(cause) = &limit.cause {
                let mut c = case(run, format!("cause {cause}"));
                if run.spikes.is_empty() && !result.tracing.as_ref().is_some_and(|t| t.active) {
                    c.problem = Some(
                        "the run explained no spikes; measure with `rtgauge run --trace` (as root, with tracefs)"
                            .into(),
                    );
                } else {
                    c.bounds = limit
                        .bounds
                        .iter()
                        .map(|b| evaluate_cause(b, cause, run))
                        .collect();
                    c.passed = c.bounds.iter().all(|b| b.verdict != Verdict::Fail);
                }
                cases.push(c);
                continue;
            }
            for s in run.series.iter().filter(|s| limit.selects_series(s)) {
                let mut c = case(run, s.display_name());
                c.bounds = limit.bounds.iter().map(|b| evaluate(b, s)).collect();
                c.passed = c.bounds.iter().all(|b| b.verdict != Verdict::Fail);
                cases.push(c);
            }
        }
        if cases.len() == before {
            cases.push(CheckCase {
                limit: limit.index,
                line: limit.line,
                name: limit.name.clone(),
                probe: limit.probe.clone().unwrap_or_else(|| "*".into()),
                mode: limit.mode.clone().unwrap_or_else(|| "*".into()),
                load: limit.load.clone().unwrap_or_else(|| "*".into()),
                series: limit.series.clone().unwrap_or_else(|| "*".into()),
                bounds: Vec::new(),
                passed: false,
                problem: Some(format!(
                    "no series in the result matches {} (check the names against the result's tables)",
                    limit.selector()
                )),
            });
        }
    }
    let incomplete = incompleteness(result);
    CheckReport {
        spec: spec.path.display().to_string(),
        passed: cases.iter().all(|c| c.passed) && (incomplete.is_empty() || allow_incomplete),
        incomplete,
        incomplete_allowed: allow_incomplete,
        cases,
    }
}

/// Table style of the terminal and Markdown renderings.
pub use crate::compare::Style;

/// One statistic of a series per operation, by the names `--regress-stats` takes: min,
/// median, mean, max or a percentile label (p99, p99.9…).
fn named_stat(s: &Series, name: &str) -> Option<f64> {
    let st = &s.stats;
    let ns = match name {
        "min" => st.min_ns,
        "median" => st.median_ns,
        "mean" => st.mean_ns,
        "max" => st.max_ns,
        label => st.percentiles.entries().iter().find(|e| e.0 == label)?.2,
    };
    per_op(s, ns)
}

/// Whether `name` is a statistic [`check_against_baseline`] can judge.
pub fn is_regress_stat(name: &str) -> bool {
    matches!(name, "min" | "median" | "mean" | "max")
        || rtgauge_stats::Percentiles::default()
            .entries()
            .iter()
            .any(|e| e.0 == name)
}

/// The gate against a baseline run: one case per row of the comparison of `baseline` and
/// `candidate`, one bound per statistic in `stats` ([`baseline_bound`]): failed when the
/// block tests declare it worse than the baseline's × (1 + `regress`), inconclusive when it
/// moved past that as measured but the runs cannot tell it from their variation, passed
/// otherwise. `baseline_name` says which run it was.
pub fn check_against_baseline(
    baseline: &RunResult,
    candidate: &RunResult,
    baseline_name: &str,
    regress: f64,
    stats: &[String],
    allow_incomplete: bool,
) -> CheckReport {
    let spec = format!("baseline {baseline_name} (regress +{} %)", regress * 100.0);
    gate(
        std::slice::from_ref(baseline),
        std::slice::from_ref(candidate),
        baseline_name,
        regress,
        spec,
        allow_incomplete,
        |row, sa, sb| {
            // Documents without block histograms (older ones) keep the earlier rule: the
            // comparison must declare the row slower, or different with crossing distributions.
            let declared_slower = matches!(
                row.outcome,
                crate::compare::Outcome::Slower | crate::compare::Outcome::Differs
            );
            stats
                .iter()
                .map(|name| {
                    baseline_bound(&sa[0], &sb[0], name, regress, declared_slower, &row.verdict)
                })
                .collect()
        },
    )
}

/// The baseline gate over repeated runs: each run gives one value per statistic, and the
/// candidate's runs are tested against the baseline's moved by `regress` (Welch's test on
/// the logarithms, [`rtgauge_stats::runs::LogWelch`]), so the variation between runs is
/// measured rather than guessed from inside one run. With one run on each side this is
/// [`check_against_baseline`]. Rows pair as [`crate::compare`] pairs the first run of each
/// side.
pub fn check_against_repeated(
    baselines: &[RunResult],
    candidates: &[RunResult],
    baseline_name: &str,
    regress: f64,
    stats: &[String],
    allow_incomplete: bool,
) -> CheckReport {
    if let ([baseline], [candidate]) = (baselines, candidates) {
        return check_against_baseline(
            baseline,
            candidate,
            baseline_name,
            regress,
            stats,
            allow_incomplete,
        );
    }
    let spec = format!(
        "baseline {baseline_name}, {} vs {} runs (regress +{} %)",
        candidates.len(),
        baselines.len(),
        regress * 100.0
    );
    gate(
        baselines,
        candidates,
        baseline_name,
        regress,
        spec,
        allow_incomplete,
        |_, sa, sb| {
            stats
                .iter()
                .map(|name| repeated_bound(sa, sb, name, regress))
                .collect()
        },
    )
}

/// What both gates share: the rows of the comparison of the first run of each side, each
/// row's series from every run of each side, its bounds from `judge`, and the report.
fn gate(
    baselines: &[RunResult],
    candidates: &[RunResult],
    baseline_name: &str,
    regress: f64,
    spec: String,
    allow_incomplete: bool,
    judge: impl Fn(&crate::compare::CompareRow, &[Series], &[Series]) -> Vec<BoundResult>,
) -> CheckReport {
    let (Some(first_a), Some(first_b)) = (baselines.first(), candidates.first()) else {
        return CheckReport {
            spec,
            passed: false,
            incomplete: vec!["no runs to compare".into()],
            incomplete_allowed: false,
            cases: Vec::new(),
        };
    };
    let comparison = crate::compare::compare(
        &[first_a.clone(), first_b.clone()],
        &[baseline_name.to_string(), "this result".to_string()],
    );
    let mut cases = Vec::new();
    for row in &comparison.rows {
        let (mode_a, mode_b) = crate::compare::sides(&row.mode);
        let (load_a, load_b) = crate::compare::sides(&row.load);
        let side = |runs: &[RunResult], mode: &str, load: &str| -> Vec<Series> {
            runs.iter()
                .filter_map(|r| row_series(r, row, mode, load))
                .collect()
        };
        let (sa, sb) = (
            side(baselines, mode_a, load_a),
            side(candidates, mode_b, load_b),
        );
        if sa.is_empty() || sb.is_empty() {
            continue;
        }
        let bounds = judge(row, &sa, &sb);
        cases.push(CheckCase {
            limit: cases.len() + 1,
            line: 0,
            name: Some(format!("regress {}", limit_text(regress))),
            probe: row.probe.clone(),
            mode: row.mode.clone(),
            load: row.load.clone(),
            series: row.display_series(),
            passed: bounds.iter().all(|b| b.verdict != Verdict::Fail),
            bounds,
            problem: None,
        });
    }
    let incomplete: Vec<String> = match candidates {
        [one] => incompleteness(one),
        many => many
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                incompleteness(c)
                    .into_iter()
                    .map(move |why| format!("run {}: {why}", i + 1))
            })
            .collect(),
    };
    let passed = cases.iter().all(|c| c.passed) && (incomplete.is_empty() || allow_incomplete);
    CheckReport {
        spec,
        passed,
        incomplete,
        incomplete_allowed: allow_incomplete,
        cases,
    }
}

/// `+10 %`: the margin as the notes say it.
fn limit_text(regress: f64) -> String {
    format!("+{} %", regress * 100.0)
}

/// Statistic `name` of the candidate (`value`) judged against the baseline with the allowance
/// `limit_text`.
fn against_baseline(
    name: &str,
    limit_text: &str,
    value: Option<f64>,
    verdict: Verdict,
    message: String,
) -> BoundResult {
    BoundResult {
        stat: name.to_string(),
        limit: format!("{limit_text} against the baseline"),
        value,
        verdict,
        message,
    }
}

/// The series of `r` that a comparison row stands for, on the side run in `mode` under `load`.
fn row_series(
    r: &RunResult,
    row: &crate::compare::CompareRow,
    mode: &str,
    load: &str,
) -> Option<Series> {
    r.runs
        .iter()
        .filter(|p| p.title() == row.probe && p.mode == mode && p.load == load)
        .flat_map(|p| p.series.iter())
        .find(|s| s.name == row.series && s.labels == row.labels)
        .cloned()
}

/// One run's value of a statistic for the repeated gate, with the name it is shown under.
/// The maximum is the run's typical worst case per block (the median of its block maxima)
/// where the run kept blocks: one run's single largest spike says little about the next
/// run's, and the gate over single runs judges the maximum the same way.
fn per_run_value(s: &Series, name: &str) -> Option<(f64, String)> {
    if name == "max" {
        if let Some(b) = s.stats.blocks.as_ref().filter(|b| !b.is_empty()) {
            let maxima: Vec<f64> = b.max_ns.iter().flatten().map(|&v| v as f64).collect();
            let typical = crate::compare::median_of(&maxima)?;
            return Some((
                typical / s.batch.max(1) as f64,
                format!("max per {}", format_duration_ns(b.block_ns)),
            ));
        }
    }
    Some((named_stat(s, name)?, name.to_string()))
}

/// One statistic of the repeated gate: failed when the candidate's runs are declared worse
/// than the baseline's × (1 + `regress`), inconclusive when their middle value moved past
/// that but the runs vary too much to tell, passed otherwise.
fn repeated_bound(sa: &[Series], sb: &[Series], name: &str, regress: f64) -> BoundResult {
    use rtgauge_stats::runs::LogWelch;
    let limit_text = limit_text(regress);
    use rtgauge_stats::shift::ALPHA;
    let values = |side: &[Series]| -> (Vec<f64>, Option<String>) {
        let picked: Vec<(f64, String)> =
            side.iter().filter_map(|s| per_run_value(s, name)).collect();
        let label = picked.first().map(|p| p.1.clone());
        (picked.into_iter().map(|p| p.0).collect(), label)
    };
    let ((va, label_a), (vb, label_b)) = (values(sa), values(sb));
    // Both sides judged on one footing: the block figure only when both kept blocks.
    let label = match (label_a, label_b) {
        (Some(a), Some(b)) if a == b => a,
        _ => name.to_string(),
    };
    let (va, vb) = if label == name && name == "max" {
        let plain = |side: &[Series]| side.iter().filter_map(|s| named_stat(s, name)).collect();
        (plain(sa), plain(sb))
    } else {
        (va, vb)
    };
    // Geometric means: the figures the test compares, so the shown change agrees with it.
    let geometric = |v: &[f64]| {
        let logs: Vec<f64> = v.iter().filter(|x| **x > 0.0).map(|x| x.ln()).collect();
        (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    };
    let (a, b) = (geometric(&va), geometric(&vb));
    let shown = |v: Option<f64>| {
        v.map(|v| format_duration_ns(v.round() as u64))
            .unwrap_or_else(|| "–".into())
    };
    let runs = format!("{} vs {} runs", vb.len(), va.len());
    let change = format!("{label} {} → {} ({runs})", shown(a), shown(b));
    let test = LogWelch::of(&va, &vb);
    let (verdict, message) = match test {
        None if va.is_empty() || vb.is_empty() => (
            Verdict::NotApplicable,
            format!("{change}: not in both sides' runs"),
        ),
        None => (
            Verdict::Inconclusive,
            format!("{change}: one run on each side cannot show how runs vary; repeat both runs (`run --repeat 3`)"),
        ),
        Some(w) => {
            let spread = format!("runs vary ± {:.0} %", w.spread() * 100.0);
            // Past a doubling a factor reads better than a percentage (×7.3, not +630 %).
            let power = match w.detectable(regress, ALPHA) {
                d if d >= 1.0 => format!("could detect ≥ ×{:.1}", 1.0 + d),
                d => format!("could detect ≥ {}", crate::compare::percent(d)),
            };
            let p = w.p_worse_beyond(regress);
            if p < ALPHA {
                (
                    Verdict::Fail,
                    format!(
                        "{change}, {}: regressed beyond {limit_text} (p {}, {spread})",
                        crate::compare::percent(w.change()),
                        crate::compare::format_p(p)
                    ),
                )
            } else if w.change() > regress {
                let fix = w
                    .runs_to_decide(regress, ALPHA)
                    .map(|n| format!("about {n} runs per side would decide a change this large"))
                    .unwrap_or_else(|| "more runs per side".into());
                (
                    Verdict::Inconclusive,
                    format!(
                        "{change}, {}: worse beyond {limit_text} as measured, but within what these runs vary ({spread}; {power}); {fix}",
                        crate::compare::percent(w.change())
                    ),
                )
            } else {
                (
                    Verdict::Pass,
                    format!(
                        "{change}, {} ({spread}; {power})",
                        crate::compare::percent(w.change())
                    ),
                )
            }
        }
    };
    against_baseline(name, &limit_text, b, verdict, message)
}

/// One statistic of the baseline gate: failed when the test declares it worse than the
/// baseline by more than `regress`, inconclusive when it moved past that as measured but the
/// test cannot tell it from the baseline's own variation, passed otherwise; every message says
/// how large a change this pair of runs could have seen.
fn baseline_bound(
    sa: &Series,
    sb: &Series,
    name: &str,
    regress: f64,
    declared_slower: bool,
    row_verdict: &str,
) -> BoundResult {
    let limit_text = limit_text(regress);
    use crate::verdict::{duration_to_decide, label, test_stat};
    use rtgauge_stats::shift::Direction;
    let (a, b) = (named_stat(sa, name), named_stat(sb, name));
    let rel = a.zip(b).and_then(|(a, b)| (a > 0.0).then(|| (b - a) / a));
    let shown = |v: Option<f64>| {
        v.map(|v| format_duration_ns(v.round() as u64))
            .unwrap_or_else(|| "–".into())
    };
    let mut change = format!(
        "{name} {} → {}{}",
        shown(a),
        shown(b),
        rel.map(|r| format!(" ({})", crate::compare::percent(r)))
            .unwrap_or_default()
    );
    let test = test_stat(
        sa,
        sb,
        name,
        Direction::Worse,
        regress,
        rtgauge_stats::shift::ALPHA,
    );
    if let Some(t) = test.as_ref().filter(|t| label(name, t) != name) {
        if let Some(c) = t.change {
            let _ = write!(
                change,
                ", {} {}",
                label(name, t),
                crate::compare::percent(c)
            );
        }
    }
    let power = |t: &rtgauge_stats::shift::ShiftTest| match t.detectable {
        Some(d) => format!(
            "could detect ≥ {} in {}",
            crate::compare::percent(d),
            label(name, t)
        ),
        None => format!("could detect no change in {}", label(name, t)),
    };
    let (verdict, message) = match (rel, &test) {
        (None, _) => (
            Verdict::NotApplicable,
            format!("{change}: not in both results"),
        ),
        (Some(_), Some(t)) if t.declared => (
            Verdict::Fail,
            format!(
                "{change}: regressed beyond {limit_text} (p {})",
                crate::compare::format_p(t.p_value),
            ),
        ),
        (Some(_), Some(t)) if crate::verdict::undecided(t) => {
            let measured = sa.stats.blocks.as_ref().map_or(0, |bl| bl.block_ns * bl.len() as u64);
            let fix = duration_to_decide(t, measured)
                .map(|ns| format!("measure ≥ {} per run", format_duration_ns(ns)))
                .unwrap_or_else(|| "measure longer".into());
            (
                Verdict::Inconclusive,
                format!(
                    "{change}: worse beyond {limit_text} as measured, but within what these runs vary ({}); to decide, {fix} or repeat both runs (`run --repeat 3`) and check every run of each side at once",
                    power(t)
                ),
            )
        }
        (Some(_), Some(t)) => (Verdict::Pass, format!("{change} ({})", power(t))),
        (Some(r), None) if r > regress && declared_slower => (
            Verdict::Fail,
            format!("{change}: regressed beyond {limit_text} ({row_verdict})"),
        ),
        (Some(r), None) if r > regress => (
            Verdict::Inconclusive,
            format!("{change}: worse beyond {limit_text} as measured, but these runs cannot be tested against each other ({row_verdict}); measure longer or repeat both runs"),
        ),
        (Some(_), None) => (Verdict::Pass, change),
    };
    against_baseline(name, &limit_text, b, verdict, message)
}

/// `name (line 3)` for a spec limit; a baseline case has no line.
fn case_title(c: &CheckCase) -> String {
    let name = c.name.clone().unwrap_or_else(|| c.limit.to_string());
    if c.line == 0 {
        name
    } else {
        format!("{name} (line {})", c.line)
    }
}

fn case_bounds_text(c: &CheckCase) -> String {
    if let Some(p) = &c.problem {
        return p.clone();
    }
    c.bounds
        .iter()
        .map(|b| match b.verdict {
            Verdict::NotApplicable => format!("{}: n/a ({})", b.stat, b.message),
            _ => b.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Terminal table or Markdown: one line per case with its result and the number of its note,
/// then the notes (what was measured against which limit, and why it passed or not) and the
/// totals. The table stays narrow; the explanations wrap below it.
pub fn render_text(r: &CheckReport, style: Style) -> String {
    let md = style == Style::Markdown;
    let mut t = crate::format::fitted_table(style);
    t.set_header(vec!["Limit", "Probe run", "Series", "Result", "Note"]);
    let mut notes = Vec::new();
    for c in &r.cases {
        let result = if !c.passed {
            "FAIL"
        } else if c.bounds.iter().any(|b| b.verdict == Verdict::Inconclusive) {
            "INCONCLUSIVE"
        } else {
            "pass"
        };
        notes.push(case_bounds_text(c));
        t.add_row(vec![
            case_title(c),
            [c.probe.as_str(), c.mode.as_str(), c.load.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
            c.series.clone(),
            result.to_string(),
            notes.len().to_string(),
        ]);
    }
    let mut out = String::new();
    if md {
        let _ = writeln!(out, "## Check against {}\n", r.spec);
    } else {
        let _ = writeln!(out, "check against {}", r.spec);
    }
    let _ = writeln!(out, "{t}\n");
    out.push_str(&crate::format::numbered_notes(&notes, md));
    if let Some(m) = r.incomplete_message() {
        let _ = writeln!(out, "{m}");
    }
    let inconclusive = r.inconclusive();
    let _ = write!(
        out,
        "{}: {} of {} checks failed",
        if !r.passed {
            "FAIL"
        } else if inconclusive > 0 {
            "INCONCLUSIVE"
        } else {
            "PASS"
        },
        r.failures(),
        r.total()
    );
    if inconclusive > 0 {
        let _ = write!(out, ", {inconclusive} could not be decided from these runs");
    }
    out.push('\n');
    out
}

/// CSV: one line per bound evaluated (a case without bounds gets one line with its problem).
pub fn render_csv(r: &CheckReport) -> String {
    let mut out = String::from(
        "limit,line,name,probe,mode,load,series,stat,limit_value,value,verdict,message\n",
    );
    if let Some(m) = r.incomplete_message() {
        let verdict = if r.incomplete_fails() { "fail" } else { "pass" };
        let _ = writeln!(out, "0,0,,*,*,*,*,complete,,,{verdict},{}", csv_field(&m));
    }
    for c in &r.cases {
        let head = [
            c.limit.to_string(),
            c.line.to_string(),
            c.name.clone().unwrap_or_default(),
            c.probe.clone(),
            c.mode.clone(),
            c.load.clone(),
            c.series.clone(),
        ]
        .iter()
        .map(|f| csv_field(f))
        .collect::<Vec<_>>()
        .join(",");
        if let Some(p) = &c.problem {
            let _ = writeln!(out, "{head},,,,fail,{}", csv_field(p));
        }
        for b in &c.bounds {
            let verdict = match b.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "fail",
                Verdict::NotApplicable => "not_applicable",
                Verdict::Inconclusive => "inconclusive",
            };
            let value = b
                .value
                .map(|v| {
                    if v.fract() == 0.0 {
                        format!("{}", v as i64)
                    } else {
                        format!("{v:.3}")
                    }
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{head},{},{},{value},{verdict},{}",
                csv_field(&b.stat),
                csv_field(&b.limit),
                csv_field(&b.message)
            );
        }
    }
    out
}

pub fn render_json(r: &CheckReport) -> String {
    crate::format::json_text(r)
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test case per limit × matching series.
pub fn render_junit(r: &CheckReport) -> String {
    let suite = Path::new(&r.spec)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| r.spec.clone());
    let failures = r.failures();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rtgauge check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        r.total()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">",
        xml_escape(&suite),
        r.total()
    );
    for c in &r.cases {
        let limit_name = c
            .name
            .clone()
            .unwrap_or_else(|| format!("limit {} (line {})", c.limit, c.line));
        let _ = write!(
            out,
            "    <testcase classname=\"rtgauge.{}.{}.{}\" name=\"{}: {}\"",
            xml_escape(&c.probe),
            xml_escape(&c.mode),
            xml_escape(&c.load),
            xml_escape(&limit_name),
            xml_escape(&c.series)
        );
        let undecided = c.bounds.iter().any(|b| b.verdict == Verdict::Inconclusive);
        match c.failure_message() {
            None if undecided => {
                let _ = writeln!(out, ">");
                let _ = writeln!(
                    out,
                    "      <skipped message=\"inconclusive: {}\"/>",
                    xml_escape(&case_bounds_text(c))
                );
                let _ = writeln!(out, "    </testcase>");
            }
            None => {
                let _ = writeln!(out, ">");
                let _ = writeln!(
                    out,
                    "      <system-out>{}</system-out>",
                    xml_escape(&case_bounds_text(c))
                );
                let _ = writeln!(out, "    </testcase>");
            }
            Some(message) => {
                let _ = writeln!(out, ">");
                let _ = writeln!(
                    out,
                    "      <failure type=\"limit exceeded\" message=\"{}\">{}</failure>",
                    xml_escape(&message),
                    xml_escape(&case_bounds_text(c))
                );
                let _ = writeln!(out, "    </testcase>");
            }
        }
    }
    if let Some(m) = r.incomplete_message() {
        let _ = write!(
            out,
            "    <testcase classname=\"rtgauge.result\" name=\"the result is complete\">\n      "
        );
        if r.incomplete_fails() {
            let _ = writeln!(
                out,
                "<failure type=\"incomplete result\" message=\"{0}\">{0}</failure>",
                xml_escape(&m)
            );
        } else {
            let _ = writeln!(out, "<system-out>{}</system-out>", xml_escape(&m));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

impl crate::format::Render for CheckReport {
    const WHAT: &'static str = "a check report";

    fn formats(&self) -> &'static [crate::format::Format] {
        use crate::format::{Format, Style};
        &[
            Format::Text(Style::Terminal),
            Format::Text(Style::Plain),
            Format::Text(Style::Markdown),
            Format::Csv,
            Format::Json,
            Format::Junit,
        ]
    }

    fn render(&self, format: crate::format::Format) -> Result<String, crate::format::Unsupported> {
        use crate::format::Format;
        match format {
            Format::Text(style) => Ok(crate::format::fit_lines(render_text(self, style), style)),
            Format::Csv => Ok(render_csv(self)),
            Format::Json => Ok(render_json(self)),
            Format::Junit => Ok(render_junit(self)),
            other => Err(self.unsupported(other)),
        }
    }
}

/// A spec value as a message quotes it: a pasted blob is named by its start.
fn quote_value(value: &toml::Value) -> String {
    rtgauge_result::units::quote(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Spec, SpecError> {
        Spec::parse(text, Path::new("spec.toml"))
    }

    /// A noise series: 3 stalls of 5, 20 and 40 us over 2 s polled, 1 % of the CPU lost.
    fn noise_series() -> Series {
        let mut r = rtgauge_stats::Recorder::default();
        for (at, ns) in [(1, 5_000), (2, 20_000), (3, 40_000)] {
            r.record(ns, at);
        }
        let mut s = Series::new("gap", r.summary()).counter("polled_ns", 2_000_000_000);
        s.metrics.insert("availability_pct".into(), 99.0);
        s
    }

    #[test]
    fn noise_share_and_stalls_per_second_above_a_duration_are_checked() {
        let spec = parse(
            "[[limit]]\nprobe = \"noise\"\nnoise_share = \"1.5%\"\nevents_per_s_above_10us = 1\nmax = \"30us\"\n",
        )
        .unwrap();
        let s = noise_series();
        let verdicts: Vec<_> = spec.limits[0]
            .bounds
            .iter()
            .map(|b| evaluate(b, &s).verdict)
            .collect();
        // 1 % ≤ 1.5 %; two stalls above 10 us in 2 s = 1/s ≤ 1; max 40 us > 30 us.
        assert_eq!(verdicts, [Verdict::Pass, Verdict::Pass, Verdict::Fail]);
        let strict = parse("[[limit]]\nevents_per_s_above_4us = 1.4\n").unwrap();
        assert_eq!(
            evaluate(&strict.limits[0].bounds[0], &s).verdict,
            Verdict::Fail
        );
        // Other probes' series do not keep these figures.
        let other = Series::new("latency", Default::default());
        assert_eq!(
            evaluate(&spec.limits[0].bounds[0], &other).verdict,
            Verdict::NotApplicable
        );
        let e = parse("[[limit]]\nnoise_share = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("e.g. noise_share = \"0.5%\""), "{e}");
        assert!(parse("[[limit]]\nevents_per_s_above_ten = 1\n").is_err());
    }

    #[test]
    fn percentile_keys() {
        assert_eq!(parse_percentile_key("p99"), Some((0.99, "p99".into())));
        assert_eq!(parse_percentile_key("p99_99").unwrap().1, "p99.99");
        assert!((parse_percentile_key("p99.999").unwrap().0 - 0.99999).abs() < 1e-12);
        assert_eq!(parse_percentile_key("p50").unwrap().0, 0.5);
        for bad in ["p", "p100", "p0", "p9x", "p99__9", "p.9", "q99", "p99."] {
            assert!(parse_percentile_key(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_full_limit_parses() {
        let spec = parse(
            "# gate\n[[limit]]\nprobe = \"cyclic\"\nmode = \"rt\"\nload = \"net\"\nseries = \"latency\"\nlabels = { cpu = 1 }\np99_99 = \"50us\"\nmax = \"100us\"\novrruns_is_typo_free = 0\n",
        );
        // The typo is reported with its line and the accepted keys.
        let e = spec.unwrap_err().to_string();
        assert!(
            e.starts_with("spec.toml:10: unknown key `ovrruns_is_typo_free`"),
            "{e}"
        );
        assert!(e.contains("accepted:"), "{e}");
        let spec = parse(
            "[[limit]]\nprobe = \"cyclic\"\nlabels = { cpu = 1 }\n\"p99.99\" = \"50us\"\nmax = \"100us\"\noverruns = 0\n",
        )
        .unwrap();
        let l = &spec.limits[0];
        assert_eq!(l.line, 1);
        assert_eq!(l.labels.get("cpu").map(String::as_str), Some("1"));
        assert_eq!(l.bounds.len(), 3);
        assert_eq!(l.bounds[0].stat.label(), "p99.99");
        assert_eq!(l.bounds[0].limit, 50_000);
        assert_eq!(l.bounds_text(), "p99.99 ≤ 50us, max ≤ 100us, overruns ≤ 0");
    }

    #[test]
    fn bad_specs_name_the_line_and_the_accepted_form() {
        let cases = [
            ("[[limit]]\nmax = 100\n", "spec.toml:2:", "\"50us\""),
            (
                "[[limit]]\nmax = \"100 parsecs\"\n",
                "spec.toml:2:",
                "e.g. 25us",
            ),
            (
                "[[limit]]\nprobe = \"cyclic\"\n",
                "spec.toml:1:",
                "no bound",
            ),
            ("[[limit]]\novverruns = 0\n", "spec.toml:2:", "unknown key"),
            (
                "[[limit]]\np101 = \"1us\"\n",
                "spec.toml:2:",
                "a percentile must be above 0 and below 100",
            ),
            ("[[limit]]\np100 = \"1us\"\n", "spec.toml:2:", "below 100"),
            ("[[limit]]\noverruns = -1\n", "spec.toml:2:", "integer ≥ 0"),
            ("[[limits]]\nmax = \"1us\"\n", "spec.toml:1:", "[[limit]]"),
            ("[[limit]\n", "spec.toml:1:", "TOML"),
            ("", "spec.toml:1:", "no [[limit]]"),
            (
                "[[limit]]\nmax = \"1us\"\n\n[[limit]]\nprobe = 3\nmax = \"1us\"\n",
                "spec.toml:5:",
                "must be a string",
            ),
            (
                "[[limit]]\np99.99 = \"50us\"\n",
                "spec.toml:2:",
                "p99_99 = \"50us\"",
            ),
        ];
        for (text, at, says) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(at), "{text:?}: {e}");
            assert!(e.contains(says), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}

#[cfg(test)]
mod predicted_max_tests {
    use super::*;
    use rtgauge_stats::evt::{estimate, sample, Gev, Input};

    fn spec(limit: &str) -> Spec {
        Spec::parse(
            &format!("[[limit]]\nseries = \"latency\"\npwcet_1h = \"{limit}\"\n"),
            Path::new("spec.toml"),
        )
        .unwrap()
    }

    fn series(maxima: &[u64]) -> Series {
        let mut s = Series::new("latency", Default::default());
        s.stats.count = 1000;
        s.worst_case = Some(estimate(&Input::hour_ahead(
            maxima,
            1_000_000_000,
            Some(1000.0),
        )));
        s
    }

    #[test]
    fn the_predicted_hour_maximum_is_checked_and_a_refusal_fails() {
        let maxima: Vec<u64> = sample(&Gev::gumbel(20_000.0, 1_000.0), 300, 9)
            .iter()
            .map(|v| *v as u64)
            .collect();
        let s = series(&maxima);
        let predicted = s
            .worst_case
            .as_ref()
            .unwrap()
            .estimate()
            .unwrap()
            .predicted_max_ns;
        let bound = &spec("1ms").limits[0].bounds[0];
        assert_eq!(bound.stat, Stat::PredictedMaxHour);
        let pass = evaluate(bound, &s);
        assert_eq!(pass.verdict, Verdict::Pass, "{}", pass.message);
        assert_eq!(pass.value, Some(predicted as f64));
        let tight = evaluate(&spec("20us").limits[0].bounds[0], &s);
        assert_eq!(tight.verdict, Verdict::Fail, "{}", tight.message);

        let refused = evaluate(bound, &series(&maxima[..5]));
        assert_eq!(refused.verdict, Verdict::Fail);
        assert!(
            refused.message.contains("no estimate: only 5"),
            "{}",
            refused.message
        );

        let mut old = series(&maxima);
        old.worst_case = None;
        let missing = evaluate(bound, &old);
        assert_eq!(missing.verdict, Verdict::Fail);
        assert!(
            missing.message.contains("measure again"),
            "{}",
            missing.message
        );
    }
}
