//! An interrupted or partial result is never a silent pass: `check` fails it unless told
//! `--allow-incomplete`, `compare` names its status. Through the real binary.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// The loaded fixture with `change` applied, written into `dir`.
fn altered(dir: &Path, name: &str, change: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let mut doc = read_json(&report_fixture("loaded.json"));
    change(&mut doc);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

fn spec(dir: &Path) -> PathBuf {
    let path = dir.join("spec.toml");
    std::fs::write(&path, "[[limit]]\nprobe = \"cyclic\"\nmax = \"1h\"\n").unwrap();
    path
}

fn check(result: &Path, spec: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = rtgauge()
        .arg("check")
        .arg(result)
        .arg("--spec")
        .arg(spec)
        .args(extra)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn check_fails_an_interrupted_result_unless_allow_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path());
    let complete = report_fixture("loaded.json");
    assert_eq!(check(&complete, &spec, &[]).0, Some(0));

    let interrupted = altered(dir.path(), "interrupted.json", |d| {
        d["status"] = "interrupted".into();
    });
    let (code, stdout) = check(&interrupted, &spec, &[]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("the run was interrupted"), "{stdout}");
    assert!(stdout.contains("FAIL"), "{stdout}");
    let (code, stdout) = check(&interrupted, &spec, &["--allow-incomplete"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("PASS"), "{stdout}");
}

#[test]
fn check_fails_a_suite_whose_second_probe_never_ran() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path());
    let partial = altered(dir.path(), "partial.json", |d| {
        let runs = d["runs"].as_array_mut().unwrap();
        runs.retain(|r| r["probe"] == "cyclic");
    });
    let junit = dir.path().join("junit.xml");
    let (code, stdout) = check(&partial, &spec, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("never ran: alloc, ioport"), "{stdout}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure type=\"incomplete result\""), "{xml}");
    assert_eq!(check(&partial, &spec, &["--allow-incomplete"]).0, Some(0));
}

#[test]
fn compare_lists_the_run_status_among_the_differences() {
    let dir = tempfile::tempdir().unwrap();
    let interrupted = altered(dir.path(), "interrupted.json", |d| {
        d["status"] = "interrupted".into();
    });
    let out = rtgauge()
        .arg("compare")
        .arg(report_fixture("loaded.json"))
        .arg(&interrupted)
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("(INTERRUPTED: only what it measured is compared)"),
        "{text}"
    );
    let differences = &text[..text.find("cyclic").unwrap_or(text.len())];
    assert!(
        differences
            .lines()
            .any(|l| l.contains("status") && l.contains("complete") && l.contains("interrupted")),
        "{text}"
    );
}

#[test]
fn spec_percentile_of_100_or_more_says_below_100() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("p101.toml");
    std::fs::write(&spec, "[[limit]]\nprobe = \"cyclic\"\np101 = \"1ms\"\n").unwrap();
    let err = one_line_error(&[
        "check".as_ref(),
        report_fixture("loaded.json").as_os_str(),
        "--spec".as_ref(),
        spec.as_os_str(),
    ]);
    assert!(err.contains("below 100"), "{err}");
    assert!(!err.contains("unknown key"), "{err}");
}
