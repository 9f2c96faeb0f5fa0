//! Tests of the whole crate: hub → file → reader → export, the ring under stress, exact drop
//! counts, and clear errors on damaged files.

use crate::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn meta() -> RecordingMeta {
    RecordingMeta {
        tool: "rtgauge test".into(),
        probe: "cyclic".into(),
        mode: "normal".into(),
        load: "none".into(),
        params: Default::default(),
    }
}

fn series(n: usize) -> Vec<SeriesDef> {
    (0..n)
        .map(|i| SeriesDef::new("latency").label("cpu", i))
        .collect()
}

/// Records `per_thread` samples from each of `threads` threads (thread i writes series i with
/// at = k·100, value = k·7 + i) and returns the finished summary.
fn record(
    path: &Path,
    threads: usize,
    per_thread: u64,
    options: RecordOptions,
) -> RecordingSummary {
    let hub = RecordingHub::new(path.to_path_buf(), meta(), options);
    let slots = hub.open(series(threads), threads, "test").unwrap();
    std::thread::scope(|s| {
        for i in 0..threads {
            let mut sink = slots.take(i).unwrap();
            s.spawn(move || {
                for k in 0..per_thread {
                    sink.push(i as u16, k * 100, k * 7 + i as u64);
                }
            });
        }
    });
    drop(slots);
    hub.finish().unwrap().expect("the recording was opened")
}

fn read_all(path: &Path) -> Vec<Sample> {
    let rec = Recording::open(path).unwrap();
    let mut all = Vec::new();
    let mut it = rec.samples().unwrap();
    let mut batch = Vec::new();
    loop {
        it.next_batch(&mut batch, 1000).unwrap();
        if batch.is_empty() {
            break;
        }
        all.extend_from_slice(&batch);
    }
    all
}

fn slow_writer() -> RecordOptions {
    RecordOptions {
        poll_interval: Duration::from_micros(200),
        ..RecordOptions::default()
    }
}

#[test]
fn every_sample_of_every_thread_arrives_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.rtgr");
    let n = 50_000;
    let sum = record(&path, 3, n, slow_writer());
    assert_eq!(sum.samples_written, 3 * n);
    assert_eq!(sum.samples_dropped, 0);
    assert_eq!(sum.bytes, std::fs::metadata(&path).unwrap().len());

    let rec = Recording::open(&path).unwrap();
    assert_eq!(rec.sample_count(), 3 * n);
    assert_eq!(rec.header.series.len(), 3);
    assert_eq!(rec.header.series[2].labels["cpu"], "2");
    assert_eq!(rec.header.probe, "cyclic");
    let samples = read_all(&path);
    for t in 0..3u16 {
        let mine: Vec<&Sample> = samples.iter().filter(|s| s.series == t).collect();
        assert_eq!(mine.len() as u64, n);
        for (k, s) in mine.iter().enumerate() {
            assert_eq!(s.at_ns, k as u64 * 100);
            assert_eq!(s.value_ns, k as u64 * 7 + u64::from(t));
        }
    }
}

/// A tiny ring wraps hundreds of thousands of times while a producer pushes as fast as it can:
/// nothing is duplicated, reordered or lost without being counted.
#[test]
fn ring_stress_written_plus_dropped_is_exactly_pushed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stress.rtgr");
    let n = 2_000_000u64;
    let options = RecordOptions {
        ring_capacity: 64,
        poll_interval: Duration::from_micros(50),
        ..RecordOptions::default()
    };
    let hub = RecordingHub::new(path.clone(), meta(), options);
    let slots = hub.open(series(2), 2, "test").unwrap();
    std::thread::scope(|s| {
        for i in 0..2usize {
            let mut sink = slots.take(i).unwrap();
            s.spawn(move || {
                for k in 0..n {
                    sink.push(i as u16, k, k);
                }
            });
        }
    });
    drop(slots);
    let sum = hub.finish().unwrap().unwrap();
    assert_eq!(sum.samples_written + sum.samples_dropped, 2 * n);
    for c in &sum.series {
        assert_eq!(c.written + c.dropped, n, "series {}", c.id);
        assert!(
            c.written >= 64,
            "the writer drained at least one ring's worth"
        );
    }
    let samples = read_all(&path);
    assert_eq!(samples.len() as u64, sum.samples_written);
    for t in 0..2u16 {
        let mut last: Option<u64> = None;
        for s in samples.iter().filter(|s| s.series == t) {
            assert_eq!(s.at_ns, s.value_ns, "record fields stay together");
            assert!(s.value_ns < n);
            assert!(last.is_none_or(|l| s.value_ns > l), "strictly increasing");
            last = Some(s.value_ns);
        }
    }
}

/// With the writer asleep, a ring of C slots keeps exactly the first C samples; every other
/// one is counted as dropped.
#[test]
fn dropped_count_is_exact_when_the_writer_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stall.rtgr");
    let options = RecordOptions {
        ring_capacity: 100,
        // Asleep until the recording is finished, however slow this machine is.
        writer_stall: Duration::from_secs(600),
        ..RecordOptions::default()
    };
    let sum = record(&path, 2, 1000, options);
    assert_eq!(sum.samples_written, 200);
    assert_eq!(sum.samples_dropped, 1800);
    for c in &sum.series {
        assert_eq!((c.written, c.dropped), (100, 900));
    }
    let rec = Recording::open(&path).unwrap();
    let trailer = rec
        .trailer
        .as_ref()
        .expect("a finished recording has its trailer");
    assert_eq!(trailer.series, sum.series);
    assert_eq!(trailer.ring_capacity, 100);
    let samples = read_all(&path);
    let firsts: Vec<u64> = samples
        .iter()
        .filter(|s| s.series == 0)
        .map(|s| s.at_ns / 100)
        .collect();
    assert_eq!(firsts, (0..100).collect::<Vec<u64>>());
}

#[test]
fn a_probe_that_never_opens_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.rtgr");
    let hub = RecordingHub::new(path.clone(), meta(), RecordOptions::default());
    assert_eq!(hub.finish().unwrap(), None);
    assert!(!path.exists());
}

#[test]
fn a_recording_opens_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twice.rtgr");
    let hub = RecordingHub::new(path, meta(), RecordOptions::default());
    let _slots = hub.open(series(1), 1, "test").unwrap();
    let e = hub.open(series(1), 1, "test").err().unwrap();
    assert!(matches!(e, RecordError::AlreadyOpen { .. }), "{e}");
    assert!(hub.open(Vec::new(), 1, "t").is_err());
}

#[test]
fn a_recording_never_replaces_a_file_nor_follows_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("planted.rtgr");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    for path in [&link, &victim] {
        let hub = RecordingHub::new(path.to_path_buf(), meta(), RecordOptions::default());
        let e = hub.open(series(1), 1, "test").err().expect("refused");
        one_line_naming(&e, path, "already exists");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn the_writer_runs_pinned_where_told() {
    fn pin(_: &[usize]) -> bool {
        true
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pin.rtgr");
    let options = RecordOptions {
        writer_cpus: vec![0],
        pin_writer: Some(pin),
        ..RecordOptions::default()
    };
    let sum = record(&path, 1, 10, options);
    assert!(sum.writer_pinned);
    // A recording is created exclusively: the second one gets its own file.
    let sum = record(
        &path.with_file_name("unpinned.rtgr"),
        1,
        10,
        RecordOptions::default(),
    );
    assert!(!sum.writer_pinned, "no housekeeping CPUs: unpinned");
}

fn one_line_naming(e: &RecordError, path: &Path, word: &str) {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert!(
        msg.contains(&path.display().to_string()),
        "names the file: {msg}"
    );
    assert!(msg.contains(word), "says '{word}': {msg}");
}

fn copy_with(path: &Path, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(path).unwrap();
    edit(&mut bytes);
    let out = path.with_file_name(name);
    std::fs::write(&out, bytes).unwrap();
    out
}

#[test]
fn damaged_recordings_give_one_line_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.rtgr");
    record(&good, 2, 1000, RecordOptions::default());
    let len = std::fs::metadata(&good).unwrap().len() as usize;

    for cut in [12, 30, len / 2, len - 1] {
        let p = copy_with(&good, &format!("cut{cut}.rtgr"), |b| b.truncate(cut));
        let e = Recording::open(&p).unwrap_err();
        one_line_naming(&e, &p, "truncated");
    }
    let p = copy_with(&good, "magic.rtgr", |b| b[1] = b'X');
    one_line_naming(
        &Recording::open(&p).unwrap_err(),
        &p,
        "not an rtgauge recording",
    );
    let p = copy_with(&good, "text.txt", |b| *b = b"series,at_ns\n".to_vec());
    one_line_naming(
        &Recording::open(&p).unwrap_err(),
        &p,
        "not an rtgauge recording",
    );
    let p = copy_with(&good, "future.rtgr", |b| b[8] = 9);
    one_line_naming(&Recording::open(&p).unwrap_err(), &p, "upgrade rtgauge");
    let p = copy_with(&good, "extra.rtgr", |b| b.insert(100, 0));
    one_line_naming(&Recording::open(&p).unwrap_err(), &p, "corrupt");

    // A record whose series id is outside the table: found while streaming.
    let rec = Recording::open(&good).unwrap();
    let data = len - 32 - serde_json::to_vec(&rec.trailer.unwrap()).unwrap().len() - 2000 * 18;
    let p = copy_with(&good, "series.rtgr", |b| b[data + 18 * 5 + 1] = 0x70);
    let out = dir.path().join("series.csv");
    let e = export(&p, ExportFormat::Csv, &out).unwrap_err();
    one_line_naming(&e, &p, "record 5 has series id");
    assert!(!out.exists(), "no partial export is left behind");
}

/// A recording cut anywhere after its header (the run was killed) is refused by `open`, and
/// `salvage` yields exactly the records before the cut, with their exact values.
#[test]
fn unfinished_recordings_are_salvaged_up_to_the_last_complete_record() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.rtgr");
    record(&good, 2, 1000, RecordOptions::default());
    let all = read_all(&good);
    let rec = Recording::open(&good).unwrap();
    let trailer_len = serde_json::to_vec(&rec.trailer.unwrap()).unwrap().len();
    let len = std::fs::metadata(&good).unwrap().len() as usize;
    let data = len - 32 - trailer_len - 2000 * 18;
    // Cut: inside the header's end (0 records), mid-record, on a record boundary, inside the
    // trailer (every record complete).
    for (cut, records) in [
        (data, 0),
        (data + 18 * 700 + 5, 700),
        (data + 18 * 1500, 1500),
        (len - 10, 2000),
    ] {
        let p = copy_with(&good, &format!("killed{cut}.rtgr"), |b| b.truncate(cut));
        let e = Recording::open(&p).unwrap_err();
        one_line_naming(&e, &p, "export --salvage");
        // A cut through the trailer once counted the trailer's bytes as records.
        one_line_naming(
            &e,
            &p,
            &format!(" {records} complete records precede the cut"),
        );
        let salvaged = Recording::salvage(&p).unwrap();
        assert!(!salvaged.finished());
        assert_eq!(salvaged.sample_count(), records as u64, "cut at {cut}");
        let mut it = salvaged.samples().unwrap();
        let mut got = Vec::new();
        let mut batch = Vec::new();
        loop {
            it.next_batch(&mut batch, 333).unwrap();
            if batch.is_empty() {
                break;
            }
            got.extend_from_slice(&batch);
        }
        assert_eq!(got, all[..records], "cut at {cut}");
        // Exported, too, with the salvage noted in place of the trailer.
        let out = dir.path().join(format!("killed{cut}.csv"));
        let summary = export_recording(&salvaged, ExportFormat::Csv, &out).unwrap();
        assert_eq!(summary.rows, records as u64);
    }
    // A finished file salvages as itself.
    let same = Recording::salvage(&good).unwrap();
    assert!(same.finished());
    assert_eq!(same.sample_count(), 2000);
    // A file cut inside its header has nothing to salvage and says so.
    let p = copy_with(&good, "header.rtgr", |b| b.truncate(40));
    one_line_naming(&Recording::salvage(&p).unwrap_err(), &p, "truncated");
}

#[test]
fn csv_export_has_one_row_per_sample_with_exact_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.rtgr");
    record(&path, 2, 3000, RecordOptions::default());
    let out = dir.path().join("r.csv");
    let sum = export(&path, ExportFormat::Csv, &out).unwrap();
    assert_eq!(sum.rows, 6000);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("series,name,cpu,at_ns,value_ns"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 6000);
    let cpu1: Vec<&Vec<&str>> = rows.iter().filter(|r| r[2] == "1").collect();
    assert_eq!(cpu1.len(), 3000);
    assert_eq!(cpu1[10], &vec!["1", "latency", "1", "1000", "71"]);
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_export_reads_back_with_the_same_rows() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.rtgr");
    record(&path, 2, 3000, RecordOptions::default());
    let out = dir.path().join("r.parquet");
    let sum = export(&path, ExportFormat::Parquet, &out).unwrap();
    assert_eq!(sum.rows, 6000);

    let reader = SerializedFileReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    let meta = reader.metadata().file_metadata();
    assert_eq!(meta.num_rows(), 6000);
    let names: Vec<&str> = meta
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(names, ["series", "name", "cpu", "at_ns", "value_ns"]);
    let kv = meta.key_value_metadata().unwrap();
    assert!(kv.iter().any(|k| k.key == "rtgauge.recording.header"));
    let mut per_cpu = [0u64; 2];
    for row in reader.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        let series = row.get_ushort(0).unwrap();
        assert_eq!(row.get_string(1).unwrap(), "latency");
        assert_eq!(row.get_string(2).unwrap(), &series.to_string());
        let k = per_cpu[usize::from(series)];
        assert_eq!(row.get_long(3).unwrap() as u64, k * 100);
        assert_eq!(row.get_long(4).unwrap() as u64, k * 7 + u64::from(series));
        per_cpu[usize::from(series)] += 1;
    }
    assert_eq!(per_cpu, [3000, 3000]);
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_export_spans_row_groups() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.rtgr");
    let n = export::ROW_GROUP_ROWS as u64 + 12_345;
    // A ring as large as the run: the producer outpaces any writer, and drops are not the
    // subject here.
    let options = RecordOptions {
        ring_capacity: n as usize,
        ..RecordOptions::default()
    };
    assert_eq!(record(&path, 1, n, options).samples_dropped, 0);
    let out = dir.path().join("big.parquet");
    assert_eq!(export(&path, ExportFormat::Parquet, &out).unwrap().rows, n);
    let reader = SerializedFileReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    assert_eq!(reader.metadata().num_row_groups(), 2);
    assert_eq!(reader.metadata().file_metadata().num_rows() as u64, n);
}

#[cfg(not(feature = "parquet"))]
#[test]
fn parquet_export_without_the_feature_names_the_alternative_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.rtgr");
    record(&path, 1, 10, RecordOptions::default());
    let out = dir.path().join("r.parquet");
    let message = export(&path, ExportFormat::Parquet, &out)
        .unwrap_err()
        .to_string();
    assert!(message.contains("--format csv"), "{message}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn environment_knobs_are_checked() {
    // Only this test touches these variables.
    std::env::set_var(hub::RING_ENV, "0");
    let e = RecordOptions::from_env().unwrap_err();
    assert!(e.to_string().contains(hub::RING_ENV), "{e}");
    std::env::set_var(hub::RING_ENV, "4096");
    std::env::set_var(hub::STALL_ENV, "25");
    let o = RecordOptions::from_env().unwrap();
    assert_eq!(o.ring_capacity, 4096);
    assert_eq!(o.writer_stall, Duration::from_millis(25));
    std::env::remove_var(hub::RING_ENV);
    std::env::remove_var(hub::STALL_ENV);
}

/// Cost of `push` on both paths, for docs/validation-recording.md:
/// `cargo test -p rtgauge-record --release -- --ignored --nocapture push_cost`.
#[test]
#[ignore = "a measurement, not a check; run in release"]
fn push_cost() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1usize << 22;
    let options = RecordOptions {
        ring_capacity: n,
        // The writer sleeps through both timings, so they measure the push alone.
        writer_stall: Duration::from_secs(600),
        ..RecordOptions::default()
    };
    let hub = RecordingHub::new(dir.path().join("cost.rtgr"), meta(), options);
    let slots = hub.open(series(1), 1, "test").unwrap();
    let mut sink = slots.take(0).unwrap();
    let t = std::time::Instant::now();
    for k in 0..n as u64 {
        sink.push(0, k, k);
    }
    let stored = t.elapsed().as_nanos() as f64 / n as f64;
    let t = std::time::Instant::now();
    for k in 0..n as u64 {
        sink.push(0, k, k);
    }
    let dropped = t.elapsed().as_nanos() as f64 / n as f64;
    drop(sink);
    let sum = hub.finish().unwrap().unwrap();
    assert_eq!(sum.samples_dropped, n as u64);
    println!("push: {stored:.2} ns stored, {dropped:.2} ns dropped (ring full), {n} pushes each");
}
