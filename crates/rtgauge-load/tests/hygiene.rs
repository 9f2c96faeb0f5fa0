//! Nothing survives the measuring process: a harness that runs loads is SIGKILLed at a random
//! moment (even while it is still starting them), and within a second no process marked as
//! one of its loads may remain; its scratch directory is gone after the next cleanup.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{exe, marked_processes, random_below, scratch_dirs, wait_for_none};

/// Starts the harness with `specs`, kills it after `delay` (or once it is ready, plus
/// `delay`), and checks that every load process is gone within a second.
fn kill_harness(specs: &[&str], delay: Duration, wait_ready: bool) {
    kill(specs, delay, wait_ready, "harness");
}

fn kill(specs: &[&str], delay: Duration, wait_ready: bool, mode: &str) {
    let root = tempfile::tempdir().unwrap();
    let mut harness = Command::new(exe())
        .arg(mode)
        .arg(root.path())
        .args(specs)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the harness");
    let owner = harness.id();
    if wait_ready {
        let mut line = String::new();
        let stdout = harness.stdout.take().unwrap();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        assert!(line.starts_with("ready "), "harness said: {line}");
        assert!(
            !marked_processes(owner).is_empty(),
            "no load process to kill"
        );
    }
    std::thread::sleep(delay);
    // SAFETY: plain kill(2) of our own child, which we have not reaped yet.
    unsafe {
        libc::kill(owner as i32, libc::SIGKILL);
    }
    harness.wait().unwrap();
    let left = wait_for_none(Duration::from_secs(1), || marked_processes(owner));
    assert_eq!(
        left,
        Vec::<String>::new(),
        "load processes survived the SIGKILL of their parent"
    );
    rtgauge_load::cleanup_stale(root.path());
    assert_eq!(
        scratch_dirs(root.path()),
        Vec::<String>::new(),
        "stale scratch left"
    );
}

#[test]
fn sigkill_of_a_running_parent_leaves_no_load_process() {
    let mut specs = vec![
        "cpu:1",
        "messaging:1",
        "io:1",
        "compile:1",
        "exec:sleep 60 & sleep 60",
    ];
    if rtgauge_load::catalogue()
        .iter()
        .any(|l| l.name == "compile" && l.available.is_err())
    {
        specs.retain(|s| !s.starts_with("compile"));
    }
    let delay = Duration::from_millis(random_below(300));
    println!("killing the harness {delay:?} after it was ready");
    kill_harness(&specs, delay, true);
}

#[test]
fn sigkill_while_loads_are_starting_leaves_no_load_process() {
    for _ in 0..3 {
        let delay = Duration::from_millis(random_below(250));
        println!("killing the harness {delay:?} after spawning it");
        kill_harness(&["messaging:1", "io:1", "exec:sleep 60"], delay, false);
    }
}

#[test]
fn sigkill_after_the_starting_thread_exited_leaves_no_load_process() {
    // The first parent-death signal (the thread's exit) is ignored; the second, when the
    // process dies, must still come and be acted on.
    kill(
        &["cpu:1", "exec:sleep 60"],
        Duration::from_millis(200),
        true,
        "harness-thread",
    );
}

#[test]
fn sigkill_leaves_no_stress_ng_stressor() {
    if Command::new("stress-ng").arg("--version").output().is_err() {
        println!("skipping: stress-ng is not installed");
        return;
    }
    kill_harness(
        &["exec:stress-ng --cpu 1 --quiet"],
        Duration::from_millis(300),
        true,
    );
}

#[test]
fn cleanup_stale_removes_a_dead_runs_scratch_dir() {
    let root = tempfile::tempdir().unwrap();
    let mut harness = Command::new(exe())
        .arg("harness")
        .arg(root.path())
        .arg("io:1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(harness.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("ready "), "{line}");
    assert_eq!(
        scratch_dirs(root.path()).len(),
        1,
        "the live run has its scratch dir"
    );
    // A live run's directory is not touched.
    rtgauge_load::cleanup_stale(root.path());
    assert_eq!(scratch_dirs(root.path()).len(), 1);
    harness.kill().unwrap();
    harness.wait().unwrap();
    assert_eq!(
        scratch_dirs(root.path()).len(),
        1,
        "SIGKILL leaves it behind"
    );
    rtgauge_load::cleanup_stale(root.path());
    assert_eq!(scratch_dirs(root.path()), Vec::<String>::new());
}
