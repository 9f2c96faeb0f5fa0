//! Probe parameters as users give them: recorded exactly, labelled without collisions, and
//! quoted briefly when refused.

mod common;

use common::{exclusive, one_line_error, run_line};

#[test]
fn a_huge_bad_parameter_value_is_quoted_short() {
    let huge = "9".repeat(100_000) + "x";
    for set in [
        format!("cyclic.period={huge}"),
        format!("cyclic.timer={huge}"),
    ] {
        // Before: the whole 100 kB value was echoed in the error.
        let e = one_line_error(&["run", "cyclic", "--set", &set]);
        assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..200]);
        assert!(e.contains('…'), "{e}");
    }
}

#[test]
fn sizes_one_byte_apart_are_recorded_and_labelled_apart() {
    let _serial = exclusive();
    let r = run_line(
        "memop --set memop.sizes=3000B,3001B --set memop.ops=memset \
         --loops 20 --warmup 1ms --mode normal",
    );
    let run = &r["runs"][0];
    // Before: both were "2.93KiB", in the parameters and as series labels.
    assert_eq!(run["params"]["sizes"], "3000B,3001B");
    let labels: Vec<&str> = run["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["labels"]["size"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["3000B", "3001B"]);
}

/// Standard error of a refused command line.
fn refusal(args: &[&str]) -> String {
    let out = common::rtgauge().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_bad_value_points_at_the_help_of_its_subcommand() {
    let err = refusal(&["run", "cyclic", "--period", "abc"]);
    assert!(err.contains("see `rtgauge run --help`"), "{err}");
    let err = refusal(&["compare", "a.json", "--format", "pdf"]);
    assert!(err.contains("see `rtgauge compare --help`"), "{err}");
}

#[test]
fn mistyped_names_get_a_did_you_mean_on_one_short_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let store = store.to_str().unwrap();
    for (args, meant) in [
        (&["run", "cyclc", "-d", "1s"][..], "did you mean `cyclic`?"),
        (
            &["run", "--suite", "quik", "-d", "1s"],
            "did you mean `quick`?",
        ),
        (&["run", "cyclic", "--load", "cpy"], "did you mean `cpu`?"),
        (
            &["show", "lastest", "--store", store],
            "did you mean `latest`?",
        ),
    ] {
        let err = refusal(args);
        assert!(err.contains(meant), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    let err = refusal(&["run", "cyclic", "--load", "nosuch"]);
    assert!(
        err.trim_end().lines().count() == 1 && err.len() < 160,
        "one short line: {err}"
    );
    assert!(err.contains("`rtgauge loads`"), "{err}");
}
