//! The listings (probes, loads, suites) for scripts, and colour: verdicts only, never in a
//! pipe or under NO_COLOR unless asked for.

mod common;

use common::rtgauge;
use serde_json::Value;

fn json_of(args: &[&str]) -> Value {
    let out = rtgauge().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("rtgauge {args:?} did not print JSON: {e}"))
}

#[test]
fn probes_json_lists_every_probe_with_its_parameters() {
    let probes = json_of(&["probes", "--json"]);
    let probes = probes.as_array().unwrap();
    let cyclic = probes
        .iter()
        .find(|p| p["name"] == "cyclic")
        .expect("cyclic listed");
    assert!(cyclic["available"].is_boolean());
    assert!(!cyclic["description"].as_str().unwrap().is_empty());
    let params = cyclic["parameters"].as_array().unwrap();
    assert!(params
        .iter()
        .any(|p| p["name"] == "period" && p["default"].is_string()));
}

#[test]
fn loads_json_lists_every_load_and_the_accepted_forms() {
    let doc = json_of(&["loads", "--json"]);
    let loads = doc["loads"].as_array().unwrap();
    for name in ["none", "cpu", "io", "exec:CMD"] {
        assert!(loads.iter().any(|l| l["name"] == name), "{name} missing");
    }
    assert!(doc["forms"].as_str().unwrap().contains("exec:"));
}

#[test]
fn suites_json_lists_each_suite_as_it_would_run() {
    let all = json_of(&["suites", "--json"]);
    let names: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["quick", "standard", "full"]);
    let quick = json_of(&["suites", "quick", "--json"]);
    let probes = quick["probes"].as_array().unwrap();
    let cyclic = probes.iter().find(|p| p["title"] == "cyclic").unwrap();
    assert_eq!(cyclic["duration_ns"], 10_000_000_000u64);
    assert_eq!(cyclic["params"]["period"], "1ms");
}

#[test]
fn verdicts_are_coloured_only_when_asked_for_in_a_pipe() {
    let run = |args: &[&str], no_color: bool| {
        let mut cmd = rtgauge();
        cmd.args(args);
        if no_color {
            cmd.env("NO_COLOR", "1");
        } else {
            cmd.env_remove("NO_COLOR");
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    };
    // Piped (as here): no escape sequences by default, with NO_COLOR, or with --color never.
    assert!(!run(&["doctor"], false).contains('\x1b'));
    assert!(!run(&["doctor", "--color", "auto"], true).contains('\x1b'));
    assert!(!run(&["--color", "never", "doctor"], false).contains('\x1b'));
    // Asked for explicitly, the verdict tags are coloured even in a pipe.
    assert!(run(&["doctor", "--color", "always"], true).contains("\x1b["));
}
