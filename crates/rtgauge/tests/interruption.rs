//! Stopping a run: a stop request (SIGINT, SIGTERM) ends every probe promptly, even one whose
//! measuring threads are asleep for a long period; a probe that took no sample is never `ok`;
//! periods are bounded so no sleep outlasts the run by more than a period.

mod common;

use common::{exclusive, one_line_error, read_json, rtgauge, run_line, scratch_result};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Starts `rtgauge run ARGS… -o DIR/r.json -q --mode normal`, sends `signal` after
/// `after`, and returns how long the run took to end after the signal, and the result.
fn signal_run(
    args: &[&str],
    signal: libc::c_int,
    after: Duration,
) -> (Duration, serde_json::Value) {
    let (_dir, out) = scratch_result();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
        .arg("run")
        .args(args)
        .args(["--mode", "normal", "--no-report", "-q", "-o"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let signalled = Instant::now();
    child.wait().unwrap();
    (signalled.elapsed(), read_json(&out))
}

#[test]
fn sigint_ends_a_long_period_promptly_and_the_empty_probe_is_not_ok() {
    let _serial = exclusive();
    // Before: the thread slept out its 10 s period (twice, as the first deadline is two
    // periods ahead) whatever the signal, and the run ended `ok` with 0 samples.
    let (took, r) = signal_run(
        &["cyclic", "--period", "10s", "--duration", "30s"],
        libc::SIGINT,
        Duration::from_millis(1500),
    );
    assert!(took < Duration::from_secs(3), "took {took:?} after SIGINT");
    assert_eq!(r["status"], "interrupted");
    let run = &r["runs"][0];
    assert_ne!(run["status"]["state"], "ok", "{}", run["status"]);
    assert!(
        run["status"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("before its first sample"),
        "{}",
        run["status"]
    );
}

#[test]
fn sigterm_ends_a_blocked_event_handler_promptly() {
    let _serial = exclusive();
    let (took, r) = signal_run(
        &[
            "response",
            "--set",
            "response.period=5s",
            "--set",
            "response.sources=pipe",
            "--duration",
            "30s",
        ],
        libc::SIGTERM,
        Duration::from_millis(1500),
    );
    assert!(took < Duration::from_secs(3), "took {took:?} after SIGTERM");
    assert_eq!(r["status"], "interrupted");
}

#[test]
fn a_period_beyond_ten_seconds_is_refused_before_measuring() {
    let started = Instant::now();
    // Before: accepted, and the run slept for the whole period ignoring signals.
    let e = one_line_error(&[
        "run",
        "cyclic",
        "--duration",
        "1s",
        "--period",
        "1000000000s",
    ]);
    assert!(e.contains("outside 10us..10s"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let e = one_line_error(&["run", "response", "--set", "response.period=11s"]);
    assert!(e.contains("outside 10us..10s"), "{e}");
}

#[test]
fn a_period_longer_than_the_duration_fails_instead_of_passing_empty() {
    let _serial = exclusive();
    let (_dir, out) = scratch_result();
    let started = Instant::now();
    let cmd = rtgauge()
        .args([
            "run",
            "cyclic",
            "--period",
            "10s",
            "--duration",
            "1s",
            "--mode",
            "normal",
        ])
        .args(["--no-report", "-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!cmd.status.success());
    let r = read_json(&out);
    assert_eq!(r["runs"][0]["status"]["state"], "failed");
    let error = r["runs"][0]["status"]["error"].as_str().unwrap();
    assert!(
        error.contains("longer than the measuring duration"),
        "{error}"
    );
}

#[test]
fn a_period_given_in_nanoseconds_runs_and_is_recorded_exactly() {
    let _serial = exclusive();
    let r = run_line("cyclic --period 1234567ns --duration 300ms --mode normal --warmup 20ms");
    // Before: recorded as "1.235ms", and run at that period.
    assert_eq!(r["runs"][0]["params"]["period"], "1234567ns");
}
