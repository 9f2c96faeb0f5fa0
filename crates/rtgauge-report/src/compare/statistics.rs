//! The statistics of one pair of series: the block tests of single runs, the Kolmogorov–Smirnov
//! and Mann–Whitney tests of results without blocks, and Welch's test on the logarithms of
//! repeated runs.

use super::{
    compare, CompareRow, Comparison, Outcome, StatDiff, ALPHA, MIN_BLOCKS, MIN_KS_D,
    MIN_MEDIAN_SHIFT, MIN_SAMPLES, MIN_TAIL_SHIFT, NOTICE_KS_D,
};
use crate::dist::Dist;
use crate::format::per_op;
use crate::ks::{ks_test, KsTest};
use crate::units::parse_duration_ns;
use rtgauge_result::{ProbeRun, RunResult, Series};

pub(super) fn relative(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| (b - a) / a)
}

pub(super) fn stat(name: &str, a: Option<f64>, b: Option<f64>) -> StatDiff {
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

pub(super) fn compare_series(
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
                        "cannot separate from run-to-run variation (the worst per interval varies ± {:.0} % in these runs)",
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
    let mut row = CompareRow {
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
        counts: Vec::new(),
    };
    set_counts(&mut row, &[a], &[b]);
    explain_unjudged(&mut row);
    Some(row)
}

/// A row whose series measures what was configured differently on the two sides — its
/// median sits on each side's value of a parameter that differs (the `period` series of runs
/// at 100 µs and 1 ms) — is labelled "configuration differs", not faster or slower: the
/// change is the configuration itself. Within 5 % of the configured value counts.
pub(super) fn mark_configured(row: &mut CompareRow, a: &ProbeRun, b: &ProbeRun) {
    let Some(median) = row.stat("median") else {
        return;
    };
    let (Some(ma), Some(mb)) = (median.baseline_ns, median.candidate_ns) else {
        return;
    };
    let near = |m: f64, d: u64| d > 0 && (m - d as f64).abs() <= 0.05 * d as f64;
    for (key, va) in &a.params {
        let Some(vb) = b.params.get(key).filter(|vb| *vb != va) else {
            continue;
        };
        let (Ok(da), Ok(db)) = (parse_duration_ns(va), parse_duration_ns(vb)) else {
            continue;
        };
        if near(ma, da) && near(mb, db) {
            row.outcome = Outcome::Configured;
            row.verdict = format!(
                "configuration differs: {key} {va} → {vb} (this row measures what was configured, not how fast it ran)"
            );
            return;
        }
    }
}

/// A row judged the same (or only "noise?") whose table shows a statistic moved past the
/// margin says why that move is not a regression, so "same" never stands unexplained beside
/// `max +100 %`: a maximum is one sample, and the test judges the worst of each block
/// instead; a percentile moved within what these runs vary; repeated runs test median and
/// tail only.
pub(super) fn explain_unjudged(row: &mut CompareRow) {
    if !matches!(row.outcome, Outcome::Same | Outcome::WithinNoise) {
        return;
    }
    let margin = crate::verdict::COMPARE_MARGIN;
    let mut why = Vec::new();
    for s in row.stats.iter().filter(|s| s.stat != "min") {
        let Some(r) = s.relative.filter(|r| r.abs() > margin) else {
            continue;
        };
        let moved = format!("{} {}", s.stat, percent(r));
        let test = row.tests.iter().find(|t| t.stat == s.stat);
        let reason = match (s.stat.as_str(), test, row.runs) {
            ("max", Some(t), _) => format!(
                "{moved} is one sample; the test judges the {} ({})",
                t.label(),
                t.worse.change.map_or_else(|| "–".into(), percent)
            ),
            ("max", None, Some(_)) => {
                format!("{moved} is not tested across runs (each run's maximum is one sample)")
            }
            ("max", None, None) => format!("{moved} is one sample, not tested on its own"),
            (_, _, Some(_)) | (_, Some(_), None) => {
                format!("{moved} is within what these runs vary")
            }
            (_, None, None) => format!("{moved} is not told apart from run-to-run variation"),
        };
        why.push(reason);
    }
    if !why.is_empty() {
        row.verdict = format!(
            "{}; not judged a regression: {}",
            row.verdict,
            why.join("; ")
        );
    }
}

/// Compares the lost periods of a row's series (one per run on each side) and lets them into
/// its verdict: a side that loses more periods per period measured is slower, whatever its
/// distribution says; a count the test cannot tell from chance is only reported.
pub(super) fn set_counts(row: &mut CompareRow, a: &[&Series], b: &[&Series]) {
    use crate::counts::{compare_count, LOST_PERIODS};
    row.counts = LOST_PERIODS
        .iter()
        .filter_map(|c| compare_count(a, b, c, crate::verdict::COMPARE_MARGIN, ALPHA))
        .collect();
    let declared = |verdict: &str| row.counts.iter().any(|c| c.verdict == verdict);
    let (more, fewer) = (declared("more"), declared("fewer"));
    let bn = row.candidate.clone();
    row.outcome = match (row.outcome, more, fewer) {
        (_, true, true) => Outcome::Differs,
        (Outcome::Faster, true, _) | (Outcome::Slower, _, true) => Outcome::Differs,
        (Outcome::Same | Outcome::WithinNoise | Outcome::Untested, true, _) => {
            row.verdict = format!("{bn} slower: it loses more periods");
            Outcome::Slower
        }
        (Outcome::Same | Outcome::WithinNoise, _, true) => {
            row.verdict = format!("{bn} faster: it loses fewer periods");
            Outcome::Faster
        }
        (outcome, _, _) => outcome,
    };
    for c in row
        .counts
        .iter()
        .filter(|c| c.baseline > 0 || c.candidate > 0)
    {
        row.verdict.push_str("; ");
        row.verdict.push_str(&c.text);
    }
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
        let series_of = |side: &[RunResult], load: &str| -> Vec<Series> {
            side.iter()
                .filter_map(|r| {
                    r.runs
                        .iter()
                        .filter(|p| p.title() == row.probe && p.mode == row.mode && p.load == load)
                        .flat_map(|p| &p.series)
                        .find(|s| s.name == row.series && s.labels == row.labels)
                        .cloned()
                })
                .collect()
        };
        let (sa, sb) = (series_of(base, &load_a), series_of(cand, &load_b));
        let values = |v: &[Series]| -> Vec<RunValues> {
            v.iter()
                .filter_map(|s| RunValues::of(s, tail.as_deref()))
                .collect()
        };
        let (va, vb) = (values(&sa), values(&sb));
        let configured = (row.outcome == Outcome::Configured).then(|| row.verdict.clone());
        judge_repeated(row, &va, &vb);
        let (ra, rb): (Vec<&Series>, Vec<&Series>) = (sa.iter().collect(), sb.iter().collect());
        set_counts(row, &ra, &rb);
        explain_unjudged(row);
        if let Some(verdict) = configured {
            row.outcome = Outcome::Configured;
            row.verdict = verdict;
        }
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
            "cannot separate from run-to-run variation (the runs' medians vary ± {:.0} %, {runs})",
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

    fn row(outcome: Outcome, runs: Option<[usize; 2]>) -> CompareRow {
        CompareRow {
            probe: "p".into(),
            mode: "rt".into(),
            load: "none".into(),
            series: "latency".into(),
            labels: Default::default(),
            baseline: "A".into(),
            candidate: "B".into(),
            n_baseline: 1000,
            n_candidate: 1000,
            stats: vec![
                stat("median", Some(100.0), Some(102.0)),
                stat("p99.9", Some(200.0), Some(300.0)),
                stat("max", Some(2151.0), Some(4309.0)),
            ],
            ks: None,
            runs,
            outcome,
            verdict: "no significant difference".into(),
            power: String::new(),
            tests: Vec::new(),
            worst_case: None,
            counts: Vec::new(),
        }
    }

    #[test]
    fn same_beside_a_change_the_table_shows_says_why_it_is_not_a_regression() {
        let mut single = row(Outcome::Same, None);
        explain_unjudged(&mut single);
        assert_eq!(
            single.verdict,
            "no significant difference; not judged a regression: p99.9 +50 % is not told apart from run-to-run variation; max +100 % is one sample, not tested on its own"
        );
        let mut repeated = row(Outcome::WithinNoise, Some([3, 3]));
        explain_unjudged(&mut repeated);
        assert!(
            repeated.verdict.ends_with("p99.9 +50 % is within what these runs vary; max +100 % is not tested across runs (each run's maximum is one sample)"),
            "{}",
            repeated.verdict
        );
        // A declared change speaks for itself; the median's +2 % is within the margin.
        let mut slower = row(Outcome::Slower, None);
        explain_unjudged(&mut slower);
        assert_eq!(slower.verdict, "no significant difference");
    }

    #[test]
    fn a_change_repeated_runs_cannot_separate_names_what_varies() {
        let runs = |medians: &[f64]| -> Vec<RunValues> {
            medians
                .iter()
                .map(|&median| RunValues {
                    median,
                    tail: None,
                    max: median * 2.0,
                    count: 1000,
                })
                .collect()
        };
        let mut r = row(Outcome::Same, Some([3, 3]));
        judge_repeated(
            &mut r,
            &runs(&[100.0, 150.0, 80.0]),
            &runs(&[140.0, 90.0, 160.0]),
        );
        assert_eq!(r.outcome, Outcome::WithinNoise, "{}", r.verdict);
        assert!(
            r.verdict.starts_with(
                "cannot separate from run-to-run variation (the runs' medians vary ± "
            ),
            "{}",
            r.verdict
        );
        assert!(!r.verdict.contains("measured here"), "{}", r.verdict);
    }
}
