//! Reading a result document refuses what no run could have written, naming the field.
//!
//! Each test damages one field of a real document (the corpus the fuzz tests start from) and
//! checks the one-line refusal; before validation on read, every one of these was accepted
//! and rendered as if measured.

use rtgauge_result::{parse_result, read_result, ResultError};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-fuzz/corpus/result")
        .join(name)
}

fn idle() -> Value {
    serde_json::from_slice(&std::fs::read(corpus("idle.json")).unwrap()).unwrap()
}

/// The error message for `doc` read from a file, so the test sees what a user sees.
fn refusal(doc: &Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.json");
    std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
    let err = read_result(&path).expect_err("a damaged document must be refused");
    let message = err.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(
        message.contains("damaged.json"),
        "names the file: {message}"
    );
    message
}

fn first_stats(doc: &mut Value) -> &mut Value {
    &mut doc["runs"][0]["series"][0]["stats"]
}

/// Damages the corpus document with `edit` and checks the refusal says each of `said`.
fn refused_saying(edit: impl FnOnce(&mut Value), said: &[&str]) {
    let mut doc = idle();
    edit(&mut doc);
    let msg = refusal(&doc);
    for s in said {
        assert!(msg.contains(s), "expected {s:?} in: {msg}");
    }
}

#[test]
fn the_corpus_documents_are_accepted() {
    for name in ["idle.json", "loaded.json", "clock.json", "worst_case.json"] {
        read_result(&corpus(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn min_above_max_is_refused_with_the_field_path() {
    refused_saying(
        |doc| {
            first_stats(doc)["min_ns"] = json!(5_000_000);
            first_stats(doc)["max_ns"] = json!(10);
        },
        &["runs[0].series[0].stats.min_ns (5000000) is above max_ns (10)"],
    );
}

#[test]
fn histogram_counts_that_overflow_are_refused() {
    refused_saying(
        |doc| first_stats(doc)["histogram"]["buckets"] = json!([[31200, u64::MAX], [31296, 5]]),
        &["runs[0].series[0].stats.histogram.buckets", "2^64"],
    );
}

#[test]
fn a_count_of_two_to_the_64_is_refused_even_when_the_buckets_agree() {
    refused_saying(
        |doc| {
            let stats = first_stats(doc);
            stats["count"] = json!(u64::MAX);
            stats["histogram"]["buckets"] = json!([[31200, u64::MAX]]);
            stats["max_ns"] = json!(31200);
            stats["min_ns"] = json!(31200);
        },
        &["stats.count"],
    );
}

#[test]
fn a_count_that_differs_from_the_histogram_is_refused() {
    refused_saying(
        |doc| first_stats(doc)["count"] = json!(3),
        &["differs from the histogram"],
    );
}

#[test]
fn unsorted_histogram_buckets_are_refused() {
    refused_saying(
        |doc| {
            let buckets = first_stats(doc)["histogram"]["buckets"].as_array_mut();
            buckets.unwrap().swap(1, 2);
        },
        &["histogram.buckets[2]", "increasing order"],
    );
}

#[test]
fn significant_digits_zero_and_255_are_refused() {
    for digits in [0, 6, 255] {
        refused_saying(
            |doc| first_stats(doc)["histogram"]["significant_digits"] = json!(digits),
            &["histogram.significant_digits"],
        );
    }
}

#[test]
fn batch_zero_is_refused() {
    refused_saying(
        |doc| doc["runs"][1]["series"][1]["batch"] = json!(0),
        &["runs[1].series[1].batch is 0"],
    );
}

#[test]
fn interval_zero_with_interval_maxima_is_refused() {
    refused_saying(
        |doc| first_stats(doc)["intervals"]["interval_ns"] = json!(0),
        &["stats.intervals.interval_ns is 0"],
    );
}

#[test]
fn percentiles_out_of_order_are_refused() {
    refused_saying(
        |doc| first_stats(doc)["percentiles"]["p99_ns"] = json!(40_000),
        &["percentiles.p90_ns (73407) is above percentiles.p99_ns (40000)"],
    );
    refused_saying(
        |doc| first_stats(doc)["p25_ns"] = json!(1),
        &["stats.min_ns (31200) is above p25_ns (1)"],
    );
    refused_saying(
        |doc| first_stats(doc)["percentiles"]["p99_99_ns"] = json!(1_000_000_000),
        &["percentiles.p99_99_ns (1000000000) is above max_ns (793950)"],
    );
}

#[test]
fn a_recording_outside_the_result_directory_is_refused() {
    for path in ["/etc/passwd", "../elsewhere.rtgr", ""] {
        let mut doc = idle();
        doc["recordings"] = json!([{
            "path": path, "probe": "cyclic", "mode": "rt", "load": "none",
            "format_version": 1, "samples_written": 0, "samples_dropped": 0, "bytes": 0
        }]);
        assert!(refusal(&doc).contains("recordings[0].path"), "{path}");
    }
}

#[test]
fn schema_version_zero_is_refused() {
    refused_saying(
        |doc| doc["schema_version"] = json!(0),
        &["schema_version is 0"],
    );
}

#[test]
fn a_schema_version_that_is_not_a_whole_number_is_named_as_it_is() {
    for (version, said) in [
        (json!("1"), "schema_version is a string (\"1\")"),
        (json!(-1), "schema_version is -1"),
        (json!(1.5), "schema_version is 1.5"),
        (
            serde_json::from_str::<Value>("1180591620717411303424").unwrap(),
            "schema_version is 1.1805916207174113e+21",
        ),
    ] {
        let mut doc = idle();
        doc["schema_version"] = version;
        let msg = refusal(&doc);
        assert!(msg.contains(said), "expected {said:?} in: {msg}");
        assert!(!msg.contains("no schema_version field"), "{msg}");
    }
}

#[test]
fn a_missing_schema_version_is_still_called_missing() {
    refused_saying(
        |doc| drop(doc.as_object_mut().unwrap().remove("schema_version")),
        &["no schema_version field"],
    );
}

#[test]
fn a_future_schema_version_asks_for_an_upgrade() {
    refused_saying(
        |doc| doc["schema_version"] = json!(99),
        &["upgrade rtgauge"],
    );
}

#[test]
fn a_huge_bad_value_is_not_echoed_whole() {
    let mut doc = idle();
    doc["schema_version"] = json!("x".repeat(100_000));
    let msg = refusal(&doc);
    assert!(msg.len() < 400, "{} characters", msg.len());
}

#[test]
fn a_document_that_is_not_an_object_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("list.json");
    std::fs::write(&path, "[1, 2]").unwrap();
    let err = read_result(&path).unwrap_err();
    assert!(matches!(err, ResultError::Malformed { .. }), "{err}");
    assert!(err.to_string().contains("JSON array"), "{err}");
}

#[test]
fn a_series_without_samples_may_keep_an_empty_histogram() {
    // What the primitive probe stores for a call it could not time.
    let mut doc = idle();
    let stats = rtgauge_stats::Summary::default();
    *first_stats(&mut doc) = serde_json::to_value(stats).unwrap();
    parse_result(&serde_json::to_vec(&doc).unwrap()).expect("an empty series is valid");
}

#[test]
fn a_quoted_value_with_a_line_break_does_not_break_the_message() {
    let mut doc = idle();
    doc["checks"] = json!([{
        "id": "x", "title": "x", "status": "line one\nline two",
        "found": "", "why": "", "fix": null
    }]);
    let msg = refusal(&doc);
    assert!(msg.contains(r"line one\nline two"), "{msg}");
}

#[test]
fn a_unit_error_stays_on_one_line() {
    let err = rtgauge_result::units::parse_duration_ns("1\nfortnight").unwrap_err();
    assert!(!err.to_string().contains('\n'), "{err}");
}

/// The corpus document with an extreme-value estimate on its first series (60 synthetic
/// Gumbel maxima, seeded), as the runner stores one.
fn with_estimate() -> Value {
    use rtgauge_stats::evt::{estimate_summary, sample, Gev};
    let mut doc = idle();
    let maxima: Vec<u64> = sample(&Gev::gumbel(300_000.0, 20_000.0), 60, 3)
        .iter()
        .map(|&v| v as u64)
        .collect();
    let stats = first_stats(&mut doc);
    let top = *maxima.iter().max().unwrap();
    if stats["max_ns"].as_u64().unwrap() < top {
        stats["max_ns"] = json!(top);
    }
    stats["intervals"]["max_ns"] = json!(maxima);
    let summary: rtgauge_stats::Summary = serde_json::from_value(stats.clone()).unwrap();
    let estimate = estimate_summary(&summary).unwrap();
    assert!(estimate.estimate().is_some(), "{estimate:?}");
    doc["runs"][0]["series"][0]["worst_case"] = serde_json::to_value(estimate).unwrap();
    doc
}

#[test]
fn a_stored_estimate_is_accepted_and_a_damaged_one_refused() {
    let doc = with_estimate();
    parse_result(&serde_json::to_vec(&doc).unwrap()).expect("the estimator's own output");
    let wc = "runs[0].series[0].worst_case";
    for (edit, said) in [
        (
            Box::new(|w: &mut Value| w["scale_ns"] = json!(-1.0)) as Box<dyn Fn(&mut Value)>,
            format!("{wc}.scale_ns is -1; a fitted scale is above 0"),
        ),
        (
            Box::new(|w: &mut Value| w["confidence"] = json!(1.5)),
            format!("{wc}.confidence is 1.5, not a probability"),
        ),
        (
            Box::new(|w: &mut Value| w["return_levels"][0]["probability"] = json!(0.0)),
            format!("{wc}.return_levels[0].probability is 0, not a probability"),
        ),
        (
            Box::new(|w: &mut Value| w["curve"][3]["return_period_ns"] = json!(0)),
            format!("{wc}.curve[3].return_period_ns is not above the previous point's"),
        ),
        (
            Box::new(|w: &mut Value| w["curve"][0]["lower_ns"] = json!(u64::MAX)),
            format!("{wc}.curve[0].lower_ns"),
        ),
        (
            Box::new(|w: &mut Value| w["diagnostics"][0]["p_value"] = json!(2.0)),
            format!("{wc}.diagnostics[0].p_value is 2, not a probability"),
        ),
    ] {
        let mut damaged = doc.clone();
        edit(&mut damaged["runs"][0]["series"][0]["worst_case"]);
        let msg = refusal(&damaged);
        assert!(msg.contains(&said), "expected {said:?} in: {msg}");
    }
}
