//! `compare` tells a change from noise: identical configurations measured one after the
//! other are rarely declared different (the previous rule, a KS test on the samples, declared
//! most rows different), while a real change — another period — still is, with repeated
//! interleaved runs compared run by run (`compare A… --vs B…`). Method and the measured
//! figures: docs/compare.md.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn run(result: &Path, period: &str) {
    cyclic_run(rtgauge_process(), result, ["0-1", period, "2s"]);
}

/// (rows, rows declared different) of `compare a b`.
fn declared(a: &Path, b: &Path) -> (usize, usize) {
    let out = rtgauge()
        .args(["compare", "--format", "json"])
        .args([a, b])
        .output()
        .unwrap();
    assert_success(&out);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = c["rows"].as_array().unwrap();
    let different = rows
        .iter()
        .filter(|r| matches!(r["outcome"].as_str(), Some("slower" | "faster" | "differs")))
        .count();
    (rows.len(), different)
}

#[test]
fn identical_runs_rarely_differ_and_a_period_change_does() {
    if !is_root() {
        eprintln!("skipped: needs root for the rt mode the comparison is about");
        return;
    }
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: String| -> PathBuf { dir.path().join(name) };
    let (mut rows, mut different) = (0, 0);
    for i in 0..10 {
        let (a, b) = (
            path(format!("same-{i}-a.json")),
            path(format!("same-{i}-b.json")),
        );
        run(&a, "1ms");
        run(&b, "1ms");
        let (n, d) = declared(&a, &b);
        rows += n;
        different += d;
    }
    assert_eq!(rows, 60, "10 pairs × latency, period, jitter × 2 CPUs");
    assert!(
        different * 20 <= rows,
        "identical configurations: {different} of {rows} rows declared different (at most 5 %)"
    );

    // A real change, measured the way docs/compare.md recommends: runs of the two
    // configurations alternated, the run as the unit.
    let (mut slow, mut fast) = (Vec::new(), Vec::new());
    for i in 0..3 {
        slow.push(path(format!("p1ms-{i}.json")));
        fast.push(path(format!("p100us-{i}.json")));
        run(&slow[i], "1ms");
        run(&fast[i], "100us");
    }
    let out = rtgauge()
        .args(["compare", "--format", "json"])
        .args(&slow)
        .arg("--vs")
        .args(&fast)
        .output()
        .unwrap();
    assert_success(&out);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = c["rows"].as_array().unwrap();
    let faster = rows.iter().filter(|r| r["outcome"] == "faster").count();
    assert!(
        faster * 2 > rows.len(),
        "a tenth of the period: {faster} of {} rows declared faster: {rows:#?}",
        rows.len()
    );
}
