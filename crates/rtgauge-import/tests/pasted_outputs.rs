//! Console outputs of cyclictest, oslat and rtla as people paste them in mails and READMEs (real
//! files from public projects, kept outside the repository in `../shared/real-clients/`
//! beside the clone; their origins and the figures each prints are in its SOURCES.md), each
//! imported with the file's own count, minimum, average and maximum per thread or CPU.

use rtgauge_import::{import_file, Source};
use rtgauge_result::{RunResult, Series};
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

fn import(name: &str) -> (Source, RunResult) {
    let i = import_file(&real(name), None).unwrap_or_else(|e| panic!("{name}: {e}"));
    rtgauge_result::read::validate(&i.result).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    (i.source, i.result)
}

fn series(r: &RunResult) -> &[Series] {
    &r.runs[0].series
}

/// (count, min, avg, max) in µs as the file prints them; `None` where it prints none.
type Figures = (u64, Option<u64>, Option<u64>, Option<u64>);

fn figures_us(s: &Series) -> Figures {
    let us = |v: Option<u64>| {
        v.map(|ns| {
            assert_eq!(ns % 1000, 0, "{ns} ns is not a whole µs");
            ns / 1000
        })
    };
    (
        s.stats.count,
        us(s.stats.min_ns),
        us(s.stats.mean_ns),
        us(s.stats.max_ns),
    )
}

fn label(s: &Series, key: &str) -> Option<String> {
    s.labels.get(key).cloned()
}

/// Status lines: per thread (count, min, avg, max) and interval, priority 95 everywhere.
fn check_status_lines(r: &RunResult, expected: &[(u64, u64, Figures)]) {
    let s = series(r);
    assert_eq!(s.len(), expected.len());
    for (i, (series, &(thread, interval_us, figures))) in s.iter().zip(expected).enumerate() {
        assert_eq!(
            label(series, "thread"),
            Some(thread.to_string()),
            "series {i}"
        );
        assert_eq!(figures_us(series), figures, "thread {thread}");
        assert_eq!(series.counters["interval_ns"], interval_us * 1000);
        assert_eq!(series.counters["priority"], 95);
        // No distribution: nothing is made up from four figures.
        assert_eq!(series.stats.median_ns, None);
        assert_eq!(series.stats.percentiles.p99_ns, None);
        assert!(series.stats.histogram.buckets.is_empty());
        // Every maximum is below its interval: no period lost, and that is known.
        if figures.3.is_some() {
            assert_eq!(series.counters["overruns"], 0);
        }
    }
    assert!(r
        .warnings
        .iter()
        .any(|w| w.code == "imported_without_histogram" && w.message.contains("no distribution")));
    assert_eq!(r.runs[0].obtained.priority, 95);
    // Intervals 1000…4000 µs: no single period for the run.
    assert!(!r.runs[0].params.contains_key("period"));
}

#[test]
fn cyclictest_status_lines_with_the_policy_header_and_different_intervals() {
    let (source, r) = import("cyclictest-smp-distance-7thr_lkml-2025-rostedt-slice-ext-run1.txt");
    assert_eq!(source, Source::CyclictestStatus);
    check_status_lines(
        &r,
        &[
            (0, 1000, (23386, Some(5), Some(9), Some(30))),
            (1, 1500, (15635, Some(5), Some(9), Some(24))),
            (2, 2000, (11735, Some(6), Some(10), Some(27))),
            (3, 2500, (9388, Some(6), Some(10), Some(24))),
            (4, 3000, (7823, Some(6), Some(10), Some(24))),
            (5, 3500, (6699, Some(6), Some(10), Some(23))),
            (6, 4000, (5865, Some(6), Some(9), Some(23))),
        ],
    );
    // `policy: fifo: loadavg: …` (with its trailing spaces).
    assert_eq!(r.runs[0].obtained.policy, "fifo");
    assert_eq!(
        r.runs[0].params["periods"],
        "1000us,1500us,2000us,2500us,3000us,3500us,4000us"
    );
}

#[test]
fn cyclictest_status_lines_alone_with_tids_wider_than_their_column() {
    let (source, r) = import(
        "cyclictest-smp-distance-7thr-6digit-tid-no-header_lkml-2025-rostedt-slice-ext-run2.txt",
    );
    assert_eq!(source, Source::CyclictestStatus);
    check_status_lines(
        &r,
        &[
            (0, 1000, (69385, Some(4), Some(8), Some(34))),
            (1, 1500, (46378, Some(4), Some(9), Some(29))),
            (2, 2000, (34829, Some(5), Some(9), Some(27))),
            (3, 2500, (27885, Some(5), Some(9), Some(28))),
            (4, 3000, (23246, Some(5), Some(9), Some(29))),
            (5, 3500, (19931, Some(5), Some(9), Some(32))),
            (6, 4000, (17446, Some(5), Some(9), Some(24))),
        ],
    );
    // No header: the policy follows from the priority.
    assert_eq!(r.runs[0].obtained.policy, "fifo");
}

#[test]
fn cyclictest_status_lines_stopped_by_ctrl_c_import_the_cut_line_without_a_maximum() {
    let (_, r) = import(
        "cyclictest-smp-8thr-interrupted-last-line-truncated_lkml-2020-acme-perf-ftrace.txt",
    );
    check_status_lines(
        &r,
        &[
            (0, 1000, (518, Some(2), Some(2), Some(6))),
            (1, 1500, (343, Some(2), Some(2), Some(5))),
            (2, 2000, (256, Some(2), Some(2), Some(7))),
            (3, 2500, (203, Some(2), Some(2), Some(5))),
            (4, 3000, (168, Some(2), Some(3), Some(6))),
            (5, 3500, (143, Some(2), Some(2), Some(6))),
            (6, 4000, (124, Some(2), Some(2), Some(7))),
            // `T: 7 (29072) P:95 I:4500 C: 110 Min: 2 Act: 2 Avg: 2 Max:` — no maximum.
            (7, 4500, (110, Some(2), Some(2), None)),
        ],
    );
    let cut: Vec<&str> = r
        .warnings
        .iter()
        .filter(|w| w.code == "imported_cut_off")
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert!(
        cut[0].contains("thread 7") && cut[0].contains("Max"),
        "{}",
        cut[0]
    );
    // Without a maximum, whether thread 7 lost periods is not known either.
    assert!(!series(&r)[7].counters.contains_key("overruns"));
}

#[test]
fn cyclictest_verbose_output_is_every_sample() {
    let (source, r) =
        import("cyclictest-verbose-v_chromiumos-cyclic_bench-unittest_2thr-5loops.txt");
    assert_eq!(source, Source::CyclictestVerbose);
    let s = series(&r);
    assert_eq!(s.len(), 2);
    // Thread 0: 64 66 66 65 65; thread 1: 58 55 65 55 55.
    assert_eq!(
        (
            s[0].stats.count,
            s[0].stats.min_ns,
            s[0].stats.mean_ns,
            s[0].stats.max_ns
        ),
        (5, Some(64_000), Some(65_200), Some(66_000))
    );
    assert_eq!(
        (
            s[1].stats.count,
            s[1].stats.min_ns,
            s[1].stats.mean_ns,
            s[1].stats.max_ns
        ),
        (5, Some(55_000), Some(57_600), Some(65_000))
    );
    // The full distribution: the medians the file's own test expects (65 and 55).
    assert_eq!(s[0].stats.median_ns, Some(65_000));
    assert_eq!(s[1].stats.median_ns, Some(55_000));
    let total: u64 = s[1].stats.histogram.buckets.iter().map(|b| b.1).sum();
    assert_eq!(total, 5);
    assert_eq!(r.runs[0].params["period"], "1000us");
    assert_eq!(s[0].counters["overruns"], 0);
}

#[test]
fn oslat_1_x_text_reads_like_2_x() {
    let (source, r) = import("oslat-v1.10-7cpu_redhat-nfvpe-container-perf-tools-README.txt");
    assert_eq!(source, Source::OslatText);
    assert_eq!(r.tool.version, "1.10");
    let expected: [(&str, u64, u64); 7] = [
        ("5", 426839052, 14),
        ("6", 426250884, 17),
        ("7", 425959807, 9),
        ("8", 426264597, 17),
        ("9", 424991891, 12),
        ("10", 427610503, 17),
        ("11", 426974105, 8),
    ];
    let s = series(&r);
    assert_eq!(s.len(), 7);
    for (series, (cpu, count, max)) in s.iter().zip(expected) {
        assert_eq!(label(series, "cpu").as_deref(), Some(cpu));
        // Minimum 1, Average 1.000, Maximum as printed; the count is the buckets' sum.
        assert_eq!(
            figures_us(series),
            (count, Some(1), Some(1), Some(max)),
            "core {cpu}"
        );
    }
    assert_eq!(r.runs[0].obtained.priority, 1);
    assert_eq!(r.runs[0].measured_ns, 10_003_000_000);
}

#[test]
fn oslat_2_x_text_takes_its_figures_from_the_summary_lines() {
    let (source, r) =
        import("oslat-v2.60-2cpu-memmove-overflow_kiagnose-kubevirt-realtime-checkup-test.txt");
    assert_eq!(source, Source::OslatText);
    let s = series(&r);
    // Minimum 1 1, Average 2.001 2.001, Maximum 27 56; the count is the buckets' sum.
    let figures = |s: &Series| {
        (
            s.stats.count,
            s.stats.min_ns,
            s.stats.mean_ns,
            s.stats.max_ns,
        )
    };
    assert_eq!(
        figures(&s[0]),
        (582741767, Some(1000), Some(2001), Some(27_000))
    );
    assert_eq!(
        figures(&s[1]),
        (615459390, Some(1000), Some(2001), Some(56_000))
    );
}

/// Per CPU: count, then (min, avg, max) of IRQ, Thread and Ret-user, as the table prints them.
type TopRow = (u64, u64, [(u64, u64, u64); 3]);

fn check_timerlat_top(r: &RunResult, rows: &[TopRow]) {
    let s = series(r);
    assert_eq!(s.len(), rows.len() * 3);
    for &(cpu, count, contexts) in rows {
        for (name, (min, avg, max)) in ["irq", "thread", "user"].into_iter().zip(contexts) {
            let series = s
                .iter()
                .find(|x| x.name == name && label(x, "cpu") == Some(cpu.to_string()))
                .unwrap_or_else(|| panic!("no {name} cpu={cpu}"));
            assert_eq!(
                figures_us(series),
                (count, Some(min), Some(avg), Some(max)),
                "{name} cpu={cpu}"
            );
        }
    }
}

#[test]
fn rtla_timerlat_top_with_user_space_threads() {
    let (source, r) = import("rtla-timerlat-top-u_lkml-2023-V2-9-9-user-space-top_7cpu.txt");
    assert_eq!(source, Source::Rtla);
    check_timerlat_top(
        &r,
        &[
            (1, 60003, [(1, 6, 41), (7, 18, 367), (10, 22, 372)]),
            (2, 60002, [(1, 5, 17), (6, 16, 42), (9, 19, 51)]),
            (3, 60001, [(1, 5, 41), (7, 16, 66), (9, 20, 75)]),
            (4, 60001, [(1, 7, 18), (10, 18, 37), (12, 22, 45)]),
            (5, 60000, [(1, 5, 26), (5, 15, 45), (7, 18, 51)]),
            (6, 59999, [(0, 5, 13), (4, 15, 33), (6, 19, 40)]),
            (7, 59999, [(1, 5, 34), (5, 16, 52), (7, 20, 59)]),
        ],
    );
}

#[test]
fn rtla_timerlat_top_pasted_without_its_title_and_with_55_ms_maxima() {
    let (source, r) =
        import("rtla-timerlat-top-u_lkml-2024-V7-dl-server_8cpu-no-defer-55ms-no-title.txt");
    assert_eq!(source, Source::Rtla);
    check_timerlat_top(
        &r,
        &[
            (0, 579147, [(0, 0, 54), (1, 52, 61095), (2, 56, 61102)]),
            (1, 578766, [(0, 0, 83), (1, 49, 55824), (2, 53, 55831)]),
            (2, 578559, [(0, 1, 59), (1, 50, 55760), (2, 54, 55770)]),
            (3, 578318, [(0, 0, 76), (1, 49, 55751), (2, 54, 55760)]),
            (4, 578611, [(0, 0, 64), (1, 49, 55811), (2, 53, 55820)]),
            (5, 578347, [(0, 1, 40), (1, 50, 56121), (2, 55, 56133)]),
            (6, 578938, [(0, 1, 75), (1, 49, 55755), (2, 53, 55764)]),
            (7, 578631, [(0, 1, 36), (1, 51, 55528), (2, 55, 55541)]),
        ],
    );
}
