//! The baseline gate (`check --baseline --regress`): a regression fails, a change the runs
//! cannot tell from their own variation is inconclusive, and every statistic states the
//! smallest change the pair could have detected.

mod common;

use rtgauge_report::check::{check_against_baseline, Verdict};

fn verdicts(seconds: u64, stretch: f64, loud: f64) -> Vec<(String, Verdict, String)> {
    let (a, b) = common::gate_pair(seconds, stretch, loud);
    let stats = ["p99".to_string(), "max".to_string()];
    let report = check_against_baseline(&a, &b, "base.json", 0.1, &stats, false);
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
