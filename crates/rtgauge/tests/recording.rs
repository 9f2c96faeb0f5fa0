//! End-to-end tests of raw-sample recording and export: they run the
//! real binary and check counts and values against the result document, never latencies.

mod common;
use common::rtgauge;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs cyclic in normal mode (no privileges needed) with `--loops loops`, recording it.
fn record_run(dir: &Path, loops: u64, extra: &[&str], env: &[(&str, &str)]) -> (Value, PathBuf) {
    let out = dir.join("run.json");
    let mut cmd = rtgauge();
    cmd.args(["run", "cyclic", "--mode", "normal", "--period", "100us"])
        .args(["--warmup", "50ms", "--loops", &loops.to_string()])
        .args(["--record", "cyclic", "--quiet", "--no-report", "-o"])
        .arg(&out)
        .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.assert().success();
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let recordings = result["recordings"].as_array().expect("recordings[]");
    assert_eq!(recordings.len(), 1, "one probe × mode × load");
    let path = dir.join(recordings[0]["path"].as_str().unwrap());
    assert!(path.exists(), "{} is beside the result", path.display());
    (result, path)
}

/// (count, min, max, max_at) of each cpu's latency series in the result.
fn latency_stats(result: &Value) -> BTreeMap<String, (u64, u64, u64, u64)> {
    result["runs"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "latency")
        .map(|s| {
            let st = &s["stats"];
            (
                s["labels"]["cpu"].as_str().unwrap().to_string(),
                (
                    st["count"].as_u64().unwrap(),
                    st["min_ns"].as_u64().unwrap(),
                    st["max_ns"].as_u64().unwrap(),
                    st["max_at_ns"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// Rows of an exported CSV grouped by cpu: (at_ns, value_ns) in file order.
fn csv_by_cpu(path: &Path) -> BTreeMap<String, Vec<(u64, u64)>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("series,name,cpu,at_ns,value_ns"));
    let mut by_cpu: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 5, "{line}");
        assert_eq!(f[1], "latency");
        by_cpu
            .entry(f[2].to_string())
            .or_default()
            .push((f[3].parse().unwrap(), f[4].parse().unwrap()));
    }
    by_cpu
}

fn export(recording: &Path, format: &str, out: &Path) {
    rtgauge()
        .args(["export"])
        .arg(recording)
        .args(["-f", format, "-o"])
        .arg(out)
        .assert()
        .success();
}

fn warning_codes(result: &Value) -> Vec<String> {
    result["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

/// N loops give exactly N samples per thread in the file, and the exported values are the
/// ones the summary was computed from (same count, min, max and time of the max).
#[test]
fn recording_holds_every_sample_and_matches_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let loops = 3000;
    let (result, recording) = record_run(dir.path(), loops, &[], &[]);
    let cpus = online_cpus() as u64;
    let info = &result["recordings"][0];
    assert_eq!(info["probe"], "cyclic");
    assert_eq!(info["mode"], "normal");
    assert_eq!(info["load"], "none");
    assert_eq!(info["format_version"], 1);
    assert_eq!(info["samples_written"].as_u64().unwrap(), loops * cpus);
    assert_eq!(
        info["samples_dropped"], 0,
        "a default ring holds the whole run"
    );
    assert_eq!(
        info["bytes"].as_u64().unwrap(),
        std::fs::metadata(&recording).unwrap().len()
    );
    assert!(!warning_codes(&result).contains(&"record_dropped".to_string()));

    let csv = dir.path().join("samples.csv");
    export(&recording, "csv", &csv);
    let rows = csv_by_cpu(&csv);
    let stats = latency_stats(&result);
    assert_eq!(rows.len() as u64, cpus);
    for (cpu, (count, min, max, max_at)) in stats {
        let mine = &rows[&cpu];
        assert_eq!(mine.len() as u64, loops, "cpu {cpu}");
        assert_eq!(count, loops);
        assert_eq!(
            mine.iter().map(|r| r.1).min().unwrap(),
            min,
            "cpu {cpu} min"
        );
        assert_eq!(
            mine.iter().map(|r| r.1).max().unwrap(),
            max,
            "cpu {cpu} max"
        );
        assert!(
            mine.iter().any(|&(at, v)| v == max && at == max_at),
            "cpu {cpu}: the max sits at the time the summary reports"
        );
        assert!(mine.windows(2).all(|w| w[0].0 < w[1].0), "time only grows");
    }
}

/// With a tiny ring and the writer asleep until the run ends (a test-only knob), each thread
/// keeps exactly the ring's worth of samples and every other one is counted.
#[test]
fn dropped_samples_are_counted_exactly_when_the_writer_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let loops = 500;
    let ring = 50;
    let (result, recording) = record_run(
        dir.path(),
        loops,
        &[],
        &[
            ("RTGAUGE_RECORD_RING", "50"),
            // The writer wakes when the recording is finished, however long the run takes.
            ("RTGAUGE_TEST_RECORD_STALL_MS", "600000"),
        ],
    );
    let cpus = online_cpus() as u64;
    let info = &result["recordings"][0];
    let written = info["samples_written"].as_u64().unwrap();
    let dropped = info["samples_dropped"].as_u64().unwrap();
    assert_eq!(
        written + dropped,
        loops * cpus,
        "every sample is accounted for"
    );
    assert_eq!(written, ring * cpus);
    assert_eq!(dropped, (loops - ring) * cpus);
    assert!(warning_codes(&result).contains(&"record_dropped".to_string()));

    let csv = dir.path().join("samples.csv");
    export(&recording, "csv", &csv);
    let rows = csv_by_cpu(&csv);
    for (cpu, (_, min, _, _)) in latency_stats(&result) {
        let mine = &rows[&cpu];
        assert_eq!(mine.len() as u64, ring);
        // The kept samples are a subset of what the summary saw.
        assert!(mine.iter().all(|r| r.1 >= min), "cpu {cpu}");
    }
}

/// The Parquet export holds the same rows as the CSV export, readable by a Parquet reader.
#[test]
fn parquet_export_reads_back_with_the_csv_rows() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let dir = tempfile::tempdir().unwrap();
    let loops = 2000;
    let (_, recording) = record_run(dir.path(), loops, &[], &[]);
    let csv = dir.path().join("samples.csv");
    let pq = dir.path().join("samples.parquet");
    export(&recording, "csv", &csv);
    export(&recording, "parquet", &pq);
    let rows = csv_by_cpu(&csv);

    let reader = SerializedFileReader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    let mut by_cpu: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for row in reader.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        by_cpu
            .entry(row.get_string(2).unwrap().clone())
            .or_default()
            .push((
                row.get_long(3).unwrap() as u64,
                row.get_long(4).unwrap() as u64,
            ));
    }
    assert_eq!(by_cpu, rows);
    assert_eq!(
        reader.metadata().file_metadata().num_rows() as u64,
        loops * online_cpus() as u64
    );
}

/// A truncated, foreign or future-version recording is refused with one line that names the
/// file and the problem; no partial output is left.
#[test]
fn damaged_recording_gives_a_clear_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_, recording) = record_run(dir.path(), 500, &[], &[]);
    let bytes = std::fs::read(&recording).unwrap();
    let out = dir.path().join("out.csv");
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("cut.rtgr", bytes[..bytes.len() / 2].to_vec(), "truncated"),
        (
            "notes.rtgr",
            b"cpu,latency\n0,12\n".to_vec(),
            "not an rtgauge recording",
        ),
        (
            "future.rtgr",
            {
                let mut b = bytes.clone();
                b[8] = 7;
                b
            },
            "upgrade rtgauge",
        ),
    ];
    for (name, content, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        for format in ["csv", "parquet"] {
            let err = common::one_line_error(&[
                "export".as_ref(),
                path.as_os_str(),
                "-f".as_ref(),
                format.as_ref(),
                "-o".as_ref(),
                out.as_os_str(),
            ]);
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(says), "{err}");
            assert!(!out.exists());
        }
    }
    let missing = dir.path().join("missing.rtgr");
    let err = common::one_line_error(&[
        "export".as_ref(),
        missing.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(err.contains("missing.rtgr"), "{err}");
}

#[test]
fn record_names_a_probe_of_the_run() {
    let (_dir, out) = common::scratch_result();
    for (name, says) in [
        ("nope", "unknown probe 'nope'"),
        ("switch", "not part of this run"),
    ] {
        let err = common::one_line_error(&[
            "run".as_ref(),
            "cyclic".as_ref(),
            "--mode".as_ref(),
            "normal".as_ref(),
            "--loops".as_ref(),
            "10".as_ref(),
            "--record".as_ref(),
            name.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert!(err.contains(says), "{err}");
    }
    assert!(!out.exists(), "refused before anything ran");
}

/// When a CPU is left unmeasured the writer runs there, and the result says nothing about
/// it sharing a measured CPU.
#[test]
fn writer_stays_off_the_measured_cpu() {
    if online_cpus() < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = record_run(dir.path(), 500, &["--cpus", "0"], &[]);
    assert_eq!(result["recordings"][0]["samples_written"], 500);
    assert!(!warning_codes(&result).contains(&"record_writer".to_string()));
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = record_run(dir.path(), 500, &[], &[]);
    assert!(warning_codes(&result).contains(&"record_writer".to_string()));
}

/// Recording needs no privileges: an ordinary user records and exports in normal mode.
#[test]
fn recording_works_without_privileges() {
    let Some(dir) = common::nobody_workdir() else {
        return;
    };
    let run_as_nobody = |args: &[&str]| {
        common::as_nobody()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let run = run_as_nobody(&[
        "run",
        "cyclic",
        "--mode",
        "normal",
        "--period",
        "100us",
        "--warmup",
        "50ms",
        "--loops",
        "400",
        "--record",
        "cyclic",
        "--no-report",
        "-q",
        "-o",
        "n.json",
    ]);
    common::assert_success(&run);
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("n.json")).unwrap()).unwrap();
    let info = &result["recordings"][0];
    assert_eq!(
        info["samples_written"].as_u64().unwrap(),
        400 * online_cpus() as u64
    );
    let exported = run_as_nobody(&[
        "export",
        info["path"].as_str().unwrap(),
        "-f",
        "parquet",
        "-o",
        "n.parquet",
    ]);
    common::assert_success(&exported);
    assert!(dir.path().join("n.parquet").exists());
}

/// The HTML report written beside a recorded run draws the raw samples over time: one
/// decimated (min/max envelope) series per recorded CPU.
#[test]
fn report_of_a_recorded_run_plots_the_raw_samples() {
    let (dir, out) = common::scratch_result();
    rtgauge()
        .args([
            "run", "cyclic", "--cpus", "0", "--loops", "500", "--warmup", "50ms",
        ])
        .args(["--best-effort", "--record", "cyclic", "-q", "-o"])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(
        html.contains("cyclic · rt · load none: latency cpu=0"),
        "no raw-sample chart"
    );
    // The plot carries every recorded sample (500 < the 4000-point budget: no decimation).
    assert!(
        html.contains("500 samples; each point"),
        "the raw-sample plot does not hold 500 samples"
    );
}

/// A run killed with SIGKILL never writes its recording's trailer. `export` refuses that file
/// and points at `--salvage`, which exports every complete record written before the kill.
#[test]
fn a_killed_run_leaves_a_recording_that_export_salvages() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtgauge"))
        .env("RTGAUGE_NO_STORE", "1")
        .args(["run", "cyclic", "--mode", "normal", "--period", "100us"])
        .args([
            "-d",
            "60s",
            "--warmup",
            "50ms",
            "--record",
            "cyclic",
            "-q",
            "--no-report",
        ])
        .arg("-o")
        .arg(dir.path().join("run.json"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the writer has put a good number of records on disk, then kill.
    let find = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "rtgr"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    let recording = loop {
        if let Some(p) = find().filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 200_000)) {
            break p;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no recording grew past 200 kB in 40 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    child.kill().unwrap();
    child.wait().unwrap();

    let csv = dir.path().join("salvaged.csv");
    let refused = common::one_line_error(&[
        "export".as_ref(),
        recording.as_os_str(),
        "-o".as_ref(),
        csv.as_os_str(),
    ]);
    assert!(refused.contains("--salvage"), "{refused}");
    assert!(!csv.exists());

    let out = rtgauge()
        .arg("export")
        .arg(&recording)
        .args(["--salvage", "-o"])
        .arg(&csv)
        .output()
        .unwrap();
    common::assert_success(&out);
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("unfinished recording"), "{note}");
    // Every salvaged row is a real sample: its cpu is a measured one, its time is within the
    // run, and each cpu's times go forward.
    let rows = csv_by_cpu(&csv);
    let total: usize = rows.values().map(Vec::len).sum();
    assert!(total > 10_000, "only {total} rows salvaged");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("{total} rows")), "{stdout}");
    for (cpu, samples) in &rows {
        assert!(cpu.parse::<usize>().unwrap() < online_cpus());
        assert!(samples.windows(2).all(|w| w[0].0 <= w[1].0), "cpu {cpu}");
        assert!(samples.iter().all(|&(at, _)| at < 60_000_000_000));
    }
}
