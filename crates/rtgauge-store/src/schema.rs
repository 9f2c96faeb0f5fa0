//! Versioned schema migrations. Each entry runs once, in order, in its own transaction, and
//! is recorded in `schema_migrations`; never edit a released entry, add a new one.
//!
//! The SQL is kept portable to PostgreSQL: BIGINT/TEXT columns, explicit keys, no
//! AUTOINCREMENT, no SQLite-only functions.

use crate::StoreError;
use rusqlite::Connection;
use std::path::Path;

const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        "CREATE TABLE runs (
        id BIGINT PRIMARY KEY,
        started_unix_ns BIGINT NOT NULL,
        finished_unix_ns BIGINT NOT NULL,
        stored_unix_ns BIGINT NOT NULL,
        host TEXT NOT NULL,
        machine_key TEXT NOT NULL,
        kernel_release TEXT NOT NULL,
        preemption_model TEXT NOT NULL,
        status TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        origin TEXT NOT NULL,
        file TEXT NOT NULL,
        document TEXT NOT NULL
    );
    CREATE INDEX runs_by_host_time ON runs (host, started_unix_ns);
    CREATE TABLE series (
        run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        ordinal BIGINT NOT NULL,
        probe TEXT NOT NULL,
        mode TEXT NOT NULL,
        load TEXT NOT NULL,
        series TEXT NOT NULL,
        labels TEXT NOT NULL,
        status TEXT NOT NULL,
        sample_count BIGINT NOT NULL,
        min_ns BIGINT,
        median_ns BIGINT,
        p99_ns BIGINT,
        p99_99_ns BIGINT,
        max_ns BIGINT,
        PRIMARY KEY (run_id, ordinal)
    );
    CREATE INDEX series_by_name ON series (probe, series, labels);
    CREATE TABLE baselines (
        name TEXT PRIMARY KEY,
        run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        set_unix_ns BIGINT NOT NULL
    );",
    ),
    // `rtgauge monitor`: the maximum latency of every interval of the uptime, per host and
    // CPU, with the samples and overruns counted in it; the all-time figures are sums and
    // maxima over these rows, so they survive a restart.
    (
        2,
        "CREATE TABLE monitor_intervals (
        host TEXT NOT NULL,
        probe TEXT NOT NULL,
        cpu BIGINT NOT NULL,
        start_unix_ns BIGINT NOT NULL,
        width_ns BIGINT NOT NULL,
        max_ns BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        overruns BIGINT NOT NULL,
        PRIMARY KEY (host, probe, cpu, start_unix_ns)
    );",
    ),
    // `rtgauge import`: the content hash of the imported file, so importing the same file
    // again (under any name) finds its row instead of adding a second. Empty for runs
    // measured here and for rows stored before this column existed.
    (
        3,
        "ALTER TABLE runs ADD COLUMN source_hash TEXT NOT NULL DEFAULT '';
    CREATE INDEX runs_by_source ON runs (source_hash);",
    ),
    // `rtgauge tune`: one row per tune, with its verdict line and its trials document whole
    // (the trials are not runs: they have IDs of their own and no series rows).
    (
        4,
        "CREATE TABLE tunes (
        id BIGINT PRIMARY KEY,
        started_unix_ns BIGINT NOT NULL,
        finished_unix_ns BIGINT NOT NULL,
        stored_unix_ns BIGINT NOT NULL,
        host TEXT NOT NULL,
        kernel_release TEXT NOT NULL,
        the_loop TEXT NOT NULL,
        tried BIGINT NOT NULL,
        better BIGINT NOT NULL,
        verdict TEXT NOT NULL,
        file TEXT NOT NULL,
        document TEXT NOT NULL
    );
    CREATE INDEX tunes_by_host_time ON tunes (host, started_unix_ns);",
    ),
    // `rtgauge monitor` with attribution: the cause of each interval's maximum (a task by
    // name, an IRQ, `gap`…), NULL where the trace did not explain it or was off, and in
    // rows kept before this column existed.
    (5, "ALTER TABLE monitor_intervals ADD COLUMN cause TEXT;"),
];

/// The newest schema this build knows.
pub fn current_version() -> i64 {
    MIGRATIONS.last().map(|m| m.0).unwrap_or(0)
}

pub fn migrate(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let classify = crate::Store::classify_for(path);
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version BIGINT PRIMARY KEY,
            applied_unix_ns BIGINT NOT NULL
        )",
    )
    .map_err(|e| match classify(e) {
        StoreError::Write { path, detail } if !path.exists() => StoreError::Open { path, detail },
        other => other,
    })?;
    let found: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            [],
            |r| r.get(0),
        )
        .map_err(&classify)?;
    if found > current_version() {
        return Err(StoreError::FutureSchema {
            path: path.to_path_buf(),
            found,
            known: current_version(),
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|m| m.0 > found) {
        let tx = conn.unchecked_transaction().map_err(&classify)?;
        tx.execute_batch(sql).map_err(&classify)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, applied_unix_ns) VALUES (?1, ?2)",
            rusqlite::params![version, crate::now_unix_ns() as i64],
        )
        .map_err(&classify)?;
        tx.commit().map_err(&classify)?;
    }
    Ok(())
}
