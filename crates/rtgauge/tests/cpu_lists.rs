//! CPU lists given by users (`--cpus`, `--load-cpus`, `doctor --cpus`): refused in one line
//! when they name CPUs that are not online, however large the range.

mod common;

use common::one_line_error;

#[test]
fn huge_cpu_range_is_refused_without_allocating() {
    // Before: "capacity overflow" (exit 101) and an abort allocating 32 GB (exit 134).
    for range in ["0-18446744073709551615", "0-4000000000"] {
        for args in [
            vec!["run", "cyclic", "--cpus", range],
            vec!["run", "cyclic", "--load-cpus", range],
            vec!["doctor", "--cpus", range],
        ] {
            let e = one_line_error(&args);
            assert!(e.contains("is not online"), "{args:?}: {e}");
        }
    }
}

#[test]
fn a_huge_bad_cpu_list_is_quoted_short() {
    let list = "x".repeat(100_000);
    let e = one_line_error(&["run", "cyclic", "--cpus", &list]);
    assert!(e.len() < 300, "{} bytes echoed", e.len());
}
