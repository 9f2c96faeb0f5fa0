//! Ctrl-C twice: the first asks the run to stop and save, the second exits at once.

mod common;

use std::time::{Duration, Instant};

#[test]
fn second_interrupt_exits_at_once_without_waiting_for_the_probe() {
    let _serial = common::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    // An 8 s period: after the first Ctrl-C the probe would sleep on until its next wake-up.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
        .args([
            "run", "cyclic", "--mode", "normal", "--period", "8s", "-d", "60s",
        ])
        .args(["--no-report", "-q", "-o"])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id() as libc::pid_t;
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(200));
    let second = Instant::now();
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            second.elapsed() < Duration::from_secs(3),
            "still running 3 s after the second Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    // Either no probe finished (the claimed, empty result file is given back) or the first
    // Ctrl-C's save completed: never an empty file left behind.
    if out.exists() {
        common::read_json(&out);
    }
}
