//! `rtgauge import`: cyclictest output produced here, an rtla timerlat histogram and
//! jitterdebugger results written from their documented formats, rtgauge files; malformed
//! input names the file and line.

mod common;

use common::*;
use std::path::Path;

fn has(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--help")
        .output()
        .is_ok()
}

/// `rtgauge import --no-store --output-dir DIR FILE`: the result beside nothing else, kept in
/// no history.
fn import_into(dir: &Path, file: &Path) -> std::process::Output {
    rtgauge()
        .args(["import", "--no-store", "--output-dir"])
        .arg(dir)
        .arg(file)
        .output()
        .unwrap()
}

/// What `rtgauge ARGS RESULT` prints; it must succeed.
fn printed(args: &[&str], result: &Path) -> String {
    let out = rtgauge().args(args).arg(result).output().unwrap();
    assert_success(&out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn import(store: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    rtgauge_with_store(store)
        .arg("import")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cyclictest_output_imports_and_pairs_with_an_rtgauge_run_of_the_same_settings() {
    if !is_root() || !has("cyclictest") {
        eprintln!("skipped: needs root and cyclictest (rt-tests)");
        return;
    }
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let (with_h, without_h) = (dir.path().join("ct-h.json"), dir.path().join("ct.json"));
    for (file, histogram) in [(&with_h, true), (&without_h, false)] {
        let mut cmd = std::process::Command::new("cyclictest");
        cmd.args([
            "-m", "-q", "-p", "95", "-i", "1000", "-l", "1000", "-t", "1", "-a", "0",
        ]);
        if histogram {
            cmd.args(["-h", "2000"]);
        }
        let out = cmd
            .arg(format!("--json={}", file.display()))
            .output()
            .unwrap();
        assert_success(&out);
    }
    let out = import(
        &store,
        &[
            "--output-dir".as_ref(),
            dir.path().as_os_str(),
            with_h.as_os_str(),
            without_h.as_os_str(),
        ],
    );
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ct-h.json: cyclictest"), "{text}");
    // Without -h there is no histogram: said so, and no median is invented.
    assert!(text.contains("min, average and max only"), "{text}");
    let plain = read_json(&dir.path().join("ct.rtgauge.json"));
    let latency = &plain["runs"][0]["series"][0];
    assert_eq!(latency["name"], "latency");
    assert!(latency["stats"]["median_ns"].is_null());
    assert!(latency["stats"]["max_ns"].as_u64().unwrap() > 0);
    let full = read_json(&dir.path().join("ct-h.rtgauge.json"));
    assert_eq!(full["runs"][0]["series"][0]["stats"]["count"], 1000);
    assert!(
        full["runs"][0]["series"][0]["stats"]["median_ns"]
            .as_u64()
            .unwrap()
            > 0
    );

    // An rtgauge run of the same settings: rt at priority 95, 1 ms, CPU 0.
    let ours = dir.path().join("ours.json");
    let out = rtgauge()
        .args([
            "run",
            "cyclic",
            "-l",
            "1000",
            "--warmup",
            "50ms",
            "-c",
            "0",
            "-p",
            "1ms",
            "-q",
            "--no-report",
            "-o",
        ])
        .arg(&ours)
        .output()
        .unwrap();
    assert_success(&out);
    let out = rtgauge()
        .args(["compare", "--format", "json"])
        .arg(&ours)
        .arg(dir.path().join("ct-h.rtgauge.json"))
        .output()
        .unwrap();
    assert_success(&out);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "the latency row pairs: {c:#}");
    assert_eq!(rows[0]["series"], "latency");
    assert_eq!(rows[0]["labels"]["cpu"], "0");
    assert_ne!(rows[0]["outcome"], "untested");
    // Both are in the history.
    let out = rtgauge_with_store(&store).arg("history").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches("import cyclictest")
            .count(),
        2
    );
}

/// rtla is not installed on the development machine (no timerlat tracer): this histogram is
/// written from the format rtla-timerlat-hist(1) documents — a header, one line per
/// microsecond bucket with a column per CPU and context, then over/count/min/avg/max.
const TIMERLAT_HIST: &str = "\
# RTLA timerlat histogram
# Time unit is microseconds (us)
# Duration:   0 00:00:10
Index   IRQ-000   Thr-000   IRQ-001   Thr-001
0           900         0       950         0
1            95       400        48       500
2             4       550         2       480
3             1        40         0        19
5             0        10         0         1
over:         0         0         0         0
count:     1000      1000      1000      1000
min:          0         1         0         1
avg:          0         1         0         1
max:          3         5         2         5
ALL:        IRQ       Thr       Usr
count:     2000      2000         -
";

#[test]
fn rtla_timerlat_and_jitterdebugger_results_import_with_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let hist = dir.path().join("timerlat.txt");
    std::fs::write(&hist, TIMERLAT_HIST).unwrap();
    // jitterdebugger -f results.json, as its dump_stats writes it.
    let jd = dir.path().join("results.json");
    std::fs::write(
        &jd,
        r#"{
  "version": 1,
  "cpu": {
    "0": {
      "histogram": {
        "3": 10,
        "4": 85,
        "9": 5
      },
      "count": 100,
      "min": 3,
      "max": 9,
      "avg": 4.20
    }
  }
}"#,
    )
    .unwrap();
    let out = import(
        &store,
        &[
            "--output-dir".as_ref(),
            dir.path().as_os_str(),
            hist.as_os_str(),
            jd.as_os_str(),
        ],
    );
    assert_success(&out);
    let t = read_json(&dir.path().join("timerlat.rtgauge.json"));
    let series = t["runs"][0]["series"].as_array().unwrap();
    let names: Vec<String> = series
        .iter()
        .map(|s| {
            format!(
                "{} cpu={}",
                s["name"].as_str().unwrap(),
                s["labels"]["cpu"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        ["irq cpu=0", "thread cpu=0", "irq cpu=1", "thread cpu=1"]
    );
    assert_eq!(series[1]["stats"]["count"], 1000);
    assert_eq!(series[1]["stats"]["max_ns"], 5000);
    assert_eq!(series[1]["stats"]["median_ns"], 2000);
    let j = read_json(&dir.path().join("results.rtgauge.json"));
    assert_eq!(j["runs"][0]["series"][0]["stats"]["count"], 100);
    // Histogram bucket resolution: the median is 4 µs within 1/1024.
    let median = j["runs"][0]["series"][0]["stats"]["median_ns"]
        .as_u64()
        .unwrap();
    assert!((4000..=4004).contains(&median), "{median}");
    // Neither file has a date: the history says so rather than 1970, and marks both imports.
    let out = rtgauge_with_store(&store).arg("history").output().unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    assert_eq!(listing.matches("not recorded").count(), 2, "{listing}");
    assert_eq!(listing.matches("imported").count(), 2, "{listing}");
    assert!(!listing.contains("1970"), "{listing}");
}

#[test]
fn a_malformed_file_is_refused_naming_the_file_and_line_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let good = dir.path().join("good.txt");
    std::fs::write(&good, TIMERLAT_HIST).unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        TIMERLAT_HIST.replace("2             4", "2             x"),
    )
    .unwrap();
    let out = import(&store, &[good.as_os_str(), bad.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("{}:7:", bad.display())), "{err}");
    assert!(err.contains("`x` is not a number"), "{err}");
    assert!(!store.exists(), "nothing stored when one file is bad");
}

#[test]
fn jitterdebugger_samples_keep_their_time_so_interval_maxima_are_real() {
    let dir = tempfile::tempdir().unwrap();
    // `jittersamples --format csv`: thread;seconds.nanoseconds;latency in µs. Three seconds
    // of samples on thread 0, the worst in the second one.
    let mut csv = String::new();
    for (second, base_us) in [(0u64, 10u64), (1, 12), (2, 11)] {
        for k in 0..100u64 {
            let at = second * 1_000_000_000 + k * 10_000_000;
            csv.push_str(&format!(
                "0;{}.{:09};{}\n",
                5000 + at / 1_000_000_000,
                at % 1_000_000_000,
                base_us + k % 3
            ));
        }
    }
    let file = dir.path().join("samples.csv");
    std::fs::write(&file, csv).unwrap();
    let out = import_into(dir.path(), &file);
    assert_success(&out);
    let r = read_json(&dir.path().join("samples.rtgauge.json"));
    let stats = &r["runs"][0]["series"][0]["stats"];
    assert_eq!(stats["count"], 300);
    assert_eq!(stats["max_ns"], 14000);
    assert_eq!(
        stats["intervals"]["max_ns"],
        serde_json::json!([12000, 14000, 13000])
    );
}

fn import_fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rtgauge-import/tests/fixtures")
        .join(name)
}

#[test]
fn an_imported_result_is_shown_as_imported_with_its_own_date_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = import_into(dir.path(), &import_fixture("cyclictest-h20-overflow.json"));
    assert_success(&out);
    let result = dir.path().join("cyclictest-h20-overflow.rtgauge.json");
    let text = printed(&["show", "--table", "summary"], &result);
    let first = text.lines().next().unwrap();
    // The file's own date (start_time: Thu, 26 Nov 2026 20:46:47 +0000), not 1970.
    assert!(
        first.starts_with("imported cyclictest 2.40 · 2026-11-26 20:46 UTC"),
        "{text}"
    );
    assert!(text.contains("(cyclictest-h20-overflow.json)"), "{text}");
    assert!(!text.contains("rtgauge run"), "{text}");
    assert!(!text.contains("measure at least"), "{text}");
    // 208 of 5000 samples beyond 20 µs: p99 is only known to be at least 20.
    assert!(text.contains("≥ 20"), "{text}");
    // The full tables and the HTML report say it too.
    let text = printed(&["show"], &result);
    assert!(text.starts_with("imported from cyclictest 2.40"), "{text}");
    assert!(text.contains("≥ 20.0"), "{text}");
    let html = dir.path().join("r.html");
    printed(&["report", "-o", &html.to_string_lossy()], &result);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<td>imported</td><td>cyclictest 2.40</td>"));
}

#[test]
fn show_format_rt_tests_writes_what_cyclictest_json_readers_expect_and_imports_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = import_into(dir.path(), &import_fixture("cyclictest-H50.txt"));
    assert_success(&out);
    let result = dir.path().join("cyclictest-H50.rtgauge.json");
    let shown = printed(&["show", "--format", "rt-tests"], &result);
    let doc: serde_json::Value = serde_json::from_str(&shown).unwrap();
    // The fields cyclictest --json writes, as a script reads them.
    assert_eq!(doc["file_version"], 1);
    assert_eq!(doc["num_threads"], 2);
    assert_eq!(doc["return_code"], 0);
    let t0 = &doc["thread"]["0"];
    // # Total: 991, Overflows 9, Min 10, Avg 29, Max 158 (thread 0 of the fixture)
    assert_eq!(t0["cycles"], 1000);
    assert_eq!(t0["min"], 10);
    assert_eq!(t0["max"], 158);
    assert_eq!(t0["avg"], 29.0);
    let in_histogram: u64 = t0["histogram"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(in_histogram, 1000);
    // And back: the same figures.
    let exported = dir.path().join("exported.json");
    std::fs::write(&exported, &shown).unwrap();
    let out = import_into(dir.path(), &exported);
    assert_success(&out);
    let back = read_json(&dir.path().join("exported.rtgauge.json"));
    let original = read_json(&result);
    for i in 0..2 {
        for k in ["count", "min_ns", "max_ns", "mean_ns"] {
            assert_eq!(
                back["runs"][0]["series"][i]["stats"][k],
                original["runs"][0]["series"][i]["stats"][k],
                "series {i} {k}"
            );
        }
    }
}

#[test]
fn an_unknown_format_is_refused_saying_what_the_file_looks_like() {
    let dir = tempfile::tempdir().unwrap();
    // rt-migrate-test's report: no latency per thread or CPU to import.
    let file = dir.path().join("migrate.txt");
    std::fs::write(&file, " Task 0 (prio 2) (pid 1234):\n   Max:   16 us\n").unwrap();
    let out = import_into(dir.path(), &file);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("a text file starting `Task 0 (prio 2) (pid 1234):`"),
        "{err}"
    );
    assert!(err.contains("rtgauge imports"), "{err}");
    assert!(err.contains("status lines"), "{err}");
}

/// A `-h 3000` cyclictest run at 1 ms, written from cyclictest's histogram format: two
/// wake-ups past one period (1016 µs: one period overslept; 2016 µs: two).
const CYCLICTEST_PAST_ONE_PERIOD: &str = "\
T: 0 ( 1234) P:95 I:1000 C:   1000 Min:      5 Act:    9 Avg:   12 Max:    2016
# Histogram
000005 000500
000010 000498
001016 000001
002016 000001
# Total: 000001000
# Min Latencies: 00005
# Avg Latencies: 00012
# Max Latencies: 02016
# Histogram Overflows: 00000
";

/// Rows the history lists.
fn history_rows(store: &Path) -> usize {
    let out = rtgauge_with_store(store).arg("history").output().unwrap();
    assert_success(&out);
    String::from_utf8_lossy(&out.stdout)
        .matches("import cyclictest")
        .count()
}

#[test]
fn two_inputs_of_one_name_get_two_results_and_a_file_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let out_dir = dir.path().join("D");
    let txt = dir.path().join("ct.txt");
    std::fs::write(&txt, CYCLICTEST_PAST_ONE_PERIOD).unwrap();
    let json = dir.path().join("ct.json");
    std::fs::copy(import_fixture("cyclictest-h20-overflow.json"), &json).unwrap();
    let both = [
        "--output-dir".as_ref(),
        out_dir.as_os_str(),
        txt.as_os_str(),
        json.as_os_str(),
    ];
    let out = import(&store, &both);
    assert_success(&out);
    let (a, b) = (
        out_dir.join("ct.txt.rtgauge.json"),
        out_dir.join("ct.json.rtgauge.json"),
    );
    assert_eq!(
        read_json(&a)["runs"][0]["series"][0]["stats"]["max_ns"],
        2_016_000
    );
    assert_eq!(
        read_json(&b)["runs"][0]["series"][0]["stats"]["max_ns"],
        130_000
    );
    assert_eq!(history_rows(&store), 2);

    // Again, each alone: refused in one line, the result file and the history untouched.
    for input in [&txt, &json] {
        let before = std::fs::read(&a).unwrap();
        let out = import(
            &store,
            &[
                "--output-dir".as_ref(),
                out_dir.as_os_str(),
                input.as_os_str(),
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("already"), "{err}");
        assert_eq!(std::fs::read(&a).unwrap(), before);
        assert_eq!(history_rows(&store), 2);
    }
    // Without the history too: the existing result file is not replaced.
    let out = import(
        &store,
        &[
            "--no-store".as_ref(),
            "--output-dir".as_ref(),
            out_dir.as_os_str(),
            txt.as_os_str(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ct.txt.rtgauge.json already exists") && err.contains("--force"),
        "{err}"
    );
    // The same content under another name is the same file.
    let renamed = dir.path().join("copy.txt");
    std::fs::copy(&txt, &renamed).unwrap();
    let out = import(&store, &[renamed.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("as run 1"));
    // --force writes the result files again and still adds no row.
    let mut forced = vec!["--force".as_ref()];
    forced.extend(both);
    let out = import(&store, &forced);
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("already in the history").count(), 2, "{text}");
    assert_eq!(history_rows(&store), 2);
}

#[test]
fn an_imported_1_ms_run_that_overslept_periods_is_not_summarised_as_losing_none() {
    let dir = tempfile::tempdir().unwrap();
    let hist = dir.path().join("hist.txt");
    std::fs::write(&hist, CYCLICTEST_PAST_ONE_PERIOD).unwrap();
    // The same run as its status line alone: no histogram to count them from.
    let status = dir.path().join("status.txt");
    std::fs::write(&status, CYCLICTEST_PAST_ONE_PERIOD.lines().next().unwrap()).unwrap();
    let out = rtgauge()
        .args(["import", "--no-store", "--output-dir"])
        .arg(dir.path())
        .arg(&hist)
        .arg(&status)
        .output()
        .unwrap();
    assert_success(&out);
    let text = printed(
        &["show", "--table", "summary"],
        &dir.path().join("hist.rtgauge.json"),
    );
    assert!(
        text.contains("a 1ms periodic task (cyclic) lost 3 periods"),
        "{text}"
    );
    let text = printed(
        &["show", "--table", "summary"],
        &dir.path().join("status.rtgauge.json"),
    );
    assert!(!text.contains("lost no period"), "{text}");
    assert!(
        text.contains("may have lost periods (the source does not say how many)"),
        "{text}"
    );
    // An import cannot be measured longer: no advice to.
    let full = printed(&["show"], &dir.path().join("status.rtgauge.json"));
    assert!(!full.contains("--duration"), "{full}");
}

#[test]
fn compare_of_series_whose_labels_do_not_pair_says_which_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    // JSON: series labelled by CPU; status lines without a command line: by thread.
    let status = dir.path().join("status.txt");
    std::fs::write(
        &status,
        "T: 0 ( 1234) P:98 I:200 C:   5000 Min:      5 Act:    9 Avg:   13 Max:     130\n\
         T: 1 ( 1235) P:98 I:200 C:   5000 Min:      4 Act:    9 Avg:   14 Max:     131\n",
    )
    .unwrap();
    let out = rtgauge()
        .args(["import", "--no-store", "--output-dir"])
        .arg(dir.path())
        .arg(import_fixture("cyclictest-h20-overflow.json"))
        .arg(&status)
        .output()
        .unwrap();
    assert_success(&out);
    let out = rtgauge()
        .arg("compare")
        .arg(dir.path().join("cyclictest-h20-overflow.rtgauge.json"))
        .arg(dir.path().join("status.rtgauge.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("cyclic latency: A has cpu=0 cpu=1, B has thread=0 thread=1"),
        "{err}"
    );
    // Pasted with its command line, the threads' CPUs are known and the series pair.
    std::fs::write(
        &status,
        format!(
            "# cyclictest -S -p98 -i200 -d0\n{}",
            std::fs::read_to_string(&status).unwrap()
        ),
    )
    .unwrap();
    let out = rtgauge()
        .args(["import", "--force", "--no-store", "--output-dir"])
        .arg(dir.path())
        .arg(&status)
        .output()
        .unwrap();
    assert_success(&out);
    let out = rtgauge()
        .args(["compare", "--format", "json"])
        .arg(dir.path().join("cyclictest-h20-overflow.rtgauge.json"))
        .arg(dir.path().join("status.rtgauge.json"))
        .output()
        .unwrap();
    assert_success(&out);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["rows"].as_array().unwrap().len(), 2, "{c:#}");
}

/// (thread, count, min, avg, max) of every `T:` line in `text`, read here independently of
/// the importer (the last line of each thread counts, as the live display leaves it).
fn status_figures(text: &str) -> Vec<(String, u64, u64, u64, u64)> {
    let mut found: std::collections::BTreeMap<String, (u64, u64, u64, u64)> = Default::default();
    for line in text.lines().filter(|l| l.starts_with("T:")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let after = |key: &str| -> u64 {
            let at = words.iter().position(|w| *w == key).unwrap();
            words[at + 1].parse().unwrap()
        };
        found.insert(
            words[1].to_string(),
            (after("C:"), after("Min:"), after("Avg:"), after("Max:")),
        );
    }
    found
        .into_iter()
        .map(|(t, (c, min, avg, max))| (t, c, min, avg, max))
        .collect()
}

#[test]
fn cyclictest_console_output_produced_here_imports_with_its_own_figures() {
    if !is_root() || !has("cyclictest") {
        eprintln!("skipped: needs root and cyclictest (rt-tests)");
        return;
    }
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str], file: &str| {
        let out = std::process::Command::new("cyclictest")
            .args(args)
            .output()
            .unwrap();
        assert_success(&out);
        let path = dir.path().join(file);
        std::fs::write(&path, &out.stdout).unwrap();
        (path, String::from_utf8(out.stdout).unwrap())
    };
    // Status lines at exit (-q), two threads on CPU 0 at 1000 and 1500 µs.
    let common = ["-m", "-p", "95", "-i", "1000", "-t", "2", "-a", "0"];
    let (status, text) = run(&[&common[..], &["-q", "-l", "300"]].concat(), "status.txt");
    // -v: every sample, after `Thread N using cpu 0.` and `Thread N Interval:`.
    let (verbose, samples) = run(&[&common[..], &["-v", "-l", "50"]].concat(), "verbose.txt");
    let out = rtgauge()
        .args(["import", "--no-store", "--output-dir"])
        .arg(dir.path())
        .arg(&status)
        .arg(&verbose)
        .output()
        .unwrap();
    assert_success(&out);
    let r = read_json(&dir.path().join("status.rtgauge.json"));
    let expected = status_figures(&text);
    assert_eq!(expected.len(), 2, "{text}");
    for (s, (thread, count, min, avg, max)) in r["runs"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&expected)
    {
        assert_eq!(s["labels"]["thread"], thread.as_str());
        let stats = &s["stats"];
        assert_eq!(
            (
                stats["count"].as_u64(),
                stats["min_ns"].as_u64(),
                stats["mean_ns"].as_u64(),
                stats["max_ns"].as_u64()
            ),
            (
                Some(*count),
                Some(min * 1000),
                Some(avg * 1000),
                Some(max * 1000)
            ),
            "thread {thread}: {text}"
        );
        assert!(stats["median_ns"].is_null());
    }
    let v = read_json(&dir.path().join("verbose.rtgauge.json"));
    let series = v["runs"][0]["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "{samples}");
    for (t, s) in series.iter().enumerate() {
        // Both threads on CPU 0, as cyclictest said.
        assert_eq!(s["labels"]["cpu"], "0");
        assert_eq!(s["labels"]["thread"], t.to_string());
        let mine: Vec<u64> = samples
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(':').map(str::trim).collect();
                (f.len() == 3 && f[0] == t.to_string()).then(|| f[2].parse().unwrap())
            })
            .collect();
        // The first thread takes its 50 loops; the slower one as many as it took by then.
        assert!(!mine.is_empty() && mine.len() <= 50, "{samples}");
        let stats = &s["stats"];
        assert_eq!(stats["count"], mine.len());
        assert_eq!(stats["min_ns"], mine.iter().min().unwrap() * 1000);
        assert_eq!(stats["max_ns"], mine.iter().max().unwrap() * 1000);
        assert!(stats["median_ns"].as_u64().is_some());
        // Printed 1500 and 2000: the default 500 µs distance added, so 1000 and 1500.
        assert_eq!(s["counters"]["interval_ns"], 1_000_000 + 500_000 * t as u64);
    }
}
