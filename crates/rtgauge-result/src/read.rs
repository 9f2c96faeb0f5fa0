//! Reading result documents back, refusing what cannot be a real measurement.
//!
//! A document is checked in three steps, each refusing with one line that names the file and,
//! for the last two, the field: the JSON itself (truncated or malformed), `schema_version`
//! (missing, not a version, or from the future), then the content against the invariants
//! every document rtgauge writes satisfies ([`validate`]). Without the last step an edited or
//! damaged file (a count of 2^64 − 1, `min_ns` above `max_ns`, `batch` 0) would be rendered,
//! compared and checked as if it had been measured.

use crate::io::ResultError;
use crate::{Calibration, ProbeRun, RecordingInfo, RunResult, Series, SCHEMA_VERSION};
use rtgauge_stats::evt::WorstCase;
use rtgauge_stats::Summary;
use std::fs;
use std::path::{Component, Path};

/// Sample counts above this cannot be exact in the floating-point statistics the renderers
/// compute (2^53 samples is over 100 days at one sample per nanosecond), so a larger count is
/// damage, not a measurement.
pub const MAX_SAMPLE_COUNT: u64 = 1 << 53;

/// The precisions an HDR histogram supports.
const SIGNIFICANT_DIGITS: std::ops::RangeInclusive<u8> = 1..=5;

/// Reads a result document, refusing malformed, truncated, future-version and inconsistent
/// files with an error that names the file, the field and the problem.
pub fn read_result(path: &Path) -> Result<RunResult, ResultError> {
    let bytes = fs::read(path).map_err(|source| ResultError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_result(&bytes).map_err(|problem| problem.at(path))
}

/// What is wrong with a document, before the file name is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The JSON ends early.
    Truncated(String),
    /// Not JSON, or JSON of the wrong shape.
    Malformed(String),
    /// A schema version newer than this reader.
    FutureVersion(u64),
    /// Well-formed but impossible: `field` (a path such as `runs[2].series[0].stats.min_ns`)
    /// breaks an invariant.
    Invalid { field: String, problem: String },
    /// A trials document (`rtgauge tune --output`) where a run result was expected.
    IsTune,
    /// Not a trials document where one was expected.
    NotTune,
    /// A trials document of a newer layout than this reader.
    FutureTuneVersion(u64),
}

impl Problem {
    fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Problem::Invalid {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// The error for the file at `path`.
    pub fn at(self, path: &Path) -> ResultError {
        let path = path.to_path_buf();
        match self {
            Problem::Truncated(detail) => ResultError::Truncated { path, detail },
            Problem::Malformed(detail) => ResultError::Malformed { path, detail },
            Problem::FutureVersion(found) => ResultError::FutureVersion {
                path,
                found,
                supported: SCHEMA_VERSION,
            },
            Problem::Invalid { field, problem } => ResultError::Invalid {
                path,
                field,
                problem,
            },
            Problem::IsTune => ResultError::IsTune { path },
            Problem::NotTune => ResultError::NotTune { path },
            Problem::FutureTuneVersion(found) => ResultError::FutureVersion {
                path,
                found,
                supported: crate::tune::TUNE_SCHEMA_VERSION,
            },
        }
    }
}

/// Parses and validates a document held in memory (what [`read_result`] does after reading
/// the file; also the entry point of the readers' fuzz tests).
pub fn parse_result(bytes: &[u8]) -> Result<RunResult, Problem> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            Problem::Truncated(format!("JSON ends early at line {}", e.line()))
        } else {
            Problem::Malformed(clip(&e.to_string()))
        }
    })?;
    if !value.is_object() {
        return Err(Problem::Malformed(format!(
            "it is a JSON {}, not an object with a schema_version field",
            json_kind(&value)
        )));
    }
    if crate::tune::is_tune_document(&value) {
        return Err(Problem::IsTune);
    }
    check_version(value.get("schema_version"))?;
    let result: RunResult =
        serde_json::from_value(value).map_err(|e| Problem::Malformed(clip(&e.to_string())))?;
    validate(&result)?;
    Ok(result)
}

/// A document of either kind rtgauge writes.
#[derive(Debug, Clone)]
pub enum Document {
    Run(Box<RunResult>),
    Tune(Box<crate::tune::TuneDocument>),
}

/// Reads a run result or a trials document, whichever the file holds, with the checks of
/// [`read_result`] and [`crate::tune::read_tune`].
pub fn read_document(path: &Path) -> Result<Document, ResultError> {
    let bytes = fs::read(path).map_err(|source| ResultError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    match parse_result(&bytes) {
        Ok(result) => Ok(Document::Run(Box::new(result))),
        Err(Problem::IsTune) => crate::tune::read_tune(path).map(|d| Document::Tune(Box::new(d))),
        Err(problem) => Err(problem.at(path)),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// `schema_version` must be a whole number from 1 to [`SCHEMA_VERSION`]; anything else is
/// named as it is (a string, a negative or fractional number, a number too large).
fn check_version(version: Option<&serde_json::Value>) -> Result<(), Problem> {
    let expected = if SCHEMA_VERSION == 1 {
        "it must be the whole number 1".to_string()
    } else {
        format!("it must be a whole number from 1 to {SCHEMA_VERSION}")
    };
    let Some(v) = version else {
        return Err(Problem::Malformed(format!(
            "no schema_version field ({expected})"
        )));
    };
    let found = match v.as_u64() {
        Some(n) => n,
        None => {
            let what = match v {
                serde_json::Value::Number(_) => crate::units::quote(&v.to_string()),
                other => format!(
                    "a {} ({})",
                    json_kind(other),
                    crate::units::quote(&other.to_string())
                ),
            };
            return Err(Problem::invalid(
                "schema_version",
                format!("is {what}; {expected}"),
            ));
        }
    };
    if found == 0 {
        return Err(Problem::invalid(
            "schema_version",
            format!("is 0; {expected}"),
        ));
    }
    if found > SCHEMA_VERSION as u64 {
        return Err(Problem::FutureVersion(found));
    }
    Ok(())
}

/// A parser's message with any long value it quotes cut out of the middle: the start says
/// what was wrong, the end where (`… at line 3 column 200012`).
fn clip(message: &str) -> String {
    const HEAD: usize = 120;
    const TAIL: usize = 80;
    let message = crate::units::escape_controls(message);
    let chars = message.chars().count();
    if chars <= HEAD + TAIL {
        return message;
    }
    let head: String = message.chars().take(HEAD).collect();
    let tail: String = message.chars().skip(chars - TAIL).collect();
    format!(
        "{head}… ({} characters left out) …{tail}",
        chars - HEAD - TAIL
    )
}

/// Checks the invariants every document rtgauge writes satisfies; the first broken one is
/// returned with the path of its field.
pub fn validate(result: &RunResult) -> Result<(), Problem> {
    if result.schema_version == 0 || result.schema_version > SCHEMA_VERSION {
        check_version(Some(&serde_json::Value::from(result.schema_version)))?;
    }
    validate_calibration(&result.calibration)?;
    for (i, run) in result.runs.iter().enumerate() {
        validate_run(&format!("runs[{i}]"), run)?;
    }
    for (i, rec) in result.recordings.iter().enumerate() {
        validate_recording(&format!("recordings[{i}]"), rec)?;
    }
    Ok(())
}

fn validate_calibration(c: &Calibration) -> Result<(), Problem> {
    ordered(
        "calibration",
        &[
            ("read_cost_min_ns", Some(c.read_cost_min_ns)),
            ("read_cost_median_ns", Some(c.read_cost_median_ns)),
            ("read_cost_max_ns", Some(c.read_cost_max_ns)),
        ],
    )
}

fn validate_run(at: &str, run: &ProbeRun) -> Result<(), Problem> {
    for (i, series) in run.series.iter().enumerate() {
        validate_series(&format!("{at}.series[{i}]"), series)?;
    }
    Ok(())
}

fn validate_series(at: &str, series: &Series) -> Result<(), Problem> {
    if series.batch == 0 {
        return Err(Problem::invalid(
            format!("{at}.batch"),
            "is 0; a sample times at least one operation (1, or N for N operations)",
        ));
    }
    for (name, value) in &series.metrics {
        if !value.is_finite() {
            return Err(Problem::invalid(
                format!("{at}.metrics.{name}"),
                format!("is {value}, not a finite number"),
            ));
        }
    }
    validate_stats(&format!("{at}.stats"), &series.stats)?;
    match &series.worst_case {
        Some(wc) => validate_worst_case(&format!("{at}.worst_case"), wc),
        None => Ok(()),
    }
}

/// An estimate's figures as the estimator writes them: a positive scale, probabilities that
/// are probabilities, bounds not below their point, return periods that grow (the report
/// draws them on a log axis).
fn validate_worst_case(at: &str, wc: &WorstCase) -> Result<(), Problem> {
    let probability = |field: String, p: f64, closed: bool| {
        if p > 0.0 && (p < 1.0 || closed && p == 1.0) {
            Ok(())
        } else {
            Err(Problem::invalid(
                field,
                format!("is {p}, not a probability"),
            ))
        }
    };
    for (i, d) in wc.diagnostics.iter().enumerate() {
        if !(0.0..=1.0).contains(&d.p_value) {
            return Err(Problem::invalid(
                format!("{at}.diagnostics[{i}].p_value"),
                format!("is {}, not a probability", d.p_value),
            ));
        }
    }
    let Some(e) = wc.estimate() else {
        return Ok(());
    };
    // Written so that NaN is refused too.
    if e.scale_ns.is_nan() || e.scale_ns <= 0.0 {
        return Err(Problem::invalid(
            format!("{at}.scale_ns"),
            format!("is {}; a fitted scale is above 0", e.scale_ns),
        ));
    }
    probability(format!("{at}.confidence"), e.confidence, false)?;
    for (i, level) in e.return_levels.iter().enumerate() {
        let field = format!("{at}.return_levels[{i}]");
        probability(format!("{field}.probability"), level.probability, true)?;
        if level.per != "hour" && level.per != "cycle" {
            return Err(Problem::invalid(
                format!("{field}.per"),
                format!(
                    "is \"{}\"; a return level is per \"hour\" or per \"cycle\"",
                    crate::units::quote(&level.per)
                ),
            ));
        }
    }
    for (i, point) in e.curve.iter().enumerate() {
        let field = format!("{at}.curve[{i}]");
        if point.lower_ns > point.upper_ns {
            return Err(Problem::invalid(
                format!("{field}.lower_ns"),
                format!(
                    "({}) is above upper_ns ({})",
                    point.lower_ns, point.upper_ns
                ),
            ));
        }
        if i > 0 && point.return_period_ns <= e.curve[i - 1].return_period_ns {
            return Err(Problem::invalid(
                format!("{field}.return_period_ns"),
                "is not above the previous point's; the curve is stored by growing return period",
            ));
        }
    }
    Ok(())
}

/// The statistics of one series: counts that add up, a histogram that can be rebuilt, and
/// figures in the order their definitions imply.
pub fn validate_stats(at: &str, s: &Summary) -> Result<(), Problem> {
    let field = |name: &str| format!("{at}.{name}");
    if s.count > MAX_SAMPLE_COUNT {
        return Err(Problem::invalid(
            field("count"),
            format!(
                "({}) is more samples than any run can take (at most 2^53)",
                s.count
            ),
        ));
    }
    let h = &s.histogram;
    if h.significant_digits > *SIGNIFICANT_DIGITS.end()
        || (!h.buckets.is_empty() && h.significant_digits < *SIGNIFICANT_DIGITS.start())
    {
        return Err(Problem::invalid(
            field("histogram.significant_digits"),
            format!(
                "is {}; an HDR histogram keeps 1 to 5 significant digits (rtgauge writes 3)",
                h.significant_digits
            ),
        ));
    }
    let mut total: u64 = 0;
    for (i, &(value, count)) in h.buckets.iter().enumerate() {
        let bucket = field(&format!("histogram.buckets[{i}]"));
        if count == 0 {
            return Err(Problem::invalid(
                bucket,
                "has count 0; only non-empty buckets are stored",
            ));
        }
        if i > 0 && value <= h.buckets[i - 1].0 {
            return Err(Problem::invalid(
                bucket,
                format!(
                    "starts at {value} ns, not above the previous bucket ({} ns); buckets are stored in increasing order",
                    h.buckets[i - 1].0
                ),
            ));
        }
        total = total.checked_add(count).ok_or_else(|| {
            Problem::invalid(
                field("histogram.buckets"),
                "counts add up to more than 2^64 − 1",
            )
        })?;
    }
    // A series imported from a tool that kept no histogram has its count without buckets.
    if total != s.count && !h.buckets.is_empty() {
        return Err(Problem::invalid(
            field("count"),
            format!(
                "({}) differs from the histogram's bucket counts, which add up to {total}",
                s.count
            ),
        ));
    }
    if s.count == 0 {
        if let Some((name, _)) = [("min_ns", s.min_ns), ("max_ns", s.max_ns)]
            .into_iter()
            .find(|(_, v)| v.is_some())
        {
            return Err(Problem::invalid(field(name), "is set although count is 0"));
        }
        return Ok(());
    }
    let (Some(min), Some(max)) = (s.min_ns, s.max_ns) else {
        if h.buckets.is_empty() {
            // An imported source that states neither extreme (rtla osnoise top has no
            // minimum): nothing else to order.
            return Ok(());
        }
        let missing = if s.min_ns.is_none() {
            "min_ns"
        } else {
            "max_ns"
        };
        return Err(Problem::invalid(
            field(missing),
            format!("is missing although count is {}", s.count),
        ));
    };
    ordered(at, &[("min_ns", Some(min)), ("max_ns", Some(max))])?;
    ordered(
        at,
        &[
            ("min_ns", Some(min)),
            ("mean_ns", s.mean_ns),
            ("max_ns", Some(max)),
        ],
    )?;
    if let (Some(&(first, _)), Some(&(last, _))) = (h.buckets.first(), h.buckets.last()) {
        if first > min {
            return Err(Problem::invalid(
                field("histogram.buckets[0]"),
                format!("starts at {first} ns, above min_ns ({min})"),
            ));
        }
        if last > max {
            return Err(Problem::invalid(
                field(&format!("histogram.buckets[{}]", h.buckets.len() - 1)),
                format!("starts at {last} ns, above max_ns ({max})"),
            ));
        }
    }
    let p = &s.percentiles;
    // Quantiles come from the histogram clamped to the exact extremes, so they lie between
    // them and grow with the quantile.
    ordered(
        at,
        &[
            ("min_ns", Some(min)),
            ("p25_ns", s.p25_ns),
            ("median_ns", s.median_ns),
            ("p75_ns", s.p75_ns),
            ("percentiles.p90_ns", p.p90_ns),
            ("percentiles.p99_ns", p.p99_ns),
            ("percentiles.p99_9_ns", p.p99_9_ns),
            ("percentiles.p99_99_ns", p.p99_99_ns),
            ("percentiles.p99_999_ns", p.p99_999_ns),
            ("max_ns", Some(max)),
        ],
    )?;
    if s.intervals.interval_ns == 0 && !s.intervals.max_ns.is_empty() {
        return Err(Problem::invalid(
            field("intervals.interval_ns"),
            "is 0 although interval maxima are stored; an interval lasts at least 1 ns",
        ));
    }
    if let Some(blocks) = &s.blocks {
        check_blocks(blocks).map_err(|why| Problem::invalid(field("blocks"), why))?;
    }
    Ok(())
}

/// The block histograms a comparison reads: a width, one maximum per block, and per block
/// `bucket, count` pairs in increasing bucket order within the bucket range.
fn check_blocks(b: &rtgauge_stats::blocks::SerializedBlocks) -> Result<(), String> {
    use rtgauge_stats::blocks::{BUCKETS, BUCKETS_PER_OCTAVE};
    if b.block_ns == 0 && !b.counts.is_empty() {
        return Err("block_ns is 0 although blocks are stored; a block lasts at least 1 ns".into());
    }
    if b.buckets_per_octave != BUCKETS_PER_OCTAVE {
        return Err(format!(
            "buckets_per_octave is {}, this rtgauge reads {BUCKETS_PER_OCTAVE}",
            b.buckets_per_octave
        ));
    }
    if b.max_ns.len() != b.counts.len() {
        return Err(format!(
            "has {} blocks of counts but {} maxima; one maximum per block",
            b.counts.len(),
            b.max_ns.len()
        ));
    }
    for (i, pairs) in b.counts.iter().enumerate() {
        if pairs.len() % 2 != 0 {
            return Err(format!("block {i}: counts come in bucket, count pairs"));
        }
        let buckets: Vec<u64> = pairs.iter().step_by(2).copied().collect();
        if buckets.iter().any(|&x| x >= BUCKETS as u64) || buckets.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(format!(
                "block {i}: buckets must increase and stay below {BUCKETS}"
            ));
        }
        if pairs
            .iter()
            .skip(1)
            .step_by(2)
            .any(|&c| c > u64::from(u32::MAX))
        {
            return Err(format!("block {i}: a count exceeds {}", u32::MAX));
        }
        if pairs.is_empty() != b.max_ns[i].is_none() {
            return Err(format!(
                "block {i}: a maximum is stored exactly when the block has samples"
            ));
        }
    }
    Ok(())
}

/// Refuses the first present value that is below an earlier present one: `figures` are listed
/// in the order their definitions require (min ≤ median ≤ max…).
fn ordered(at: &str, figures: &[(&str, Option<u64>)]) -> Result<(), Problem> {
    let mut highest: Option<(&str, u64)> = None;
    for &(name, value) in figures {
        let Some(value) = value else { continue };
        if let Some((before, bound)) = highest {
            if value < bound {
                return Err(Problem::invalid(
                    format!("{at}.{before}"),
                    format!("({bound}) is above {name} ({value})"),
                ));
            }
        }
        highest = Some((name, value));
    }
    Ok(())
}

/// A recording's path is relative to the document and stays beside it: a document must not
/// send a reader to an arbitrary file.
fn validate_recording(at: &str, rec: &RecordingInfo) -> Result<(), Problem> {
    let path = Path::new(&rec.path);
    let escapes = path
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    if rec.path.is_empty() || escapes {
        return Err(Problem::invalid(
            format!("{at}.path"),
            format!(
                "({}) must be a file name relative to the result's directory, without `..`",
                crate::units::quote(&rec.path)
            ),
        ));
    }
    Ok(())
}
