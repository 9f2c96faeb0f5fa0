//! The run summary of each console output people paste, imported: what `rtgauge show` says
//! first about a cyclictest status-line paste (no distribution), one cut off by Ctrl-C, a
//! cyclictest `-v` run and an oslat 1.x run. The files are real third-party outputs kept
//! beside the clone in `../shared/real-clients/` (origins in its SOURCES.md), never copied
//! into the repository; the snapshots hold rtgauge's own text.

mod common;

use common::*;
use std::path::PathBuf;

/// A file of `../shared/real-clients/latency-outputs/` (relative to the repository root).
fn real(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-clients/latency-outputs");
    assert!(
        dir.is_dir(),
        "{} is missing: these tests read real third-party files from ../shared/real-clients beside the clone",
        dir.display()
    );
    dir.join(name)
}

/// The summary `rtgauge show` prints of `name` imported.
fn summary_of(name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = rtgauge()
        .args(["import", "--no-store", "--output-dir"])
        .arg(dir.path())
        .arg(real(name))
        .output()
        .unwrap();
    assert_success(&out);
    let stem = name.trim_end_matches(".txt");
    let out = rtgauge()
        .args(["show", "--table", "summary"])
        .arg(dir.path().join(format!("{stem}.rtgauge.json")))
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert_success(&out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cyclictest_status_lines_summary() {
    insta::assert_snapshot!(summary_of(
        "cyclictest-smp-distance-7thr_lkml-2025-rostedt-slice-ext-run1.txt"
    ));
}

#[test]
fn cyclictest_status_lines_cut_off_summary() {
    insta::assert_snapshot!(summary_of(
        "cyclictest-smp-8thr-interrupted-last-line-truncated_lkml-2020-acme-perf-ftrace.txt"
    ));
}

#[test]
fn cyclictest_verbose_summary() {
    insta::assert_snapshot!(summary_of(
        "cyclictest-verbose-v_chromiumos-cyclic_bench-unittest_2thr-5loops.txt"
    ));
}

#[test]
fn oslat_1_x_summary() {
    insta::assert_snapshot!(summary_of(
        "oslat-v1.10-7cpu_redhat-nfvpe-container-perf-tools-README.txt"
    ));
}
