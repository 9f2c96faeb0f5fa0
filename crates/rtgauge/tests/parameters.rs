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
