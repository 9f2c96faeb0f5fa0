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
    // Settings left out for one reason share a line.
    let mut doc = fixture();
    for name in ["ksm", "thp"] {
        doc.skipped.push(rtgauge_result::tune::Skipped {
            name: name.into(),
            reason: "not named by --only".into(),
        });
    }
    let html = rtgauge_report::tune::section(&doc, "t", false);
    assert!(html.contains("<li><code>ksm</code>, <code>thp</code>: not named by --only</li>"));
}

/// Two tunes: B is A on another machine where timer migration could not be told apart, the
/// watchdogs were not tried and nothing was combined.
#[test]
fn two_tunes_compare_setting_by_setting() {
    use rtgauge_report::tune_compare::{compare_tunes, Agreement};
    use rtgauge_report::{Format, Render, Style};
    let a = fixture();
    let mut b = a.clone();
    b.host = "other".into();
    let j = b.trials[1].judgement.as_mut().unwrap();
    j.verdict = Verdict::CannotTell;
    j.effects.iter_mut().for_each(|e| e.p = 0.4);
    b.trials.retain(|t| t.name != "watchdogs");
    b.skipped.push(rtgauge_result::tune::Skipped {
        name: "watchdogs".into(),
        reason: "both off".into(),
    });
    b.combination = None;
    let c = compare_tunes(&a, &b, ["monday", "tuesday"]);
    let agreement = |s: &str| c.rows.iter().find(|r| r.setting == s).unwrap().agreement;
    assert_eq!(agreement("rt-throttling"), Agreement::HelpedOnBoth);
    assert_eq!(agreement("timer-migration"), Agreement::HelpedOnAOnly);
    assert_eq!(agreement("vmstat-interval"), Agreement::NeitherCanTell);
    assert_eq!(agreement("watchdogs"), Agreement::NotOnBoth);
    let text = c.render(Format::Text(Style::Plain)).unwrap();
    assert!(text.contains("not tried: both off"), "{text}");
    insta::assert_snapshot!("tune_compare", text);
    // The reverse swaps the sides.
    let back = compare_tunes(&b, &a, ["tuesday", "monday"]);
    assert_eq!(
        back.rows
            .iter()
            .find(|r| r.setting == "timer-migration")
            .unwrap()
            .agreement,
        Agreement::HelpedOnBOnly
    );
    let json: serde_json::Value = serde_json::from_str(&c.render(Format::Json).unwrap()).unwrap();
    assert_eq!(json["rows"][0]["agreement"], "helped_on_both");
    assert!(c.render(Format::Csv).is_err());
}
