//! The monitor's bookkeeping: the interval rows it keeps in the history and the counters it
//! may export.
//!
//! The counters (`rtgauge_samples_total`…) are sums of stored rows, and they never show more
//! than the store holds: each export (a scrape, a textfile write) first rewrites the row of
//! the interval being filled, then shows what was written. So whatever stops the process —
//! SIGTERM, SIGKILL, the OOM killer — the next one starts from at least the last value any
//! scraper saw, and Prometheus never reads a decrease (a counter reset). What a crash loses
//! is what was measured after the last export: it was never shown either.

use super::exposition::CpuState;
use rtgauge_store::{MonitorInterval, Store};
use std::collections::BTreeMap;

/// One CPU's live counts and maxima as read from its cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Reading {
    pub cpu: usize,
    pub samples: u64,
    pub overruns: u64,
    /// The maximum of the interval asked for, if it had samples.
    pub max_ns: Option<u64>,
    /// The maximum's cause, where the trace explained it.
    pub cause: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct CpuBook {
    /// Samples and overruns of earlier processes (the stored rows' sums at start).
    before: (u64, u64),
    /// This process's live counts at the end of its last stored closed interval.
    closed: (u64, u64),
    /// This process's live counts that the store holds (closed intervals and the open row):
    /// what the counters may show.
    kept: (u64, u64),
    state: CpuState,
}

pub(super) struct Book {
    store: Store,
    host: String,
    probe: String,
    interval: u64,
    /// Unix time (ns) at CLOCK_MONOTONIC 0, fixed once: every write of one interval's row
    /// has the same key.
    unix_at_zero: u64,
    /// When this process began (Unix ns): its first row starts here, never on the row of an
    /// earlier process in the same interval.
    started_unix: u64,
    /// The interval being filled (CLOCK_MONOTONIC `open × interval` onwards).
    pub open: u64,
    cpus: BTreeMap<usize, CpuBook>,
    /// Rows written by this process (closed intervals).
    pub closed_rows: u64,
}

impl Book {
    /// Reads the earlier processes' totals of `host`'s `probe` monitor from `store`, after
    /// folding old intervals into day rows.
    pub fn open(
        mut store: Store,
        host: &str,
        probe: &str,
        interval: u64,
        cpus: &[usize],
        now_mono: u64,
        now_unix: u64,
    ) -> anyhow::Result<Book> {
        // Old intervals become day rows: the history stays small over months.
        let _ = store.monitor_fold(
            host,
            now_unix.saturating_sub(rtgauge_store::MONITOR_FOLD_AFTER_NS),
        );
        let mut book: BTreeMap<usize, CpuBook> =
            cpus.iter().map(|&c| (c, CpuBook::default())).collect();
        for t in store.monitor_totals(host, probe)? {
            if let Some(b) = book.get_mut(&t.cpu) {
                b.before = (t.samples, t.overruns);
                b.state.alltime_interval_max_ns = Some(t.max_ns);
            }
        }
        Ok(Book {
            store,
            host: host.to_string(),
            probe: probe.to_string(),
            interval,
            unix_at_zero: now_unix.saturating_sub(now_mono),
            started_unix: now_unix,
            open: now_mono / interval,
            cpus: book,
            closed_rows: 0,
        })
    }

    pub fn store_path(&self) -> &std::path::Path {
        self.store.path()
    }

    /// Where interval `n`'s row starts: the interval's start, or this process's.
    fn row_start(&self, n: u64) -> u64 {
        (self.unix_at_zero + n * self.interval).max(self.started_unix)
    }

    /// The counters as they may be exported for `cpu`: (samples, overruns) across restarts.
    pub fn totals(&self, cpu: usize) -> (u64, u64) {
        self.cpus
            .get(&cpu)
            .map_or((0, 0), |b| (b.before.0 + b.kept.0, b.before.1 + b.kept.1))
    }

    pub fn state(&self) -> BTreeMap<usize, CpuState> {
        self.cpus
            .iter()
            .map(|(&c, b)| (c, b.state.clone()))
            .collect()
    }

    /// The row of each CPU for interval `n` from `readings`, up to `end_unix`: its samples
    /// and overruns since the last closed interval.
    fn rows(&self, n: u64, readings: &[Reading], end_unix: u64) -> Vec<MonitorInterval> {
        let start = self.row_start(n);
        readings
            .iter()
            .filter_map(|r| {
                let b = self.cpus.get(&r.cpu)?;
                let samples = r.samples.saturating_sub(b.closed.0);
                let overruns = r.overruns.saturating_sub(b.closed.1);
                // A CPU with nothing measured yet (warm-up) has no row.
                if samples == 0 && r.max_ns.is_none() {
                    return None;
                }
                Some(MonitorInterval {
                    cpu: r.cpu,
                    start_unix_ns: start,
                    width_ns: end_unix.saturating_sub(start),
                    max_ns: r.max_ns.unwrap_or(0),
                    samples,
                    overruns,
                    cause: r.cause.clone(),
                })
            })
            .collect()
    }

    fn write(&mut self, rows: &[MonitorInterval]) -> bool {
        if rows.is_empty() {
            return true;
        }
        match self.store.monitor_record_all(&self.host, &self.probe, rows) {
            Ok(()) => true,
            Err(e) => {
                // A full disk must not stop the measurement: the counters stay where the
                // store is, and the next export tries again.
                eprintln!("rtgauge monitor: interval not kept: {e}");
                false
            }
        }
    }

    /// Before an export: the open interval's rows rewritten with `readings` (the maximum of
    /// what they counted), so the counters about to be shown are in the store.
    pub fn checkpoint(&mut self, readings: &[Reading], now_unix: u64) {
        let rows = self.rows(self.open, readings, now_unix);
        if self.write(&rows) {
            for r in readings {
                if let Some(b) = self.cpus.get_mut(&r.cpu) {
                    b.kept = (r.samples, r.overruns);
                }
            }
        }
    }

    /// Closes the open interval with `readings` (its maxima): whole, or, at the end, as far as
    /// it went (`now_unix`). Opens the next one.
    pub fn close(&mut self, readings: &[Reading], whole: bool, now_unix: u64) {
        let n = self.open;
        let end = if whole {
            self.unix_at_zero + (n + 1) * self.interval
        } else {
            now_unix
        };
        let rows = self.rows(n, readings, end);
        if self.write(&rows) {
            self.closed_rows += rows.len() as u64;
            for r in readings {
                if let Some(b) = self.cpus.get_mut(&r.cpu) {
                    b.closed = (r.samples, r.overruns);
                    b.kept = b.closed;
                }
            }
        }
        for r in readings {
            let (Some(b), Some(max)) = (self.cpus.get_mut(&r.cpu), r.max_ns) else {
                continue;
            };
            if whole {
                b.state.last_interval_max_ns = Some(max);
                b.state.last_interval_cause = r.cause.clone();
            }
            b.state.alltime_interval_max_ns =
                Some(b.state.alltime_interval_max_ns.unwrap_or(0).max(max));
        }
        self.open = n + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn reading(samples: u64, overruns: u64, max: u64) -> Vec<Reading> {
        vec![Reading {
            cpu: 1,
            samples,
            overruns,
            max_ns: Some(max),
            cause: None,
        }]
    }

    fn book(store: &std::path::Path, mono: u64, unix: u64) -> Book {
        Book::open(
            Store::open(store).unwrap(),
            "h",
            "cyclic",
            10 * S,
            &[1],
            mono,
            unix,
        )
        .unwrap()
    }

    /// Whatever was exported is in the store: a process dropped without closing anything
    /// (SIGKILL) leaves its open row, and the next one counts on from there.
    #[test]
    fn the_counters_go_on_after_a_process_that_never_closed_its_interval() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let unix = 1_800_000_000 * S;
        let mut first = book(&path, 105 * S, unix);
        first.checkpoint(&reading(100, 1, 50), unix + S);
        assert_eq!(first.totals(1), (100, 1));
        first.close(&reading(150, 2, 60), true, unix + 5 * S);
        first.checkpoint(&reading(400, 3, 70), unix + 8 * S);
        assert_eq!(first.totals(1), (400, 3));
        drop(first); // killed: nothing else written

        // Restarted in the same interval as the last export: a row of its own.
        let mut second = book(&path, 119 * S, unix + 9 * S);
        assert_eq!(second.totals(1), (400, 3));
        assert_eq!(second.state()[&1].alltime_interval_max_ns, Some(70));
        second.checkpoint(&reading(10, 0, 20), unix + 10 * S);
        assert_eq!(second.totals(1), (410, 3));
        second.close(&reading(12, 0, 20), false, unix + 10 * S);
        drop(second);
        let third = book(&path, 200 * S, unix + 100 * S);
        assert_eq!(third.totals(1), (412, 3));
    }

    /// The rows of one interval keep one key however often they are rewritten, and a closed
    /// interval's row ends where the interval does.
    #[test]
    fn an_interval_is_one_row_rewritten_until_it_closes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let unix = 1_800_000_000 * S;
        let mut b = book(&path, 100 * S, unix);
        for i in 1..=3 {
            b.checkpoint(&reading(i * 10, 0, i), unix + i * S);
        }
        b.close(&reading(35, 0, 4), true, unix + 10 * S);
        b.checkpoint(&reading(40, 0, 1), unix + 11 * S);
        let store = Store::open(&path).unwrap();
        let rows = store.monitor_intervals("h", "cyclic", 1).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            (
                rows[0].start_unix_ns,
                rows[0].width_ns,
                rows[0].samples,
                rows[0].max_ns
            ),
            (unix, 10 * S, 35, 4)
        );
        assert_eq!((rows[1].start_unix_ns, rows[1].samples), (unix + 10 * S, 5));
        assert_eq!(b.state()[&1].last_interval_max_ns, Some(4));
        assert_eq!(b.state()[&1].last_interval_cause, None);
    }

    /// An explained maximum keeps its cause in its row and in the last interval's state.
    #[test]
    fn a_closed_interval_keeps_the_cause_of_its_maximum() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let unix = 1_800_000_000 * S;
        let mut b = book(&path, 100 * S, unix);
        let explained = vec![Reading {
            cause: Some("rtg-culprit".into()),
            ..reading(35, 0, 300_000)[0].clone()
        }];
        b.close(&explained, true, unix + 10 * S);
        assert_eq!(
            b.state()[&1].last_interval_cause.as_deref(),
            Some("rtg-culprit")
        );
        b.close(&reading(70, 0, 20_000), true, unix + 20 * S);
        assert_eq!(b.state()[&1].last_interval_cause, None);
        let store = Store::open(&path).unwrap();
        let causes: Vec<Option<String>> = store
            .monitor_intervals("h", "cyclic", 1)
            .unwrap()
            .into_iter()
            .map(|r| r.cause)
            .collect();
        assert_eq!(causes, [Some("rtg-culprit".to_string()), None]);
    }
}
