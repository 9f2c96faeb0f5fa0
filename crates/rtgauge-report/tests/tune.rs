//! The page `rtgauge report trials.json` draws from a trials document: the ranked table as the
//! terminal prints it, and every trial's rounds A against B with its verdict, the combination
//! first. The fixture is the document tune writes for a fabricated tune in which two changes
//! helped (the rtgauge crate's test `the_report_fixture_is_what_tune_writes` keeps it so).

use rtgauge_result::tune::{read_tune, TuneDocument, Verdict};
use std::path::Path;

fn fixture() -> TuneDocument {
    read_tune(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trials.json")).unwrap()
}

#[test]
fn every_trial_is_drawn_a_against_b_with_the_combination_first() {
    let doc = fixture();
    let html = rtgauge_report::tune::section(&doc, "trials", false);
    // The ranked table: the combination, the two that helped, the undecided, the failed.
    let rows: Vec<&str> = html
        .split("<th scope=\"row\"><a href=\"#trial-")
        .skip(1)
        .map(|r| r.split('"').next().unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            "together",
            "rt-throttling",
            "timer-migration",
            "vmstat-interval",
            "watchdogs"
        ]
    );
    // Three panels (max, tail, missed) per measured trial, a dot per round and side.
    let measured = doc
        .trials
        .iter()
        .chain(&doc.combination)
        .filter(|t| t.judgement.is_some())
        .count();
    assert_eq!(html.matches("<svg").count(), 3 * measured);
    let rounds: usize = doc
        .trials
        .iter()
        .chain(&doc.combination)
        .map(|t| t.before.len() + t.after.len())
        .sum();
    assert_eq!(html.matches("<circle").count(), 3 * rounds);
    let better = doc
        .trials
        .iter()
        .chain(&doc.combination)
        .filter(|t| t.verdict() == Some(Verdict::Better))
        .count();
    // Each verdict twice: in the table and over its trial.
    assert_eq!(html.matches("badge good\">better").count(), 2 * better);
    assert!(html.contains("Not measured: a round failed: rtgauge run exited 1: no CPU 7"));
    assert!(html.contains("isolcpus=domain,managed_irq,1"));
    insta::assert_snapshot!("tune_section", html.replace("><", ">\n<"));
}

#[test]
fn the_page_is_self_contained() {
    let doc = fixture();
    let page = rtgauge_report::tune::render_html(&[doc.clone(), doc], &["a".into(), "b".into()]);
    assert!(
        !page.contains("<script"),
        "no script: the charts are static SVG"
    );
    assert!(!page.contains("src=\"http"), "nothing fetched");
    assert!(page.contains("<style>"));
    assert_eq!(page.matches("<section class=\"tune\"").count(), 2);
    assert!(page.contains("a: a 1ms loop on CPU 1: max 1.223s"));
}
