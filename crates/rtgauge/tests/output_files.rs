//! What rtgauge writes, and what it refuses to write: every output is checked before the
//! first sample, never replaces an input or another output, never follows a planted symlink,
//! and a measurement is never lost; an interrupted run exits 128 + the signal.

mod common;

use common::{one_line_error, read_json, rtgauge, scratch_result};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A short, unprivileged run (normal mode) writing to `out`.
fn quick_run(out: &Path) -> assert_cmd::Command {
    let mut cmd = rtgauge();
    cmd.args(["run", "cyclic", "--mode", "normal", "--period", "100us"])
        .args(["--warmup", "10ms", "--loops", "200", "-q", "-o"])
        .arg(out);
    cmd
}

/// A run that would measure for 30 s: refused within a few seconds, it was refused before.
fn long_run_error(output: &[&str], cwd: &Path) -> (String, Duration) {
    let started = Instant::now();
    let out = rtgauge()
        .current_dir(cwd)
        .args(["run", "cyclic", "--mode", "normal", "-d", "30s", "-q"])
        .args(output)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    (err, elapsed)
}

#[test]
fn unwritable_outputs_are_refused_before_measuring_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.json"), "{}").unwrap();
    std::fs::create_dir(dir.path().join("existing-dir")).unwrap();
    for (output, says) in [
        (&["-o", "/proc/x.json"][..], "kernel file system"),
        (&["-o", "/proc/x.html", "--no-report"], "kernel file system"),
        (
            &["-o", "file.json/x.json"],
            "file.json is a file, not a directory",
        ),
        (
            &["-o", "existing-dir/"],
            "is a directory; give a file name inside it",
        ),
        (
            &["-o", "existing-dir"],
            "is a directory; give a file name inside it",
        ),
    ] {
        let (err, elapsed) = long_run_error(output, dir.path());
        assert!(err.contains(says), "{output:?}: {err}");
        assert!(
            elapsed < Duration::from_secs(10),
            "{output:?} measured first"
        );
    }
}

#[test]
fn running_in_proc_with_the_default_directory_is_refused_before_measuring() {
    let (err, elapsed) = long_run_error(&[], Path::new("/proc"));
    assert!(
        err.contains("rtgauge-results") && err.contains("-o FILE"),
        "{err}"
    );
    assert!(elapsed < Duration::from_secs(10));
}

#[test]
fn read_only_directory_is_refused_before_measuring_for_an_unprivileged_user() {
    let Some(dir) = common::nobody_workdir() else {
        return;
    };
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    let started = Instant::now();
    let out = common::as_nobody()
        .args(["run", "cyclic", "--mode", "normal", "-d", "30s", "-q", "-o"])
        .arg(locked.join("r.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not writable by this user"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_result_named_html_is_refused_instead_of_overwritten_by_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let (err, _) = long_run_error(&["-o", "X.html"], dir.path());
    assert!(
        err.contains(".json") && err.contains("--no-report"),
        "{err}"
    );
    assert!(!dir.path().join("X.html").exists());
}

#[test]
fn an_existing_result_is_not_replaced_without_force() {
    let (dir, out) = scratch_result();
    std::fs::write(&out, "precious").unwrap();
    let err = one_line_error(&[
        "run".as_ref(),
        "cyclic".as_ref(),
        "-d".as_ref(),
        "30s".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");

    // Nor its report, which was not asked for by name.
    let fresh = dir.path().join("fresh.json");
    std::fs::write(dir.path().join("fresh.html"), "precious").unwrap();
    let out2 = quick_run(&fresh).output().unwrap();
    assert_eq!(out2.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("fresh.html")).unwrap(),
        "precious"
    );
    assert!(!fresh.exists(), "a refused run leaves no result behind");

    quick_run(&out).arg("--force").assert().success();
    assert_eq!(read_json(&out)["status"], "complete");
}

#[test]
fn concurrent_runs_in_one_directory_get_their_own_results() {
    let dir = tempfile::tempdir().unwrap();
    let start = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
            .env("RTGAUGE_NO_STORE", "1")
            .current_dir(dir.path())
            .args(["run", "cyclic", "--mode", "normal", "--period", "100us"])
            .args(["--warmup", "10ms", "--loops", "300", "-q", "--no-report"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (0..3).map(|_| start()).collect();
    let mut paths = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let path = stdout
            .lines()
            .find_map(|l| l.strip_prefix("result: "))
            .expect("a result path")
            .to_string();
        paths.push(path);
    }
    let mut unique = paths.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3, "{paths:?}");
    for p in &paths {
        assert_eq!(read_json(&dir.path().join(p))["status"], "complete", "{p}");
    }
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let (dir, result) = scratch_result();
    quick_run(&result)
        .args(["--record", "cyclic"])
        .assert()
        .success();
    let recording = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "rtgr"))
        .expect("a recording");
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, "").unwrap();
    let alias = dir.path().join("alias.json");
    std::fs::hard_link(&result, &alias).unwrap();
    let before = std::fs::read(&result).unwrap();
    let recorded = std::fs::read(&recording).unwrap();
    let p = |p: &PathBuf| p.to_str().unwrap().to_string();
    for args in [
        vec!["export".into(), p(&recording), "-o".into(), p(&recording)],
        vec!["report".into(), p(&result), "-o".into(), p(&result)],
        vec!["report".into(), p(&result), "-o".into(), p(&alias)],
        vec![
            "compare".into(),
            p(&result),
            p(&alias),
            "-f".into(),
            "csv".into(),
            "-o".into(),
            p(&result),
        ],
        vec![
            "check".into(),
            p(&result),
            "--spec".into(),
            p(&spec),
            "--junit".into(),
            p(&result),
        ],
    ] {
        let err = one_line_error(&args);
        assert!(err.contains("also an input"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(&result).unwrap(), before);
    assert_eq!(std::fs::read(&recording).unwrap(), recorded);
}

#[test]
fn a_planted_symlink_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let result = dir.path().join("r.json");
    quick_run(&result).assert().success();

    // At a report's path: the link is replaced, its target untouched.
    let link = dir.path().join("report.html");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    rtgauge()
        .arg("report")
        .arg(&result)
        .arg("-o")
        .arg(&link)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());

    // At a recording's path (written in place while measuring): refused.
    let second = dir.path().join("s.json");
    let recording = dir.path().join("s.cyclic-normal-none.rtgr");
    std::os::unix::fs::symlink(&victim, &recording).unwrap();
    let out = quick_run(&second)
        .args(["--record", "cyclic"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // No temporary file is left behind under a predictable name.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A normal-mode cyclic run of `duration` in the background; `output` for its stdout and
/// stderr.
fn spawn_run(duration: &str, out: &Path, output: fn() -> Stdio) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
        .env("RTGAUGE_NO_STORE", "1")
        .args(["run", "cyclic", "--mode", "normal", "-d", duration])
        .args(["--warmup", "10ms", "-q", "--no-report", "-o"])
        .arg(out)
        .stdout(output())
        .stderr(output())
        .spawn()
        .unwrap()
}

#[test]
fn a_result_whose_path_fails_at_the_end_is_saved_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    let child = spawn_run("2s", &sub.join("r.json"), Stdio::piped);
    // Pull the directory away while it measures: a file now stands where it was.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::remove_dir_all(&sub).unwrap();
    std::fs::write(&sub, "not a directory").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    let saved = err
        .split("the result was saved to ")
        .nth(1)
        .and_then(|rest| rest.split(" instead").next())
        .unwrap_or_else(|| panic!("no fallback path: {err}"));
    let r = read_json(Path::new(saved));
    assert_eq!(r["status"], "complete");
    std::fs::remove_file(saved).unwrap();
}

fn interrupted_status(signal: i32) -> Option<i32> {
    let _serial = common::exclusive();
    let (_dir, out) = scratch_result();
    let mut child = spawn_run("60s", &out, Stdio::null);
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    assert_eq!(read_json(&out)["status"], "interrupted");
    status.code()
}

#[test]
fn an_interrupted_run_exits_with_the_conventional_status_after_saving() {
    assert_eq!(interrupted_status(libc::SIGINT), Some(130));
    assert_eq!(interrupted_status(libc::SIGTERM), Some(143));
}

#[test]
fn derived_outputs_say_what_is_wrong_with_their_path() {
    let (dir, result) = scratch_result();
    quick_run(&result).arg("--no-report").assert().success();
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, "").unwrap();
    let r = result.to_str().unwrap();
    let existing_dir = dir.path().to_str().unwrap().to_string() + "/";
    for args in [
        vec!["report", r, "-o", "/proc/x.html"],
        vec!["compare", r, r, "-f", "csv", "-o", &existing_dir],
        vec![
            "check",
            r,
            "--spec",
            spec.to_str().unwrap(),
            "--junit",
            "/proc/j.xml",
        ],
    ] {
        let err = one_line_error(&args);
        assert!(
            err.contains("kernel file system") || err.contains("is a directory; give a file name"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn force_replaces_a_result_with_its_recordings_and_nothing_else() {
    let (dir, result) = scratch_result();
    quick_run(&result)
        .args(["--record", "cyclic"])
        .assert()
        .success();
    let neighbour = dir.path().join("r.2.cyclic-normal-none.rtgr");
    std::fs::write(&neighbour, "another result's recording").unwrap();
    quick_run(&result)
        .args(["--record", "cyclic", "--force"])
        .assert()
        .success();
    let r = read_json(&result);
    assert_eq!(r["status"], "complete");
    assert_eq!(r["recordings"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(
        std::fs::read_to_string(&neighbour).unwrap(),
        "another result's recording"
    );
}

/// The files of a run (result, HTML report, recording) in `dir`, by a shell with `umask`.
fn files_of_a_run_with_umask(dir: &Path, umask: &str) -> Vec<PathBuf> {
    let out = dir.join(format!("umask-{umask}/r.json"));
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(assert_cmd::cargo::cargo_bin("rtgauge"))
        .args(["run", "cyclic", "--mode", "normal", "--period", "100us"])
        .args([
            "--warmup", "10ms", "--loops", "200", "-q", "--record", "cyclic", "-o",
        ])
        .arg(&out)
        .env("RTGAUGE_NO_STORE", "1")
        .env_remove("SUDO_UID")
        .status()
        .unwrap();
    assert!(status.success());
    let files: Vec<PathBuf> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for ext in ["json", "html", "rtgr"] {
        assert!(
            files
                .iter()
                .any(|f| f.extension().is_some_and(|e| e == ext)),
            "a .{ext} among {files:?}"
        );
    }
    files
}

#[test]
fn a_run_writes_files_as_the_umask_allows() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |f: &Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
    for f in files_of_a_run_with_umask(dir.path(), "022") {
        assert_eq!(mode(&f), 0o644, "{}: others can read it", f.display());
    }
    for f in files_of_a_run_with_umask(dir.path(), "077") {
        assert_eq!(mode(&f), 0o600, "{}: private", f.display());
    }
}

#[test]
fn a_run_through_sudo_leaves_its_files_to_the_invoking_user() {
    use std::os::unix::fs::MetadataExt;
    if !common::is_root() {
        eprintln!("skipped: needs root to run as sudo would");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("home");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(4242), Some(4343)).unwrap();
    let result = theirs.join("results/r.json");
    let out = rtgauge()
        .args(["run", "cyclic", "--mode", "normal", "--period", "100us"])
        .args([
            "--warmup", "10ms", "--loops", "200", "-q", "--record", "cyclic", "-o",
        ])
        .arg(&result)
        .env("SUDO_UID", "4242")
        .env("SUDO_GID", "4343")
        .output()
        .unwrap();
    common::assert_success(&out);
    let made = theirs.join("results");
    let mut checked = vec![made.clone()];
    checked.extend(std::fs::read_dir(&made).unwrap().map(|e| e.unwrap().path()));
    assert!(
        checked.len() >= 4,
        "directory, result, report, recording: {checked:?}"
    );
    for path in checked {
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!((m.uid(), m.gid()), (4242, 4343), "{}", path.display());
    }
}
