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
    let Some(_guard) = exclusive_as_root("the rt mode the comparison is about") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: String| -> PathBuf { dir.path().join(name) };
    // Two runs one after the other sometimes differ for real on this VM (the machine changes
    // between them, docs/compare.md): up to two attempts of 10 pairs, each printed.
    let mut outcomes = Vec::new();
    for attempt in 1..=2 {
        let (mut rows, mut different) = (0, 0);
        for i in 0..10 {
            let (a, b) = (
                path(format!("same-{attempt}-{i}-a.json")),
                path(format!("same-{attempt}-{i}-b.json")),
            );
            run(&a, "1ms");
            run(&b, "1ms");
            let (n, d) = declared(&a, &b);
            rows += n;
            different += d;
        }
        println!("attempt {attempt}: {different} of {rows} rows declared different");
        // 10 pairs × latency, period, jitter × 2 CPUs; a series missing from one run of a
        // pair is listed as not compared rather than counted (seen once: 57 rows).
        assert!(rows >= 50, "{rows} rows compared of 60");
        outcomes.push((different, rows));
        if different * 20 <= rows {
            break;
        }
    }
    let (different, rows) = *outcomes.last().unwrap();
    assert!(
        different * 20 <= rows,
        "identical configurations: {outcomes:?} (declared, rows) per attempt; at most 5 % each"
    );

    // A real change, measured the way docs/compare.md recommends: the two configurations
    // alternated round by round (`rtgauge ab`), the run as the unit. Another real-time task
    // on the same CPUs can hide the latency part of the change; up to two attempts, each
    // printed.
    let mut attempts = Vec::new();
    for attempt in 1..=2 {
        let out = rtgauge()
            .args([
                "ab",
                "cyclic -d 2s --warmup 300ms -c 0-1 -p 1ms",
                "cyclic -d 2s --warmup 300ms -c 0-1 -p 100us",
                "--rounds",
                "4",
                "--format",
                "json",
                "--output-dir",
            ])
            .arg(dir.path().join(format!("ab-{attempt}")))
            .output()
            .unwrap();
        assert_success(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        let order: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("round "))
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(
            order,
            ["A", "B", "B", "A", "A", "B", "B", "A"],
            "A B, then B A"
        );
        let c: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        let rows = c["rows"].as_array().unwrap().clone();
        assert!(rows.iter().all(|r| r["runs"] == serde_json::json!([4, 4])));
        let outcome = |r: &serde_json::Value| r["outcome"].as_str().unwrap().to_string();
        // Never a row the wrong way.
        assert!(!rows.iter().any(|r| outcome(r) == "slower"), "{rows:#?}");
        // The period itself is what was configured: always labelled so, never "faster"; and
        // with it the change shows in at least half the rows (latency and jitter move less
        // on a busy VM: as before, the period rows count toward the half).
        let periods_declared = rows.iter().filter(|r| r["series"] == "period").all(|r| {
            outcome(r) == "configured"
                && r["verdict"]
                    .as_str()
                    .unwrap()
                    .starts_with("configuration differs: period 1ms → 100us")
        });
        let configured = rows.iter().filter(|r| outcome(r) == "configured").count();
        let faster = rows.iter().filter(|r| outcome(r) == "faster").count();
        let outcomes: Vec<String> = rows.iter().map(outcome).collect();
        println!(
            "attempt {attempt}: {faster} of {} rows faster: {outcomes:?}",
            rows.len()
        );
        if periods_declared && (faster + configured) * 2 >= rows.len() {
            return;
        }
        attempts.push(rows);
    }
    panic!("the period change was not declared in half the rows: {attempts:#?}");
}

#[test]
fn ab_refuses_a_configuration_that_sets_its_own_output_before_measuring() {
    let err = one_line_error(&["ab", "cyclic -o x.json", "cyclic", "--output-dir", "/tmp"]);
    assert!(
        err.contains("CONFIG-A") && err.contains("-o is set by `ab` itself"),
        "{err}"
    );
    let err = one_line_error(&[
        "ab",
        "cyclic",
        "cyclic --no-such-flag",
        "--output-dir",
        "/tmp",
    ]);
    assert!(err.contains("CONFIG-B"), "{err}");
}
