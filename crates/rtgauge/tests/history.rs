//! The run history through the real binary: every run is kept, `history` lists, `show` and
//! `trend` read it back, and no history problem ever costs a result file.

mod common;

use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// A 200 ms cyclic run (normal mode, CPU 0) kept in the history at `store`, its result at
/// `result`, with `extra` options; ready to run or spawn.
fn short_run_with(store: &Path, result: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = rtgauge_with_store(store);
    cmd.args([
        "run",
        "cyclic",
        "-d",
        "200ms",
        "--warmup",
        "10ms",
        "--mode",
        "normal",
        "-c",
        "0",
        "-q",
        "--no-report",
    ])
    .args(extra)
    .arg("-o")
    .arg(result);
    cmd
}

fn short_run(store: &Path, result: &Path) -> std::process::Command {
    short_run_with(store, result, &[])
}

fn stored_run(store: &Path, result: &Path) -> std::process::Output {
    short_run(store, result).output().unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn two_runs_are_listed_shown_and_drawn_from_the_history() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for r in [&a, &b] {
        assert_success(&stored_run(&store, r));
    }
    let out = rtgauge_with_store(&store).arg("history").output().unwrap();
    assert_success(&out);
    let listed = stdout(&out);
    for (id, file) in [("1", &a), ("2", &b)] {
        assert!(
            listed
                .lines()
                .any(|l| l.contains(&format!("| {id} ")) && l.contains(&*file.to_string_lossy())),
            "run {id} listed:\n{listed}"
        );
    }
    // The stored run prints exactly as its file does.
    let show = |what: &str| {
        let out = rtgauge_with_store(&store)
            .args(["show", what])
            .output()
            .unwrap();
        assert_success(&out);
        stdout(&out)
    };
    assert_eq!(show("latest"), show(&b.to_string_lossy()));
    assert_eq!(show("previous"), show(&a.to_string_lossy()));
    assert_eq!(show("1"), show(&a.to_string_lossy()));
    // Filters.
    let out = rtgauge_with_store(&store)
        .args(["history", "--probe", "alloc"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("no stored runs match"),
        "{}",
        stdout(&out)
    );
    // Both points of the trend.
    let out = rtgauge_with_store(&store)
        .args([
            "trend", "cyclic", "latency", "cpu=0", "--mode", "normal", "--format", "table",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("over 2 stored runs"), "{text}");
    let html = dir.path().join("trend.html");
    let out = rtgauge_with_store(&store)
        .args([
            "trend", "cyclic", "latency", "cpu=0", "--format", "html", "-o",
        ])
        .arg(&html)
        .output()
        .unwrap();
    assert_success(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    // Median and max of both runs at least (a 200 ms run may be too short for a p99).
    assert!(page.matches("<circle").count() >= 4, "{page}");
    assert!(
        page.contains(">1</text>") && page.contains(">2</text>"),
        "both runs on the axis"
    );
    // Without a label: the labels the stored series have, not "no run".
    let out = rtgauge_with_store(&store)
        .args(["trend", "cyclic", "latency"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cpu=0") && err.contains("rtgauge trend cyclic latency cpu=0"),
        "{err}"
    );
}

#[test]
fn no_store_keeps_nothing_and_says_nothing() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let result = dir.path().join("r.json");
    let out = short_run_with(&store, &result, &["--no-store"])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!store.exists());
    assert!(!stdout(&out).contains("history:"));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    // Without -q a kept run says where it went.
    let kept = dir.path().join("kept.json");
    let out = rtgauge_with_store(&store)
        .args([
            "run", "cyclic", "-d", "100ms", "--warmup", "10ms", "--mode", "normal",
        ])
        .args(["-c", "0", "--no-report", "-o"])
        .arg(&kept)
        .output()
        .unwrap();
    assert_success(&out);
    assert!(
        stdout(&out).contains("history: run 1 in"),
        "{}",
        stdout(&out)
    );
    read_json(&result);
}

/// The run succeeds, its file is complete, and the history problem is one warning line.
fn assert_one_warning_and_a_complete_file(store: &Path, what: &str) {
    let (_dir, result) = scratch_result();
    let out = stored_run(store, &result);
    assert_success(&out);
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("run history")).collect();
    assert_eq!(warnings.len(), 1, "{what}: one line: {err}");
    assert!(
        warnings[0].contains("the result file") && warnings[0].contains("is complete"),
        "{what}: {err}"
    );
    assert_eq!(read_json(&result)["status"], "complete", "{what}");
}

#[test]
fn an_unwritable_or_corrupt_history_is_one_warning_and_the_result_file_is_kept() {
    let _guard = exclusive();
    // Not even root can create a directory in /proc.
    assert_one_warning_and_a_complete_file(
        Path::new("/proc/rtgauge-test/history.sqlite"),
        "unwritable",
    );
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("history.sqlite");
    std::fs::write(&corrupt, vec![b'#'; 16384]).unwrap();
    assert_one_warning_and_a_complete_file(&corrupt, "corrupt");
    // The corrupt file is left as it was for the user to look at.
    assert_eq!(std::fs::read(&corrupt).unwrap(), vec![b'#'; 16384]);
}

/// A history with one run whose write lock another connection holds (`BEGIN IMMEDIATE`), as
/// another rtgauge writing would; COMMIT on the connection releases it.
fn history_held_by_another_process() -> (tempfile::TempDir, std::path::PathBuf, rusqlite::Connection)
{
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    assert_success(&stored_run(&store, &dir.path().join("first.json")));
    let holder = rusqlite::Connection::open(&store).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    (dir, store, holder)
}

#[test]
fn a_run_waits_for_a_history_another_process_holds_and_then_lands() {
    let _guard = exclusive();
    let (dir, store, holder) = history_held_by_another_process();
    let result = dir.path().join("second.json");
    let child = short_run(&store, &result)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    holder.execute_batch("COMMIT").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_success(&out);
    let out = rtgauge_with_store(&store).arg("history").output().unwrap();
    assert!(stdout(&out).contains("second.json"), "{}", stdout(&out));
}

#[test]
fn sigkill_during_the_history_write_leaves_it_consistent_and_the_result_complete() {
    let _guard = exclusive();
    // The run's history write is under way (waiting inside its transaction attempt) when
    // it is killed.
    let (dir, store, holder) = history_held_by_another_process();
    let result = dir.path().join("killed.json");
    let mut child = short_run(&store, &result)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // The file is complete before the history is touched.
    while std::fs::read_to_string(&result)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_none_or(|v| v["status"] != "complete")
    {
        assert!(started.elapsed() < Duration::from_secs(20), "no result");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "still waiting for the lock"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    assert_eq!(read_json(&result)["status"], "complete");

    // And a kill at arbitrary moments of many writes (imports, one transaction each).
    let files: Vec<String> = (0..40).map(|_| result.display().to_string()).collect();
    for delay_ms in [5u64, 30, 80, 150] {
        let mut child = rtgauge_with_store(&store)
            .args(["import", "--format", "rtgauge"])
            .args(&files)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
    }
    let db = rtgauge_store::Store::open(&store).unwrap();
    db.integrity_check().unwrap();
    for run in db.list(&rtgauge_store::Filter::default()).unwrap() {
        assert!(!run.probes.is_empty(), "run {} has its series rows", run.id);
        db.get(run.id).unwrap();
    }
}

#[test]
fn repeat_writes_one_numbered_result_per_run_and_keeps_each() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let out = short_run_with(&store, &dir.path().join("r.json"), &["--repeat", "2"])
        .output()
        .unwrap();
    assert_success(&out);
    for i in 1..=2 {
        assert_eq!(
            read_json(&dir.path().join(format!("r-{i}.json")))["status"],
            "complete"
        );
    }
    assert!(!dir.path().join("r.json").exists());
    let out = rtgauge_with_store(&store)
        .args(["history", "--since", "2020-01-01"])
        .output()
        .unwrap();
    let listed = stdout(&out);
    assert!(
        listed.contains("r-1.json") && listed.contains("r-2.json"),
        "{listed}"
    );
    let out = rtgauge_with_store(&store)
        .args(["history", "--since", "2099-01-01T00:00"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("no stored runs match"));
}

#[test]
fn repeated_runs_end_side_by_side_with_the_gate_and_a_baseline_name_moves_only_with_force() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let out = rtgauge_with_store(&store)
        .args([
            "run",
            "cyclic",
            "-d",
            "200ms",
            "--warmup",
            "10ms",
            "--mode",
            "normal",
            "-c",
            "0",
            "--no-report",
            "--repeat",
            "2",
            "-o",
        ])
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    assert_success(&out);
    let text = stdout(&out);
    let tail = &text[text.find("the 2 runs side by side").expect(&text)..];
    assert!(tail.contains("run 1") && tail.contains("run 2"), "{tail}");
    assert!(tail.contains("latency"), "the summary rows: {tail}");
    let (r1, r2) = (dir.path().join("r-1.json"), dir.path().join("r-2.json"));
    let gate = format!(
        "rtgauge check {} {} --baseline BASELINE",
        r1.display(),
        r2.display()
    );
    assert!(tail.contains(&gate), "{tail}");

    let set = |run: &str, extra: &[&str]| {
        rtgauge_with_store(&store)
            .args(["baseline", "set", run, "--name", "board-a"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = set("1", &[]);
    assert_success(&out);
    assert_eq!(stdout(&out).trim(), "baseline board-a: run 1");
    // The same run again is no change.
    assert_success(&set("1", &[]));
    let out = set("2", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("already names run 1") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = set("2", &["--force"]);
    assert_success(&out);
    assert_eq!(stdout(&out).trim(), "baseline board-a: run 2 (was run 1)");
}

#[test]
fn an_import_does_not_become_latest_unless_imported_is_given() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let result = dir.path().join("run.json");
    assert_success(&stored_run(&store, &result));
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-import/tests/fixtures/cyclictest-H50.txt");
    let out = rtgauge_with_store(&store)
        .arg("import")
        .arg(&fixture)
        .output()
        .unwrap();
    assert_success(&out);
    let show = |args: &[&str]| {
        let out = rtgauge_with_store(&store)
            .args(["show", "--format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert_success(&out);
        stdout(&out)
    };
    let file = result.to_string_lossy().into_owned();
    assert_eq!(
        show(&["latest"]),
        show(&[&file]),
        "latest is the rtgauge run"
    );
    assert_ne!(
        show(&["latest", "--imported"]),
        show(&[&file]),
        "with --imported, the import stored after it"
    );
    // With only the import, `previous` says what the history holds instead.
    let err = rtgauge_with_store(&store)
        .args(["show", "previous"])
        .output()
        .unwrap();
    let err = stderr(&err);
    assert!(
        err.contains("1 rtgauge run(s) of this host") && err.contains("1 imported"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
