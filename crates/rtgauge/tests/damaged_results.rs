//! Damaged or edited result documents are refused by every command that reads them, in one
//! line naming the file and the field, instead of producing confident nonsense (a comparison
//! once printed "KS D 1.000 … median +0.0 %" for a document with impossible counts).

mod common;

use common::one_line_error;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-fuzz/corpus/result")
        .join(name)
}

/// The corpus document with its first series' statistics edited by `edit`, written to `dir`.
fn damaged(dir: &Path, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut doc = common::read_json(&corpus("idle.json"));
    edit(&mut doc["runs"][0]["series"][0]["stats"]);
    let path = dir.join("damaged.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

#[test]
fn report_compare_and_check_refuse_a_document_with_impossible_counts() {
    let dir = tempfile::tempdir().unwrap();
    let bad = damaged(dir.path(), |stats| {
        stats["histogram"]["buckets"] = json!([[31200, u64::MAX], [31296, u64::MAX]]);
    });
    let good = corpus("idle.json");
    let spec =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtgauge-fuzz/corpus/spec/limits.toml");
    let html = dir.path().join("r.html");
    for args in [
        vec![
            "report".as_ref(),
            bad.as_os_str(),
            "-o".as_ref(),
            html.as_os_str(),
        ],
        vec!["compare".as_ref(), good.as_os_str(), bad.as_os_str()],
        vec![
            "check".as_ref(),
            bad.as_os_str(),
            "--spec".as_ref(),
            spec.as_os_str(),
        ],
    ] {
        let err = one_line_error(&args);
        assert!(err.contains("damaged.json"), "{args:?}: {err}");
        assert!(
            err.contains("runs[0].series[0].stats.histogram.buckets"),
            "{args:?}: {err}"
        );
    }
    assert!(!html.exists(), "no report of a damaged document");
}

#[test]
fn compare_refuses_min_above_max_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = damaged(dir.path(), |stats| {
        stats["min_ns"] = json!(5000);
        stats["max_ns"] = json!(10);
    });
    let err = one_line_error(&[
        "compare".as_ref(),
        corpus("idle.json").as_os_str(),
        bad.as_os_str(),
    ]);
    assert!(
        err.contains("runs[0].series[0].stats.min_ns (5000) is above max_ns (10)"),
        "{err}"
    );
}
