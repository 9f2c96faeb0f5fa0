//! `rtgauge compare`: results side by side per probe × mode × load × series, with differences,
//! a two-sample Kolmogorov–Smirnov test on the histograms and a one-line verdict per row.
//!
//! Differences in environment and configuration come first: a comparison of two kernels on two
//! boards at two periods is legitimate, but the reader must see that before the numbers.
//!
//! The verdict rule (see docs/compare.md): samples of one run are not independent (stalls
//! cluster in time) and two runs of one configuration differ by more than a test on their
//! samples expects, so a KS p-value on the samples calls noise a change. A row of two single
//! runs is declared *different* only when the KS test rejects "same distribution" at
//! [`ALPHA`] with each run's **time blocks** (its one-second intervals) as the independent
//! units, **and** KS D ≥ [`MIN_KS_D`]. Short runs have few blocks, so they can rarely declare
//! anything: that is the honest answer. A tail change is declared from the per-interval
//! maxima (at least [`MIN_BLOCKS`] each) with a rank test. What the sample test rejects but
//! the rule does not declare is reported as "cannot separate from run-to-run variation",
//! with the variation measured in these two runs. Repeated runs ([`compare_repeated`]) make
//! the run the unit.

use crate::dist::Dist;
use crate::format::{csv_field, csv_num, per_op, TimeUnit};
use crate::ks::{ks_test, KsTest};
use rtgauge_result::SeriesKey;
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, Series};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Significance level of the KS test.
pub const ALPHA: f64 = 0.01;
/// Smallest KS distance (largest gap between the two cumulative distributions) that counts:
/// above what pairs of identical runs reached (docs/compare.md).
pub const MIN_KS_D: f64 = 0.35;
/// KS distance below which a rejected test is not even worth a "cannot separate" remark.
pub const NOTICE_KS_D: f64 = 0.1;
/// Smallest relative median shift that gives a difference its direction.
pub const MIN_MEDIAN_SHIFT: f64 = 0.05;
/// Time blocks (intervals with a maximum) each run needs before its tail is compared block
/// by block.
pub const MIN_BLOCKS: usize = 8;
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
            let label = run.key().to_string();
            for g in rtgauge_result::spike::dominant_causes(&run.spikes) {
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
        if self.status == rtgauge_result::RunStatus::Complete.as_str() {
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
    pub min_blocks: usize,
    pub min_tail_shift: f64,
    pub min_samples: u64,
    /// Repeated runs were compared, the run as the unit (Welch's t-test on per-run values).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub runs_as_unit: bool,
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
    /// Repeated runs compared (baseline, candidate): the run was the unit of the test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<[usize; 2]>,
    pub outcome: Outcome,
    pub verdict: String,
    /// The smallest change of each tested statistic this pair of single runs could have
    /// declared: `could detect ≥ +35 % in p99.9, …`. Empty without tests.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub power: String,
    /// Single runs with block histograms: each statistic tested against the baseline's own
    /// variation, both ways (docs/compare.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<crate::verdict::StatTest>,
    /// The extreme-value estimate of each side (baseline, candidate) of a wake-up, response
    /// or stall series: `predicted 1-h max ≤ …` or `no estimate: …`. Absent when neither
    /// result has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_case: Option<[String; 2]>,
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
    /// The test sees a difference, but no larger than identical runs show: not a verdict.
    WithinNoise,
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
                status: results[i].status.to_string(),
            })
            .collect(),
        rule: Rule {
            alpha: ALPHA,
            min_ks_d: MIN_KS_D,
            min_median_shift: MIN_MEDIAN_SHIFT,
            min_blocks: MIN_BLOCKS,
            min_tail_shift: MIN_TAIL_SHIFT,
            min_samples: MIN_SAMPLES,
            runs_as_unit: false,
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
    let cand_series: BTreeMap<SeriesKey, (&ProbeRun, &Series)> = cand
        .runs
        .iter()
        .flat_map(|r| r.series.iter().map(move |s| (r.series_key(s), (r, s))))
        .collect();
    let mut seen = Vec::new();
    let mut pending = Vec::new();
    for run in &base.runs {
        for s in &run.series {
            let k = run.series_key(s);
            let label = k.to_string();
            match cand_series.get(&k) {
                Some((_, cs)) => {
                    seen.push(k.clone());
                    match compare_series(run, s, cs, a, b) {
                        Some(row) => rows.push(row),
                        None => unmatched.push(format!("{label}: no samples in {a} or {b}")),
                    }
                }
                None => pending.push((run, s, label)),
            }
        }
    }
    // A series measured under another load or in another mode (a loaded run against an idle
    // baseline, rt against normal) pairs with its one counterpart that differs only there.
    for (run, s, label) in pending {
        let k = run.series_key(s);
        // The closest counterpart: another load in the same mode, else another mode under
        // the same load, else both; paired only when it is the only one.
        let others: Vec<&SeriesKey> = [
            |c: &SeriesKey, k: &SeriesKey| c.run.mode == k.run.mode,
            |c: &SeriesKey, k: &SeriesKey| c.run.load == k.run.load,
            |_: &SeriesKey, _: &SeriesKey| true,
        ]
        .iter()
        .map(|closer| {
            cand_series
                .keys()
                .filter(|c| {
                    !seen.contains(*c) && differs_only_in_mode_or_load(c, &k) && closer(c, &k)
                })
                .collect::<Vec<_>>()
        })
        .find(|found| !found.is_empty())
        .unwrap_or_default();
        match others.as_slice() {
            [other] => {
                let other = (*other).clone();
                let (crun, cs) = cand_series[&other];
                seen.push(other);
                match compare_series(run, s, cs, a, b) {
                    Some(mut row) => {
                        row.mode = moved(&run.mode, &crun.mode);
                        row.load = moved(&run.load, &crun.load);
                        rows.push(row);
                    }
                    None => unmatched.push(format!("{label}: no samples in {a} or {b}")),
                }
            }
            _ => unmatched.push(format!("{label}: only in {a}, not in {b}")),
        }
    }
    for k in cand_series.keys() {
        if !seen.contains(k) {
            unmatched.push(format!("{k}: only in {b}, not in {a}"));
        }
    }
}

/// Whether two series are the same measurement, perhaps in another mode or under another
/// load.
fn differs_only_in_mode_or_load(a: &SeriesKey, b: &SeriesKey) -> bool {
    (&a.run.probe, &a.run.variant, &a.name, &a.labels)
        == (&b.run.probe, &b.run.variant, &b.name, &b.labels)
}

/// `none → messaging` when a value differs between the two sides, else the value.
fn moved(a: &str, b: &str) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a} → {b}")
    }
}

/// The two sides of a row's mode or load (`none → messaging`, or the same value twice).
pub fn sides(value: &str) -> (&str, &str) {
    value.split_once(" → ").unwrap_or((value, value))
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
    // An imported summary (min/avg/max only) has no distribution to test.
    let without_histogram: Vec<&str> = [(an, a), (bn, b)]
        .iter()
        .filter(|(_, s)| s.stats.histogram.buckets.is_empty())
        .map(|(n, _)| *n)
        .collect();
    let ks = (enough && without_histogram.is_empty()).then(|| {
        ks_test(&da, &db).with_blocks(block_maxima(a).len() as u64, block_maxima(b).len() as u64)
    });
    let median_shift = stats[1].relative;
    // Runs that kept block histograms: every statistic against the baseline's own variation.
    let tested: Vec<&str> = stats
        .iter()
        .map(|s| s.stat.as_str())
        .filter(|s| *s != "min")
        .collect();
    let tests = if enough && without_histogram.is_empty() {
        crate::verdict::test_row(a, b, &tested)
    } else {
        Vec::new()
    };
    let (outcome, verdict) = match ks {
        Some(_) if !tests.is_empty() => {
            let (judgement, text) = crate::verdict::judge(&tests, bn);
            use crate::verdict::Judgement;
            let outcome = match judgement {
                Judgement::Slower => Outcome::Slower,
                Judgement::Faster => Outcome::Faster,
                Judgement::Differs => Outcome::Differs,
                Judgement::WithinNoise => Outcome::WithinNoise,
                Judgement::Same => Outcome::Same,
            };
            (outcome, text)
        }
        None if !without_histogram.is_empty() => (
            Outcome::Untested,
            format!(
                "not tested: no histogram in {} (min, average and max only)",
                without_histogram.join(" and ")
            ),
        ),
        None => (
            Outcome::Untested,
            format!(
                "not tested: too few samples ({an} {}, {bn} {}; at least {MIN_SAMPLES} each)",
                da.count(),
                db.count()
            ),
        ),
        Some(t) => {
            let blocks = BlockTest::of(a, b);
            let tail_by_blocks =
                blocks.filter(|bt| bt.p_value < ALPHA && bt.shift.abs() >= MIN_TAIL_SHIFT);
            if t.p_value_blocks < ALPHA && t.d >= MIN_KS_D {
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
            } else if let Some(bt) = tail_by_blocks {
                let (outcome, word) = if bt.shift > 0.0 {
                    (Outcome::Slower, "slower")
                } else {
                    (Outcome::Faster, "faster")
                };
                (
                    outcome,
                    format!(
                        "{bn} {word} in the tail: worst per interval {} ({} vs {} intervals)",
                        percent(bt.shift),
                        bt.blocks_a,
                        bt.blocks_b
                    ),
                )
            } else if t.p_value < ALPHA
                && (t.d >= NOTICE_KS_D || median_shift.is_some_and(|m| m.abs() >= MIN_MEDIAN_SHIFT))
            {
                let spread = block_spread(a, b);
                let text = match spread {
                    Some(x) => format!(
                        "cannot separate from run-to-run variation (± {:.0} % measured here)",
                        x * 100.0
                    ),
                    None => "cannot separate from run-to-run variation".to_string(),
                };
                (Outcome::WithinNoise, text)
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
        runs: None,
        outcome,
        verdict,
        power: crate::verdict::power_text(&tests),
        tests,
        worst_case: worst_case_pair(a, b),
    })
}

/// Both sides' estimates in words, for the series whose worst case users ask about.
fn worst_case_pair(a: &Series, b: &Series) -> Option<[String; 2]> {
    if !crate::worst_case::HEADLINE_SERIES.contains(&a.name.as_str())
        || (a.worst_case.is_none() && b.worst_case.is_none())
    {
        return None;
    }
    let text = |s: &Series| {
        s.worst_case.as_ref().map_or_else(
            || "no estimate in this result".to_string(),
            crate::worst_case::verdict_text,
        )
    };
    Some([text(a), text(b)])
}

/// The tails of two runs compared block by block: each interval's maximum is one value, so
/// a stall that lasts a moment counts once, however many samples it delayed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct BlockTest {
    blocks_a: usize,
    blocks_b: usize,
    /// Relative shift of the median interval maximum, candidate against baseline.
    shift: f64,
    /// Two-sided Mann–Whitney p-value (normal approximation with tie correction).
    p_value: f64,
}

/// Interval maxima of a series, per operation; intervals without samples left out.
fn block_maxima(s: &Series) -> Vec<f64> {
    let batch = s.batch.max(1) as f64;
    s.stats
        .intervals
        .max_ns
        .iter()
        .flatten()
        .map(|&v| v as f64 / batch)
        .collect()
}

pub(crate) fn median_of(values: &[f64]) -> Option<f64> {
    quantile_of(values, 0.5)
}

/// Linear-interpolated quantile of unsorted values.
fn quantile_of(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(v[lo] + (v[hi] - v[lo]) * (pos - lo as f64))
}

impl BlockTest {
    /// `None` when either run has fewer than [`MIN_BLOCKS`] intervals with samples.
    fn of(a: &Series, b: &Series) -> Option<BlockTest> {
        let (xa, xb) = (block_maxima(a), block_maxima(b));
        if xa.len() < MIN_BLOCKS || xb.len() < MIN_BLOCKS {
            return None;
        }
        let (ma, mb) = (median_of(&xa)?, median_of(&xb)?);
        let shift = relative(ma, mb)?;
        Some(BlockTest {
            blocks_a: xa.len(),
            blocks_b: xb.len(),
            shift,
            p_value: mann_whitney_p(&xa, &xb),
        })
    }
}

/// Two-sided p-value of the Mann–Whitney U test (normal approximation, tie-corrected).
fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    (2.0 * normal_upper_tail(rtgauge_stats::shift::rank_z(a, b).abs())).min(1.0)
}

/// P(Z > z) for a standard normal.
fn normal_upper_tail(z: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().sf(z)
}

/// How much the worst case moves from interval to interval within these two runs: the
/// interquartile range of their pooled interval maxima over its median. `None` without at
/// least two intervals.
fn block_spread(a: &Series, b: &Series) -> Option<f64> {
    let mut all = block_maxima(a);
    all.extend(block_maxima(b));
    if all.len() < 2 {
        return None;
    }
    let median = median_of(&all)?;
    let iqr = quantile_of(&all, 0.75)? - quantile_of(&all, 0.25)?;
    (median > 0.0).then(|| iqr / median)
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
    environment_fields_named(r, &|run: &ProbeRun| run.key().to_string())
}

/// [`environment_fields`] with each probe run's fields named by `name_of`.
fn environment_fields_named(
    r: &RunResult,
    name_of: &dyn Fn(&ProbeRun) -> String,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    // An interrupted result beside a complete one is the first difference to know about.
    out.insert("status".into(), r.status.to_string());
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
        let name = name_of(run);
        if let Ok(v) = serde_json::to_value(&run.obtained) {
            flatten(&format!("obtained[{name}]"), &v, &mut out);
        }
        for (k, v) in &run.params {
            out.insert(format!("params[{name}].{k}"), v.clone());
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

/// Fields whose values are not the same in every result. Two results whose probes each ran
/// once (an idle run against a loaded one, rt against normal, two hosts) name their probe runs
/// by probe alone, so what differs is listed once (`config.loads: none → messaging`), not as
/// every field of a run present on one side only.
pub fn environment_differences(results: &[RunResult]) -> Vec<EnvDifference> {
    let once_each = |title: &str| {
        results
            .iter()
            .all(|r| r.runs.iter().filter(|run| run.title() == title).count() == 1)
    };
    let name_of = |run: &ProbeRun| {
        if results.len() == 2 && once_each(&run.title()) {
            run.title()
        } else {
            run.key().to_string()
        }
    };
    let mut fields: Vec<BTreeMap<String, String>> = results
        .iter()
        .map(|r| environment_fields_named(r, &name_of))
        .collect();
    // A parameter no run set, from one version of rtgauge, took its value at run time (a
    // cyclic run's phase is read from the clock): a different value is not a difference
    // in configuration.
    let one_version = results
        .windows(2)
        .all(|w| w[0].tool.version == w[1].tool.version);
    if one_version {
        let set_by_someone = |field: &str| {
            let Some((run, key)) = field
                .strip_prefix("params[")
                .and_then(|f| f.split_once("]."))
            else {
                return true;
            };
            let title = run.split(' ').next().unwrap_or(run);
            results
                .iter()
                .any(|r| r.config.params.contains_key(&format!("{title}.{key}")))
        };
        for f in &mut fields {
            f.retain(|field, _| set_by_someone(field));
        }
    }
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

/// Terminal table or Markdown: environment differences, then one table per probe (each row's
/// verdict in a word and the number of its note), the notes, what could not be compared and
/// the rule. Terminal tables fit [`crate::format::width`] columns: the explanations are
/// the numbered notes below each table.
pub fn render_text(c: &Comparison, style: Style) -> String {
    let md = style == Style::Markdown;
    let mut out = String::new();
    if md {
        out.push_str("## Comparison\n\n");
    }
    for r in &c.results {
        let _ = writeln!(out, "{}{}", if md { "- " } else { "" }, r.describe());
    }
    out.push('\n');
    heading(&mut out, md, "Environment and configuration differences");
    out.push_str(&environment_table(c, style));
    let mut probes: Vec<&str> = Vec::new();
    for r in &c.rows {
        if !probes.contains(&r.probe.as_str()) {
            probes.push(&r.probe);
        }
    }
    for probe in probes {
        let rows: Vec<&CompareRow> = c.rows.iter().filter(|r| r.probe == probe).collect();
        out.push_str(&probe_section(probe, &rows, style));
    }
    if !c.causes.is_empty() {
        heading(
            &mut out,
            md,
            "Why spikes were late (dominant causes of explained spikes)",
        );
        out.push_str(&causes_table(c, style));
    }
    if !c.unmatched.is_empty() {
        heading(&mut out, md, "Not compared");
        for u in &c.unmatched {
            let _ = writeln!(out, "- {u}");
        }
        out.push('\n');
    }
    let rule = rule_text(&c.rule);
    if md {
        let _ = writeln!(out, "_{rule}_");
    } else {
        for line in crate::summary::wrap(&rule, crate::format::width()) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

fn heading(out: &mut String, md: bool, text: &str) {
    if md {
        let _ = writeln!(out, "### {text}\n");
    } else {
        let _ = writeln!(out, "{text}");
    }
}

fn environment_table(c: &Comparison, style: Style) -> String {
    if c.environment.is_empty() {
        return "none\n\n".into();
    }
    let mut t = crate::format::fitted_table(style);
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
    format!("{t}\n\n")
}

/// `66.0 → 96.2 +46 %` in the row's unit.
fn stat_cell(s: Option<&StatDiff>, unit: TimeUnit) -> String {
    let Some(s) = s else {
        return "–".into();
    };
    let f = |v: Option<f64>| v.map(|v| unit.format(v)).unwrap_or_else(|| "–".into());
    let mut text = format!("{} → {}", f(s.baseline_ns), f(s.candidate_ns));
    if let Some(r) = s.relative {
        // Without the space, so a narrow cell never breaks the number from its sign.
        let _ = write!(text, " {}", percent(r).replace(' ', ""));
    }
    text
}

/// The verdict of a row in a word or two.
fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Same => "same",
        Outcome::Slower => "SLOWER",
        Outcome::Faster => "faster",
        Outcome::Differs => "DIFFERS",
        Outcome::WithinNoise => "noise?",
        Outcome::Untested => "untested",
    }
}

/// One probe's rows: mode and load in the heading when every row shares them, the verdict in
/// a word with the number of its note, then the notes and the worst-case estimates.
fn probe_section(probe: &str, rows: &[&CompareRow], style: Style) -> String {
    let md = style == Style::Markdown;
    let mut out = String::new();
    let shared = |f: fn(&CompareRow) -> &str| {
        let first = f(rows[0]);
        rows.iter().all(|r| f(r) == first).then_some(first)
    };
    let (mode, load) = (shared(|r| &r.mode), shared(|r| &r.load));
    let mut title = probe.to_string();
    for part in [mode, load].into_iter().flatten() {
        let _ = write!(title, " · {part}");
    }
    heading(&mut out, md, &title);
    let tail = shared(|r| {
        r.stats
            .iter()
            .find(|s| s.stat.starts_with('p'))
            .map_or("", |s| s.stat.as_str())
    })
    .filter(|t| !t.is_empty());
    let mut header: Vec<String> = Vec::new();
    if mode.is_none() {
        header.push("Mode".into());
    }
    if load.is_none() {
        header.push("Load".into());
    }
    header.extend([
        "Series".to_string(),
        "Unit".into(),
        "Median".into(),
        tail.unwrap_or("Tail").to_string(),
        "Max".into(),
        "Verdict".into(),
    ]);
    let mut t = crate::format::fitted_table(style);
    t.set_header(header);
    let mut notes = Vec::new();
    for r in rows {
        let unit = row_unit(r);
        let tail_stat = r.stats.iter().find(|s| s.stat.starts_with('p'));
        let mut cells: Vec<String> = Vec::new();
        if mode.is_none() {
            cells.push(r.mode.clone());
        }
        if load.is_none() {
            cells.push(r.load.clone());
        }
        let mut tail_cell = stat_cell(tail_stat, unit);
        if tail.is_none() {
            if let Some(s) = tail_stat {
                tail_cell = format!("{}: {tail_cell}", s.stat);
            }
        }
        let mut note = r.verdict.clone();
        if !r.power.is_empty() && !note.contains(&r.power) {
            let _ = write!(note, "; {}", r.power);
        }
        if r.candidate != "B" || r.baseline != "A" {
            note = format!("{} against {}: {note}", r.candidate, r.baseline);
        }
        notes.push(note);
        cells.extend([
            r.display_series(),
            unit.label().to_string(),
            stat_cell(r.stat("median"), unit),
            tail_cell,
            stat_cell(r.stat("max"), unit),
            format!("{} ({})", outcome_word(r.outcome), notes.len()),
        ]);
        t.add_row(cells);
    }
    let _ = writeln!(out, "{t}\n");
    out.push_str(&crate::format::numbered_notes(&notes, md));
    out.push_str(&worst_case_lines(rows, md));
    out
}

/// The extreme-value estimates of both sides, one line per row that has one; rows where
/// neither side could make one are summed up in one line.
fn worst_case_lines(rows: &[&CompareRow], md: bool) -> String {
    let mut out = String::new();
    let mut without = 0;
    for r in rows {
        let Some([a, b]) = &r.worst_case else {
            continue;
        };
        if a.starts_with("no estimate") && b.starts_with("no estimate") {
            without += 1;
            continue;
        }
        let line = format!(
            "worst case, {}: {} {a}; {} {b}",
            r.display_series(),
            r.baseline,
            r.candidate
        );
        if md {
            let _ = writeln!(out, "- {line}");
        } else {
            for l in crate::summary::wrap(&line, crate::format::width()) {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    if without > 0 {
        let _ = writeln!(
            out,
            "{}worst case beyond the runs: no estimate for {without} row{} (runs of at least 30 s make one)",
            if md { "- " } else { "" },
            if without == 1 { "" } else { "s" }
        );
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

fn causes_table(c: &Comparison, style: Style) -> String {
    let mut t = crate::format::fitted_table(style);
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
    format!("{t}\n\n")
}

/// The verdict rule in one paragraph.
fn rule_text(rule: &Rule) -> String {
    if rule.runs_as_unit {
        format!(
            "Rule: each run is one value per statistic; a row differs when Welch's t-test on the runs' logarithms gives p < {} and the median moved by {} % or more (or a tail percentile by {} % or more); the run-to-run variation is measured from these runs (docs/compare.md).",
            rule.alpha,
            rule.min_median_shift * 100.0,
            rule.min_tail_shift * 100.0
        )
    } else {
        format!(
            "Rule: each statistic of B is tested against A's own variation over its {} blocks: the median and the tail percentile by the share of each block's samples above A's value moved by {} %, the maximum by the blocks' maxima; a one-sided rank test (widened for neighbouring blocks that resemble each other) declares it slower or faster, the row's level of {} shared among its tests. \"could detect\" is the smallest change each test declares nine times in ten; \"noise?\" means a statistic moved past {} % but these runs cannot tell it from their variation. Results written without block histograms keep the earlier rule (docs/compare.md).",
            rtgauge_result::units::format_duration_ns(rtgauge_stats::blocks::BLOCK_NS),
            crate::verdict::COMPARE_MARGIN * 100.0,
            rtgauge_stats::shift::ALPHA,
            crate::verdict::COMPARE_MARGIN * 100.0,
        )
    }
}

/// Compares repeated runs of two configurations (`run --repeat`, or alternated runs) with
/// the run as the unit: each run gives one median, one tail percentile and one maximum per
/// row, and the two sides' runs are compared with Welch's t-test on their logarithms. The
/// run-to-run variation is measured from the runs themselves, so the verdict is only as
/// confident as the runs are consistent. Rows pair as [`compare`] pairs the first run of each
/// side. `sources` name the two sides.
pub fn compare_repeated(
    base: &[RunResult],
    cand: &[RunResult],
    sources: [String; 2],
) -> Comparison {
    let (Some(first_a), Some(first_b)) = (base.first(), cand.first()) else {
        return compare(&[], &[]);
    };
    let mut c = compare(&[first_a.clone(), first_b.clone()], &sources);
    for (r, n) in c.results.iter_mut().zip([base.len(), cand.len()]) {
        r.source = format!("{} ({n} runs)", r.source);
    }
    for row in &mut c.rows {
        let (load_a, load_b) = match row.load.split_once(" → ") {
            Some((x, y)) => (x.to_string(), y.to_string()),
            None => (row.load.clone(), row.load.clone()),
        };
        let tail = row
            .stats
            .iter()
            .find(|s| s.stat.starts_with('p'))
            .map(|s| s.stat.clone());
        let per_run = |side: &[RunResult], load: &str| -> Vec<RunValues> {
            side.iter()
                .filter_map(|r| {
                    let s = r
                        .runs
                        .iter()
                        .filter(|p| p.title() == row.probe && p.mode == row.mode && p.load == load)
                        .flat_map(|p| &p.series)
                        .find(|s| s.name == row.series && s.labels == row.labels)?;
                    RunValues::of(s, tail.as_deref())
                })
                .collect()
        };
        let (va, vb) = (per_run(base, &load_a), per_run(cand, &load_b));
        judge_repeated(row, &va, &vb);
    }
    c.rule.runs_as_unit = true;
    c
}

/// One run's figures for one row, per operation.
#[derive(Debug, Clone, Copy)]
struct RunValues {
    median: f64,
    tail: Option<f64>,
    max: f64,
    count: u64,
}

impl RunValues {
    fn of(s: &Series, tail: Option<&str>) -> Option<RunValues> {
        let batch = s.batch.max(1) as f64;
        let per_op = |v: u64| v as f64 / batch;
        let tail = tail.and_then(|label| {
            s.stats
                .percentiles
                .entries()
                .iter()
                .find(|e| e.0 == label)
                .and_then(|e| e.2)
                .map(per_op)
        });
        Some(RunValues {
            median: per_op(s.stats.median_ns?),
            tail,
            max: per_op(s.stats.max_ns?),
            count: s.stats.count,
        })
    }
}

/// Welch's t-test on the logarithms of two sets of per-run values: (two-sided p, relative
/// shift of the geometric means, run-to-run variation as a relative standard deviation).
fn welch_log(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    // Both sides need their own variation here: a side of one run is "not tested".
    let runs = |v: &[f64]| v.iter().filter(|x| **x > 0.0).count();
    if runs(a) < 2 || runs(b) < 2 {
        return None;
    }
    let w = rtgauge_stats::runs::LogWelch::of(a, b)?;
    Some((w.p_two_sided(), w.change(), w.spread()))
}

fn middle(values: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = values.collect();
    median_of(&v)
}

/// Sets a row's figures (the median over runs of each statistic) and verdict from per-run
/// values.
fn judge_repeated(row: &mut CompareRow, a: &[RunValues], b: &[RunValues]) {
    row.runs = Some([a.len(), b.len()]);
    row.ks = None;
    row.n_baseline = a.iter().map(|v| v.count).sum();
    row.n_candidate = b.iter().map(|v| v.count).sum();
    for s in &mut row.stats {
        let pick = |v: &RunValues| match s.stat.as_str() {
            "median" => Some(v.median),
            "max" => Some(v.max),
            "min" => None,
            _ => v.tail,
        };
        if s.stat == "min" {
            continue;
        }
        let (x, y) = (
            middle(a.iter().filter_map(pick)),
            middle(b.iter().filter_map(pick)),
        );
        *s = stat(&s.stat, x, y);
    }
    let (bn, runs) = (
        row.candidate.clone(),
        format!("{} vs {} runs", b.len(), a.len()),
    );
    let medians = |v: &[RunValues]| v.iter().map(|x| x.median).collect::<Vec<_>>();
    let tails = |v: &[RunValues]| v.iter().filter_map(|x| x.tail).collect::<Vec<_>>();
    let Some((p_med, shift_med, spread)) = welch_log(&medians(a), &medians(b)) else {
        row.outcome = Outcome::Untested;
        row.verdict = format!("not tested: needs at least 2 runs on each side ({runs})");
        return;
    };
    let tail = welch_log(&tails(a), &tails(b));
    // A significant shift: which way, of what, by how much.
    let shifted = |row: &mut CompareRow, what: &str, shift: f64, p: f64| {
        let (outcome, word) = if shift > 0.0 {
            (Outcome::Slower, "slower")
        } else {
            (Outcome::Faster, "faster")
        };
        row.outcome = outcome;
        row.verdict = format!(
            "{bn} {word}{what} {} ({runs}, p {})",
            percent(shift),
            format_p(p)
        );
    };
    if p_med < ALPHA && shift_med.abs() >= MIN_MEDIAN_SHIFT {
        shifted(row, ": median", shift_med, p_med);
    } else if let Some((p, shift, _)) = tail.filter(|t| t.0 < ALPHA && t.1.abs() >= MIN_TAIL_SHIFT)
    {
        shifted(row, " in the tail:", shift, p);
    } else if shift_med.abs() >= MIN_MEDIAN_SHIFT
        || tail.is_some_and(|t| t.1.abs() >= MIN_TAIL_SHIFT)
    {
        row.outcome = Outcome::WithinNoise;
        row.verdict = format!(
            "cannot separate from run-to-run variation (± {:.0} % measured here, {runs})",
            spread * 100.0
        );
    } else {
        row.outcome = Outcome::Same;
        row.verdict = format!(
            "no significant difference (runs vary ± {:.0} %, {runs})",
            spread * 100.0
        );
    }
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
    out.push_str(",ks_d,ks_p,ks_p_blocks,outcome,verdict,power\n");
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
            r.ks.map(|k| format!("{:.6e}", k.p_value_blocks))
                .unwrap_or_default(),
        );
        line.push(
            match r.outcome {
                Outcome::Same => "same",
                Outcome::Slower => "slower",
                Outcome::Faster => "faster",
                Outcome::Differs => "differs",
                Outcome::WithinNoise => "within_noise",
                Outcome::Untested => "untested",
            }
            .into(),
        );
        line.push(csv_field(&r.verdict));
        line.push(csv_field(&r.power));
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
            Format::Text(style) => Ok(crate::format::fit_lines(render_text(self, style), style)),
            Format::Csv => Ok(render_csv(self)),
            Format::Json => Ok(render_json(self)),
            other => Err(self.unsupported(other)),
        }
    }
}

/// Why nothing paired, when nothing did although both sides measured: per probe and series
/// the labels each side has (an import that knows no CPU labels `thread=N` where a run
/// labels `cpu=N`), or that they share no probe and series at all. `None` when some row
/// paired or a side has no series. Self-contained: it reads only the results and the
/// comparison's rows.
pub fn nothing_paired(c: &Comparison, results: &[RunResult]) -> Option<String> {
    if !c.rows.is_empty() || results.len() < 2 {
        return None;
    }
    // "cyclic latency" → the label sets of that series, on one side.
    let labels_of = |r: &RunResult| {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for run in &r.runs {
            for s in &run.series {
                let labels: Vec<String> =
                    s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let set = if labels.is_empty() {
                    "no labels".to_string()
                } else {
                    labels.join(",")
                };
                let sets = out.entry(format!("{} {}", run.probe, s.name)).or_default();
                if !sets.contains(&set) {
                    sets.push(set);
                }
            }
        }
        out
    };
    let base = labels_of(&results[0]);
    let mut lines = Vec::new();
    for (i, cand) in results.iter().enumerate().skip(1) {
        let other = labels_of(cand);
        if base.is_empty() || other.is_empty() {
            continue;
        }
        let (a, b) = (letter(0), letter(i));
        let shown = |sets: &[String]| {
            let mut text = sets.iter().take(4).cloned().collect::<Vec<_>>().join(" ");
            if sets.len() > 4 {
                text.push_str(&format!(" (+{} more)", sets.len() - 4));
            }
            text
        };
        let common: Vec<String> = base
            .iter()
            .filter_map(|(series, sets)| {
                let theirs = other.get(series)?;
                Some(format!(
                    "{series}: {a} has {}, {b} has {}",
                    shown(sets),
                    shown(theirs)
                ))
            })
            .collect();
        if common.is_empty() {
            let names = |m: &BTreeMap<String, Vec<String>>| {
                m.keys().take(3).cloned().collect::<Vec<_>>().join(", ")
            };
            lines.push(format!(
                "{a} ({}) and {b} ({}) have no probe and series in common",
                names(&base),
                names(&other)
            ));
        } else {
            lines.extend(common);
        }
    }
    (!lines.is_empty()).then(|| {
        format!(
            "nothing compared: no series paired; series pair when probe, series and every label agree — {}",
            lines.join("; ")
        )
    })
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
            p_value_blocks: 0.0,
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
    fn rank_test_separates_shifted_blocks_and_not_shuffled_ones() {
        let a: Vec<f64> = (0..10).map(|i| 100.0 + i as f64).collect();
        let far: Vec<f64> = a.iter().map(|v| v * 2.0).collect();
        assert!(mann_whitney_p(&a, &far) < 0.001);
        let interleaved: Vec<f64> = a.iter().map(|v| v + 0.5).collect();
        assert!(mann_whitney_p(&a, &interleaved) > 0.5);
        // All values tied: no evidence at all.
        assert_eq!(mann_whitney_p(&[5.0; 8], &[5.0; 8]), 1.0);
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn quantiles_of_blocks_interpolate() {
        assert_eq!(median_of(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(quantile_of(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert_eq!(median_of(&[]), None);
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
