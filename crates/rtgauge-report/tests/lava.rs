//! The LAVA rendering (`show --format lava`): snapshots of a plain, a spec-judged and a
//! baseline-judged result, and the properties every lab relies on (names LAVA accepts and
//! that never repeat, every headline statistic present, every failed limit a failed case).

mod common;

use rtgauge_report::check::{check_against_baseline, check_result, Spec, Verdict};
use rtgauge_report::lava::{LabResults, Outcome};
use rtgauge_result::{read_result, RunResult};
use std::collections::BTreeSet;

fn fixture(name: &str) -> RunResult {
    read_result(&common::fixture(name)).expect("fixture")
}

fn spec() -> Spec {
    let text = std::fs::read_to_string(common::fixture("spec.toml")).unwrap();
    Spec::parse(&text, std::path::Path::new("fixtures/spec.toml")).unwrap()
}

#[test]
fn lava_of_a_plain_result() {
    insta::assert_snapshot!(LabResults::of(&fixture("idle.json"), None).render_shell());
}

#[test]
fn lava_judged_by_a_spec() {
    let loaded = fixture("loaded.json");
    let check = check_result(&loaded, &spec());
    insta::assert_snapshot!(LabResults::of(&loaded, Some(&check)).render_shell());
}

#[test]
fn lava_judged_by_a_baseline() {
    let (a, b) = (fixture("idle.json"), fixture("loaded.json"));
    let stats = vec!["p99".to_string(), "max".to_string()];
    let check = check_against_baseline(&a, &b, "idle.json", 0.1, &stats, false);
    insta::assert_snapshot!(LabResults::of(&b, Some(&check)).render_shell());
}

fn allowed(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[test]
fn names_are_lava_names_and_never_repeat() {
    for result in [fixture("idle.json"), fixture("loaded.json")] {
        let check = check_result(&result, &spec());
        for lab in [
            LabResults::of(&result, None),
            LabResults::of(&result, Some(&check)),
        ] {
            let mut seen = BTreeSet::new();
            for set in &lab.sets {
                assert!(allowed(&set.name), "set {}", set.name);
                for case in &set.cases {
                    assert!(allowed(&case.name), "case {}", case.name);
                    assert!(seen.insert(&case.name), "{} repeats", case.name);
                }
            }
            // Every line is a command a shell runs as written: no quoting needed.
            for line in lab.render_shell().lines() {
                assert!(line.starts_with("lava-test-"), "{line}");
                assert!(
                    !line.contains(['\'', '"', '$', ';', '`', '|', '&']),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn every_headline_statistic_is_a_measurement() {
    let result = fixture("loaded.json");
    let lab = LabResults::of(&result, None);
    for run in result
        .runs
        .iter()
        .filter(|r| r.status == rtgauge_result::ProbeStatus::Ok)
    {
        for series in &run.series {
            let stem = rtgauge_report::lava::series_stem(run, series);
            let max = lab
                .cases()
                .find(|c| c.name == format!("{stem}-max"))
                .unwrap_or_else(|| panic!("{stem}-max missing"));
            let m = max.measurement.as_ref().unwrap();
            assert_eq!(m.units, "us");
            let expected = series.per_op_ns(series.stats.max_ns).unwrap() / 1000.0;
            assert!((m.number() - expected).abs() < 0.0005, "{stem}: {m:?}");
            for counter in series.counters.keys() {
                assert!(
                    lab.cases().any(|c| c.name == format!("{stem}-{counter}")),
                    "{stem}-{counter} missing"
                );
            }
        }
    }
    // Without a verdict every measurement passes.
    assert!(lab
        .cases()
        .filter(|c| c.measurement.is_some())
        .all(|c| c.result == Outcome::Pass));
}

#[test]
fn every_failed_limit_is_a_failed_case() {
    let result = fixture("loaded.json");
    let check = check_result(&result, &spec());
    let failed_bounds = check
        .cases
        .iter()
        .flat_map(|c| &c.bounds)
        .filter(|b| b.verdict == Verdict::Fail)
        .count();
    let failed_problems = check
        .cases
        .iter()
        .filter(|c| !c.passed && c.problem.is_some())
        .count();
    assert!(
        failed_bounds + failed_problems > 0,
        "the fixture spec fails"
    );
    let lab = LabResults::of(&result, Some(&check));
    let failed = lab.cases().filter(|c| c.result == Outcome::Fail).count();
    assert!(
        failed > failed_problems,
        "{failed} failed cases for {failed_bounds} failed bounds and {failed_problems} problems"
    );
    // And nothing passes that the check failed: the failed cases name what the check named.
    assert!(!check.passed);
    assert!(lab.cases().all(|c| c.result != Outcome::Fail || c.judged));
}
