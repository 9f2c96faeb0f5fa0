//! One result judged against a spec: every limit on every series it selects.

use super::spec::{Bound, Spec, Stat};
use super::{BoundResult, CheckCase, CheckReport, Verdict};
use crate::dist::Dist;
use crate::format::per_op;
use crate::units::format_duration_ns;
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, Series};
use rtgauge_stats::percentile_supported;

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
    if bound.stat == Stat::Fits {
        return fits(bound, s);
    }
    let value = match &bound.stat {
        Stat::Overruns | Stat::DeadlineMisses => match s.counters.get(label.as_str()) {
            Some(&n) => Some(n as f64),
            None => {
                result.verdict = Verdict::NotApplicable;
                result.message = format!(
                    "this series does not count {}",
                    crate::counts::words(&label)
                );
                return result;
            }
        },
        Stat::Fits => None,
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

/// `fits = true`: the series' analysis says it fits (its `fits` metric is 1); a series
/// without the metric (not a task's) is not concerned.
fn fits(bound: &Bound, s: &Series) -> BoundResult {
    let (verdict, message) = match s.metrics.get("fits") {
        None => (
            Verdict::NotApplicable,
            "this series has no fits verdict (only a task set's tasks do)".to_string(),
        ),
        Some(v) if *v == 1.0 => (Verdict::Pass, "fits".to_string()),
        Some(_) => (
            Verdict::Fail,
            "does not fit: the analysis predicts it can miss its deadline".to_string(),
        ),
    };
    BoundResult {
        stat: bound.stat.label(),
        limit: bound.written.clone(),
        value: s.metrics.get("fits").copied(),
        verdict,
        message,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> Result<Spec, super::super::SpecError> {
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
    fn a_task_that_missed_or_does_not_fit_fails_and_other_series_are_not_concerned() {
        let spec = parse("[[limit]]\ndeadline_misses = 0\nfits = true\n").unwrap();
        let task = |misses: u64, fits: f64| {
            let mut s = Series::new("response", Default::default())
                .counter("deadline_misses", misses)
                .counter("jobs", 100);
            s.stats.count = 100;
            s.metrics.insert("fits".into(), fits);
            s
        };
        let verdicts = |s: &Series| -> Vec<Verdict> {
            spec.limits[0]
                .bounds
                .iter()
                .map(|b| evaluate(b, s).verdict)
                .collect()
        };
        assert_eq!(verdicts(&task(0, 1.0)), [Verdict::Pass, Verdict::Pass]);
        assert_eq!(verdicts(&task(3, 0.0)), [Verdict::Fail, Verdict::Fail]);
        let missed = evaluate(&spec.limits[0].bounds[0], &task(3, 1.0));
        assert_eq!(missed.message, "deadline_misses 3 exceeds 0");
        let other = Series::new("latency", Default::default());
        assert_eq!(
            verdicts(&other),
            [Verdict::NotApplicable, Verdict::NotApplicable]
        );
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
}

#[cfg(test)]
mod predicted_max_tests {
    use super::*;
    use rtgauge_stats::evt::{estimate, sample, Gev, Input};
    use std::path::Path;

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
