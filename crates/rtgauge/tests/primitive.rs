//! The `primitive` probe: execution time of single calls, per call and batched, through
//! the real binary. Budgets are short; every assertion is a property that holds on any
//! machine with a vDSO clock (this one is a noisy 2-core KVM guest), never an absolute time.

mod common;

use common::*;
use serde_json::Value;

/// Runs `rtgauge run primitive --best-effort ARGS` (ARGS space-separated, as on a command
/// line) and returns the result document.
fn run_primitive(args: &str) -> Value {
    run_line(&format!("primitive --best-effort {args}"))
}

fn runs_of<'a>(doc: &'a Value, mode: &str) -> &'a Value {
    let run = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["mode"] == mode)
        .unwrap_or_else(|| panic!("no {mode} run in {doc}"));
    assert_eq!(run["status"]["state"], "ok", "{}", run["status"]);
    run
}

/// The series `name` measured with `method` (and of shared-memory `size`, when given).
fn series<'a>(run: &'a Value, name: &str, method: &str, size: Option<&str>) -> &'a Value {
    run["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["name"] == name
                && s["labels"]["method"] == method
                && size.is_none_or(|z| s["labels"]["size"] == z)
        })
        .unwrap_or_else(|| panic!("no series {name} {method} {size:?}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Per-call time of a batched series' median: the batch total divided by the batch size.
fn batched_per_op_median(s: &Value) -> f64 {
    let batch = u(&s["batch"]);
    assert!(batch > 1, "a batched series must say its batch size: {s}");
    u(&s["stats"]["median_ns"]) as f64 / batch as f64
}

#[test]
fn primitive_per_call_and_batched_agree_within_the_clock_read_cost() {
    let _turn = exclusive();
    // Two medians of the same call timed separately on a shared VM can drift apart for a
    // whole run (a CI rehearsal once saw eventfd_write at 451 against 622 ns in normal mode):
    // up to three runs, each printed; the checks that do not depend on timing hold in every one.
    let mut failures = Vec::new();
    for attempt in 1..=3 {
        match per_call_and_batched_run() {
            Ok(()) => return,
            Err(why) => {
                println!("attempt {attempt}: {why}");
                failures.push(why);
            }
        }
    }
    panic!(
        "per-call and batched medians disagreed in three runs:\n{}",
        failures.join("\n")
    );
}

/// One run of the per-call/batched comparison: panics on what must hold whatever the timing,
/// returns the timing disagreements.
fn per_call_and_batched_run() -> Result<(), String> {
    // Mid-cost system calls whose work does not depend on how calls follow each other (unlike
    // a pipe write, which appends to a partly filled page when batched), plus sem_post, the
    // cheapest call, for the subtraction check. 3 units x 2 methods: 0.5 s per method.
    let doc = run_primitive(
        "-d 3s --warmup 300ms --mode normal,rt \
         --set primitive.ops=futex_wake,eventfd_write,eventfd_read,sem_post",
    );
    let cal = &doc["calibration"];
    let cost = u(&cal["read_cost_median_ns"]);
    let cost_min = u(&cal["read_cost_min_ns"]);
    let mut disagreements = Vec::new();
    for mode in ["normal", "rt"] {
        let run = runs_of(&doc, mode);
        for s in run["series"].as_array().unwrap() {
            // Every sample had the calibrated clock-read cost taken off, and says so.
            assert_eq!(
                u(&s["counters"]["clock_cost_subtracted_ns"]),
                cost,
                "{mode} {}",
                s["name"]
            );
            assert_eq!(u(&s["counters"]["failed_calls"]), 0, "{mode} {}", s["name"]);
            assert!(u(&s["stats"]["count"]) > 1000, "{mode} {s}");
        }
        for name in ["futex_wake", "eventfd_write", "eventfd_read"] {
            let per_call = u(&series(run, name, "per-call", None)["stats"]["median_ns"]) as f64;
            let batched = batched_per_op_median(series(run, name, "batched", None));
            // Within one clock read, plus 20 % for what a shared VM does to two separately
            // timed distributions of the same call. A missing or doubled division by the batch
            // size, or a batch total recorded as if it were one call, is off by at least half
            // the call's time and fails.
            let tolerance = cost as f64 + 0.2 * batched;
            if (per_call - batched).abs() > tolerance {
                disagreements.push(format!(
                    "{mode} {name}: per-call median {per_call} ns vs batched {batched:.1} ns per call: differ by more than the clock cost {cost} ns + 20 %"
                ));
            }
        }
        // Without the subtraction every per-call sample would contain a whole clock read, so
        // none could be shorter than the shortest back-to-back read pair of the calibration;
        // with it, a call much cheaper than a clock read (sem_post, an atomic add) has samples
        // below that.
        let post = series(run, "sem_post", "per-call", None);
        if cost_min > 0 && u(&post["stats"]["min_ns"]) >= cost_min {
            disagreements.push(format!(
                "{mode}: per-call sem_post never below the clock read cost {cost_min} ns: was it subtracted? {}",
                post["stats"]
            ));
        }
    }
    if disagreements.is_empty() {
        Ok(())
    } else {
        Err(disagreements.join("; "))
    }
}

#[test]
fn primitive_every_operation_is_measured_or_skipped_with_a_reason() {
    let _turn = exclusive();
    let doc = run_primitive("-d 2s --warmup 200ms --mode normal");
    let run = runs_of(&doc, "normal");
    // Every operation the probe offers (its parameter help lists the same names).
    let operations = rtgauge_probes::primitive::OPERATIONS;
    for name in operations {
        for method in ["per-call", "batched"] {
            let s = series(run, name, method, None);
            let count = u(&s["stats"]["count"]);
            let reason = s["labels"]["skipped"].as_str().unwrap_or("");
            assert!(
                count > 0 || !reason.is_empty(),
                "{name} {method}: neither samples nor a reason for skipping: {s}"
            );
            if count == 0 {
                // A skipped call is never reported as zeros.
                assert!(s["stats"]["median_ns"].is_null(), "{s}");
            }
        }
    }
    // A semaphore post is real work: a batch of posts takes time, and so does one post.
    let post = series(run, "sem_post", "batched", None);
    assert!(batched_per_op_median(post) > 0.0, "{post}");
    let post = series(run, "sem_post", "per-call", None);
    assert!(u(&post["stats"]["mean_ns"]) > 0, "{post}");
    assert!(u(&post["stats"]["max_ns"]) > 0, "{post}");
}

#[test]
fn primitive_shm_write_of_64kib_is_slower_than_4kib() {
    let _turn = exclusive();
    let doc = run_primitive(
        "-d 1s --warmup 100ms --mode normal --set primitive.ops=shm_write,shm_read \
         --set primitive.shm-size=4KiB,64KiB",
    );
    let run = runs_of(&doc, "normal");
    for name in ["shm_write", "shm_read"] {
        let small = series(run, name, "per-call", Some("4KiB"));
        let large = series(run, name, "per-call", Some("64KiB"));
        assert!(
            u(&large["stats"]["median_ns"]) > u(&small["stats"]["median_ns"]),
            "{name}: 64KiB {} vs 4KiB {}",
            large["stats"]["median_ns"],
            small["stats"]["median_ns"]
        );
        let small = batched_per_op_median(series(run, name, "batched", Some("4KiB")));
        let large = batched_per_op_median(series(run, name, "batched", Some("64KiB")));
        assert!(
            large > small,
            "{name} batched: 64KiB {large} vs 4KiB {small}"
        );
    }
}

#[test]
fn primitive_bad_input_is_a_one_line_error_naming_the_parameter() {
    let dir = tempfile::tempdir().unwrap();
    for (setting, key) in [
        ("primitive.ops=bogus", "ops"),
        ("primitive.shm-size=0", "shm-size"),
        ("primitive.batch=0", "batch"),
    ] {
        let out = dir.path().join("never.json");
        let output = rtgauge()
            .args(["run", "primitive", "-d", "1s", "--mode", "normal", "-o"])
            .arg(&out)
            .args(["--set", setting])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{setting}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{setting}: {stderr}");
        assert!(lines[0].contains(key), "{setting}: {stderr}");
        assert!(!out.exists(), "{setting}: nothing is measured or written");
    }
    // An unknown operation lists the accepted ones.
    let output = rtgauge()
        .args(["run", "primitive", "--mode", "normal"])
        .args(["--set", "primitive.ops=bogus"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("sem_post") && stderr.contains("sched_setattr"),
        "{stderr}"
    );
}

/// The nice limit of this process, which a user switched to with setpriv keeps.
fn rlimit_nice() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NICE, &mut lim) } == 0 {
        lim.rlim_cur
    } else {
        0
    }
}

#[test]
fn primitive_priority_changes_are_skipped_with_a_reason_when_not_permitted() {
    if rlimit_nice() >= 20 {
        eprintln!("skipped: RLIMIT_NICE >= 20 lets anyone raise priorities");
        return;
    }
    let Some(dir) = nobody_workdir() else {
        return;
    };
    let _turn = exclusive();
    let out = dir.path().join("out.json");
    let output = as_nobody()
        .args(["run", "primitive", "-q", "--mode", "normal", "-d", "1s"])
        .args(["--warmup", "100ms", "-o"])
        .arg(&out)
        .args([
            "--set",
            "primitive.ops=setschedparam,sched_setattr,futex_wake",
        ])
        .output()
        .unwrap();
    assert_success(&output);
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let run = runs_of(&doc, "normal");
    for name in ["setschedparam", "sched_setattr"] {
        for method in ["per-call", "batched"] {
            let s = series(run, name, method, None);
            assert_eq!(u(&s["stats"]["count"]), 0, "{s}");
            let reason = s["labels"]["skipped"].as_str().unwrap_or("");
            assert!(reason.contains("CAP_SYS_NICE"), "{name}: {reason}");
        }
    }
    // What a user may do is still measured.
    assert!(u(&series(run, "futex_wake", "per-call", None)["stats"]["count"]) > 0);
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("setschedparam skipped"), "{warnings}");
}
