//! `rtgauge monitor` naming the causes of its interval maxima: beside a real-time culprit, the
//! cause label on the interval-maximum series and the history's cause name it, by default;
//! `--no-trace` gives neither. Needs root, tracefs and the BPF flight recorder (skipped
//! otherwise, saying why).

mod common;
use common::prometheus::*;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Why the attribution test cannot run here, if it cannot: root, tracefs, two CPUs, the
/// flight recorder (built with clang, a kernel with BTF) and the culprit helper.
fn cannot_attribute() -> Option<String> {
    if let Some(why) = common::cannot_trace() {
        return Some(why.to_string());
    }
    if !rtgauge_bpf::Recorder::built() {
        return Some("this build has no BPF flight recorder (clang was missing)".into());
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("the kernel has no BTF".into());
    }
    if !culprit_helper().exists() {
        return Some("build the culprit first: cargo build -p rtgauge-trace".into());
    }
    None
}

fn culprit_helper() -> PathBuf {
    assert_cmd::cargo::cargo_bin("rtgauge").with_file_name("rtgauge-trace-helper")
}

/// A monitor with 1-s intervals on CPU 1 beside `rtg-culprit` (SCHED_FIFO 99 on CPU 1,
/// spinning 300 µs at random times, mean gap 30 ms, for 8 s); `extra` are more flags.
/// Returns every scrape of /metrics over 6 s, what it printed, and its history's intervals
/// as `history --monitor` lists them.
fn monitor_beside_the_culprit(extra: &[&str]) -> (Vec<String>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let port = free_port();
    let mut monitor = Killed(
        Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
            .args(["monitor", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--interval", "1s", "--period", "1ms", "--cpus", "1"])
            .args(["--warmup", "200ms", "--store"])
            .arg(&store)
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let culprit = Killed(
        Command::new(culprit_helper())
            .args(["culprit", "1", "300", "30000", "8000"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut scrapes = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(7) {
        std::thread::sleep(Duration::from_millis(500));
        if let Some((_, body)) = get(port, "/metrics", "*/*") {
            scrapes.push(body);
        }
    }
    drop(culprit);
    assert!(sigterm(&mut monitor).success());
    let mut printed = String::new();
    monitor
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut printed)
        .unwrap();
    let history = common::rtgauge()
        .args(["history", "--monitor", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    (
        scrapes,
        printed,
        String::from_utf8_lossy(&history.stdout).into_owned(),
    )
}

/// The interval maxima of CPU 1 in the scrapes: (cause label, seconds), one per line seen.
fn interval_maxima(scrapes: &[String]) -> Vec<(Option<String>, f64)> {
    let mut seen = Vec::new();
    for line in scrapes.iter().flat_map(|s| s.lines()) {
        let Some(rest) = line.strip_prefix("rtgauge_interval_max_seconds{cpu=\"1\"") else {
            continue;
        };
        let (labels, value) = rest.split_once("} ").unwrap();
        let cause = labels
            .strip_prefix(",cause=\"")
            .map(|c| c.trim_end_matches('"').to_string());
        seen.push((cause, value.parse().unwrap()));
    }
    seen
}

/// Beside a culprit that takes CPU 1 for 300 µs at a time, the monitor's interval maxima
/// name it: a `cause` label on the interval-maximum series and a cause in the history;
/// `--no-trace` gives neither. Bounded retries (this VM is noisy), each attempt printed.
#[test]
fn interval_maxima_name_a_spinning_culprit_as_their_cause_unless_no_trace() {
    if let Some(why) = cannot_attribute() {
        eprintln!("skipped: {why}");
        return;
    }
    let _turn = common::exclusive();
    let mut named = false;
    for attempt in 1..=3 {
        let (scrapes, printed, history) = monitor_beside_the_culprit(&[]);
        let maxima = interval_maxima(&scrapes);
        let by_culprit = maxima
            .iter()
            .filter(|(c, _)| c.as_deref() == Some("rtg-culprit"))
            .count();
        println!(
            "attempt {attempt}: {} interval-maximum lines scraped, {by_culprit} with cause rtg-culprit: {maxima:?}\n{history}",
            maxima.len()
        );
        assert!(
            printed.contains(
                "each interval's maximum gets its cause from the kernel's flight recorder"
            ),
            "{printed}"
        );
        assert!(!maxima.is_empty(), "no interval maximum was scraped");
        if by_culprit > 0
            && history.contains("Cause of the maximum")
            && history.contains("rtg-culprit")
        {
            named = true;
            break;
        }
    }
    assert!(named, "no interval maximum named the culprit in 3 attempts");

    let (scrapes, printed, history) = monitor_beside_the_culprit(&["--no-trace"]);
    let maxima = interval_maxima(&scrapes);
    println!("--no-trace: {maxima:?}\n{history}");
    assert!(!maxima.is_empty(), "no interval maximum was scraped");
    assert!(maxima.iter().all(|(c, _)| c.is_none()), "{maxima:?}");
    assert!(!history.contains("Cause of the maximum"), "{history}");
    assert!(!printed.contains("cause"), "{printed}");
}
