//! `rtgauge compare`: results side by side per probe × mode × load × series, with differences,
//! a two-sample Kolmogorov–Smirnov test on the histograms and a one-line verdict per row.
//!
//! Differences in environment and configuration come first: a comparison of two kernels on two
//! boards at two periods is legitimate, but the reader must see that before the numbers.
//!
//! The verdict rule (see docs/report.md): a row is *different* when the KS test rejects "same
//! distribution" at [`ALPHA`] **and** the difference is large enough to matter — KS D ≥
//! [`MIN_KS_D`] or a median shift of at least [`MIN_MEDIAN_SHIFT`]. With millions of samples
//! the test alone calls a 0.1 % shift "significant"; the effect-size floor keeps run-to-run
//! noise from being reported as a change.

use crate::dist::Dist;
use crate::format::{csv_field, csv_num, per_op, status_name, TimeUnit};
use crate::ks::{ks_test, KsTest};
use comfy_table::CellAlignment;
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, Series};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Significance level of the KS test.
pub const ALPHA: f64 = 0.01;
/// Smallest KS distance (largest gap between the two cumulative distributions) that counts.
pub const MIN_KS_D: f64 = 0.1;
/// Smallest relative median shift that counts.
pub const MIN_MEDIAN_SHIFT: f64 = 0.05;
/// A tail percentile moving this much against the body makes a difference "neither slower
/// nor faster".
pub const MIN_TAIL_SHIFT: f64 = 0.25;
/// Fewer samples than this on either side: the row is not tested.
pub const MIN_SAMPLES: u64 = 20;

/// The complete comparison; the JSON output is this structure.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Short names of the results in order (A, B, …); the first is the baseline.
    pub results: Vec<ComparedResult>,
    /// The rule that decides a verdict.
    pub rule: Rule,
    /// Environment and configuration fields whose values differ, listed first.
    pub environment: Vec<EnvDifference>,
    /// One row per series matched in the baseline and one other result.
    pub rows: Vec<CompareRow>,
    /// Series or probe runs that could not be compared (absent, skipped, failed, empty).
    pub unmatched: Vec<String>,
    /// How the dominant causes of explained spikes (`run --trace`) moved between results.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<CauseMove>,
}

/// One dominant cause of explained spikes in one probe run, counted in every result.
#[derive(Debug, Clone, Serialize)]
pub struct CauseMove {
    /// `cyclic rt none`.
    pub run: String,
    /// `gap outside Linux`, `softirq NET_RX`, `kworker/0:1`.
    pub cause: String,
    /// Spikes it dominated, per result (in the order of `results`).
    pub counts: Vec<usize>,
    /// The longest time it held the CPU in one of them, per result, ns.
    pub longest_ns: Vec<u64>,
}

/// The dominant causes of every traced probe run, counted in each result.
fn cause_moves(results: &[RunResult]) -> Vec<CauseMove> {
    let mut moves: Vec<CauseMove> = Vec::new();
    for (i, result) in results.iter().enumerate() {
        for run in result.runs.iter().filter(|r| !r.spikes.is_empty()) {
            let label = format!("{} {} {}", run.title(), run.mode, run.load);
            for g in rtgauge_result::trace::dominant_causes(&run.spikes) {
                let entry = match moves
                    .iter()
                    .position(|m| m.run == label && m.cause == g.label)
                {
                    Some(at) => &mut moves[at],
                    None => {
                        moves.push(CauseMove {
                            run: label.clone(),
                            cause: g.label.clone(),
                            counts: vec![0; results.len()],
                            longest_ns: vec![0; results.len()],
                        });
                        moves.last_mut().expect("just pushed")
                    }
                };
                entry.counts[i] = g.count;
                entry.longest_ns[i] = g.longest_ns;
            }
        }
    }
    moves
}

#[derive(Debug, Clone, Serialize)]
pub struct ComparedResult {
    pub name: String,
    pub source: String,
    /// complete, interrupted or failed: a partial result compares only what it measured.
    pub status: String,
}

impl ComparedResult {
    /// `A: path`, with the status when the result is not complete.
    pub fn describe(&self) -> String {
        if self.status == "complete" {
            format!("{}: {}", self.name, self.source)
        } else {
            format!(
                "{}: {} ({}: only what it measured is compared)",
                self.name,
                self.source,
                self.status.to_uppercase()
            )
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    pub alpha: f64,
    pub min_ks_d: f64,
    pub min_median_shift: f64,
    pub min_tail_shift: f64,
    pub min_samples: u64,
}

/// A field whose value differs between the results; `values` holds one entry per result
/// (`null` where the field is absent).
#[derive(Debug, Clone, Serialize)]
pub struct EnvDifference {
    pub field: String,
    pub values: Vec<Option<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub probe: String,
    pub mode: String,
    pub load: String,
    pub series: String,
    pub labels: BTreeMap<String, String>,
    pub baseline: String,
    pub candidate: String,
    pub n_baseline: u64,
    pub n_candidate: u64,
    /// min, median, the tail percentile (p99.99 or the highest both support) and max.
    pub stats: Vec<StatDiff>,
    pub ks: Option<KsTest>,
    pub outcome: Outcome,
    pub verdict: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No difference that passes the rule.
    Same,
    Slower,
    Faster,
    /// Different, but neither consistently slower nor faster (the distributions cross).
    Differs,
    /// Too few samples to test.
    Untested,
}

/// One statistic of both results, per operation, in nanoseconds.
#[derive(Debug, Clone, Serialize)]
pub struct StatDiff {
    pub stat: String,
    pub baseline_ns: Option<f64>,
    pub candidate_ns: Option<f64>,
    /// candidate − baseline.
    pub diff_ns: Option<f64>,
    /// (candidate − baseline) / baseline.
    pub relative: Option<f64>,
}

impl CompareRow {
    pub fn display_series(&self) -> String {
        let mut s = self.series.clone();
        for (k, v) in &self.labels {
            let _ = write!(s, " {k}={v}");
        }
        s
    }

    pub fn stat(&self, name: &str) -> Option<&StatDiff> {
        self.stats.iter().find(|s| s.stat == name)
    }
}

/// Letters A, B, C… for results in comparisons.
pub fn letter(i: usize) -> String {
    let mut n = i;
    let mut s = String::new();
    loop {
        s.insert(0, (b'A' + (n % 26) as u8) as char);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    s
}

type Key = (String, String, String, String, BTreeMap<String, String>);

fn key(run: &ProbeRun, s: &Series) -> Key {
    (
        run.title(),
        run.mode.clone(),
        run.load.clone(),
        s.name.clone(),
        s.labels.clone(),
    )
}

/// Compares `results[1..]` with the baseline `results[0]`; `sources` name where each came
/// from (a file path) and are shown beside the letters.
pub fn compare(results: &[RunResult], sources: &[String]) -> Comparison {
    let names: Vec<String> = (0..results.len()).map(letter).collect();
    let mut rows = Vec::new();
    let mut unmatched = Vec::new();
    if let Some(base) = results.first() {
        for (ci, cand) in results.iter().enumerate().skip(1) {
            compare_pair(base, cand, &names[0], &names[ci], &mut rows, &mut unmatched);
        }
    }
    let causes = cause_moves(results);
    Comparison {
        causes,
        results: names
            .iter()
            .enumerate()
            .map(|(i, n)| ComparedResult {
                name: n.clone(),
                source: sources.get(i).cloned().unwrap_or_default(),
                status: status_name(results[i].status).to_string(),
            })
            .collect(),
        rule: Rule {
            alpha: ALPHA,
            min_ks_d: MIN_KS_D,
            min_median_shift: MIN_MEDIAN_SHIFT,
            min_tail_shift: MIN_TAIL_SHIFT,
            min_samples: MIN_SAMPLES,
        },
        environment: environment_differences(results),
        rows,
        unmatched,
    }
}

fn run_status(r: &ProbeRun) -> Option<String> {
    match &r.status {
        ProbeStatus::Ok => None,
        ProbeStatus::Skipped { reason } => Some(format!("skipped: {reason}")),
        ProbeStatus::Failed { error } => Some(format!("failed: {error}")),
    }
}

fn compare_pair(
    base: &RunResult,
    cand: &RunResult,
    a: &str,
    b: &str,
    rows: &mut Vec<CompareRow>,
    unmatched: &mut Vec<String>,
) {
    // Probe runs that did not measure, on either side.
    for (name, result) in [(a, base), (b, cand)] {
        for r in &result.runs {
            if let Some(status) = run_status(r) {
                unmatched.push(format!(
                    "{} {} {}: {status} in {name}",
                    r.title(),
                    r.mode,
                    r.load
                ));
            }
        }
    }
    let cand_series: BTreeMap<Key, (&ProbeRun, &Series)> = cand
        .runs
        .iter()
        .flat_map(|r| r.series.iter().map(move |s| (key(r, s), (r, s))))
        .collect();
    let mut seen = Vec::new();
    for run in &base.runs {
        for s in &run.series {
            let k = key(run, s);
            let label = format!(
                "{} {} {} {}",
                run.title(),
                run.mode,
                run.load,
                s.display_name()
            );
            match cand_series.get(&k) {
                Some((_, cs)) => {
                    seen.push(k.clone());
                    match compare_series(run, s, cs, a, b) {
                        Some(row) => rows.push(row),
                        None => unmatched.push(format!("{label}: no samples in {a} or {b}")),
                    }
                }
                None => unmatched.push(format!("{label}: only in {a}, not in {b}")),
            }
        }
    }
    for (k, (run, s)) in &cand_series {
        if !seen.contains(k) {
            unmatched.push(format!(
                "{} {} {} {}: only in {b}, not in {a}",
                run.title(),
                run.mode,
                run.load,
                s.display_name()
            ));
        }
    }
}

fn relative(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| (b - a) / a)
}

fn stat(name: &str, a: Option<f64>, b: Option<f64>) -> StatDiff {
    StatDiff {
        stat: name.to_string(),
        baseline_ns: a,
        candidate_ns: b,
        diff_ns: a.zip(b).map(|(a, b)| b - a),
        relative: a.zip(b).and_then(|(a, b)| relative(a, b)),
    }
}

/// The percentile used for the tail column: p99.99 when both support it, else the highest
/// percentile both report.
fn tail_percentile(a: &Series, b: &Series) -> Option<(&'static str, u64, u64)> {
    let (ea, eb) = (a.stats.percentiles.entries(), b.stats.percentiles.entries());
    let p9999 = ea.iter().position(|e| e.0 == "p99.99").unwrap_or(3);
    if let (Some(x), Some(y)) = (ea[p9999].2, eb[p9999].2) {
        return Some((ea[p9999].0, x, y));
    }
    ea.iter()
        .zip(eb.iter())
        .rev()
        .find_map(|(x, y)| Some((x.0, x.2?, y.2?)))
}

fn compare_series(
    run: &ProbeRun,
    a: &Series,
    b: &Series,
    an: &str,
    bn: &str,
) -> Option<CompareRow> {
    let (da, db) = (Dist::of(a)?, Dist::of(b)?);
    let pa = |ns: Option<u64>| per_op(a, ns);
    let pb = |ns: Option<u64>| per_op(b, ns);
    let mut stats = vec![
        stat("min", pa(a.stats.min_ns), pb(b.stats.min_ns)),
        stat("median", pa(a.stats.median_ns), pb(b.stats.median_ns)),
    ];
    if let Some((label, x, y)) = tail_percentile(a, b) {
        stats.push(stat(label, pa(Some(x)), pb(Some(y))));
    }
    stats.push(stat("max", pa(a.stats.max_ns), pb(b.stats.max_ns)));

    let enough = da.count() >= MIN_SAMPLES && db.count() >= MIN_SAMPLES;
    let ks = enough.then(|| ks_test(&da, &db));
    let median_shift = stats[1].relative;
    let (outcome, verdict) = match ks {
        None => (
            Outcome::Untested,
            format!(
                "not tested: too few samples ({an} {}, {bn} {}; at least {MIN_SAMPLES} each)",
                da.count(),
                db.count()
            ),
        ),
        Some(t) => {
            let effect =
                t.d >= MIN_KS_D || median_shift.is_some_and(|m| m.abs() >= MIN_MEDIAN_SHIFT);
            if t.p_value < ALPHA && effect {
                let mut parts = Vec::new();
                for s in stats.iter().filter(|s| s.stat != "min" && s.stat != "max") {
                    if let Some(r) = s.relative {
                        parts.push(format!("{} {}", s.stat, percent(r)));
                    }
                }
                let tail_shift = stats
                    .iter()
                    .find(|s| s.stat.starts_with('p'))
                    .and_then(|s| s.relative);
                let (outcome, word) = match direction(&t, median_shift, tail_shift) {
                    Some(true) => (Outcome::Slower, "slower"),
                    Some(false) => (Outcome::Faster, "faster"),
                    None => (Outcome::Differs, "differs"),
                };
                let mut text = format!("{bn} {word}");
                if !parts.is_empty() {
                    text.push_str(": ");
                    text.push_str(&parts.join(", "));
                }
                if outcome == Outcome::Differs {
                    text.push_str(" (neither consistently slower nor faster)");
                }
                (outcome, text)
            } else {
                (Outcome::Same, "no significant difference".to_string())
            }
        }
    };
    Some(CompareRow {
        probe: run.title(),
        mode: run.mode.clone(),
        load: run.load.clone(),
        series: a.name.clone(),
        labels: a.labels.clone(),
        baseline: an.to_string(),
        candidate: bn.to_string(),
        n_baseline: da.count(),
        n_candidate: db.count(),
        stats,
        ks,
        outcome,
        verdict,
    })
}

/// Whether the candidate is slower (`Some(true)`), faster (`Some(false)`) or neither: the
/// cumulative distributions must be apart mostly on one side (the one-sided KS distance at
/// least twice the other), a median shift that counts must point the same way, and the tail
/// must not move the other way by [`MIN_TAIL_SHIFT`] or more.
fn direction(t: &KsTest, median_shift: Option<f64>, tail_shift: Option<f64>) -> Option<bool> {
    let by_cdf = if t.d_slower >= 2.0 * t.d_faster {
        Some(true)
    } else if t.d_faster >= 2.0 * t.d_slower {
        Some(false)
    } else {
        None
    };
    let by_median = median_shift
        .filter(|m| m.abs() >= MIN_MEDIAN_SHIFT)
        .map(|m| m > 0.0);
    // Tails are noisy: only a large opposite move of the tail contradicts the body.
    let by_tail = tail_shift
        .filter(|m| m.abs() >= MIN_TAIL_SHIFT)
        .map(|m| m > 0.0);
    match (by_cdf, by_median, by_tail) {
        (Some(c), Some(m), _) if c != m => None,
        (Some(c), _, Some(t)) if c != t => None,
        (c, _, _) => c,
    }
}

/// `+12 %`, `−3.4 %`: whole percent from 10 % up, one decimal below.
pub fn percent(r: f64) -> String {
    let p = r * 100.0;
    let sign = if p >= 0.0 { "+" } else { "−" };
    if p.abs() >= 10.0 {
        format!("{sign}{:.0} %", p.abs())
    } else {
        format!("{sign}{:.1} %", p.abs())
    }
}

/// Flattens a JSON value into `path = text` pairs; arrays of scalars become one value.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, v, out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            out.insert(prefix.to_string(), parts.join(","));
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), scalar(other));
        }
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "–".into(),
        other => other.to_string(),
    }
}

/// What describes the circumstances of a result, flattened: fingerprint, configuration, tool,
/// clock, what each probe run obtained, doctor verdicts and warning codes.
pub fn environment_fields(r: &RunResult) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    // An interrupted result beside a complete one is the first difference to know about.
    out.insert("status".into(), status_name(r.status).to_string());
    if let Ok(v) = serde_json::to_value(&r.fingerprint) {
        flatten("fingerprint", &v, &mut out);
    }
    if let Ok(v) = serde_json::to_value(&r.config) {
        flatten("config", &v, &mut out);
    }
    out.insert("tool.version".into(), r.tool.version.clone());
    out.insert(
        "calibration.clocksource".into(),
        r.calibration.clocksource.clone(),
    );
    out.insert("calibration.clock".into(), r.calibration.clock.clone());
    out.insert(
        "calibration.resolution_ns".into(),
        r.calibration.resolution_ns.to_string(),
    );
    for run in &r.runs {
        if let Ok(v) = serde_json::to_value(&run.obtained) {
            flatten(
                &format!("obtained[{} {} {}]", run.title(), run.mode, run.load),
                &v,
                &mut out,
            );
        }
        for (k, v) in &run.params {
            out.insert(
                format!("params[{} {} {}].{k}", run.title(), run.mode, run.load),
                v.clone(),
            );
        }
    }
    for c in &r.checks {
        out.insert(format!("doctor.{}", c.id), c.status.name().to_string());
    }
    let mut codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    out.insert("warnings".into(), codes.join(","));
    out
}

/// Fields whose values are not the same in every result.
pub fn environment_differences(results: &[RunResult]) -> Vec<EnvDifference> {
    let fields: Vec<BTreeMap<String, String>> = results.iter().map(environment_fields).collect();
    let mut keys: Vec<&String> = fields.iter().flat_map(|f| f.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let values: Vec<Option<String>> = fields.iter().map(|f| f.get(k).cloned()).collect();
            let first = &values[0];
            values.iter().any(|v| v != first).then(|| EnvDifference {
                field: k.clone(),
                values,
            })
        })
        .collect()
}

/// `8.00 → 11.3 (+41 %)` in `unit`.
pub fn fmt_stat(s: &StatDiff, unit: TimeUnit) -> String {
    let f = |v: Option<f64>| v.map(|v| unit.format(v)).unwrap_or_else(|| "–".into());
    let mut text = format!("{} → {}", f(s.baseline_ns), f(s.candidate_ns));
    if let Some(r) = s.relative {
        let _ = write!(text, " ({})", percent(r));
    }
    text
}

/// The display unit of a row, from the largest value it holds.
pub fn row_unit(row: &CompareRow) -> TimeUnit {
    let max = row
        .stats
        .iter()
        .flat_map(|s| [s.baseline_ns, s.candidate_ns])
        .flatten()
        .fold(0.0f64, f64::max);
    TimeUnit::for_max(max as u64)
}

/// Table style of the text renderings.
pub use crate::format::Style;

/// Terminal table or Markdown: environment differences, then one table per probe, then what
/// could not be compared and the rule.
pub fn render_text(c: &Comparison, style: Style) -> String {
    let md = style == Style::Markdown;
    let mut out = String::new();
    let heading = |out: &mut String, level: &str, text: &str| {
        if md {
            let _ = writeln!(out, "{level} {text}\n");
        } else {
            let _ = writeln!(out, "{text}");
        }
    };
    let new_table = || crate::format::new_table(style);
    if md {
        out.push_str("## Comparison\n\n");
    }
    for r in &c.results {
        let _ = writeln!(out, "{}{}", if md { "- " } else { "" }, r.describe());
    }
    out.push('\n');

    heading(&mut out, "###", "Environment and configuration differences");
    if c.environment.is_empty() {
        out.push_str("none\n\n");
    } else {
        let mut t = new_table();
        let mut header = vec!["Field".to_string()];
        header.extend(c.results.iter().map(|r| r.name.clone()));
        t.set_header(header);
        for d in &c.environment {
            let mut row = vec![d.field.clone()];
            row.extend(
                d.values
                    .iter()
                    .map(|v| v.clone().unwrap_or_else(|| "(absent)".into())),
            );
            t.add_row(row);
        }
        let _ = writeln!(out, "{t}\n");
    }

    let mut probes: Vec<&str> = Vec::new();
    for r in &c.rows {
        if !probes.contains(&r.probe.as_str()) {
            probes.push(&r.probe);
        }
    }
    for probe in probes {
        heading(&mut out, "###", probe);
        let rows: Vec<&CompareRow> = c.rows.iter().filter(|r| r.probe == probe).collect();
        let tail_label = if rows
            .iter()
            .all(|r| r.stats.len() < 4 || r.stats[2].stat == "p99.99")
        {
            "p99.99".to_string()
        } else {
            "p99.99 (or highest common)".to_string()
        };
        let mut t = new_table();
        t.set_header(vec![
            "Mode".to_string(),
            "Load".into(),
            "Series".into(),
            "Compared".into(),
            "Min".into(),
            "Median".into(),
            tail_label,
            "Max".into(),
            "KS D".into(),
            "p".into(),
            "Verdict".into(),
        ]);
        for r in rows {
            let unit = row_unit(r);
            let cell = |name: &str| {
                r.stat(name)
                    .map(|s| format!("{} {}", fmt_stat(s, unit), unit.label()))
                    .unwrap_or_else(|| "–".into())
            };
            let tail = r
                .stats
                .iter()
                .find(|s| s.stat.starts_with('p'))
                .map(|s| {
                    let prefix = if s.stat == "p99.99" {
                        String::new()
                    } else {
                        format!("{}: ", s.stat)
                    };
                    format!("{prefix}{} {}", fmt_stat(s, unit), unit.label())
                })
                .unwrap_or_else(|| "–".into());
            t.add_row(vec![
                r.mode.clone(),
                r.load.clone(),
                r.display_series(),
                format!("{} vs {}", r.candidate, r.baseline),
                cell("min"),
                cell("median"),
                tail,
                cell("max"),
                r.ks.map(|k| format!("{:.3}", k.d))
                    .unwrap_or_else(|| "–".into()),
                r.ks.map(|k| format_p(k.p_value))
                    .unwrap_or_else(|| "–".into()),
                r.verdict.clone(),
            ]);
        }
        for i in 4..10 {
            if let Some(col) = t.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        let _ = writeln!(out, "{t}\n");
    }
    if !c.causes.is_empty() {
        heading(
            &mut out,
            "###",
            "Why spikes were late (dominant causes of explained spikes)",
        );
        let mut t = new_table();
        let mut header = vec!["Probe run".to_string(), "Cause".to_string()];
        header.extend(c.results.iter().map(|r| r.name.clone()));
        t.set_header(header);
        for m in &c.causes {
            let mut row = vec![m.run.clone(), m.cause.clone()];
            row.extend(m.counts.iter().zip(&m.longest_ns).map(|(&n, &ns)| match n {
                0 => "-".to_string(),
                n => format!(
                    "{n} (up to {})",
                    rtgauge_result::units::format_duration_ns(ns)
                ),
            }));
            t.add_row(row);
        }
        let _ = writeln!(out, "{t}\n");
    }
    if !c.unmatched.is_empty() {
        heading(&mut out, "###", "Not compared");
        for u in &c.unmatched {
            let _ = writeln!(out, "- {u}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{}Rule: a row differs when the two-sample Kolmogorov–Smirnov test on the histograms gives p < {} and the effect is large enough: KS D ≥ {} or a median shift of at least {} %.",
        if md { "_" } else { "" },
        c.rule.alpha,
        c.rule.min_ks_d,
        c.rule.min_median_shift * 100.0
    );
    if md {
        // Close the emphasis opened above.
        out.truncate(out.trim_end().len());
        out.push_str("_\n");
    }
    out
}

/// A p-value for people: `<1e-300`, `3.2e-7`, `0.041`, `1`.
pub fn format_p(p: f64) -> String {
    if p <= 0.0 {
        "<1e-300".into()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else if p >= 0.9995 {
        "1".into()
    } else {
        format!("{p:.3}")
    }
}

/// CSV: `#` comment lines with the results and environment differences (read with
/// `pandas.read_csv(f, comment="#")`), then one line per row, times in ns per operation.
pub fn render_csv(c: &Comparison) -> String {
    let mut out = String::new();
    for r in &c.results {
        let _ = writeln!(out, "# {}", r.describe().replace('\n', " "));
    }
    for d in &c.environment {
        let values: Vec<String> = d
            .values
            .iter()
            .zip(&c.results)
            .map(|(v, r)| format!("{}={}", r.name, v.as_deref().unwrap_or("(absent)")))
            .collect();
        let _ = writeln!(
            out,
            "# differs: {}: {}",
            d.field,
            values.join(" ").replace('\n', " ")
        );
    }
    out.push_str("probe,mode,load,series,labels,baseline,candidate,n_baseline,n_candidate");
    for s in ["min", "median", "tail", "max"] {
        if s == "tail" {
            out.push_str(",tail_stat");
        }
        let _ = write!(
            out,
            ",{s}_baseline_ns,{s}_candidate_ns,{s}_diff_ns,{s}_relative"
        );
    }
    out.push_str(",ks_d,ks_p,outcome,verdict\n");
    for r in &c.rows {
        let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let fields = [
            r.probe.clone(),
            r.mode.clone(),
            r.load.clone(),
            r.series.clone(),
            labels.join(" "),
            r.baseline.clone(),
            r.candidate.clone(),
            r.n_baseline.to_string(),
            r.n_candidate.to_string(),
        ];
        let mut line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        let tail = r.stats.iter().find(|s| s.stat.starts_with('p'));
        for name in ["min", "median", "tail", "max"] {
            let s = if name == "tail" {
                line.push(tail.map(|s| s.stat.clone()).unwrap_or_default());
                tail
            } else {
                r.stat(name)
            };
            line.push(csv_num(s.and_then(|s| s.baseline_ns)));
            line.push(csv_num(s.and_then(|s| s.candidate_ns)));
            line.push(csv_num(s.and_then(|s| s.diff_ns)));
            line.push(
                s.and_then(|s| s.relative)
                    .map(|v| format!("{v:.6}"))
                    .unwrap_or_default(),
            );
        }
        line.push(r.ks.map(|k| format!("{:.6}", k.d)).unwrap_or_default());
        line.push(
            r.ks.map(|k| format!("{:.6e}", k.p_value))
                .unwrap_or_default(),
        );
        line.push(
            match r.outcome {
                Outcome::Same => "same",
                Outcome::Slower => "slower",
                Outcome::Faster => "faster",
                Outcome::Differs => "differs",
                Outcome::Untested => "untested",
            }
            .into(),
        );
        line.push(csv_field(&r.verdict));
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// JSON (pretty) of the whole comparison.
pub fn render_json(c: &Comparison) -> String {
    crate::format::json_text(c)
}

impl crate::format::Render for Comparison {
    const WHAT: &'static str = "a comparison";

    fn formats(&self) -> &'static [crate::format::Format] {
        crate::format::TABLE_FORMATS
    }

    fn render(&self, format: crate::format::Format) -> Result<String, crate::format::Unsupported> {
        use crate::format::Format;
        match format {
            Format::Text(style) => Ok(render_text(self, style)),
            Format::Csv => Ok(render_csv(self)),
            Format::Json => Ok(render_json(self)),
            other => Err(self.unsupported(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ks(d_slower: f64, d_faster: f64) -> KsTest {
        KsTest {
            d: d_slower.max(d_faster),
            d_slower,
            d_faster,
            p_value: 0.0,
            n_a: 1000,
            n_b: 1000,
        }
    }

    #[test]
    fn direction_needs_body_and_tail_to_agree() {
        assert_eq!(direction(&ks(0.5, 0.0), Some(0.3), Some(0.8)), Some(true));
        assert_eq!(direction(&ks(0.0, 0.5), Some(-0.3), None), Some(false));
        // The distributions cross: neither.
        assert_eq!(direction(&ks(0.3, 0.2), Some(0.1), None), None);
        // Body faster, tail much slower: neither.
        assert_eq!(direction(&ks(0.0, 0.4), Some(-0.06), Some(1.1)), None);
        // A small tail wobble does not contradict the body.
        assert_eq!(
            direction(&ks(0.0, 0.4), Some(-0.06), Some(0.1)),
            Some(false)
        );
        // The median moving against the CDF: neither.
        assert_eq!(direction(&ks(0.4, 0.1), Some(-0.2), None), None);
    }

    #[test]
    fn letters_and_percentages() {
        assert_eq!(letter(0), "A");
        assert_eq!(letter(25), "Z");
        assert_eq!(letter(26), "AA");
        assert_eq!(percent(0.123), "+12 %");
        assert_eq!(percent(-0.034), "−3.4 %");
        assert_eq!(format_p(0.0), "<1e-300");
        assert_eq!(format_p(0.5), "0.500");
    }
}
