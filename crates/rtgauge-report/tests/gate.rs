//! The baseline gate (`check --baseline --regress`): a regression fails, a change the runs
//! cannot tell from their own variation is inconclusive, and every statistic states the
//! smallest change the pair could have detected.

mod common;

use rtgauge_report::check::{check_against_baseline, check_against_repeated, CheckReport, Verdict};

fn verdicts(seconds: u64, stretch: f64, loud: f64) -> Vec<(String, Verdict, String)> {
    let (a, b) = common::gate_pair(seconds, stretch, loud);
    let stats = ["p99".to_string(), "max".to_string()];
    bounds(&check_against_baseline(
        &a,
        &b,
        "base.json",
        0.1,
        &stats,
        false,
    ))
}

/// Every bound of a report: (statistic, verdict, message).
fn bounds(report: &CheckReport) -> Vec<(String, Verdict, String)> {
    report
        .cases
        .iter()
        .flat_map(|c| &c.bounds)
        .map(|b| (b.stat.clone(), b.verdict, b.message.clone()))
        .collect()
}

#[test]
fn a_sevenfold_regression_fails_with_its_p_value() {
    for (stat, verdict, message) in verdicts(5, 7.0, 0.02) {
        assert_eq!(verdict, Verdict::Fail, "{stat}: {message}");
        assert!(message.contains("regressed beyond +10 % (p "), "{message}");
    }
}

#[test]
fn runs_drawn_alike_pass_and_say_what_they_could_have_seen() {
    for (stat, verdict, message) in verdicts(5, 1.0, 0.25) {
        assert_ne!(verdict, Verdict::Fail, "{stat}: {message}");
        if verdict == Verdict::Pass {
            assert!(message.contains("could detect"), "{message}");
        }
    }
}

#[test]
fn a_change_short_bursty_runs_cannot_separate_is_inconclusive_with_the_fix() {
    let v = verdicts(1, 1.3, 0.25);
    let undecided: Vec<_> = v
        .iter()
        .filter(|(_, verdict, _)| *verdict == Verdict::Inconclusive)
        .collect();
    assert!(!undecided.is_empty(), "{v:#?}");
    for (_, _, message) in undecided {
        assert!(message.contains("worse beyond +10 %"), "{message}");
        assert!(message.contains("measure ≥"), "{message}");
    }
    assert!(
        v.iter().all(|(_, verdict, _)| *verdict != Verdict::Fail),
        "{v:#?}"
    );
}

#[test]
fn compare_and_check_fit_a_100_column_terminal() {
    use rtgauge_report::{compare, Format, Render, Style};
    let (a, b) = common::gate_pair(5, 7.0, 0.02);
    let (idle, loaded) = (common::build(false), common::build(true));
    let stats = ["median".to_string(), "p99".to_string(), "max".to_string()];
    let texts = [
        compare::render_text(
            &compare::compare(
                &[idle.clone(), loaded.clone()],
                &["idle.json".into(), "loaded.json".into()],
            ),
            Style::Terminal,
        ),
        check_against_baseline(
            &a,
            &b,
            "a-rather-long-baseline-name.json",
            0.1,
            &stats,
            false,
        )
        .render(Format::Text(Style::Terminal))
        .unwrap(),
        check_against_baseline(&idle, &loaded, "idle.json", 0.1, &stats, true)
            .render(Format::Text(Style::Terminal))
            .unwrap(),
    ];
    for text in texts {
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}\n{text}",
                line.chars().count()
            );
        }
    }
}

#[test]
fn two_runs_that_differ_in_load_show_the_load_as_their_one_configuration_difference() {
    // The same gate pair, the candidate measured under a messaging load: its probe run is
    // keyed `cyclic rt messaging`, the baseline's `cyclic rt none`.
    let (mut a, mut b) = common::gate_pair(5, 7.0, 0.02);
    b.config.loads = vec!["messaging".into()];
    for run in &mut b.runs {
        run.load = "messaging".into();
    }
    // A phase read from the clock at each start differs, but nobody configured it.
    a.runs[0].params.insert("phase".into(), "489470ns".into());
    b.runs[0].params.insert("phase".into(), "811476ns".into());
    let names = ["idle.json".to_string(), "loaded.json".to_string()];
    let c = rtgauge_report::compare::compare(&[a.clone(), b.clone()], &names);
    let fields: Vec<&str> = c.environment.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(fields, ["config.loads"], "{:#?}", c.environment);
    assert_eq!(c.rows.len(), 1, "{:#?}", c.unmatched);
    assert_eq!(c.rows[0].load, "none → messaging");
    assert_eq!(c.rows[0].outcome, rtgauge_report::compare::Outcome::Slower);
    // A phase set on one side is a difference of configuration.
    a.config
        .params
        .insert("cyclic.phase".into(), "489470ns".into());
    let c = rtgauge_report::compare::compare(&[a, b], &names);
    assert!(
        c.environment
            .iter()
            .any(|d| d.field == "params[cyclic].phase"),
        "{:#?}",
        c.environment
    );
}

#[test]
fn documents_written_before_block_histograms_are_compared_by_the_earlier_rule() {
    // idle.json as rtgauge wrote it before keeping block histograms, against today's.
    let old = rtgauge_result::read_result(&common::fixture("written-before-blocks.json")).unwrap();
    assert!(old.runs[0].series[0].stats.blocks.is_none());
    let c = rtgauge_report::compare::compare(
        &[old.clone(), common::build(true)],
        &["old.json".into(), "loaded.json".into()],
    );
    assert!(!c.rows.is_empty());
    assert!(
        c.rows
            .iter()
            .all(|r| r.tests.is_empty() && r.power.is_empty()),
        "{:#?}",
        c.rows
    );
    let stats = ["p99".to_string(), "max".to_string()];
    let report = check_against_baseline(&old, &common::build(true), "old.json", 0.1, &stats, true);
    assert!(!report.cases.is_empty());
}

/// Repeated runs of each side, each drawn from its own seed and stretched by its factor.
fn repeated_verdicts(base: &[f64], cand: &[f64]) -> Vec<(String, Verdict, String)> {
    let side = |factors: &[f64], first_seed: u64| -> Vec<_> {
        factors
            .iter()
            .enumerate()
            .map(|(i, f)| common::gate_run(first_seed + i as u64, 3, *f, 0.0))
            .collect()
    };
    let stats = ["median".to_string(), "p99".to_string(), "max".to_string()];
    let report = check_against_repeated(
        &side(base, 100),
        &side(cand, 200),
        "base-1.json … base-3.json",
        0.1,
        &stats,
        false,
    );
    assert!(report
        .spec
        .contains(&format!("{} vs {} runs", cand.len(), base.len())));
    bounds(&report)
}

#[test]
fn repeated_runs_fail_a_threefold_regression_and_pass_runs_drawn_alike() {
    for (stat, verdict, message) in repeated_verdicts(&[1.0, 1.0, 1.0], &[3.0, 3.0, 3.0]) {
        assert_eq!(verdict, Verdict::Fail, "{stat}: {message}");
        assert!(message.contains("(3 vs 3 runs)"), "{message}");
        assert!(message.contains("regressed beyond +10 % (p "), "{message}");
    }
    for (stat, verdict, message) in repeated_verdicts(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]) {
        assert_eq!(verdict, Verdict::Pass, "{stat}: {message}");
        assert!(message.contains("runs vary ±"), "{message}");
        assert!(message.contains("could detect ≥"), "{message}");
    }
}

#[test]
fn repeated_runs_that_vary_more_than_the_change_are_inconclusive_with_the_runs_needed() {
    // The machine changes between runs by up to twice: a +60 % change cannot be told apart.
    let v = repeated_verdicts(&[0.5, 1.0, 2.0], &[0.8, 1.6, 3.2]);
    for (stat, verdict, message) in &v {
        assert_eq!(*verdict, Verdict::Inconclusive, "{stat}: {message}");
        assert!(
            message.contains("worse beyond +10 % as measured"),
            "{message}"
        );
        assert!(message.contains("runs per side would decide"), "{message}");
    }
}

#[test]
fn one_baseline_run_against_repeated_candidates_borrows_their_variation() {
    let v = repeated_verdicts(&[1.0], &[3.0, 3.1, 2.9]);
    for (stat, verdict, message) in v {
        assert_eq!(verdict, Verdict::Fail, "{stat}: {message}");
        assert!(message.contains("(3 vs 1 runs)"), "{message}");
    }
}

#[test]
fn the_maximum_of_repeated_runs_is_judged_by_their_typical_block_maximum() {
    let v = repeated_verdicts(&[1.0, 1.0], &[1.0, 1.0]);
    let max = v.iter().find(|(stat, ..)| stat == "max").unwrap();
    assert!(max.2.starts_with("max per 100ms "), "{}", max.2);
}

#[test]
fn a_maximum_that_doubled_in_one_sample_passes_and_says_why() {
    let a = common::gate_run(11, 5, 1.0, 0.0);
    let mut b = a.clone();
    let s = &mut b.runs[0].series[0];
    s.stats.max_ns = s.stats.max_ns.map(|m| m * 2);
    let stats = ["max".to_string()];
    let report = check_against_baseline(&a, &b, "a.json", 0.1, &stats, false);
    let (stat, verdict, message) = bounds(&report).remove(0);
    assert_eq!(
        (stat.as_str(), verdict),
        ("max", Verdict::Pass),
        "{message}"
    );
    assert!(message.contains("(+100 %)"), "{message}");
    assert!(
        message.ends_with(
            "not judged a regression: max is one sample; the test judges the max per 100ms"
        ),
        "{message}"
    );
}

#[test]
fn a_row_that_measures_a_configured_difference_is_labelled_configuration_not_speed() {
    use rtgauge_report::compare::{compare, compare_repeated, Outcome};
    // Two runs at two configured periods: the period series sits on each one's period.
    let at_period = |seed: u64, period_ns: u64, written: &str| {
        let mut r = common::gate_run(seed, 5, 1.0, 0.0);
        let mut rec = rtgauge_stats::Recorder::default();
        for i in 0..5000u64 {
            rec.record(period_ns + (i % 7) * 100, i * period_ns);
        }
        let period = rtgauge_result::Series::new("period", rec.summary()).label("cpu", 0);
        r.runs[0].series.push(period);
        r.runs[0].params.insert("period".into(), written.into());
        r
    };
    let (a, b) = (
        at_period(11, 100_000, "100us"),
        at_period(12, 1_000_000, "1ms"),
    );
    let names = ["a.json".to_string(), "b.json".to_string()];
    let expected = "configuration differs: period 100us → 1ms (this row measures what was configured, not how fast it ran)";
    let single = compare(&[a.clone(), b.clone()], &names);
    let repeated = compare_repeated(
        &[a.clone(), at_period(13, 100_000, "100us")],
        &[b.clone(), at_period(14, 1_000_000, "1ms")],
        names.clone(),
    );
    for c in [&single, &repeated] {
        let row = c.rows.iter().find(|r| r.series == "period").unwrap();
        assert_eq!(row.outcome, Outcome::Configured, "{}", row.verdict);
        assert_eq!(row.verdict, expected);
        // The latency row is judged as ever.
        let latency = c.rows.iter().find(|r| r.series == "latency").unwrap();
        assert_ne!(latency.outcome, Outcome::Configured);
    }
    let text = rtgauge_report::compare::render_text(&single, rtgauge_report::Style::Plain);
    assert!(text.contains("config (2)"), "{text}");
    assert!(
        text.contains("2. configuration differs: period 100us → 1ms"),
        "{text}"
    );
}
