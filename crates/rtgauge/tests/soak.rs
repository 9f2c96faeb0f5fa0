//! `--duration forever`: measured until Ctrl-C in windows, the result saved as each ends.

mod common;

use std::time::Duration;

#[test]
fn forever_measures_in_windows_until_ctrl_c_and_saves_each_window() {
    let _serial = common::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("soak.json");
    let mut child = common::spawn(
        "run cyclic --mode normal --cpus 0 --duration forever --soak-window 1s --warmup 100ms --no-report -q",
        &out,
        std::process::Stdio::inherit(),
    );
    // Three windows of about 1.1 s each, then a save while the fourth measures.
    std::thread::sleep(Duration::from_millis(3800));
    let saved = common::read_json(&out);
    assert_eq!(
        saved["status"], "interrupted",
        "a soak in progress is not complete"
    );
    let windows = saved["runs"].as_array().unwrap().len();
    assert!(windows >= 2, "{windows} windows saved");
    common::interrupt(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let doc = common::read_json(&out);
    let variants: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert!(variants.len() > windows, "{variants:?}");
    for (i, v) in variants.iter().enumerate() {
        assert_eq!(*v, format!("w{}", i + 1));
    }
}

#[test]
fn forever_is_refused_with_recordings() {
    let out = common::rtgauge()
        .args([
            "run",
            "cyclic",
            "--duration",
            "forever",
            "--record",
            "cyclic",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--duration forever"));
}
