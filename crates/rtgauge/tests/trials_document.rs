//! The trials document `rtgauge tune --output` writes, read by the other commands: `report`
//! draws it, `compare` compares two of them setting by setting, `history` lists the tunes it
//! kept, and every reader of run results refuses it (and a mix) in one line saying what to
//! do instead. Uses the fixture tune writes for a fabricated tune (no root, nothing measured).

mod common;

use common::rtgauge;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-report/tests/fixtures")
        .join(name)
}

fn one_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).into_owned();
    assert_eq!(text.trim_end().lines().count(), 1, "one line: {text}");
    text
}

/// The fixture with timer migration undecided and no combination, as another machine's tune.
fn other_machine(dir: &Path) -> PathBuf {
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("trials.json")).unwrap()).unwrap();
    value["host"] = "other".into();
    value["trials"][1]["judgement"]["verdict"] = "cannot_tell".into();
    value.as_object_mut().unwrap().remove("combination");
    let path = dir.join("b-trials.json");
    std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    path
}

#[test]
fn report_draws_the_trials_and_refuses_a_mix() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("tune.html");
    rtgauge()
        .args(["report", fixture("trials.json").to_str().unwrap(), "-o"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("rtgauge tune report"));
    assert!(html.contains("id=\"trial-together\""));
    let out = rtgauge()
        .arg("report")
        .args([fixture("trials.json"), fixture("idle.json")])
        .arg("-o")
        .arg(dir.path().join("mix.html"))
        .assert()
        .code(1);
    let line = one_line(&out.get_output().stderr);
    assert!(line.contains("report them apart"), "{line}");
}

#[test]
fn compare_says_which_changes_helped_on_both_and_refuses_a_run_result() {
    let dir = tempfile::tempdir().unwrap();
    let b = other_machine(dir.path());
    let out = rtgauge()
        .arg("compare")
        .arg(fixture("trials.json"))
        .arg(&b)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("helped on both: rt-throttling"), "{text}");
    assert!(text.contains("helped on A only: timer-migration"), "{text}");
    let out = rtgauge()
        .arg("compare")
        .args([fixture("trials.json"), fixture("idle.json")])
        .assert()
        .code(1);
    let line = one_line(&out.get_output().stderr);
    assert!(line.contains("compare two trials documents"), "{line}");
    // A reader of run results says what the file is and what reads it.
    let out = rtgauge()
        .arg("show")
        .arg(fixture("trials.json"))
        .assert()
        .code(1);
    let line = one_line(&out.get_output().stderr);
    assert!(line.contains("is a trials document"), "{line}");
}

#[test]
fn history_lists_a_kept_tune_with_its_verdict_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let doc = rtgauge_result::tune::read_tune(&fixture("trials.json")).unwrap();
    let mut db = rtgauge_store::Store::open(&store).unwrap();
    assert_eq!(db.insert_tune(&doc, "/srv/trials.json").unwrap(), 1);
    drop(db);
    let out = common::rtgauge_with_store(&store)
        .args(["history", "-n", "5"])
        .env("COLUMNS", "250")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no stored runs match"), "{text}");
    assert!(text.contains("a 1ms loop on CPU 1: max 1.223s"), "{text}");
    assert!(text.contains("2 of 4"), "{text}");
    assert!(text.contains("/srv/trials.json"), "{text}");
    // A filter on probes is about runs: the tune is left out.
    let out = common::rtgauge_with_store(&store)
        .args(["history", "--probe", "cyclic"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("1.223s"));
}
