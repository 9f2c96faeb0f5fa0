//! The local history of rtgauge runs: every result document, whole, plus one indexed summary
//! row per series, in one SQLite file.
//!
//! The schema is plain SQL that PostgreSQL also accepts (BIGINT keys assigned by the writer,
//! TEXT, no SQLite-only types or AUTOINCREMENT), so a server for many machines can later keep
//! the same tables. Migrations are numbered from 1 and recorded in `schema_migrations`; a
//! database written by a newer rtgauge is refused rather than misread.
//!
//! Concurrency and crashes: the database runs in WAL mode with a busy timeout, so two runs
//! finishing at once both land; each run is written in one transaction, so a process killed
//! mid-write leaves either the whole run or nothing.

mod monitor;
mod schema;
mod tune;

pub use monitor::{MonitorInterval, MonitorRow, MonitorRun, MonitorTotals, MONITOR_FOLD_AFTER_NS};
pub use tune::StoredTune;

use rtgauge_result::{ProbeStatus, RunResult};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Environment variable that moves the store (the same as `--store PATH`).
pub const STORE_ENV: &str = "RTGAUGE_STORE";

/// Newest first by start time; a result without a start time (an import of a file that has
/// none) counts from when it was stored.
const START_ORDER: &str =
    "CASE WHEN started_unix_ns = 0 THEN stored_unix_ns ELSE started_unix_ns END DESC, id DESC";

/// How long a writer waits for another one holding the database before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot open the run history {path}: {detail} (move it with --store PATH or RTGAUGE_STORE)"
    )]
    Open { path: PathBuf, detail: String },
    #[error("the run history {path} is not a usable database ({detail}); move it aside or point --store at a new file")]
    Corrupt { path: PathBuf, detail: String },
    #[error("the run history {path} was written by a newer rtgauge (schema {found}, this one knows up to {known}); upgrade rtgauge or use another --store")]
    FutureSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("the run history {path} is busy (another rtgauge holds it for more than {seconds} s); try again")]
    Busy { path: PathBuf, seconds: u64 },
    #[error("cannot write to the run history {path}: {detail}")]
    Write { path: PathBuf, detail: String },
    #[error("no run history at {path} yet: `rtgauge run` keeps every run there (or point --store at another one)")]
    Missing { path: PathBuf },
    #[error("no run {what} in the run history {path}; `rtgauge history` lists the stored runs")]
    NotFound { path: PathBuf, what: String },
    #[error("the stored run {id} in {path} cannot be read back: {detail}")]
    Document {
        path: PathBuf,
        id: i64,
        detail: String,
    },
}

/// Where the history lives when neither `--store` nor [`STORE_ENV`] says: the XDG data
/// directory (`$XDG_DATA_HOME/rtgauge/history.sqlite`, by default under
/// `~/.local/share`). `None` when neither variable is set.
pub fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("rtgauge").join("history.sqlite"))
}

/// One stored run as `history` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub id: i64,
    pub started_unix_ns: u64,
    pub host: String,
    pub machine_key: String,
    pub kernel_release: String,
    pub preemption_model: String,
    pub status: String,
    /// Probe runs, `probe mode load` each, in the order they ran.
    pub probes: Vec<String>,
    /// Where the run came from: `run`, or `import` and the file's format.
    pub origin: String,
    /// The result file written beside it, or the imported file.
    pub file: String,
}

/// Which stored results `latest` and `previous` count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Latest {
    /// rtgauge runs (not imports) of this host.
    RunsOf(String),
    /// Every stored result, imports and other hosts included.
    Any,
}

/// What `history` filters on; every field optional.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub host: Option<String>,
    /// Probe or `probe@variant`.
    pub probe: Option<String>,
    pub kernel: Option<String>,
    pub since_unix_ns: Option<u64>,
    pub status: Option<String>,
    pub limit: Option<usize>,
}

pub use rtgauge_result::TrendPoint;

/// One series followed over the stored runs ([`Store::trend`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesQuery<'a> {
    /// The runs of this host; None: of every host.
    pub host: Option<&'a str>,
    /// The probe's title (`cyclic`, `cyclic@100us`).
    pub probe: &'a str,
    /// Only this mode; None: any.
    pub mode: Option<&'a str>,
    /// Only this load; None: any.
    pub load: Option<&'a str>,
    /// The series' name (`latency`).
    pub series: &'a str,
}

/// An open history database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating the file and its directory when needed) and brings the schema up to
    /// date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
        }
        let conn = Connection::open(path).map_err(|e| StoreError::Open {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        Store::prepare(conn, path)
    }

    /// Opens a history that must exist already (read commands: `history`, `show ID`).
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Store::open(path)
    }

    fn prepare(conn: Connection, path: &Path) -> Result<Store, StoreError> {
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(Store::classify_for(path))?;
        // WAL: readers never block the writer, and two writers queue on the busy timeout.
        // A read-only file cannot switch journal mode; reading it still works.
        let _ = store
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0));
        store
            .conn
            .execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
            .map_err(Store::classify_for(path))?;
        schema::migrate(&store.conn, path)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stores a result document; returns its ID. `origin` says where it came from (`run`,
    /// `import cyclictest`…) and `file` the file written or read beside it.
    pub fn insert(
        &mut self,
        result: &RunResult,
        origin: &str,
        file: &str,
    ) -> Result<i64, StoreError> {
        self.insert_row(result, origin, file, "")
    }

    /// Stores a result read from another file (`rtgauge import`), identified by the hash of
    /// that file's content ([`Store::imported_as`] finds it again).
    pub fn insert_imported(
        &mut self,
        result: &RunResult,
        origin: &str,
        file: &str,
        source_hash: &str,
    ) -> Result<i64, StoreError> {
        self.insert_row(result, origin, file, source_hash)
    }

    /// The stored run imported from a file of this content hash, with the file it was read
    /// from then: (ID, file).
    pub fn imported_as(&self, source_hash: &str) -> Result<Option<(i64, String)>, StoreError> {
        if source_hash.is_empty() {
            return Ok(None);
        }
        let rows = self.rows(
            "SELECT id, file FROM runs WHERE source_hash = ?1 ORDER BY id LIMIT 1",
            params![source_hash],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
        )?;
        Ok(rows.into_iter().next())
    }

    fn insert_row(
        &mut self,
        result: &RunResult,
        origin: &str,
        file: &str,
        source_hash: &str,
    ) -> Result<i64, StoreError> {
        let document = serde_json::to_string(result).map_err(|e| StoreError::Write {
            path: self.path.clone(),
            detail: e.to_string(),
        })?;
        let path = self.path.clone();
        let classify = Store::classify_for(&path);
        // IMMEDIATE: take the write lock before reading the next ID, so two writers cannot
        // pick the same one.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&classify)?;
        let id: i64 = tx
            .query_row("SELECT COALESCE(MAX(id), 0) + 1 FROM runs", [], |r| {
                r.get(0)
            })
            .map_err(&classify)?;
        let fp = &result.fingerprint;
        tx.execute(
            "INSERT INTO runs (id, started_unix_ns, finished_unix_ns, stored_unix_ns, host, \
             machine_key, kernel_release, preemption_model, status, tool_version, origin, file, \
             document, source_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, \
             ?13, ?14)",
            params![
                id,
                result.started_unix_ns as i64,
                result.finished_unix_ns as i64,
                now_unix_ns() as i64,
                fp.hostname,
                machine_key(result),
                fp.kernel_release,
                fp.preemption_model,
                result.status.as_str(),
                result.tool.version,
                origin,
                file,
                document,
                source_hash,
            ],
        )
        .map_err(&classify)?;
        let mut ordinal = 0i64;
        for run in &result.runs {
            let run_status = match &run.status {
                ProbeStatus::Ok => "ok",
                ProbeStatus::Skipped { .. } => "skipped",
                ProbeStatus::Failed { .. } => "failed",
            };
            let probe = run.title();
            if run.series.is_empty() {
                ordinal += 1;
                tx.execute(
                    "INSERT INTO series (run_id, ordinal, probe, mode, load, series, labels, \
                     status, sample_count) VALUES (?1, ?2, ?3, ?4, ?5, '', '', ?6, 0)",
                    params![id, ordinal, probe, run.mode, run.load, run_status],
                )
                .map_err(&classify)?;
            }
            for s in &run.series {
                ordinal += 1;
                let st = &s.stats;
                let opt = |v: Option<u64>| v.map(|v| v as i64);
                tx.execute(
                    "INSERT INTO series (run_id, ordinal, probe, mode, load, series, labels, \
                     status, sample_count, min_ns, median_ns, p99_ns, p99_99_ns, max_ns) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                    params![
                        id,
                        ordinal,
                        probe,
                        run.mode,
                        run.load,
                        s.name,
                        labels_text(&s.labels),
                        run_status,
                        st.count as i64,
                        opt(st.min_ns),
                        opt(st.median_ns),
                        opt(st.percentiles.p99_ns),
                        opt(st.percentiles.p99_99_ns),
                        opt(st.max_ns),
                    ],
                )
                .map_err(&classify)?;
            }
        }
        tx.commit().map_err(&classify)?;
        Ok(id)
    }

    fn classify_for(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| {
            use rusqlite::ErrorCode::*;
            match e.sqlite_error_code() {
                Some(DatabaseBusy) | Some(DatabaseLocked) => StoreError::Busy {
                    path: path.to_path_buf(),
                    seconds: BUSY_TIMEOUT.as_secs(),
                },
                Some(NotADatabase) | Some(DatabaseCorrupt) => StoreError::Corrupt {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                },
                // Read-only file or directory, disk full, permissions.
                _ => StoreError::Write {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                },
            }
        }
    }

    /// Every row `sql` selects with `args`, each read by `row` (the statement is cached: a
    /// query asked once per run costs one preparation).
    fn rows<T>(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let classify = Store::classify_for(&self.path);
        let mut stmt = self.conn.prepare_cached(sql).map_err(&classify)?;
        let rows = stmt
            .query_map(args, row)
            .map_err(&classify)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&classify)?;
        Ok(rows)
    }

    /// Every row `sql` selects with `args` as its `N` columns, integers SQLite stores signed
    /// that are counts and times (never negative), each row made a `T` by `make`.
    fn unsigned_rows<const N: usize, T>(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
        make: impl Fn([u64; N]) -> T,
    ) -> Result<Vec<T>, StoreError> {
        self.rows(sql, args, |r| {
            let mut columns = [0; N];
            for (i, c) in columns.iter_mut().enumerate() {
                *c = r.get::<_, i64>(i)? as u64;
            }
            Ok(make(columns))
        })
    }

    /// Stored runs matching `filter`, newest first by start time.
    pub fn list(&self, filter: &Filter) -> Result<Vec<StoredRun>, StoreError> {
        let mut sql = String::from(
            "SELECT id, started_unix_ns, host, machine_key, kernel_release, preemption_model, \
             status, origin, file FROM runs WHERE 1 = 1",
        );
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        use rusqlite::types::Value;
        if let Some(h) = &filter.host {
            sql.push_str(" AND host = ?");
            args.push(Value::Text(h.clone()));
        }
        if let Some(k) = &filter.kernel {
            sql.push_str(" AND kernel_release = ?");
            args.push(Value::Text(k.clone()));
        }
        if let Some(s) = &filter.status {
            sql.push_str(" AND status = ?");
            args.push(Value::Text(s.clone()));
        }
        if let Some(t) = filter.since_unix_ns {
            sql.push_str(" AND started_unix_ns >= ?");
            args.push(Value::Integer(t as i64));
        }
        if let Some(p) = &filter.probe {
            sql.push_str(" AND id IN (SELECT run_id FROM series WHERE probe = ?)");
            args.push(Value::Text(p.clone()));
        }
        // Start order: two runs that overlapped are stored in the order they finished.
        sql.push_str(" ORDER BY ");
        sql.push_str(START_ORDER);
        if let Some(n) = filter.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let rows = self.rows(&sql, rusqlite::params_from_iter(args), |r| {
            Ok(StoredRun {
                id: r.get(0)?,
                started_unix_ns: r.get::<_, i64>(1)? as u64,
                host: r.get(2)?,
                machine_key: r.get(3)?,
                kernel_release: r.get(4)?,
                preemption_model: r.get(5)?,
                status: r.get(6)?,
                probes: Vec::new(),
                origin: r.get(7)?,
                file: r.get(8)?,
            })
        })?;
        let mut out = Vec::with_capacity(rows.len());
        for mut run in rows {
            run.probes = self.rows(
                "SELECT DISTINCT probe, mode, load, MIN(ordinal) FROM series WHERE run_id = ? \
                 GROUP BY probe, mode, load ORDER BY MIN(ordinal)",
                [run.id],
                |r| {
                    Ok(format!(
                        "{} {} {}",
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?
                    ))
                },
            )?;
            out.push(run);
        }
        Ok(out)
    }

    /// The stored document of run `id`.
    pub fn get(&self, id: i64) -> Result<RunResult, StoreError> {
        let classify = Store::classify_for(&self.path);
        let text: Option<String> = self
            .conn
            .query_row("SELECT document FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(&classify)?;
        let text = text.ok_or_else(|| StoreError::NotFound {
            path: self.path.clone(),
            what: format!("with ID {id}"),
        })?;
        serde_json::from_str(&text).map_err(|e| StoreError::Document {
            path: self.path.clone(),
            id,
            detail: e.to_string(),
        })
    }

    /// The IDs of the newest `n` runs, newest first by start time: what `latest` and
    /// `previous` name. [`Latest::RunsOf`] counts only rtgauge runs of that host (an import
    /// never becomes `latest` by being stored last); [`Latest::Any`] counts every stored result.
    pub fn latest_ids(&self, n: usize, which: &Latest) -> Result<Vec<i64>, StoreError> {
        let host = match which {
            Latest::RunsOf(host) => Some(host.as_str()),
            Latest::Any => None,
        };
        self.rows(
            &format!(
                "SELECT id FROM runs WHERE ?1 IS NULL OR (host = ?1 AND origin = 'run') \
                     ORDER BY {START_ORDER} LIMIT ?2"
            ),
            params![host, n as i64],
            |r| r.get(0),
        )
    }

    /// How many stored results are imports, and how many are rtgauge runs of other hosts than
    /// `host`: why `latest` may find nothing in a history that is not empty.
    pub fn others_than_runs_of(&self, host: &str) -> Result<(usize, usize), StoreError> {
        self.conn
            .query_row(
                "SELECT COALESCE(SUM(origin <> 'run'), 0), \
                 COALESCE(SUM(origin = 'run' AND host <> ?1), 0) FROM runs",
                [host],
                |r| Ok((r.get::<_, i64>(0)? as usize, r.get::<_, i64>(1)? as usize)),
            )
            .map_err(Store::classify_for(&self.path))
    }

    /// Names run `id` (`baseline set ID --name NAME`); a name already used moves to it.
    pub fn set_baseline(&mut self, name: &str, id: i64) -> Result<(), StoreError> {
        self.get(id)?;
        let classify = Store::classify_for(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&classify)?;
        tx.execute("DELETE FROM baselines WHERE name = ?1", [name])
            .map_err(&classify)?;
        tx.execute(
            "INSERT INTO baselines (name, run_id, set_unix_ns) VALUES (?1, ?2, ?3)",
            params![name, id, now_unix_ns() as i64],
        )
        .map_err(&classify)?;
        tx.commit().map_err(&classify)
    }

    /// The run a baseline name points at, if the name exists.
    pub fn baseline(&self, name: &str) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_row(
                "SELECT run_id FROM baselines WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .map_err(Store::classify_for(&self.path))
    }

    /// Baseline names and the runs they point at, by name.
    pub fn baselines(&self) -> Result<Vec<(String, i64)>, StoreError> {
        self.rows(
            "SELECT name, run_id FROM baselines ORDER BY name",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// The median, p99 and max of one series over the stored runs, oldest first; `labels` in
    /// the `key=value key=value` form of [`labels_text`].
    pub fn trend(&self, of: &SeriesQuery, labels: &str) -> Result<Vec<TrendPoint>, StoreError> {
        let opt = |v: Option<i64>| v.map(|v| v as u64);
        self.rows(
            "SELECT r.id, r.started_unix_ns, r.kernel_release, r.machine_key, \
                 s.median_ns, s.p99_ns, s.max_ns FROM series s JOIN runs r ON r.id = s.run_id \
                 WHERE s.probe = ?1 AND s.series = ?2 AND s.labels = ?3 \
                 AND (?4 IS NULL OR r.host = ?4) AND (?5 IS NULL OR s.mode = ?5) \
                 AND (?6 IS NULL OR s.load = ?6) AND s.sample_count > 0 \
                 ORDER BY r.started_unix_ns, r.id",
            params![of.probe, of.series, labels, of.host, of.mode, of.load],
            |r| {
                Ok(TrendPoint {
                    run_id: r.get(0)?,
                    started_unix_ns: r.get::<_, i64>(1)? as u64,
                    kernel_release: r.get(2)?,
                    machine_key: r.get(3)?,
                    median_ns: opt(r.get(4)?),
                    p99_ns: opt(r.get(5)?),
                    max_ns: opt(r.get(6)?),
                })
            },
        )
    }

    /// The label sets stored for one series (`cpu=0`, `cpu=1`…), in order: what `trend` can
    /// be asked for when the labels it was given match none.
    pub fn trend_labels(&self, of: &SeriesQuery) -> Result<Vec<String>, StoreError> {
        self.rows(
            "SELECT DISTINCT s.labels FROM series s JOIN runs r ON r.id = s.run_id \
                 WHERE s.probe = ?1 AND s.series = ?2 AND (?3 IS NULL OR r.host = ?3) \
                 AND (?4 IS NULL OR s.mode = ?4) AND (?5 IS NULL OR s.load = ?5) \
                 AND s.sample_count > 0 ORDER BY s.labels",
            params![of.probe, of.series, of.host, of.mode, of.load],
            |r| r.get(0),
        )
    }

    /// SQLite's own consistency check; `Ok(())` when the file is sound.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let text: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(Store::classify_for(&self.path))?;
        if text == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                path: self.path.clone(),
                detail: text,
            })
        }
    }
}

/// Labels as stored and matched: `cpu=1 size=64`, keys sorted.
pub fn labels_text(labels: &std::collections::BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn now_unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// A short key that changes when the machine does (CPU model, CPU count, kernel command
/// line), so `trend` can mark where the hardware or boot setup changed: FNV-1a over those
/// fields, 16 hex digits. Stable across rtgauge versions (no std hasher, whose algorithm
/// may change).
pub fn machine_key(result: &RunResult) -> String {
    let fp = &result.fingerprint;
    let text = format!(
        "{}\n{}\n{:?}\n{}",
        fp.hostname, fp.cpu_model, fp.cpus_online, fp.cmdline
    );
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}
