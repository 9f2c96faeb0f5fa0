//! Helpers shared by the end-to-end tests (each test file uses the ones it needs).
#![allow(dead_code)]

pub mod cpusets;
pub mod daemons;
pub mod prometheus;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// The binary under test. Runs are not kept in the run history (RTGAUGE_NO_STORE): tests
/// never write into the user's data directory nor slow down on a shared database; tests of
/// the history use [`rtgauge_with_store`].
pub fn rtgauge() -> Command {
    let mut cmd = Command::cargo_bin("rtgauge").unwrap();
    // The terminal's width is a test's choice (COLUMNS), never the shell's that ran cargo.
    cmd.env("RTGAUGE_NO_STORE", "1")
        .env_remove("RTGAUGE_STORE")
        .env_remove("COLUMNS");
    cmd
}

/// A cyclic run of `duration` after 300 ms warm-up in rt mode on `cpus` at `period`, its
/// result at `result`, by `cmd` (the binary with or without a history); fails the test on
/// error.
pub fn cyclic_run(
    mut cmd: std::process::Command,
    result: &Path,
    [cpus, period, duration]: [&str; 3],
) {
    let out = cmd
        .args(["run", "cyclic", "-d", duration, "--warmup", "300ms"])
        .args(["-c", cpus, "-p", period, "-q", "--no-report", "-o"])
        .arg(result)
        .output()
        .unwrap();
    assert_success(&out);
}

/// The binary as a plain process, without a run history.
pub fn rtgauge_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"));
    cmd.env("RTGAUGE_NO_STORE", "1")
        .env_remove("RTGAUGE_STORE")
        .env_remove("COLUMNS");
    cmd
}

/// The binary with its run history at `store` (and nowhere else); a plain process so tests
/// can also spawn and kill it.
pub fn rtgauge_with_store(store: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"));
    cmd.env_remove("RTGAUGE_NO_STORE")
        .env("RTGAUGE_STORE", store);
    cmd
}

/// Measuring tests of one file run one at a time: a run pinned at RT priority (or a load) in
/// one test would otherwise show up in another's numbers on this 2-core machine.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    MEASURING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The measuring turn (see [`exclusive`]) for a test that needs root; None, with the test's
/// skip printed, when not root: `let Some(_turn) = exclusive_as_root("the rt mode") else { return };`.
pub fn exclusive_as_root(needs_root_for: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    if !is_root() {
        eprintln!("skipped: needs root for {needs_root_for}");
        return None;
    }
    Some(exclusive())
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A temporary directory the unprivileged user can write to, when this test can drop to
/// `nobody` (it runs as root and util-linux's setpriv exists); None, with the reason printed,
/// otherwise.
pub fn nobody_workdir() -> Option<tempfile::TempDir> {
    let has_setpriv = std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !is_root() || !has_setpriv {
        eprintln!("skipped: needs root to drop to nobody, and setpriv (util-linux)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    Some(dir)
}

/// `rtgauge` run as `nobody` with no capabilities; add its arguments.
pub fn as_nobody() -> std::process::Command {
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args([
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--inh-caps=-all",
    ])
    .arg(assert_cmd::cargo::cargo_bin("rtgauge"))
    .env("RTGAUGE_NO_STORE", "1");
    cmd
}

/// `rtgauge ARGS… -o RESULT` started in the background (ARGS space-separated), for tests that
/// signal it while it runs.
pub fn spawn(args: &str, result: &Path, stderr: std::process::Stdio) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
        .args(args.split_whitespace())
        .arg("-o")
        .arg(result)
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Sends SIGINT (Ctrl-C) to a child started by [`spawn`].
pub fn interrupt(child: &std::process::Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

/// Fails the test with the command's stderr when it did not exit 0.
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `rtgauge ARGS…` expecting exit 1 and a one-line error on stderr; returns the error.
pub fn one_line_error<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = rtgauge().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// A result document of the report crate's fixtures (crates/rtgauge-report/tests/fixtures).
pub fn report_fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-report/tests/fixtures")
        .join(name)
}

/// Runs `rtgauge run ARGS… --no-report -q -o TMP/r.json`, expecting success, and returns the
/// result document.
pub fn run_result(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let cmd = rtgauge()
        .arg("run")
        .args(args)
        .args(["--no-report", "-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_success(&cmd);
    read_json(&out)
}

/// The typed result document at `path` (validated as every reader validates it).
pub fn read_result(path: &Path) -> rtgauge_result::RunResult {
    rtgauge_result::read_result(path).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `rtgauge run ARGS… -q -o OUT` alone on the machine (other measuring tests wait),
/// expecting success.
pub fn run_into(out: &Path, args: &[&str]) {
    let _serial = exclusive();
    let cmd = rtgauge()
        .arg("run")
        .args(args)
        .args(["-q", "-o"])
        .arg(out)
        .output()
        .unwrap();
    assert_success(&cmd);
}

/// Sets the calling thread to SCHED_FIFO `prio` pinned to `cpu`.
pub fn make_rt(prio: i32, cpu: usize) -> bool {
    // SAFETY: plain syscalls on the calling thread with valid arguments.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        let p = libc::sched_param {
            sched_priority: prio,
        };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    }
}

/// A fresh temporary directory and the path `r.json` in it, where a test's run writes its
/// result (keep the directory alive as long as the files are needed).
pub fn scratch_result() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("r.json");
    (dir, result)
}

/// [`run_result`] with its arguments written as on a command line (space-separated), which
/// reads better than one quoted word per line.
pub fn run_line(args: &str) -> Value {
    run_result(&args.split_whitespace().collect::<Vec<_>>())
}

/// `rtgauge compare -f json A B`, expecting success; returns the comparison document.
pub fn compare_json(a: &Path, b: &Path) -> Value {
    let out = rtgauge()
        .args(["compare", "-f", "json"])
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("compare -f json prints JSON")
}

/// Asserts that `result` follows the committed JSON Schema (docs/result.schema.json).
pub fn assert_follows_committed_schema(result: &Value) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/result.schema.json"),
    )
    .expect("docs/result.schema.json exists");
    let schema: Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Why tracing cannot be tested here (needs root, tracefs and two CPUs), or None.
pub fn cannot_trace() -> Option<&'static str> {
    if !is_root() {
        return Some("needs root");
    }
    if !std::path::Path::new("/sys/kernel/tracing/instances").is_dir()
        && !std::path::Path::new("/sys/kernel/debug/tracing/instances").is_dir()
    {
        return Some("needs tracefs mounted");
    }
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return Some("needs two CPUs (the trace is read off the measured one)");
    }
    None
}

/// The lock every test (and helper) that changes or depends on the kernel's scheduler
/// settings takes, so that one's sysctl does not land in another's measurement.
pub struct KernelSettingsLock {
    _held: std::fs::File,
}

impl KernelSettingsLock {
    pub fn take() -> KernelSettingsLock {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open("/tmp/rtgauge-kernel.lock")
            .unwrap();
        // SAFETY: flock on a descriptor this struct owns; released when it is closed.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        KernelSettingsLock { _held: file }
    }
}
