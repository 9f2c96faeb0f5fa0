//! `--duration forever`: measured until Ctrl-C in windows, the result saved as each ends.

mod common;

use serde_json::Value;
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
    // Windows of about 1.1 s each; the result is saved as each ends. Watch for the save of
    // the second, then interrupt halfway through the next window's measuring (past its
    // 100-ms warm-up), whatever the machine's start-up took: a fixed sleep sometimes hit the
    // moment a window ended, and the next window had nothing yet to keep.
    let saved_windows = |doc: &Value| {
        doc["runs"].as_array().map_or(0, |runs| {
            runs.iter().filter(|r| r.get("variant").is_some()).count()
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let (saved, windows) = loop {
        let doc = std::fs::read(&out)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        if let Some(doc) = doc.filter(|d| saved_windows(d) >= 2) {
            let n = saved_windows(&doc);
            break (doc, n);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "two windows were not saved within 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        saved["status"], "interrupted",
        "a soak in progress is not complete"
    );
    std::thread::sleep(Duration::from_millis(500));
    common::interrupt(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let doc = common::read_json(&out);
    // A soak explains its spikes without --trace, with the flight recorder only: where it
    // cannot load (not root, no BTF) the soak goes on untraced and says why.
    let tracing = &doc["tracing"];
    assert_eq!(tracing["by_default"], true, "{tracing}");
    if tracing["active"] == true {
        assert_eq!(tracing["recorder"], "bpf", "{tracing}");
    } else {
        assert!(
            tracing["reason"].as_str().is_some_and(|r| !r.is_empty()),
            "{tracing}"
        );
        assert!(
            common::cannot_trace().is_some()
                || !rtgauge_bpf::Recorder::built()
                || !std::path::Path::new("/sys/kernel/btf/vmlinux").exists(),
            "the flight recorder could load here: {tracing}"
        );
    }
    let runs = doc["runs"].as_array().unwrap();
    let (whole, windows_run): (Vec<&Value>, Vec<&Value>) =
        runs.iter().partition(|r| r.get("variant").is_none());
    let variants: Vec<&str> = windows_run
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert!(variants.len() > windows, "{variants:?}");
    for (i, v) in variants.iter().enumerate() {
        assert_eq!(*v, format!("w{}", i + 1));
    }
    // The whole soak as one distribution, after its windows: every window's samples, and the
    // worst wake-up of whichever window had it (not only the last window's).
    assert_eq!(
        whole.len(),
        1,
        "one cyclic run for the whole soak: {runs:#?}"
    );
    assert_eq!(runs.last().unwrap()["variant"], Value::Null);
    let whole = whole[0];
    assert_eq!(whole["probe"], "cyclic");
    let latency = |run: &Value| -> (u64, u64) {
        let series = run["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "latency")
            .expect("a latency series");
        (
            series["stats"]["count"].as_u64().unwrap(),
            series["stats"]["max_ns"].as_u64().unwrap_or(0),
        )
    };
    let (count, max) = latency(whole);
    let window_counts: u64 = windows_run.iter().map(|r| latency(r).0).sum();
    let window_max = windows_run.iter().map(|r| latency(r).1).max().unwrap();
    assert_eq!(
        count, window_counts,
        "every window's samples are in the whole"
    );
    assert_eq!(
        max, window_max,
        "the whole soak's maximum is the largest window's"
    );
    let measured: u64 = windows_run
        .iter()
        .map(|r| r["measured_ns"].as_u64().unwrap())
        .sum();
    assert_eq!(whole["measured_ns"].as_u64(), Some(measured));
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
