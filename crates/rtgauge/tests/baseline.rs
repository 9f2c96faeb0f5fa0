//! Baselines that gate: `check --baseline --regress` fails a real regression (exit 2, the
//! regressed rows named, JUnit written), does not fail the same configuration measured twice,
//! and says when it cannot decide (exit 3, `--inconclusive pass|fail`).
//!
//! The regressions measured here are the ones users gate on: a longer period (1 ms against a
//! 100 µs baseline), a messaging load against an idle run in normal mode, and a real-time
//! culprit (SCHED_FIFO 99, 300 µs spins about every 50 ms) on the measured CPU in rt mode.
//! Single runs of 5 s are compared block by block (100 ms blocks, docs/compare.md).

mod common;

use common::*;
use std::path::Path;

fn run(store: &Path, result: &Path, period: &str) {
    // 10 s: ten one-second blocks per run, enough for a single-run verdict.
    cyclic_run(rtgauge_with_store(store), result, ["0", period, "10s"]);
}

fn check(store: &Path, baseline: &str, junit: &Path) -> std::process::Output {
    rtgauge_with_store(store)
        .args([
            "check",
            "latest",
            "--baseline",
            baseline,
            "--regress",
            "10%",
            "--junit",
        ])
        .arg(junit)
        .output()
        .unwrap()
}

#[test]
fn a_slower_configuration_fails_against_the_baseline_and_a_repeat_of_the_baseline_passes() {
    let Some(_guard) = exclusive_as_root("the rt mode") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let junit = dir.path().join("junit.xml");

    run(&store, &dir.path().join("base.json"), "100us");
    let out = rtgauge_with_store(&store)
        .args(["baseline", "set", "latest", "--name", "board-a"])
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "baseline board-a: run 1"
    );

    // The same configuration again: noise alone should not fail the gate (it may pass or say
    // it cannot decide). On this VM two consecutive identical runs do differ for real now and
    // then (p99 doubling on one CPU; docs/compare.md measured 3 of 10 pairs of 5-s runs): up
    // to five attempts, each printed.
    let mut attempts = Vec::new();
    for attempt in 1..=5 {
        let again = dir.path().join(format!("base-again-{attempt}.json"));
        run(&store, &again, "100us");
        let out = check(&store, "board-a", &junit);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        println!("attempt {attempt}: exit {:?}\n{text}", out.status.code());
        if matches!(out.status.code(), Some(0 | 3)) {
            break;
        }
        attempts.push(text);
        assert!(
            attempts.len() < 5,
            "the same configuration failed the gate five times"
        );
    }

    // Ten times the period: the latency regresses for real.
    run(&store, &dir.path().join("slower.json"), "1ms");
    let out = check(&store, "board-a", &junit);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "a regression exits 2:\n{text}");
    // The period rows always regress tenfold; latency and jitter do on a quiet machine and
    // may be "cannot separate" on a busy one. Whichever failed is named with its reason.
    assert!(
        text.lines()
            .any(|l| l.contains("FAIL") && l.contains("latency cpu=0")
                || l.contains("period cpu=0") && l.contains("FAIL")),
        "a regressed row is named:\n{text}"
    );
    assert!(
        text.contains("regressed beyond +10 %"),
        "the note says why:\n{text}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure"), "{xml}");
}

#[test]
fn compare_latest_against_previous_pairs_a_loaded_run_with_an_idle_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let mut loaded = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(report_fixture("idle.json")).unwrap(),
    )
    .unwrap();
    for run in loaded["runs"].as_array_mut().unwrap() {
        run["load"] = "cpu".into();
    }
    let loaded_path = dir.path().join("loaded.json");
    std::fs::write(&loaded_path, loaded.to_string()).unwrap();
    let out = rtgauge_with_store(&store)
        .args(["import", "--format", "rtgauge"])
        .arg(report_fixture("idle.json"))
        .arg(&loaded_path)
        .output()
        .unwrap();
    assert_success(&out);
    let out = rtgauge_with_store(&store)
        .args([
            "compare",
            "latest",
            "--baseline",
            "previous",
            "--imported",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.contains(",none → cpu,latency,"), "{csv}");
    assert!(
        csv.contains("# A: run 1") && csv.contains("# B: run 2"),
        "{csv}"
    );
}

/// `check B --baseline A --regress 10%` of two single 5-s runs measured by `measure(path,
/// is_candidate)`, up to three attempts (each printed) until it exits 2.
fn gate_fails_within_three_attempts(what: &str, measure: impl Fn(&Path, bool)) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for attempt in 1..=3 {
        measure(&a, false);
        measure(&b, true);
        let out = rtgauge()
            .arg("check")
            .arg(&b)
            .arg("--baseline")
            .arg(&a)
            .args(["--regress", "10%"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        println!(
            "{what}, attempt {attempt}: exit {:?}\n{text}",
            out.status.code()
        );
        if out.status.code() == Some(2) {
            assert!(text.contains("regressed beyond +10 %"), "{text}");
            return;
        }
    }
    panic!("{what}: the gate did not fail in three attempts");
}

fn five_seconds(out: &Path, args: &[&str]) {
    let cmd = rtgauge()
        .args([
            "run",
            "cyclic",
            "-d",
            "5s",
            "-q",
            "--no-report",
            "--force",
            "-o",
        ])
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert_success(&cmd);
}

#[test]
fn a_messaging_load_fails_the_gate_against_an_idle_run() {
    let _turn = exclusive();
    gate_fails_within_three_attempts("messaging vs idle, normal mode", |out, loaded| {
        let mut args = vec!["--mode", "normal", "--cpus", "0"];
        if loaded {
            args.extend(["--load", "messaging"]);
        }
        five_seconds(out, &args);
    });
}

#[test]
fn a_real_time_culprit_on_the_measured_cpu_fails_the_gate() {
    let Some(_turn) = exclusive_as_root("the rt mode and a SCHED_FIFO 99 culprit") else {
        return;
    };
    let helper = assert_cmd::cargo::cargo_bin("rtgauge").with_file_name("rtgauge-trace-helper");
    if !helper.exists() {
        eprintln!("skipped: build the culprit first: cargo build -p rtgauge-trace");
        return;
    }
    gate_fails_within_three_attempts("culprit on CPU 1 vs none, rt mode", |out, culprit| {
        // The culprit spins 1 ms at random moments about every 20 ms for 7 s (warm-up and the
        // 5 s measured included): larger than the 300 µs every 50 ms measured in
        // docs/compare.md, so that the test holds with margin while other work runs beside it.
        let spinner = culprit.then(|| {
            std::process::Command::new(&helper)
                .args(["culprit", "1", "1000", "20000", "7000"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        });
        five_seconds(out, &["--mode", "rt"]);
        if let Some(mut s) = spinner {
            s.wait().unwrap();
        }
    });
}

#[test]
fn a_statistic_the_runs_cannot_decide_exits_3_unless_told_otherwise() {
    // A pair built to be undecidable: 1-s runs whose blocks vary tenfold, the candidate 30 %
    // slower (crates/rtgauge-report/tests/common `gate_pair`).
    let check = |extra: &[&str]| {
        rtgauge()
            .arg("check")
            .arg(report_fixture("gate-undecided.json"))
            .arg("--baseline")
            .arg(report_fixture("gate-baseline.json"))
            .args(extra)
            .output()
            .unwrap()
    };
    let out = check(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("INCONCLUSIVE"), "{text}");
    assert!(text.contains("measure ≥"), "the fix is named:\n{text}");
    assert_eq!(check(&["--inconclusive", "pass"]).status.code(), Some(0));
    assert_eq!(check(&["--inconclusive", "fail"]).status.code(), Some(2));
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let out = check(&["--junit", junit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<skipped message=\"inconclusive"), "{xml}");
    // The exit statuses are documented where users look: --help and the man page's source.
    let help = rtgauge().args(["check", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("exits 3"), "{help}");
    let top = rtgauge().arg("--help").output().unwrap();
    assert!(
        String::from_utf8_lossy(&top.stdout).contains("3 check --baseline could"),
        "the exit status list names 3"
    );
}

#[test]
fn repeated_runs_of_each_side_are_judged_together() {
    let check = |results: &[&str], baselines: &[&str]| {
        let mut cmd = rtgauge();
        cmd.arg("check");
        for r in results {
            cmd.arg(report_fixture(r));
        }
        for b in baselines {
            cmd.arg("--baseline").arg(report_fixture(b));
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    // Runs that repeat exactly vary by nothing: any change beyond the margin is declared.
    let (code, text) = check(&["loaded.json", "loaded.json"], &["idle.json", "idle.json"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("2 vs 2 runs"), "{text}");
    assert!(text.contains("regressed beyond +10 %"), "{text}");
    let (code, text) = check(&["idle.json", "idle.json", "idle.json"], &["idle.json"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("3 vs 1 runs"), "{text}");
    // Several results need a baseline to be judged against.
    let out = rtgauge()
        .arg("check")
        .arg(report_fixture("idle.json"))
        .arg(report_fixture("loaded.json"))
        .arg("--spec")
        .arg(report_fixture("spec.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("add --baseline RUN"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// `idle.json` with the rt latency of CPU 0 losing `overruns` of its 20,000 periods.
fn idle_with_overruns(dir: &Path, overruns: u64) -> std::path::PathBuf {
    let mut doc = read_json(&report_fixture("idle.json"));
    for run in doc["runs"].as_array_mut().unwrap() {
        let rt = run["mode"] == "rt";
        for s in run["series"].as_array_mut().unwrap() {
            if s["counters"].get("overruns").is_some() {
                let planted = rt && s["labels"]["cpu"] == "0";
                s["counters"]["overruns"] = (if planted { overruns } else { 0 }).into();
            }
        }
    }
    let path = dir.join(format!("overruns-{overruns}.json"));
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

#[test]
fn overruns_rising_from_none_to_a_dozen_in_ten_thousand_periods_fail_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let check = |new: &Path, old: &Path| {
        let out = rtgauge()
            .arg("check")
            .arg(new)
            .arg("--baseline")
            .arg(old)
            .output()
            .unwrap();
        // The notes wrap at the terminal's width: one line of words.
        let text = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        (out.status.code(), text)
    };
    let (none, planted) = (
        idle_with_overruns(dir.path(), 0),
        idle_with_overruns(dir.path(), 25),
    );
    // 25 of 20,000 periods: 12.5 per 10,000, every other figure the same.
    let (code, text) = check(&planted, &none);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("overruns 0 → 12 per 10,000 periods (25 of 20,000 periods against 0 of 20,000): regressed beyond +10 %"),
        "{text}"
    );
    // Identical runs, and the fewer overruns of the baseline itself, pass.
    let (code, text) = check(&none, &none);
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = check(&none, &planted);
    assert_eq!(code, Some(0), "{text}");
    // --regress-stats takes the counters by name, and refuses what is not one.
    let out = rtgauge()
        .arg("check")
        .arg(&planted)
        .arg("--baseline")
        .arg(&none)
        .args(["--regress-stats", "overruns"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = one_line_error(&[
        "check",
        "x.json",
        "--baseline",
        "y.json",
        "--regress-stats",
        "overrun",
    ]);
    assert!(err.contains("overruns or deadline_misses"), "{err}");
}

/// Acceptance with stalls planted for real: a SCHED_FIFO 99 culprit spinning 1 ms about every
/// 20 ms on the measured CPU makes a 100-µs cyclic thread lose periods (about ten a stall);
/// against the same run without it the gate fails on the overruns. Up to three attempts,
/// each printed.
#[test]
fn planted_stalls_that_lose_periods_fail_the_gate_on_overruns() {
    let Some(_turn) = exclusive_as_root("the rt mode and a SCHED_FIFO 99 culprit") else {
        return;
    };
    let helper = assert_cmd::cargo::cargo_bin("rtgauge").with_file_name("rtgauge-trace-helper");
    if !helper.exists() {
        eprintln!("skipped: build the culprit first: cargo build -p rtgauge-trace");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let measure = |out: &Path, culprit: bool| {
        let spinner = culprit.then(|| {
            std::process::Command::new(&helper)
                .args(["culprit", "1", "1000", "20000", "7000"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        });
        five_seconds(out, &["--mode", "rt", "--cpus", "1", "-p", "100us"]);
        if let Some(mut s) = spinner {
            s.wait().unwrap();
        }
    };
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for attempt in 1..=3 {
        measure(&a, false);
        measure(&b, true);
        let out = rtgauge()
            .arg("check")
            .arg(&b)
            .arg("--baseline")
            .arg(&a)
            .args(["--regress-stats", "overruns"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        println!("attempt {attempt}: exit {:?}\n{text}", out.status.code());
        if out.status.code() == Some(2) {
            assert!(
                text.contains("overruns") && text.contains("regressed beyond +10 %"),
                "{text}"
            );
            return;
        }
    }
    panic!("planted stalls did not fail the gate on overruns in three attempts");
}
