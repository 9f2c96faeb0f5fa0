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
//!
//! The stages a comparison walks through, one file each: [`pairing`] finds which series of one
//! result stand for which of another, [`statistics`] tests one pair (block tests, Mann–Whitney,
//! Welch on the logarithms of repeated runs), [`environment`] lists what differs around the
//! numbers, and [`render`] writes the comparison as tables, CSV or JSON.

pub mod environment;
pub mod pairing;
pub mod render;
pub mod statistics;

pub use environment::{environment_differences, environment_fields};
pub use pairing::{nothing_paired, sides};
pub use render::{fmt_stat, render_csv, render_json, render_text, row_unit};
pub(crate) use statistics::median_of;
pub use statistics::{compare_repeated, format_p, percent};

use crate::ks::KsTest;
use pairing::{cause_moves, compare_pair};
use rtgauge_result::RunResult;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Table style of the text renderings.
pub use crate::format::Style;

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
    /// Lost periods (overruns, missed deadlines) of both sides as rates over the periods each
    /// measured, each with its count test ([`crate::counts`]). Empty when the series keeps no
    /// such counter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<crate::counts::CountDiff>,
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
    /// The row measures what was configured differently on the two sides (the period of two
    /// runs at two periods): not faster or slower, a different configuration.
    Configured,
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

#[cfg(test)]
mod tests {
    use super::*;

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
