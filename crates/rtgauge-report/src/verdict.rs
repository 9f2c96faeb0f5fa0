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

/// `could detect ≥ +35 % in p99.9, ≥ +60 % in max per 100 ms`: the worse-direction power of
/// each test that declared nothing (a declared change speaks for itself, and the power assumes
/// a stretched distribution, which a real change need not be).
pub fn power_text(tests: &[StatTest]) -> String {
    let parts: Vec<String> = tests
        .iter()
        .filter(|t| !t.worse.declared && !t.better.declared)
        .map(|t| match t.worse.detectable {
            Some(d) => format!("≥ {} in {}", percent(d), t.label()),
            None => format!("no change in {}", t.label()),
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("could detect {}", parts.join(", "))
    }
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
