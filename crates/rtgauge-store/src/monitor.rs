//! `rtgauge monitor`'s history: the maximum and the counts of every interval, per host, probe
//! and CPU. The counters a monitor exports are sums over these rows, so a restart goes on
//! from them; an interval is written while it fills (each time the monitor exports), so an
//! unclean stop loses only what was never exported.

use crate::{Store, StoreError};
use rusqlite::params;

/// One interval of `rtgauge monitor` on one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MonitorInterval {
    pub cpu: usize,
    pub start_unix_ns: u64,
    pub width_ns: u64,
    pub max_ns: u64,
    pub samples: u64,
    pub overruns: u64,
    /// The cause of the maximum, where the trace explained it (`rtg-culprit`, `irq 36
    /// virtio1-req.0`, `gap`…).
    pub cause: Option<String>,
}

/// The all-time figures of one CPU over every stored monitor interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MonitorTotals {
    pub cpu: usize,
    pub intervals: u64,
    pub max_ns: u64,
    pub samples: u64,
    pub overruns: u64,
}

/// One monitor as the history holds it: a host's monitor of one probe, over every CPU and
/// every uptime it kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MonitorRun {
    pub host: String,
    pub probe: String,
    pub cpus: Vec<usize>,
    /// Interval rows over all its CPUs.
    pub rows: u64,
    pub first_unix_ns: u64,
    /// Where its last interval ends.
    pub last_unix_ns: u64,
    pub max_ns: u64,
    pub samples: u64,
    pub overruns: u64,
}

/// One interval row as `history --monitor` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorRow {
    pub host: String,
    pub probe: String,
    pub interval: MonitorInterval,
}

/// Intervals older than this are folded into day-wide ones, so the table stays small however
/// long a monitor runs (a year of 5-minute intervals is about 100 000 rows per CPU).
pub const MONITOR_FOLD_AFTER_NS: u64 = 30 * 86_400 * 1_000_000_000;
pub(crate) const DAY_NS: u64 = 86_400 * 1_000_000_000;

impl Store {
    /// Keeps one monitor interval (replacing one with the same start).
    pub fn monitor_record(
        &mut self,
        host: &str,
        probe: &str,
        interval: &MonitorInterval,
    ) -> Result<(), StoreError> {
        self.monitor_record_all(host, probe, std::slice::from_ref(interval))
    }

    /// Keeps monitor intervals (each replacing one with the same CPU and start) in one
    /// transaction: all of them or none.
    pub fn monitor_record_all(
        &mut self,
        host: &str,
        probe: &str,
        intervals: &[MonitorInterval],
    ) -> Result<(), StoreError> {
        let classify = Store::classify_for(&self.path);
        let tx = self.conn.transaction().map_err(&classify)?;
        for interval in intervals {
            tx.execute(
                "INSERT OR REPLACE INTO monitor_intervals
                 (host, probe, cpu, start_unix_ns, width_ns, max_ns, samples, overruns, cause)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    host,
                    probe,
                    interval.cpu as i64,
                    interval.start_unix_ns as i64,
                    interval.width_ns as i64,
                    interval.max_ns as i64,
                    interval.samples as i64,
                    interval.overruns as i64,
                    interval.cause
                ],
            )
            .map_err(&classify)?;
        }
        tx.commit().map_err(classify)
    }

    /// The monitors the history holds (of `host`, or of every host), by host and probe.
    pub fn monitor_runs(&self, host: Option<&str>) -> Result<Vec<MonitorRun>, StoreError> {
        let per_cpu = self.rows(
            "SELECT host, probe, cpu, COUNT(*), MIN(start_unix_ns), MAX(start_unix_ns + width_ns),
                    MAX(max_ns), SUM(samples), SUM(overruns)
             FROM monitor_intervals WHERE ?1 IS NULL OR host = ?1
             GROUP BY host, probe, cpu ORDER BY host, probe, cpu",
            params![host],
            |r| {
                let n = |i| r.get::<_, i64>(i).map(|v| v as u64);
                Ok(MonitorRun {
                    host: r.get(0)?,
                    probe: r.get(1)?,
                    cpus: vec![n(2)? as usize],
                    rows: n(3)?,
                    first_unix_ns: n(4)?,
                    last_unix_ns: n(5)?,
                    max_ns: n(6)?,
                    samples: n(7)?,
                    overruns: n(8)?,
                })
            },
        )?;
        let mut runs: Vec<MonitorRun> = Vec::new();
        for one in per_cpu {
            match runs.last_mut() {
                Some(m) if m.host == one.host && m.probe == one.probe => {
                    m.cpus.extend(&one.cpus);
                    m.rows += one.rows;
                    m.first_unix_ns = m.first_unix_ns.min(one.first_unix_ns);
                    m.last_unix_ns = m.last_unix_ns.max(one.last_unix_ns);
                    m.max_ns = m.max_ns.max(one.max_ns);
                    m.samples += one.samples;
                    m.overruns += one.overruns;
                }
                _ => runs.push(one),
            }
        }
        Ok(runs)
    }

    /// The newest `limit` monitor intervals (of `host`, started at or after `since`), oldest
    /// first, CPUs in order within one start.
    pub fn monitor_rows(
        &self,
        host: Option<&str>,
        since_unix_ns: Option<u64>,
        limit: usize,
    ) -> Result<Vec<MonitorRow>, StoreError> {
        let mut rows = self.rows(
            "SELECT host, probe, cpu, start_unix_ns, width_ns, max_ns, samples, overruns, cause
             FROM monitor_intervals WHERE (?1 IS NULL OR host = ?1) AND start_unix_ns >= ?2
             ORDER BY start_unix_ns DESC, host, probe, cpu DESC LIMIT ?3",
            params![
                host,
                since_unix_ns.unwrap_or(0) as i64,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |r| {
                let n = |i| r.get::<_, i64>(i).map(|v| v as u64);
                Ok(MonitorRow {
                    host: r.get(0)?,
                    probe: r.get(1)?,
                    interval: MonitorInterval {
                        cpu: n(2)? as usize,
                        start_unix_ns: n(3)?,
                        width_ns: n(4)?,
                        max_ns: n(5)?,
                        samples: n(6)?,
                        overruns: n(7)?,
                        cause: r.get(8)?,
                    },
                })
            },
        )?;
        rows.reverse();
        Ok(rows)
    }

    /// The all-time figures per CPU of `host`'s monitor, in CPU order.
    pub fn monitor_totals(
        &self,
        host: &str,
        probe: &str,
    ) -> Result<Vec<MonitorTotals>, StoreError> {
        self.unsigned_rows(
            "SELECT cpu, COUNT(*), MAX(max_ns), SUM(samples), SUM(overruns)
             FROM monitor_intervals WHERE host = ?1 AND probe = ?2 GROUP BY cpu ORDER BY cpu",
            params![host, probe],
            |[cpu, intervals, max_ns, samples, overruns]| MonitorTotals {
                cpu: cpu as usize,
                intervals,
                max_ns,
                samples,
                overruns,
            },
        )
    }

    /// `host`'s monitor intervals on `cpu`, oldest first.
    pub fn monitor_intervals(
        &self,
        host: &str,
        probe: &str,
        cpu: usize,
    ) -> Result<Vec<MonitorInterval>, StoreError> {
        self.rows(
            "SELECT start_unix_ns, width_ns, max_ns, samples, overruns, cause FROM monitor_intervals
             WHERE host = ?1 AND probe = ?2 AND cpu = ?3 ORDER BY start_unix_ns",
            params![host, probe, cpu as i64],
            |r| {
                let n = |i| r.get::<_, i64>(i).map(|v| v as u64);
                Ok(MonitorInterval {
                    cpu,
                    start_unix_ns: n(0)?,
                    width_ns: n(1)?,
                    max_ns: n(2)?,
                    samples: n(3)?,
                    overruns: n(4)?,
                    cause: r.get(5)?,
                })
            },
        )
    }

    /// Folds `host`'s monitor intervals that started before `before_unix_ns` into one row
    /// per CPU and UTC day (maximum of the maxima with its cause, sums of the counts), in one
    /// transaction.
    pub fn monitor_fold(&mut self, host: &str, before_unix_ns: u64) -> Result<(), StoreError> {
        let classify = Store::classify_for(&self.path);
        let tx = self.conn.transaction().map_err(&classify)?;
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS monitor_fold AS SELECT * FROM monitor_intervals WHERE 0;
             DELETE FROM monitor_fold;",
        )
        .map_err(&classify)?;
        tx.execute(
            "INSERT INTO monitor_fold
             SELECT host, probe, cpu, (start_unix_ns / ?3) * ?3, ?3, MAX(max_ns), SUM(samples), SUM(overruns), NULL
             FROM monitor_intervals
             WHERE host = ?1 AND start_unix_ns < ?2 AND width_ns < ?3
             GROUP BY host, probe, cpu, start_unix_ns / ?3",
            params![host, before_unix_ns as i64, DAY_NS as i64],
        )
        .map_err(&classify)?;
        // A day's maximum keeps the cause of the interval it came from.
        tx.execute(
            "UPDATE monitor_fold SET cause = (
               SELECT m.cause FROM monitor_intervals m
               WHERE m.host = monitor_fold.host AND m.probe = monitor_fold.probe
                 AND m.cpu = monitor_fold.cpu AND m.width_ns < ?1
                 AND m.start_unix_ns >= monitor_fold.start_unix_ns
                 AND m.start_unix_ns < monitor_fold.start_unix_ns + ?1
                 AND m.max_ns = monitor_fold.max_ns AND m.cause IS NOT NULL
               ORDER BY m.start_unix_ns LIMIT 1)",
            params![DAY_NS as i64],
        )
        .map_err(&classify)?;
        tx.execute(
            "DELETE FROM monitor_intervals WHERE host = ?1 AND start_unix_ns < ?2 AND width_ns < ?3",
            params![host, before_unix_ns as i64, DAY_NS as i64],
        )
        .map_err(&classify)?;
        // A day folded earlier may already hold a row: merge into it.
        tx.execute_batch(
            "INSERT INTO monitor_intervals
             SELECT f.host, f.probe, f.cpu, f.start_unix_ns, f.width_ns,
                    MAX(f.max_ns, COALESCE(m.max_ns, 0)),
                    f.samples + COALESCE(m.samples, 0), f.overruns + COALESCE(m.overruns, 0),
                    CASE WHEN f.max_ns >= COALESCE(m.max_ns, 0) THEN f.cause ELSE m.cause END
             FROM monitor_fold f LEFT JOIN monitor_intervals m
               ON m.host = f.host AND m.probe = f.probe AND m.cpu = f.cpu AND m.start_unix_ns = f.start_unix_ns
             WHERE 1
             ON CONFLICT (host, probe, cpu, start_unix_ns) DO UPDATE SET
               max_ns = excluded.max_ns, samples = excluded.samples, overruns = excluded.overruns,
               cause = excluded.cause;
             DELETE FROM monitor_fold;",
        )
        .map_err(&classify)?;
        tx.commit().map_err(classify)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(cpu: usize, start: u64, max: u64) -> MonitorInterval {
        MonitorInterval {
            cpu,
            start_unix_ns: start,
            width_ns: 300_000_000_000,
            max_ns: max,
            samples: 1000,
            overruns: 1,
            cause: None,
        }
    }

    #[test]
    fn monitor_totals_survive_reopening_and_folding_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut store = Store::open(&path).unwrap();
        for (i, max) in [40_000, 90_000, 20_000].into_iter().enumerate() {
            let start = DAY_NS + i as u64 * 300_000_000_000;
            let cause = ["irq 36 virtio1-req.0", "rtg-culprit", "gap"][i];
            let row = MonitorInterval {
                cause: Some(cause.into()),
                ..interval(0, start, max)
            };
            store.monitor_record("a", "cyclic", &row).unwrap();
        }
        store
            .monitor_record("a", "cyclic", &interval(1, DAY_NS, 7))
            .unwrap();
        store
            .monitor_record("b", "cyclic", &interval(0, DAY_NS, 999_999))
            .unwrap();
        drop(store);
        let mut store = Store::open(&path).unwrap();
        // Every column read back into its own field.
        assert_eq!(
            store.monitor_intervals("a", "cyclic", 1).unwrap(),
            [interval(1, DAY_NS, 7)]
        );
        let totals = store.monitor_totals("a", "cyclic").unwrap();
        assert_eq!(totals.len(), 2);
        assert_eq!(
            totals[1],
            MonitorTotals {
                cpu: 1,
                intervals: 1,
                max_ns: 7,
                samples: 1000,
                overruns: 1
            }
        );
        assert_eq!(totals[0].max_ns, 90_000);
        assert_eq!(totals[0].samples, 3000);
        assert_eq!(totals[0].intervals, 3);
        store.monitor_fold("a", 3 * DAY_NS).unwrap();
        // Folding again changes nothing: day rows are not folded twice.
        store.monitor_fold("a", 3 * DAY_NS).unwrap();
        let folded = store.monitor_totals("a", "cyclic").unwrap();
        assert_eq!(folded[0].intervals, 1);
        assert_eq!(
            (folded[0].max_ns, folded[0].samples, folded[0].overruns),
            (90_000, 3000, 3)
        );
        // The day row keeps the cause of its maximum.
        let day = &store.monitor_intervals("a", "cyclic", 0).unwrap()[0];
        assert_eq!(
            (day.width_ns, day.cause.as_deref()),
            (DAY_NS, Some("rtg-culprit"))
        );
        // Another host's rows are untouched.
        assert_eq!(store.monitor_totals("b", "cyclic").unwrap()[0].intervals, 1);
    }

    #[test]
    fn monitors_are_listed_per_host_and_probe_with_their_newest_intervals() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
        let rows: Vec<MonitorInterval> = (0..3)
            .flat_map(|i| [0, 1].map(|cpu| interval(cpu, DAY_NS + i * 300_000_000_000, 10 + i)))
            .collect();
        store.monitor_record_all("a", "cyclic", &rows).unwrap();
        store
            .monitor_record("b", "noise", &interval(3, DAY_NS, 5))
            .unwrap();
        let runs = store.monitor_runs(None).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(
            runs[0],
            MonitorRun {
                host: "a".into(),
                probe: "cyclic".into(),
                cpus: vec![0, 1],
                rows: 6,
                first_unix_ns: DAY_NS,
                last_unix_ns: DAY_NS + 3 * 300_000_000_000,
                max_ns: 12,
                samples: 6000,
                overruns: 6,
            }
        );
        assert_eq!(store.monitor_runs(Some("b")).unwrap()[0].cpus, [3]);
        // The newest three rows of host a, oldest first, CPUs in order.
        let newest = store.monitor_rows(Some("a"), None, 3).unwrap();
        let got: Vec<(usize, u64)> = newest
            .iter()
            .map(|r| (r.interval.cpu, r.interval.max_ns))
            .collect();
        assert_eq!(got, [(1, 11), (0, 12), (1, 12)]);
        let since = store
            .monitor_rows(None, Some(DAY_NS + 300_000_000_000), 100)
            .unwrap();
        assert_eq!(since.len(), 4);
    }
}
