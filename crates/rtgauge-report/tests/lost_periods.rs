//! Lost periods (overruns, missed deadlines) compared and gated as rates over the periods
//! measured: the baseline gate fails a rise from none to a dozen in 10,000 periods between
//! runs drawn alike, passes identical runs and a few stray overruns, and `compare`, its JSON
//! and the LAVA cases carry the same answer.

mod common;

use rtgauge_report::check::{check_against_baseline, check_against_repeated, Verdict};
use rtgauge_result::RunResult;

/// The default statistics of `check --baseline`.
fn default_stats() -> Vec<String> {
    ["p99", "max", "overruns", "deadline_misses"]
        .map(String::from)
        .to_vec()
}

/// A run of the gate pair (10 s at 1 ms: 10,000 periods) that lost `overruns` of its periods.
fn run(seed: u64, overruns: u64) -> RunResult {
    let mut r = common::gate_run(seed, 10, 1.0, 0.0);
    let s = &mut r.runs[0].series[0];
    s.counters.insert("overruns".into(), overruns);
    s.counters.insert("cycles".into(), 10_000);
    r
}

fn overrun_bound(report: &rtgauge_report::CheckReport) -> (Verdict, String) {
    let b = report
        .cases
        .iter()
        .flat_map(|c| &c.bounds)
        .find(|b| b.stat == "overruns")
        .expect("the overruns are judged");
    (b.verdict, b.message.clone())
}

#[test]
fn a_rise_from_none_to_a_dozen_in_ten_thousand_periods_fails_the_gate() {
    let (a, b) = (run(11, 0), run(12, 12));
    let report = check_against_baseline(&a, &b, "base.json", 0.1, &default_stats(), false);
    let (verdict, message) = overrun_bound(&report);
    assert_eq!(verdict, Verdict::Fail, "{message}");
    assert!(!report.passed);
    assert_eq!(
        message.split(": regressed").next().unwrap(),
        "overruns 0 → 12 per 10,000 periods (12 of 10,000 periods against 0 of 10,000)",
        "{message}"
    );
    assert!(
        message.contains("regressed beyond +10 % (p ")
            && message.contains("single runs: periods taken as independent"),
        "{message}"
    );
    // The same answer as a LAVA case (and a JUnit failure).
    let lab = rtgauge_report::lava::LabResults::of(&b, Some(&report));
    let case = lab
        .cases()
        .find(|c| c.name.ends_with("-latency-overruns"))
        .expect("an overruns case");
    assert_eq!(case.result, rtgauge_report::lava::Outcome::Fail);
    let junit = rtgauge_report::check::render_junit(&report);
    assert!(
        junit.contains("overruns 0 → 12 per 10,000 periods"),
        "{junit}"
    );
}

#[test]
fn identical_runs_and_a_few_stray_overruns_pass() {
    for (base, cand) in [(0, 0), (1, 3), (4, 4)] {
        let (a, b) = (run(11, base), run(11, cand));
        let report = check_against_baseline(&a, &b, "base.json", 0.1, &default_stats(), false);
        let (verdict, message) = overrun_bound(&report);
        assert_eq!(verdict, Verdict::Pass, "{base} → {cand}: {message}");
        assert!(report.passed, "{base} → {cand}");
    }
    let (a, b) = (run(11, 1), run(11, 3));
    let report = check_against_baseline(&a, &b, "base.json", 0.1, &default_stats(), false);
    let (_, message) = overrun_bound(&report);
    assert!(
        message.contains("more as measured, but not told apart from chance"),
        "{message}"
    );
    // Counters are judged only when asked for.
    let only_p99 = ["p99".to_string()];
    let report = check_against_baseline(&run(11, 0), &run(12, 50), "b", 0.1, &only_p99, false);
    assert!(report
        .cases
        .iter()
        .flat_map(|c| &c.bounds)
        .all(|b| b.stat == "p99"));
}

#[test]
fn repeated_runs_measure_how_much_their_counts_vary() {
    let side = |counts: &[u64], seed: u64| -> Vec<RunResult> {
        counts
            .iter()
            .enumerate()
            .map(|(i, &n)| run(seed + i as u64, n))
            .collect()
    };
    let stats = default_stats();
    // Steady: every candidate run loses about a dozen periods, no baseline run any.
    let steady = check_against_repeated(
        &side(&[0, 0, 1], 100),
        &side(&[12, 10, 14], 200),
        "base",
        0.1,
        &stats,
        false,
    );
    let (verdict, message) = overrun_bound(&steady);
    assert_eq!(verdict, Verdict::Fail, "{message}");
    assert!(message.contains("3 vs 3 runs"), "{message}");
    // Bursty: one baseline run lost 30, the others none; the candidate's dozen per run is
    // within what these runs vary.
    let bursty = check_against_repeated(
        &side(&[0, 30, 0], 100),
        &side(&[12, 10, 14], 200),
        "base",
        0.1,
        &stats,
        false,
    );
    let (verdict, message) = overrun_bound(&bursty);
    assert_eq!(verdict, Verdict::Pass, "{message}");
    assert!(message.contains("runs vary"), "{message}");
}

#[test]
fn compare_reports_the_rates_in_its_verdict_and_json() {
    let (a, b) = (run(11, 0), run(12, 12));
    let c = rtgauge_report::compare::compare(&[a, b], &["a.json".into(), "b.json".into()]);
    let row = &c.rows[0];
    assert_eq!(row.counts.len(), 1, "{:#?}", row.counts);
    assert_eq!(row.counts[0].verdict, "more");
    assert_eq!(row.outcome, rtgauge_report::compare::Outcome::Slower);
    assert!(
        row.verdict.contains("it loses more periods")
            && row.verdict.contains("overruns: 0 → 12 per 10,000 periods"),
        "{}",
        row.verdict
    );
    let json = rtgauge_report::compare::render_json(&c);
    assert!(
        json.contains("\"counts\"") && json.contains("\"p_worse\""),
        "{json}"
    );
    let text = rtgauge_report::compare::render_text(&c, rtgauge_report::Style::Plain);
    assert!(
        text.contains("overruns: 0 → 12 per 10,000 periods"),
        "{text}"
    );
}

#[test]
fn missed_deadlines_are_gated_like_overruns() {
    let with_misses = |seed: u64, missed: u64| {
        let mut r = common::gate_run(seed, 10, 1.0, 0.0);
        let s = &mut r.runs[0].series[0];
        s.counters.insert("deadline_misses".into(), missed);
        s.counters.insert("jobs".into(), 10_000);
        r
    };
    let report = check_against_baseline(
        &with_misses(11, 0),
        &with_misses(12, 15),
        "base.json",
        0.1,
        &default_stats(),
        false,
    );
    let b = report
        .cases
        .iter()
        .flat_map(|c| &c.bounds)
        .find(|b| b.stat == "deadline_misses")
        .expect("the missed deadlines are judged");
    assert_eq!(b.verdict, Verdict::Fail, "{}", b.message);
    assert!(
        b.message
            .starts_with("missed deadlines 0 → 15 per 10,000 periods (15 of 10,000 periods against 0 of 10,000): regressed beyond +10 %"),
        "{}",
        b.message
    );
}
