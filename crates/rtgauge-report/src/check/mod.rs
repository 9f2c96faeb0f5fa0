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
//!
//! The module walks the stages a check passes through: [`spec`] reads the limits, [`evaluate`]
//! judges one result against them, [`baseline`] judges a result against another run (or
//! repeated runs against repeated runs), and [`render`] writes the report as text, CSV, JSON
//! or JUnit.

pub mod baseline;
pub mod evaluate;
pub mod render;
pub mod spec;

pub use baseline::{check_against_baseline, check_against_repeated, is_regress_stat};
pub use evaluate::{check_result, check_result_allowing, incompleteness};
pub use render::{render_csv, render_json, render_junit, render_text};
pub use spec::{parse_percentile_key, Bound, Limit, Spec, SpecError, Stat};

use serde::Serialize;

/// Table style of the terminal and Markdown renderings.
pub use crate::compare::Style;

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
