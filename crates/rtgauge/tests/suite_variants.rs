//! Suites are data: `rtgauge suites` lists and prints them and checks a user's file;
//! one probe planned twice (cyclic at two periods, as the literature's tables compare them) is
//! told apart by its variant in the result, the table, `check` and `compare`. Short
//! normal-mode runs; every assertion is a count or a name, never a latency.

mod common;

use common::*;
use serde_json::Value;

const SUITE: &str = r#"
name = "two-periods"
duration = "400ms"
warmup = "50ms"
modes = ["normal"]

[[probe]]
name = "cyclic"
variant = "1ms"
period = "1ms"

[[probe]]
name = "cyclic"
variant = "200us"
period = "200us"
"#;

fn cycles(run: &Value) -> u64 {
    run["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "latency")
        .map(|s| {
            s["stats"]["count"].as_u64().unwrap() + s["counters"]["overruns"].as_u64().unwrap_or(0)
        })
        .sum()
}

#[test]
fn one_probe_twice_in_a_suite_is_told_apart_by_its_variant() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("two-periods.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let result = dir.path().join("r.json");
    let out = {
        let _turn = exclusive();
        rtgauge()
            .args(["run", "--cpus", "0", "--suite"])
            .arg(&suite)
            .arg("-o")
            .arg(&result)
            .output()
            .unwrap()
    };
    assert_success(&out);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("cyclic@1ms") && table.contains("cyclic@200us"),
        "{table}"
    );

    let doc = read_json(&result);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    // The suite's modes apply when --mode is not given.
    assert!(runs.iter().all(|r| r["mode"] == "normal"), "{runs:?}");
    assert_eq!(runs[0]["variant"], "1ms");
    assert_eq!(runs[1]["variant"], "200us");
    assert_eq!(runs[1]["params"]["period"], "200us");
    assert_eq!(
        doc["config"]["probes"],
        serde_json::json!(["cyclic@1ms", "cyclic@200us"])
    );
    assert_eq!(doc["config"]["params"]["cyclic@200us.period"], "200us");
    // Same duration, five times the rate: the short period really ran at its own period.
    let (slow, fast) = (cycles(&runs[0]), cycles(&runs[1]));
    assert!(
        slow > 100 && fast > 3 * slow,
        "cycles {slow} at 1 ms, {fast} at 200 µs"
    );

    // A check spec selects one variant by its title, or every variant by the probe name.
    let spec = dir.path().join("spec.toml");
    std::fs::write(
        &spec,
        "[[limit]]\nprobe = \"cyclic@200us\"\nseries = \"latency\"\nmax = \"1h\"\n\
         [[limit]]\nprobe = \"cyclic\"\nseries = \"latency\"\nmax = \"1h\"\n",
    )
    .unwrap();
    let out = rtgauge()
        .arg("check")
        .arg(&result)
        .arg("--spec")
        .arg(&spec)
        .args(["-f", "json"])
        .output()
        .unwrap();
    assert_success(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let probes: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["probe"].as_str().unwrap())
        .collect();
    assert_eq!(probes, ["cyclic@200us", "cyclic@1ms", "cyclic@200us"]);

    // compare pairs each variant with itself, never 1 ms with 200 µs.
    let cmp = compare_json(&result, &result);
    let rows = cmp["rows"].as_array().unwrap();
    for title in ["cyclic@1ms", "cyclic@200us"] {
        assert!(rows.iter().any(|r| r["probe"] == title), "{cmp}");
    }
    assert!(cmp["unmatched"].as_array().unwrap().is_empty(), "{cmp}");
}

#[test]
fn a_suite_with_an_unknown_mode_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        "name = \"s\"\nmodes = [\"fast\"]\n[[probe]]\nname = \"cyclic\"\n",
    )
    .unwrap();
    let out = rtgauge()
        .args(["run", "-d", "100ms", "--suite"])
        .arg(&suite)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("modes: 'fast' is not a mode") && err.contains("normal, rt or deadline"),
        "{err}"
    );
}

#[test]
fn a_probe_planned_twice_without_variants_is_refused_with_the_fix() {
    let err = one_line_error(&["run", "cyclic", "cyclic", "-d", "100ms"]);
    assert!(
        err.contains("'cyclic' is planned twice") && err.contains("cyclic@1ms cyclic@100us"),
        "{err}"
    );
}

#[test]
fn variants_on_the_command_line_take_their_own_settings() {
    let (_dir, result) = scratch_result();
    let out = {
        let _turn = exclusive();
        rtgauge()
            .args(["run", "cyclic@slow", "cyclic@fast", "--mode", "normal"])
            .args(["--cpus", "0", "-d", "300ms", "--warmup", "50ms", "-q"])
            .args(["--set", "cyclic@fast.period=250us", "-o"])
            .arg(&result)
            .output()
            .unwrap()
    };
    assert_success(&out);
    let doc = read_json(&result);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["variant"], "slow");
    assert_eq!(runs[0]["params"]["period"], "1ms");
    assert_eq!(runs[1]["variant"], "fast");
    assert_eq!(runs[1]["params"]["period"], "250us");
}

#[test]
fn suites_are_listed_printed_and_checked_without_running() {
    let out = rtgauge().arg("suites").output().unwrap();
    assert_success(&out);
    let list = String::from_utf8_lossy(&out.stdout);
    for line in ["quick  ", "standard  ", "full  ", "  cyclic@100us "] {
        assert!(list.contains(line), "{line:?} missing from:\n{list}");
    }

    // A built-in suite prints as the file it is: saved and edited, it runs as a user's suite.
    let out = rtgauge().args(["suites", "standard"]).output().unwrap();
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("name = \"standard\"") && text.contains("variant = \"100us\""));
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine.toml");
    std::fs::write(
        &mine,
        text.replace("name = \"standard\"", "name = \"mine\""),
    )
    .unwrap();
    let out = rtgauge().arg("suites").arg(&mine).output().unwrap();
    assert_success(&out);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.starts_with("mine  ") && listed.contains("cyclic@100us   30s"),
        "{listed}"
    );

    // A mistake in a user's file is found before anything runs, naming the suite and the key.
    std::fs::write(
        &mine,
        SUITE.replace("period = \"200us\"", "perod = \"200us\""),
    )
    .unwrap();
    let out = rtgauge().arg("suites").arg(&mine).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("perod"), "{err}");
}
