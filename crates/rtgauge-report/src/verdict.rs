//! Verdicts on two single runs, statistic by statistic, each with its power.
//!
//! Each statistic of the candidate (median, a tail percentile, the maximum through the runs'
//! block maxima) is tested against the baseline's own block-to-block variation
//! ([`rtgauge_stats::shift`]): worse than the baseline by more than a margin, or better by
//! more than it. `compare` uses [`COMPARE_MARGIN`]; the baseline gate (`check --regress`) the
//! user's margin. Every test also says the smallest change this pair of runs could have
//! declared, so a quiet verdict says how much it could have seen.

use crate::compare::percent;
use rtgauge_result::units::format_duration_ns;
use rtgauge_result::Series;
use rtgauge_stats::shift::{test_shift_at, Direction, ShiftTest, Statistic, ALPHA};
use serde::Serialize;

/// Changes smaller than this are never declared by `compare`: identical runs on a busy machine
/// differ by about as much (docs/compare.md).
pub const COMPARE_MARGIN: f64 = 0.10;

/// Blocks each run needs before `compare` tests it block by block (3 s at 100 ms).
pub const COMPARE_MIN_BLOCKS: usize = 30;

/// One statistic tested both ways.
#[derive(Debug, Clone, Serialize)]
pub struct StatTest {
    /// `median`, `p99.9`, `max`.
    pub stat: String,
    pub worse: ShiftTest,
    pub better: ShiftTest,
}

impl StatTest {
    /// What the test compared, for people: `p99.9`, `max per 100 ms`.
    pub fn label(&self) -> String {
        label(&self.stat, &self.worse)
    }
}

/// `max per 100 ms` for the block-maximum test, else the statistic's own name.
pub fn label(stat: &str, t: &ShiftTest) -> String {
    match t.statistic {
        Statistic::BlockMax => format!("max per {}", format_duration_ns(t.block_ns)),
        Statistic::Quantile(_) => stat.to_string(),
    }
}

/// The test a statistic name of `--regress-stats` maps to: median and percentiles by their
/// samples, the maximum by block maxima. `None` for min and mean (no block test).
pub fn statistic_of(name: &str) -> Option<Statistic> {
    match name {
        "median" => Some(Statistic::Quantile(0.5)),
        "max" => Some(Statistic::BlockMax),
        label => rtgauge_stats::Percentiles::default()
            .entries()
            .iter()
            .find(|e| e.0 == label)
            .map(|e| Statistic::Quantile(e.1)),
    }
}

/// One statistic of `candidate` tested against `baseline` in `direction` by `margin`; `None`
/// when the runs lack blocks (older documents, imports) or are too short.
pub fn test_stat(
    baseline: &Series,
    candidate: &Series,
    stat: &str,
    direction: Direction,
    margin: f64,
    alpha: f64,
) -> Option<ShiftTest> {
    let statistic = statistic_of(stat)?;
    if let Statistic::Quantile(q) = statistic {
        // A percentile is tested only where both runs' sample counts support it.
        let supported = |s: &Series| rtgauge_stats::percentile_supported(q, s.stats.count);
        if !supported(baseline) || !supported(candidate) {
            return None;
        }
    }
    test_shift_at(
        &baseline.stats,
        &candidate.stats,
        statistic,
        direction,
        margin,
        alpha,
    )
}

/// The statistics of a comparison row tested both ways by [`COMPARE_MARGIN`]; empty when the
/// runs cannot be tested this way. A row runs two tests per statistic and is declared when
/// any of them is, so each test gets an equal part of the level: identical runs see a row
/// declared about [`ALPHA`] of the time, not six times that.
pub fn test_row(baseline: &Series, candidate: &Series, stats: &[&str]) -> Vec<StatTest> {
    // The one-second design effect needs three stretches to say anything about a machine
    // that changes over seconds; shorter runs keep the earlier rule (measured: identical 2-s
    // runs had 4–5 of 60 rows declared by block tests on this VM).
    let blocks = |s: &Series| s.stats.blocks.as_ref().map_or(0, |b| b.len());
    if blocks(baseline) < COMPARE_MIN_BLOCKS || blocks(candidate) < COMPARE_MIN_BLOCKS {
        return Vec::new();
    }
    let alpha = ALPHA / (2 * stats.len().max(1)) as f64;
    stats
        .iter()
        .filter_map(|&stat| {
            let test =
                |direction| test_stat(baseline, candidate, stat, direction, COMPARE_MARGIN, alpha);
            Some(StatTest {
                stat: stat.to_string(),
                worse: test(Direction::Worse)?,
                better: test(Direction::Better)?,
            })
        })
        .collect()
}

/// Whether a test that declared nothing still measured the statistic past the margin: the
/// runs cannot decide (`check`: inconclusive; `compare`: `noise?`).
pub fn undecided(t: &ShiftTest) -> bool {
    !t.declared && t.beyond_margin
}

/// How a row's tests come out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    Slower,
    Faster,
    /// Some statistics declared worse, others better.
    Differs,
    /// Something moved past the margin as measured, but no test could tell it from variation.
    WithinNoise,
    Same,
}

/// The row's judgement and its explanation: what moved, and what this pair could have seen.
pub fn judge(tests: &[StatTest], candidate: &str) -> (Judgement, String) {
    let worse: Vec<&StatTest> = tests.iter().filter(|t| t.worse.declared).collect();
    let better: Vec<&StatTest> = tests.iter().filter(|t| t.better.declared).collect();
    let moved = |list: &[&StatTest]| -> String {
        list.iter()
            .map(|t| {
                let change = t.worse.change.map(percent).unwrap_or_else(|| "–".into());
                format!("{} {change}", t.label())
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let power = power_text(tests);
    match (worse.is_empty(), better.is_empty()) {
        (false, true) => (
            Judgement::Slower,
            format!("{candidate} slower: {}", moved(&worse)),
        ),
        (true, false) => (
            Judgement::Faster,
            format!("{candidate} faster: {}", moved(&better)),
        ),
        (false, false) => (
            Judgement::Differs,
            format!(
                "{candidate} differs: worse in {}, better in {} (neither consistently slower nor faster)",
                moved(&worse),
                moved(&better)
            ),
        ),
        (true, true) => {
            let beyond: Vec<&StatTest> = tests
                .iter()
                .filter(|t| undecided(&t.worse) || undecided(&t.better))
                .collect();
            if beyond.is_empty() {
                (
                    Judgement::Same,
                    format!(
                        "no change beyond {} %; {power}",
                        (COMPARE_MARGIN * 100.0).round()
                    ),
                )
            } else {
                (
                    Judgement::WithinNoise,
                    format!(
                        "cannot separate from run-to-run variation: {}; {power}",
                        moved(&beyond)
                    ),
                )
            }
        }
    }
}

/// A detectable change larger than this (×10) is no power at all: a test that could only see
/// a tenfold change says nothing a reader can use, and a figure like ×25694719598 reads as a
/// measurement.
pub const POWER_CAP: f64 = 9.0;

/// The smallest change of `label` these runs could declare, worded for what it is: `could
/// detect ≥ +35 % in p99.9`, `could detect ≥ ×3.2 in p99` past a doubling, and past
/// [`POWER_CAP`] (or without any power) `cannot detect any change of p99 from these runs`.
pub fn detectable_text(detectable: Option<f64>, label: &str) -> String {
    match detectable.filter(|d| d.is_finite() && *d < POWER_CAP) {
        Some(d) => format!("could detect ≥ {} in {label}", change_text(d)),
        None => format!("cannot detect any change of {label} from these runs"),
    }
}

/// `+35 %` below a doubling, `×3.2` from there (a factor reads better than +220 %).
fn change_text(d: f64) -> String {
    if d >= 1.0 {
        format!("×{:.1}", 1.0 + d)
    } else {
        percent(d)
    }
}

/// `could detect ≥ +35 % in p99.9, ≥ +60 % in max per 100 ms`: the worse-direction power of
/// each test that declared nothing (a declared change speaks for itself, and the power assumes
/// a stretched distribution, which a real change need not be). Statistics the runs cannot
/// test at all are named apart: `cannot detect any change of max per 100ms from these runs`.
pub fn power_text(tests: &[StatTest]) -> String {
    let quiet: Vec<&StatTest> = tests
        .iter()
        .filter(|t| !t.worse.declared && !t.better.declared)
        .collect();
    let usable = |t: &StatTest| {
        t.worse
            .detectable
            .is_some_and(|d| d.is_finite() && d < POWER_CAP)
    };
    let can: Vec<String> = quiet
        .iter()
        .filter(|t| usable(t))
        .map(|t| {
            format!(
                "≥ {} in {}",
                change_text(t.worse.detectable.unwrap_or_default()),
                t.label()
            )
        })
        .collect();
    let cannot: Vec<String> = quiet
        .iter()
        .filter(|t| !usable(t))
        .map(|t| t.label())
        .collect();
    let mut parts = Vec::new();
    if !can.is_empty() {
        parts.push(format!("could detect {}", can.join(", ")));
    }
    if !cannot.is_empty() {
        parts.push(format!(
            "cannot detect any change of {} from these runs",
            cannot.join(" or ")
        ));
    }
    parts.join("; ")
}

/// The duration both runs would need for a change as large as the one measured to be declared:
/// the test's z grows with the square root of the runs' length. `None` when nothing moved.
pub fn duration_to_decide(t: &ShiftTest, measured_ns: u64) -> Option<u64> {
    if !t.beyond_margin || t.z <= 0.0 || measured_ns == 0 {
        return None;
    }
    let needed = rtgauge_stats::shift::z_to_declare(ALPHA) / t.z;
    let factor = (needed * needed).max(1.0);
    // Whole seconds, at least twice what was measured so the advice is worth a try.
    let ns = (measured_ns as f64 * factor.max(2.0)).min(86_400e9);
    Some(((ns / 1e9).ceil() as u64).max(1) * 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detectable_changes_are_capped_and_worded_for_what_they_are() {
        assert_eq!(
            detectable_text(Some(0.35), "p99.9"),
            "could detect ≥ +35 % in p99.9"
        );
        assert_eq!(
            detectable_text(Some(2.2), "p99"),
            "could detect ≥ ×3.2 in p99"
        );
        for none in [Some(25_694_719_597.1), Some(9.0), Some(f64::INFINITY), None] {
            let text = detectable_text(none, "median");
            assert_eq!(text, "cannot detect any change of median from these runs");
            assert!(!text.contains('×') && !text.contains("no change"), "{text}");
        }
    }
}
