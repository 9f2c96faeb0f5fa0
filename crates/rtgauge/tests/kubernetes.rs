//! The Kubernetes manifests of contrib/monitor/kubernetes and the image they run: the
//! manifests pass `kubernetes-validate --strict` (PyPI, the API's own schemas; installed by
//! tests/kubernetes/install.sh, which .ci/run calls), and the Containerfile, built with
//! buildah from a static rtgauge, runs the manifests' own commands (their shell, sed and
//! rtgauge). Skipped with the reason printed where a tool is missing here; with
//! RTGAUGE_LAB=1 (CI) a missing tool fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifests() -> PathBuf {
    workspace().join("contrib/monitor/kubernetes")
}

/// Skips (printing why) or, in CI, fails.
fn unavailable(why: &str) {
    if std::env::var("RTGAUGE_LAB").as_deref() == Ok("1") {
        panic!("{why} (RTGAUGE_LAB=1: CI must run this test)");
    }
    eprintln!("skipped: {why}");
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `command`, killed after `limit`.
fn bounded(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{command:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

fn yaml_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(manifests())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_manifests_pass_kubernetes_validate_strict() {
    let tool = workspace().join("target/kubernetes-validate-venv/bin/kubernetes-validate");
    let tool = if tool.exists() {
        tool
    } else {
        PathBuf::from("kubernetes-validate")
    };
    if Command::new(&tool).arg("--version").output().is_err() {
        return unavailable(
            "kubernetes-validate is not installed: run tests/kubernetes/install.sh (PyPI)",
        );
    }
    let files = yaml_files();
    assert!(files.len() >= 3, "{files:?}");
    let out = bounded(
        Command::new(&tool).arg("--strict").args(&files),
        Duration::from_secs(120),
    );
    let text = said(&out);
    println!("{text}");
    assert!(out.status.success(), "{text}");
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(text.contains(&format!("{name} passed")), "{name}: {text}");
    }
    // The namespace the others name is among them, and admits their privileged pods.
    let namespace = std::fs::read_to_string(manifests().join("namespace.yaml")).unwrap();
    assert!(namespace.contains("pod-security.kubernetes.io/enforce: privileged"));
    for file in ["daemonset.yaml", "job.yaml"] {
        let text = std::fs::read_to_string(manifests().join(file)).unwrap();
        assert!(text.contains("namespace: rtgauge"), "{file}");
        assert!(text.contains("privileged: true"), "{file}");
    }
}

/// The shell script a manifest's container runs (`command: [/bin/sh, -c]`, its `args[0]`).
fn script_of(file: &str) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(d['spec']['template']['spec']['containers'][0]['args'][0])",
        ])
        .arg(manifests().join(file))
        .output()
        .expect("python3 with python3-yaml (.ci/run installs it)");
    assert!(out.status.success(), "{}", said(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// A working container of `image`, removed when dropped.
struct Container(String);

impl Container {
    fn from(image: &str) -> Container {
        let out = Command::new("buildah")
            .args(["from", image])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", said(&out));
        Container(String::from_utf8(out.stdout).unwrap().trim().to_string())
    }

    /// `sh -c script` in the container (chroot isolation: no OCI runtime needed), with `env`.
    fn run(&self, env: &[(&str, &str)], script: &str) -> Output {
        let mut cmd = Command::new("buildah");
        cmd.args(["run", "--isolation", "chroot"]);
        for (k, v) in env {
            cmd.arg("--env").arg(format!("{k}={v}"));
        }
        cmd.arg(&self.0).args(["--", "/bin/sh", "-c", script]);
        bounded(&mut cmd, Duration::from_secs(120))
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("buildah").args(["rm", &self.0]).output();
    }
}

/// The static binary the image takes: RTGAUGE_STATIC_BINARY, or the release script's.
fn static_binary() -> Option<PathBuf> {
    let path = std::env::var_os("RTGAUGE_STATIC_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/release-static/dist/x86_64/rtgauge"));
    path.exists().then_some(path)
}

#[test]
fn the_image_runs_the_manifests_commands() {
    if Command::new("buildah").arg("--version").output().is_err() {
        return unavailable("buildah is not installed (apt-get install buildah)");
    }
    let Some(binary) = static_binary() else {
        return unavailable(
            "no static rtgauge: run scripts/build-release.sh --only x86_64 (or set RTGAUGE_STATIC_BINARY)",
        );
    };
    let _turn = common::exclusive();
    let tag = "localhost/rtgauge-test:latest";
    let built = bounded(
        Command::new(manifests().join("build-image.sh"))
            .arg(&binary)
            .arg(tag),
        Duration::from_secs(300),
    );
    assert!(built.status.success(), "{}", said(&built));
    let container = Container::from(tag);

    // The Job: a short qualification with a limit no wake-up reaches here; its log holds the
    // summary's verdict, then the full tables, as its comment says.
    let job = container.run(
        &[("DURATION", "2s"), ("MAXIMUM_LATENCY", "10000000")],
        &script_of("job.yaml"),
    );
    let log = said(&job);
    println!("job.yaml:\n{log}");
    assert_eq!(job.status.code(), Some(0), "{log}");
    assert!(log.contains("measuring CPUs "), "{log}");
    assert!(log.contains("verdict:"), "{log}");
    assert!(log.contains("latency cpu="), "{log}");

    // The DaemonSet's monitor, stopped as the kubelet stops a pod (SIGTERM). buildah's chroot
    // isolation gives the container neither real-time bandwidth nor CAP_IPC_LOCK, which a
    // privileged pod has: here the monitor goes on without them (--best-effort) instead of
    // refusing in one line, as it does without --best-effort.
    let script = script_of("daemonset.yaml");
    assert!(script.contains("exec rtgauge monitor "), "{script}");
    let script = script.replace(
        "exec rtgauge monitor ",
        "exec rtgauge monitor --best-effort ",
    );
    let daemon = format!(
        "sh -c '{}' & sleep 4; kill -TERM $!; wait $!",
        script.replace('\'', "'\\''")
    );
    let monitor = container.run(&[], &daemon);
    let log = said(&monitor);
    println!("daemonset.yaml:\n{log}");
    assert_eq!(monitor.status.code(), Some(0), "{log}");
    assert!(log.contains("measuring CPUs "), "{log}");
    assert!(
        log.contains("rtgauge monitor: measuring") && log.contains("http://0.0.0.0:9808/metrics"),
        "{log}"
    );
    assert!(log.contains("stopped after"), "{log}");
    drop(container);
    // The image is 70 MB or more: not left behind on a small disk.
    let _ = Command::new("buildah").args(["rmi", tag]).output();
}

mod common;
