//! The gates against a baseline: one run against one run (block tests), repeated runs against
//! repeated runs (Welch's test on the logarithms of per-run values).

use super::evaluate::incompleteness;
use super::{BoundResult, CheckCase, CheckReport, Verdict};
use crate::format::per_op;
use crate::units::format_duration_ns;
use rtgauge_result::{RunResult, Series};
use std::fmt::Write as _;

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

/// Whether `name` is a statistic [`check_against_baseline`] can judge: a distribution
/// statistic, or a counter of lost periods ([`crate::counts::LOST_PERIODS`]).
pub fn is_regress_stat(name: &str) -> bool {
    matches!(name, "min" | "median" | "mean" | "max")
        || crate::counts::LOST_PERIODS.contains(&name)
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
    let spec = format!(
        "baseline {baseline_name} (regress +{} %; judging {})",
        regress * 100.0,
        stats.join(", ")
    );
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
                .filter_map(|name| match count_bound(sa, sb, name, regress) {
                    Some(counted) => counted,
                    None => Some(baseline_bound(
                        &sa[0],
                        &sb[0],
                        name,
                        regress,
                        declared_slower,
                        &row.verdict,
                    )),
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
        "baseline {baseline_name}, {} vs {} runs (regress +{} %; judging {})",
        candidates.len(),
        baselines.len(),
        regress * 100.0,
        stats.join(", ")
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
                .filter_map(|name| match count_bound(sa, sb, name, regress) {
                    Some(counted) => counted,
                    None => Some(repeated_bound(sa, sb, name, regress)),
                })
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
        if bounds.is_empty() {
            // Only counters were asked for, and this series keeps none.
            continue;
        }
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

/// A counter of lost periods judged against the baseline's ([`crate::counts`]): failed when
/// the candidate's runs lose more periods per period measured than the baseline's × (1 +
/// `regress`) beyond chance, passed otherwise. `None` when `name` is not such a counter,
/// `Some(None)` when neither side's series keeps it (nothing to judge on this row).
fn count_bound(
    sa: &[Series],
    sb: &[Series],
    name: &str,
    regress: f64,
) -> Option<Option<BoundResult>> {
    use crate::counts::{count, counts_text, rates_text, variation_text, words};
    if !crate::counts::LOST_PERIODS.contains(&name) {
        return None;
    }
    let side = |v: &[Series]| -> Vec<rtgauge_stats::rates::Count> {
        v.iter().filter_map(|s| count(s, name)).collect()
    };
    let (a, b) = (side(sa), side(sb));
    if a.is_empty() && b.is_empty() {
        return Some(None);
    }
    let limit_text = limit_text(regress);
    let Some(t) = rtgauge_stats::rates::test_rates(&a, &b, regress) else {
        return Some(Some(against_baseline(
            name,
            &limit_text,
            None,
            Verdict::NotApplicable,
            format!("{}: not counted on both sides", words(name)),
        )));
    };
    let figures = format!("{} {} ({})", words(name), rates_text(&t), counts_text(&t));
    let alpha = rtgauge_stats::shift::ALPHA;
    let (verdict, message) = if t.p_worse < alpha {
        (
            Verdict::Fail,
            format!(
                "{figures}: regressed beyond {limit_text} (p {}; {})",
                crate::compare::format_p(t.p_worse),
                variation_text(&t)
            ),
        )
    } else if t.worse_beyond(regress) {
        // Few events: more as measured, but as likely from chance. A count this small is not
        // held against the run (a gate that stopped on one stray overrun would be ignored).
        (
            Verdict::Pass,
            format!(
                "{figures}: more as measured, but not told apart from chance (p {}; {})",
                crate::compare::format_p(t.p_worse),
                variation_text(&t)
            ),
        )
    } else {
        (Verdict::Pass, figures)
    };
    Some(Some(against_baseline(
        name,
        &limit_text,
        Some(t.candidate.events as f64),
        verdict,
        message,
    )))
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
            // Past a doubling a factor reads better than a percentage (×7.3, not +630 %);
            // past ×10 the runs have no power to speak of.
            let power =
                crate::verdict::detectable_text(Some(w.detectable(regress, ALPHA)), &label);
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
    let power = |t: &rtgauge_stats::shift::ShiftTest| {
        crate::verdict::detectable_text(t.detectable, &label(name, t))
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
        (Some(r), Some(t)) if r > regress => (
            Verdict::Pass,
            format!(
                "{change} ({}); not judged a regression: {}",
                power(t),
                if label(name, t) == name {
                    "within what these runs vary".to_string()
                } else {
                    format!("{name} is one sample; the test judges the {}", label(name, t))
                }
            ),
        ),
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
