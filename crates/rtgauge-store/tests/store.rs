//! The history database: round trip, filters, baselines, trend, concurrency, bad files.

use rtgauge_result::RunResult;
use rtgauge_store::{Filter, Latest, Store, StoreError};

fn fixture(name: &str) -> RunResult {
    let text = std::fs::read_to_string(format!(
        "{}/../rtgauge-report/tests/fixtures/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_stored_run_reads_back_identical_and_is_listed_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/history.sqlite");
    let mut store = Store::open(&path).unwrap();
    let idle = fixture("idle");
    let loaded = fixture("loaded");
    let a = store.insert(&idle, "run", "idle.json").unwrap();
    let b = store.insert(&loaded, "run", "loaded.json").unwrap();
    assert_eq!((a, b), (1, 2));
    assert_eq!(store.get(a).unwrap(), idle);
    let listed = store.list(&Filter::default()).unwrap();
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), [2, 1]);
    assert!(!listed[0].probes.is_empty());
    assert_eq!(store.latest_ids(2, &Latest::Any).unwrap(), [2, 1]);
    // Reopening runs no migration twice.
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list(&Filter::default()).unwrap().len(), 2);
    store.integrity_check().unwrap();
}

#[test]
fn history_filters_by_host_probe_kernel_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
    let mut other = fixture("idle");
    other.fingerprint.hostname = "board-b".into();
    other.fingerprint.kernel_release = "6.99-rt".into();
    store.insert(&fixture("idle"), "run", "a").unwrap();
    store.insert(&other, "run", "b").unwrap();
    let by = |f: Filter| {
        store
            .list(&f)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        by(Filter {
            host: Some("board-b".into()),
            ..Filter::default()
        }),
        [2]
    );
    assert_eq!(
        by(Filter {
            kernel: Some("6.99-rt".into()),
            ..Filter::default()
        }),
        [2]
    );
    assert_eq!(
        by(Filter {
            probe: Some("no-such-probe".into()),
            ..Filter::default()
        }),
        Vec::<i64>::new()
    );
    assert_eq!(
        by(Filter {
            status: Some("complete".into()),
            limit: Some(1),
            ..Filter::default()
        })
        .len(),
        1
    );
}

#[test]
fn a_baseline_name_points_at_one_run_and_moves_when_set_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
    let a = store.insert(&fixture("idle"), "run", "a").unwrap();
    let b = store.insert(&fixture("loaded"), "run", "b").unwrap();
    store.set_baseline("board-a", a).unwrap();
    assert_eq!(store.baseline("board-a").unwrap(), Some(a));
    store.set_baseline("board-a", b).unwrap();
    assert_eq!(store.baseline("board-a").unwrap(), Some(b));
    assert_eq!(store.baseline("nothing").unwrap(), None);
    assert!(matches!(
        store.set_baseline("x", 99),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn trend_gives_one_point_per_stored_run_of_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
    let idle = fixture("idle");
    store.insert(&idle, "run", "a").unwrap();
    store.insert(&idle, "run", "b").unwrap();
    let run = &idle.runs[0];
    let s = &run.series[0];
    let title = run.title();
    let series = rtgauge_store::SeriesQuery {
        host: None,
        probe: &title,
        mode: Some(&run.mode),
        load: Some(&run.load),
        series: &s.name,
    };
    let points = store
        .trend(&series, &rtgauge_store::labels_text(&s.labels))
        .unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].median_ns, s.stats.median_ns);
}

#[test]
fn two_writers_at_once_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    Store::open(&path).unwrap();
    let idle = fixture("idle");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (path, idle) = (path.clone(), idle.clone());
            std::thread::spawn(move || {
                let mut store = Store::open(&path).unwrap();
                for _ in 0..5 {
                    store.insert(&idle, "run", "x").unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let store = Store::open(&path).unwrap();
    let ids: Vec<i64> = store
        .list(&Filter::default())
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids.len(), 20);
    assert_eq!(ids, (1..=20).rev().collect::<Vec<_>>());
}

#[test]
fn a_file_that_is_not_a_database_is_refused_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let err = Store::open(&path).err().expect("refused");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert_eq!(err.to_string().lines().count(), 1);
}

#[test]
fn a_database_from_a_newer_rtgauge_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    Store::open(&path).unwrap();
    let conn = rusqlite_conn(&path);
    conn.execute(
        "INSERT INTO schema_migrations (version, applied_unix_ns) VALUES (999, 0)",
        [],
    )
    .unwrap();
    drop(conn);
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::FutureSchema { found: 999, .. })
    ));
}

fn rusqlite_conn(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

#[test]
fn latest_is_a_run_of_this_host_and_history_is_in_start_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
    let early = fixture("idle");
    let host = early.fingerprint.hostname.clone();
    // A long run started first and finished (was stored) after a short one started later.
    let mut late = fixture("loaded");
    late.started_unix_ns = early.started_unix_ns + 1_000_000_000;
    let mut long = early.clone();
    long.started_unix_ns = early.started_unix_ns + 500_000_000;
    let first = store.insert(&early, "run", "a").unwrap();
    let short = store.insert(&late, "run", "b").unwrap();
    let overlapping = store.insert(&long, "run", "c").unwrap();
    let listed: Vec<i64> = store
        .list(&Filter::default())
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, [short, overlapping, first], "newest start first");
    // An import stored last, even one dated later, is not `latest`; nor is another host's run.
    let mut imported = fixture("idle");
    imported.started_unix_ns = late.started_unix_ns + 1_000_000_000;
    let import = store
        .insert(&imported, "import cyclictest", "x.log")
        .unwrap();
    let mut elsewhere = fixture("idle");
    elsewhere.fingerprint.hostname = format!("{host}-other");
    elsewhere.started_unix_ns = imported.started_unix_ns;
    store.insert(&elsewhere, "run", "d").unwrap();
    let runs = Latest::RunsOf(host.clone());
    assert_eq!(store.latest_ids(2, &runs).unwrap(), [short, overlapping]);
    assert!(store.latest_ids(1, &Latest::Any).unwrap()[0] > short);
    assert!(store.latest_ids(2, &Latest::Any).unwrap().contains(&import));
    assert_eq!(store.others_than_runs_of(&host).unwrap(), (1, 1));
}

#[test]
fn an_imported_file_is_found_again_by_its_content_hash() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("history.sqlite")).unwrap();
    let idle = fixture("idle");
    assert_eq!(store.imported_as("xxh3-128:ab").unwrap(), None);
    store.insert(&idle, "run", "idle.json").unwrap();
    let id = store
        .insert_imported(&idle, "import cyclictest", "ct.txt", "xxh3-128:ab")
        .unwrap();
    assert_eq!(
        store.imported_as("xxh3-128:ab").unwrap(),
        Some((id, "ct.txt".to_string()))
    );
    // Runs measured here have no source file: an empty hash matches none of them.
    assert_eq!(store.imported_as("").unwrap(), None);
    assert_eq!(store.imported_as("xxh3-128:cd").unwrap(), None);
}

#[test]
fn a_history_of_the_previous_schema_gains_the_source_column_and_keeps_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let mut store = Store::open(&path).unwrap();
    let id = store.insert(&fixture("idle"), "run", "idle.json").unwrap();
    drop(store);
    // Back to schema 2, as a history written by an earlier release (before imports kept
    // their source and before tunes were kept).
    let conn = rusqlite_conn(&path);
    conn.execute_batch(
        "DROP INDEX runs_by_source; ALTER TABLE runs DROP COLUMN source_hash; \
         DROP TABLE tunes; ALTER TABLE monitor_intervals DROP COLUMN cause; \
         DELETE FROM schema_migrations WHERE version >= 3;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.get(id).unwrap(), fixture("idle"));
    assert_eq!(store.imported_as("xxh3-128:ab").unwrap(), None);
    assert!(
        store.tunes(None, None).unwrap().is_empty(),
        "the tunes table is made"
    );
}

#[test]
fn a_history_from_before_causes_keeps_its_monitor_rows_and_gains_the_cause_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let row = rtgauge_store::MonitorInterval {
        cpu: 1,
        start_unix_ns: 1_000,
        width_ns: 300,
        max_ns: 42_000,
        samples: 10,
        overruns: 0,
        cause: None,
    };
    let mut store = Store::open(&path).unwrap();
    store.monitor_record("h", "cyclic", &row).unwrap();
    drop(store);
    // Back to schema 4, as a history written by an earlier release.
    let conn = rusqlite_conn(&path);
    conn.execute_batch(
        "ALTER TABLE monitor_intervals DROP COLUMN cause; \
         DELETE FROM schema_migrations WHERE version >= 5;",
    )
    .unwrap();
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(
        store.monitor_intervals("h", "cyclic", 1).unwrap(),
        std::slice::from_ref(&row)
    );
    let explained = rtgauge_store::MonitorInterval {
        start_unix_ns: 2_000,
        cause: Some("rtg-culprit".into()),
        ..row
    };
    store.monitor_record("h", "cyclic", &explained).unwrap();
    let rows = store.monitor_rows(Some("h"), None, 10).unwrap();
    let causes: Vec<Option<&str>> = rows.iter().map(|r| r.interval.cause.as_deref()).collect();
    assert_eq!(causes, [None, Some("rtg-culprit")]);
}
