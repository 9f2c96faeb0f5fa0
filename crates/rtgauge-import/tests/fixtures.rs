//! Every fixture (real output, origins in fixtures/README.md) imported and its figures
//! checked against the numbers the file itself prints.

use rtgauge_import::{import_file, rt_tests, Source};
use rtgauge_result::{RunResult, Series};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn import(name: &str) -> (Source, RunResult) {
    let i = import_file(&fixture(name), None).unwrap_or_else(|e| panic!("{name}: {e}"));
    rtgauge_result::read::validate(&i.result).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    (i.source, i.result)
}

fn series(r: &RunResult) -> &[Series] {
    &r.runs[0].series
}

/// count, min, mean, max (ns) of a series.
fn figures(s: &Series) -> (u64, Option<u64>, Option<u64>, Option<u64>) {
    (
        s.stats.count,
        s.stats.min_ns,
        s.stats.mean_ns,
        s.stats.max_ns,
    )
}

fn us(v: u64) -> Option<u64> {
    Some(v * 1000)
}

/// Percentiles never leave the source's extremes.
fn within_extremes(s: &Series) {
    let (min, max) = (s.stats.min_ns.unwrap(), s.stats.max_ns.unwrap());
    for (_, _, v) in s.stats.percentiles.entries() {
        if let Some(v) = v {
            assert!((min..=max).contains(&v), "{v} outside {min}..={max}");
        }
    }
    if let Some(m) = s.stats.median_ns {
        assert!((min..=max).contains(&m), "median {m} outside {min}..={max}");
    }
}

#[test]
fn cyclictest_json_with_overflow_keeps_its_own_mean_and_leaves_p99_above_the_range() {
    let (source, r) = import("cyclictest-h20-overflow.json");
    assert_eq!(source, Source::RtTests);
    let s = series(&r);
    // "cycles": 5000, "min": 5, "max": 130, "avg": 13.46 / 5000, 4, 131, 14.26
    assert_eq!(figures(&s[0]), (5000, us(5), Some(13_460), us(130)));
    assert_eq!(figures(&s[1]), (5000, us(4), Some(14_260), us(131)));
    // 208 and 970 samples beyond 20 µs: p99 is not in the histogram.
    assert_eq!(s[0].counters["beyond_histogram"], 208);
    assert_eq!(s[1].counters["beyond_histogram"], 970);
    assert_eq!(s[0].counters["histogram_limit_ns"], 20_000);
    for s in s {
        assert_eq!(s.stats.percentiles.p99_ns, None);
        assert!(s.stats.median_ns.unwrap() < 20_000);
        assert_eq!(s.stats.stddev_ns, None);
        within_extremes(s);
    }
    // Metadata from the file: -m, -S (pinned), -p98, the date, not PREEMPT_RT.
    let run = &r.runs[0];
    assert_eq!(run.obtained.priority, 98);
    assert_eq!(run.obtained.policy, "fifo");
    assert!(run.obtained.memory_locked && run.obtained.pinned);
    assert_eq!(run.params["period"], "200us");
    assert_eq!(run.params["distance"], "0us");
    assert!(!r.fingerprint.preempt_rt);
    assert_eq!(r.tool.version, "2.40");
    assert_eq!(r.started_unix_ns, 1_795_726_007_000_000_000);
    assert_eq!(run.measured_ns, 1_000_000_000);
}

#[test]
fn cyclictest_histogram_text_of_the_same_run_gives_the_same_counts() {
    let (source, r) = import("cyclictest-h20-overflow.txt");
    assert_eq!(source, Source::CyclictestText);
    let s = series(&r);
    // # Total: 4792 4030, # Histogram Overflows: 208 970, Min 5 4, Avg 13 14, Max 130 131
    assert_eq!(figures(&s[0]), (4792 + 208, us(5), us(13), us(130)));
    assert_eq!(figures(&s[1]), (4030 + 970, us(4), us(14), us(131)));
    assert_eq!(s[1].counters["beyond_histogram"], 970);
    // Nothing in the text says the date or the settings.
    assert_eq!(r.started_unix_ns, 0);
    assert_eq!(r.runs[0].mode, "unknown");
    assert!(r.warnings.iter().any(|w| w.code == "imported_unknown"));
}

#[test]
fn cyclictest_text_after_status_lines_reads_priority_and_interval() {
    let (_, r) = import("cyclictest-h400-status-lines.txt");
    let s = series(&r);
    // # Total: 1996, Overflows 4, Min 7, Avg 24, Max 2250; T: 0 … P:95 I:500 C: 2000
    assert_eq!(figures(&s[0]), (2000, us(7), us(24), us(2250)));
    assert_eq!(r.runs[0].obtained.priority, 95);
    assert_eq!(r.runs[0].obtained.policy, "fifo");
    assert_eq!(r.runs[0].params["period"], "500us");
    within_extremes(&s[0]);
    // 4 samples beyond the 400 µs histogram, the maximum 2250 µs at a 500 µs period: they
    // lost between 0 and 4 periods each, so no count is claimed, and a note says why.
    assert!(!s[0].counters.contains_key("overruns"));
    assert!(r
        .warnings
        .iter()
        .any(|w| w.code == "imported_lost_periods_unknown" && w.message.contains("2.25ms")));
}

#[test]
fn cyclictest_json_counts_lost_periods_at_each_threads_interval() {
    // -i200 -d0, maxima 130 and 131 µs: below one period, none lost, and that is known.
    let (_, r) = import("cyclictest-h20-overflow.json");
    for s in series(&r) {
        assert_eq!(s.counters["overruns"], 0);
    }
}

#[test]
fn cyclictest_text_with_its_all_threads_column_and_histfile() {
    let (_, r) = import("cyclictest-H50.txt");
    let s = series(&r);
    assert_eq!(s.len(), 2, "-H's column for all threads is not a thread");
    // Total 991 993, Overflows 9 7, Min 10 10, Avg 29 22, Max 158 150
    assert_eq!(figures(&s[0]), (1000, us(10), us(29), us(158)));
    assert_eq!(figures(&s[1]), (1000, us(10), us(22), us(150)));
    let (_, r) = import("cyclictest-histfile.txt");
    // Total 996, Overflows 4, Min 11, Avg 22, Max 1393
    assert_eq!(figures(&series(&r)[0]), (1000, us(11), us(22), us(1393)));
}

#[test]
fn cyclictest_without_histogram_has_no_percentiles_or_deviation() {
    let (_, r) = import("cyclictest-no-histogram.json");
    let s = &series(&r)[0];
    assert_eq!(figures(s), (1000, us(10), Some(21_950), us(265)));
    assert_eq!(s.stats.median_ns, None);
    assert_eq!(s.stats.stddev_ns, None);
    assert!(!r.runs[0].obtained.pinned, "no -a");
    assert!(r.runs[0].obtained.memory_locked, "-m");
}

#[test]
fn sender_receiver_programs_become_response_rows() {
    // (file, [(samples, min, avg in ns, max)])
    let cases = [
        ("ptsematest.json", [(1000, 3, 4660, 63), (718, 3, 4660, 50)]),
        ("pmqtest.json", [(1000, 4, 5580, 46), (678, 4, 5630, 50)]),
        (
            "sigwaittest.json",
            [(1000, 4, 6160, 29), (703, 5, 6490, 35)],
        ),
        ("svsematest.json", [(1000, 3, 4450, 27), (721, 3, 4970, 28)]),
    ];
    for (file, expected) in cases {
        let (_, r) = import(file);
        assert_eq!(r.runs[0].probe, "response", "{file}");
        assert_eq!(r.runs[0].obtained.priority, 90, "{file}");
        assert!(r.runs[0].obtained.pinned, "{file}: -a 0");
        for (s, (n, min, avg, max)) in series(&r).iter().zip(expected) {
            assert_eq!(figures(s), (n, us(min), Some(avg), us(max)), "{file}");
        }
    }
}

#[test]
fn cyclicdeadline_runs_under_deadline() {
    let (_, r) = import("cyclicdeadline.json");
    assert_eq!(
        figures(&series(&r)[0]),
        (300, us(12), Some(51_560), us(1892))
    );
    assert_eq!(r.runs[0].mode, "deadline");
}

#[test]
fn oslat_json_and_text_count_their_overflow_bucket() {
    let (_, r) = import("oslat.json");
    let s = &series(&r)[0];
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("oslat.json")).unwrap()).unwrap();
    let total: u64 = doc["thread"]["0"]["histogram"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    // "min": 1, "avg": 1.009023, "max": 69485; the "32" bucket holds everything from 32 µs.
    assert_eq!(figures(s), (total, us(1), Some(1009), us(69_485)));
    assert_eq!(s.counters["beyond_histogram"], 775);
    assert_eq!(s.labels["cpu"], "1");
    within_extremes(s);
    let (source, r) = import("oslat.txt");
    assert_eq!(source, Source::OslatText);
    let s = &series(&r)[0];
    // Minimum 1, Average 1.005, Maximum 9308; 032 (us): 2046 (including overflows)
    assert_eq!(s.stats.min_ns, us(1));
    assert_eq!(s.stats.mean_ns, Some(1005));
    assert_eq!(s.stats.max_ns, us(9308));
    assert_eq!(s.counters["beyond_histogram"], 2046);
    assert_eq!(r.runs[0].measured_ns, 2_999_000_000);
}

#[test]
fn rtla_timerlat_hist_keeps_every_cpu_and_context() {
    let (source, r) = import("rtla-timerlat-hist-kernel-doc.txt");
    assert_eq!(source, Source::Rtla);
    let s = series(&r);
    assert_eq!(s.len(), 10);
    // count: 600002 everywhere; Thr-001: min 1, avg 5, max 58; IRQ-000: min 0, avg 0, max 16
    assert_eq!(figures(&s[3]), (600_002, us(1), us(5), us(58)));
    assert_eq!(figures(&s[0]), (600_002, us(0), us(0), us(16)));
    assert_eq!(
        (s[3].name.as_str(), s[3].labels["cpu"].as_str()),
        ("thread", "1")
    );
    for s in s {
        within_extremes(s);
        assert!(s.stats.percentiles.p99_99_ns.is_some());
    }
    // -d 10m, -P d:100us:1ms
    assert_eq!(r.runs[0].measured_ns, 600_000_000_000);
    assert_eq!(r.runs[0].mode, "deadline");
}

#[test]
fn rtla_osnoise_hist_with_10us_buckets_stays_inside_min_and_max() {
    let (_, r) = import("rtla-osnoise-hist-b10-kernel-doc.txt");
    let s = series(&r);
    assert_eq!(s.len(), 12);
    assert_eq!(r.runs[0].probe, "osnoise");
    // CPU-000: count 55215, min 0, avg 0, max 30; CPU-011: 54880, 0, 0, 50
    assert_eq!(figures(&s[0]), (55_215, us(0), us(0), us(30)));
    assert_eq!(figures(&s[11]), (54_880, us(0), us(0), us(50)));
    for s in s {
        within_extremes(s);
        assert_eq!(s.stats.stddev_ns, None, "10 µs buckets give no deviation");
    }
    // The first bucket (0–9 µs) holds the median: its upper edge, not 0.
    assert_eq!(s[0].stats.median_ns, us(9));
    assert_eq!(r.runs[0].params["bucket"], "10000ns");
}

#[test]
fn rtla_top_gives_min_avg_max_and_keeps_the_analysis() {
    let (_, r) = import("rtla-timerlat-top-aa-kernel-doc.txt");
    let s = series(&r);
    assert_eq!(s.len(), 46, "23 CPUs × irq and thread");
    let thread23 = s
        .iter()
        .find(|s| s.name == "thread" && s.labels["cpu"] == "23")
        .unwrap();
    // 23 #12320 | 28 0 1 28 | 41 3 11 41
    assert_eq!(figures(thread23), (12_320, us(3), us(11), us(41)));
    assert_eq!(thread23.stats.median_ns, None);
    assert_eq!(r.runs[0].measured_ns, 12_000_000_000);
    let note = r
        .warnings
        .iter()
        .find(|w| w.code == "imported_note")
        .unwrap();
    assert!(note.message.contains("hit stop tracing"));
    assert!(note.message.contains("Thread latency"));

    let (_, r) = import("rtla-osnoise-top-kernel-doc.txt");
    let s = &series(&r)[0];
    // 0 #59 53100000 304896 99.42580 6978 56 549 0 53111 1590 13
    assert_eq!(s.stats.count, 59);
    assert_eq!(s.stats.max_ns, us(6978));
    assert_eq!(s.stats.mean_ns, Some(5_167_729));
    assert_eq!(s.counters["max_single_noise_ns"], 56_000);
    assert_eq!(s.counters["irq"], 53_111);
}

#[test]
fn an_empty_timerlat_histogram_imports_with_no_rows() {
    // rtla prints no column for a CPU without samples; with none at all, the header and
    // figure lines are empty (the layout of timerlat_hist.c's output).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.txt");
    std::fs::write(
        &file,
        "# RTLA timerlat histogram\n# Time unit is microseconds (us)\n# Duration:   0 00:00:05\nIndex\nover:\ncount:\nmin:\navg:\nmax:\n",
    )
    .unwrap();
    let r = import_file(&file, None).unwrap().result;
    assert!(r.runs[0].series.is_empty());
    assert!(r.warnings.iter().any(|w| w.code == "imported_no_samples"));
}

#[test]
fn an_unknown_file_is_refused_saying_what_it_looks_like() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.json");
    std::fs::write(&file, "{\"results\": []}").unwrap();
    let e = import_file(&file, None).unwrap_err().to_string();
    assert!(e.contains("a JSON document with keys results"), "{e}");
    assert!(e.contains("rtgauge imports rt-tests --json"), "{e}");
    assert_eq!(e.lines().count(), 1);
}

#[test]
fn export_then_import_keeps_count_min_max_and_mean_of_every_series() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "cyclictest-h20-overflow.json",
        "ptsematest.json",
        "oslat.json",
        "rtla-timerlat-hist-kernel-doc.txt",
        "cyclictest-H50.txt",
    ] {
        let (_, original) = import(name);
        let text = rt_tests::export(&original);
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        for key in [
            "file_version",
            "cmdline:",
            "rt_test_version:",
            "return_code",
            "sysinfo",
        ] {
            assert!(doc.get(key).is_some(), "{name}: no {key}");
        }
        let file = dir.path().join(format!("{name}.rt-tests.json"));
        std::fs::write(&file, text).unwrap();
        let back = import_file(&file, None).unwrap().result;
        let a: Vec<_> = series(&original).iter().map(figures).collect();
        let b: Vec<_> = series(&back).iter().map(figures).collect();
        assert_eq!(a, b, "{name}");
        assert_eq!(back.runs[0].probe, original.runs[0].probe, "{name}");
    }
}

#[test]
fn a_preempt_rt_kernel_is_stored_as_preempt_rt() {
    // The real cyclictest document with its sysinfo as an RT kernel writes it.
    let text = std::fs::read_to_string(fixture("cyclictest-no-histogram.json"))
        .unwrap()
        .replace("\"realtime\": 0", "\"realtime\": 1")
        .replace("PREEMPT_DYNAMIC", "PREEMPT_RT");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rt.json");
    std::fs::write(&file, text).unwrap();
    let r = import_file(&file, None).unwrap().result;
    assert!(r.fingerprint.preempt_rt);
    assert_eq!(r.fingerprint.preemption_model, "rt");
    let (_, plain) = import("cyclictest-no-histogram.json");
    assert!(!plain.fingerprint.preempt_rt);
    assert_eq!(plain.fingerprint.preemption_model, "dynamic");
}

#[test]
fn an_older_histogram_without_avg_and_overflow_lines_keeps_what_it_has() {
    // Older cyclictest versions print fewer `#` lines after the rows.
    let text: String = std::fs::read_to_string(fixture("cyclictest-histfile.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("# Avg") && !l.starts_with("# Histogram Overflow"))
        .map(|l| format!("{l}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.txt");
    std::fs::write(&file, text).unwrap();
    let r = import_file(&file, None).unwrap().result;
    let s = &r.runs[0].series[0];
    // # Total: 996, Min 11, Max 1393; no average, no overflow count.
    assert_eq!(figures(s), (996, us(11), None, us(1393)));
}

#[test]
fn rtla_10us_buckets_keep_the_sources_minimum_and_user_rows() {
    let (_, r) = import("rtla-timerlat-hist-b10-user-arcaflow.txt");
    let s = series(&r);
    let names: Vec<String> = s
        .iter()
        .map(|s| format!("{} {}", s.name, s.labels["cpu"]))
        .collect();
    assert_eq!(
        names,
        ["irq 1", "thread 1", "user 1", "irq 2", "thread 2", "user 2"],
        "the ALL: block is not a CPU"
    );
    // Thr-001: count 1000, min 3, avg 7, max 21 — not 0, the first bucket's lower edge.
    assert_eq!(figures(&s[1]), (1000, us(3), us(7), us(21)));
    // Usr-001: 1000, 4, 10, 24; IRQ-002: 999, 0, 0, 3
    assert_eq!(figures(&s[2]), (1000, us(4), us(10), us(24)));
    assert_eq!(figures(&s[3]), (999, us(0), us(0), us(3)));
    // 944 of 1000 in 0–9 µs: the median is that bucket's upper edge; 999 within 19 µs.
    assert_eq!(s[1].stats.median_ns, us(9));
    assert_eq!(s[1].stats.percentiles.p99_9_ns, us(19));
    // IRQ-002's one bucket is clamped to its maximum of 3 µs.
    assert_eq!(s[3].stats.median_ns, us(3));
    for s in s {
        within_extremes(s);
    }
    assert_eq!(r.runs[0].params["bucket"], "10000ns");
    assert_eq!(r.runs[0].measured_ns, 2_000_000_000);
}

/// Every fixture cut short, with its numbers replaced by huge, negative or non-numbers, and
/// with lines dropped: each reader answers (a result or one line naming the file), never
/// panics.
#[test]
fn damaged_fixtures_are_refused_or_read_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "txt"))
        .collect();
    files.sort();
    let mut tried = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut variants: Vec<String> = Vec::new();
        for k in 1..12 {
            let mut cut = text.len() * k / 12;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            variants.push(text[..cut].to_string());
        }
        for replacement in [
            "99999999999999999999999",
            "-1",
            "nan",
            "18446744073709551615",
        ] {
            let mut v = String::new();
            let mut in_number = false;
            for c in text.chars() {
                if c.is_ascii_digit() {
                    if !in_number {
                        v.push_str(replacement);
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    v.push(c);
                }
            }
            variants.push(v);
        }
        let lines: Vec<&str> = text.lines().collect();
        for skip in [1, 2, 3, 5, 8] {
            variants.push(
                lines
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % skip != 0)
                    .map(|(_, l)| format!("{l}\n"))
                    .collect(),
            );
        }
        for v in variants {
            tried += 1;
            match rtgauge_import::import_text(&file, &v, None) {
                Ok(_) => {}
                Err(e) => assert_eq!(e.to_string().lines().count(), 1, "{e}"),
            }
        }
    }
    assert!(tried > 100, "{tried} variants");
}

#[test]
fn figures_that_contradict_each_other_are_refused() {
    let text = std::fs::read_to_string(fixture("cyclictest-no-histogram.json"))
        .unwrap()
        .replace("\"min\": 10", "\"min\": 500");
    let e = rtgauge_import::import_text(Path::new("edited.json"), &text, None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "edited.json: latency cpu=0: min_ns (500000) is above max_ns (265000); the file's figures contradict each other (was it edited?)"
    );
}

/// `timerlat top` refreshes: a table whose header names more groups than an earlier one had
/// is read alone (a CPU row of the earlier table once made the import index past its
/// groups and panic).
#[test]
fn a_later_top_table_with_more_groups_replaces_the_earlier_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("top.txt");
    std::fs::write(
        &path,
        "                                   Timer Latency\n\
         \x20 0 00:00:01   |          IRQ Timer Latency (us)        |         Thread Timer Latency (us)\n\
         CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max\n\
         \x20 1 #100       |        0         0         1        15 |       10         3         9        31\n\
         \x20 0 00:00:02   |          IRQ Timer Latency (us)        |         Thread Timer Latency (us)        |    Ret user Timer Latency (us)\n\
         CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max |      cur       min       avg       max\n\
         \x20 2 #200       |        0         0         1        12 |       10         3         9        23 |       11         4        10        24\n",
    )
    .unwrap();
    let imported = rtgauge_import::import_file(&path, None).unwrap();
    let cpus: Vec<&str> = imported.result.runs[0]
        .series
        .iter()
        .map(|s| s.labels["cpu"].as_str())
        .collect();
    assert_eq!(cpus, ["2", "2", "2"], "only the last table's rows");
}
